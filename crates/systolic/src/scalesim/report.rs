//! The three per-layer reports SCALE-Sim writes, with its exact headers and number
//! formatting (Python `str()` of ints and floats).

use super::pyfmt::{py_float, py_float_int};

/// `COMPUTE_REPORT.csv` header, verbatim.
pub const COMPUTE_HEADER: &str = "LayerID, Total Cycles (incl. prefetch), Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n";
/// `BANDWIDTH_REPORT.csv` header, verbatim.
pub const BANDWIDTH_HEADER: &str = "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW,\n";
/// `DETAILED_ACCESS_REPORT.csv` header, verbatim.
pub const DETAIL_HEADER: &str = "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, SRAM Filter Start Cycle, SRAM Filter Stop Cycle, SRAM Filter Reads, SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM Filter Reads, DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,\n";

/// One interface's activity window and element count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Access {
    /// First cycle with an access (may be negative: prefetch before the layer starts).
    pub start: i64,
    /// Last cycle with an access.
    pub stop: i64,
    /// Elements read or written.
    pub count: u64,
}

impl Access {
    /// count / (stop − start + 1), SCALE-Sim's average DRAM bandwidth (words/cycle).
    pub fn avg_bw(&self) -> f64 {
        self.count as f64 / (self.stop - self.start + 1) as f64
    }
}

/// One layer's row in all three reports.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerReport {
    /// Layer name (not printed by SCALE-Sim, which prints the index; kept for tables).
    pub name: String,
    /// Total Cycles (incl. prefetch).
    pub cycles_incl_prefetch: i64,
    /// Total Cycles.
    pub total_cycles: u64,
    /// Stall Cycles.
    pub stall_cycles: u64,
    /// Overall Util % (0..100).
    pub overall_util: f64,
    /// Mapping Efficiency % (0..100).
    pub mapping_efficiency: f64,
    /// Compute Util % (0..100).
    pub compute_util: f64,
    /// SRAM IFMAP reads, FILTER reads, OFMAP writes.
    pub sram: [Access; 3],
    /// DRAM IFMAP reads, FILTER reads, OFMAP writes.
    pub dram: [Access; 3],
}

/// The text of COMPUTE_REPORT.csv.
pub fn compute_csv(layers: &[LayerReport]) -> String {
    let mut s = String::from(COMPUTE_HEADER);
    for (i, l) in layers.iter().enumerate() {
        s += &format!(
            "{i}, {}, {}, {}, {}, {}, {},\n",
            l.cycles_incl_prefetch,
            l.total_cycles,
            l.stall_cycles,
            py_float(l.overall_util),
            py_float(l.mapping_efficiency),
            py_float(l.compute_util)
        );
    }
    s
}

/// The text of BANDWIDTH_REPORT.csv.
pub fn bandwidth_csv(layers: &[LayerReport]) -> String {
    let mut s = String::from(BANDWIDTH_HEADER);
    for (i, l) in layers.iter().enumerate() {
        let t = l.total_cycles as f64;
        let v = [
            l.sram[0].count as f64 / t,
            l.sram[1].count as f64 / t,
            l.sram[2].count as f64 / t,
            l.dram[0].avg_bw(),
            l.dram[1].avg_bw(),
            l.dram[2].avg_bw(),
        ];
        s += &format!(
            "{i}, {},\n",
            v.iter()
                .map(|x| py_float(*x))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    s
}

/// The text of DETAILED_ACCESS_REPORT.csv.
pub fn detail_csv(layers: &[LayerReport]) -> String {
    let mut s = String::from(DETAIL_HEADER);
    for (i, l) in layers.iter().enumerate() {
        let cells: Vec<String> = l
            .sram
            .iter()
            .chain(l.dram.iter())
            .flat_map(|a| {
                [
                    py_float_int(a.start),
                    py_float_int(a.stop),
                    a.count.to_string(),
                ]
            })
            .collect();
        s += &format!("{i}, {},\n", cells.join(", "));
    }
    s
}

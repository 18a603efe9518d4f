//! The per-layer reports SCALE-Sim writes, with its exact headers and number
//! formatting (Python `str()` of ints and floats): three always, and with
//! `SparsitySupport` a FILTER-metadata column in the bandwidth report and a fourth,
//! `SPARSE_REPORT.csv`.

use super::pyfmt::{py_float, py_float_int};

/// `COMPUTE_REPORT.csv` header, verbatim.
pub const COMPUTE_HEADER: &str = "LayerID, Total Cycles (incl. prefetch), Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n";
/// `BANDWIDTH_REPORT.csv` header, verbatim.
pub const BANDWIDTH_HEADER: &str = "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW,\n";
/// `BANDWIDTH_REPORT.csv` header with `SparsitySupport`, verbatim.
pub const SPARSE_BANDWIDTH_HEADER: &str = "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg FILTER Metadata SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW,\n";
/// `SPARSE_REPORT.csv` header, verbatim (its trailing space included).
pub const SPARSE_HEADER: &str = "LayerID, Sparsity Representation, Original Filter Storage, New Storage (Filter+Metadata), Filter Metadata Storage, Avg FILTER Metadata SRAM BW, \n";
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

/// A figure SCALE-Sim holds as a Python int or float, printed as `str()` prints it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PyNumber {
    /// An int.
    Int(u64),
    /// A float.
    Float(f64),
}

impl PyNumber {
    /// Python's `str()` of it.
    pub fn text(&self) -> String {
        match self {
            PyNumber::Int(v) => v.to_string(),
            PyNumber::Float(v) => py_float(*v),
        }
    }

    /// Its value as a float.
    pub fn value(&self) -> f64 {
        match self {
            PyNumber::Int(v) => *v as f64,
            PyNumber::Float(v) => *v,
        }
    }
}

/// A sparse layer's figures (`SparsitySupport`).
#[derive(Debug, Clone, PartialEq)]
pub struct SparseReport {
    /// `SparseRep` as configured.
    pub representation: String,
    /// FILTER words without compression (K · N).
    pub original_storage: u64,
    /// FILTER words stored, metadata included.
    pub new_storage: PyNumber,
    /// Metadata words (SCALE-Sim's "metadata reads").
    pub metadata_storage: PyNumber,
    /// IFMAP SRAM reads where SCALE-Sim counts them as a float (ws without
    /// `OptimizedMapping`: each fold's reads × M/N); `sram[0].count` holds it rounded.
    pub ifmap_sram_reads: Option<f64>,
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
    /// The sparse figures, under `SparsitySupport` (every layer then has them).
    pub sparse: Option<SparseReport>,
}

impl LayerReport {
    /// SRAM IFMAP reads as SCALE-Sim prints them.
    fn ifmap_sram_reads(&self) -> PyNumber {
        match self.sparse.as_ref().and_then(|s| s.ifmap_sram_reads) {
            Some(f) => PyNumber::Float(f),
            None => PyNumber::Int(self.sram[0].count),
        }
    }

    /// Average FILTER metadata SRAM bandwidth: metadata words / Total Cycles.
    fn metadata_bw(&self) -> Option<f64> {
        let s = self.sparse.as_ref()?;
        Some(s.metadata_storage.value() / self.total_cycles as f64)
    }
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

/// The text of BANDWIDTH_REPORT.csv (with the FILTER metadata column when the layers
/// are sparse).
pub fn bandwidth_csv(layers: &[LayerReport]) -> String {
    let sparse = layers.iter().any(|l| l.sparse.is_some());
    let mut s = String::from(if sparse {
        SPARSE_BANDWIDTH_HEADER
    } else {
        BANDWIDTH_HEADER
    });
    for (i, l) in layers.iter().enumerate() {
        let t = l.total_cycles as f64;
        let mut v = vec![l.ifmap_sram_reads().value() / t, l.sram[1].count as f64 / t];
        if sparse {
            v.push(l.metadata_bw().unwrap_or(0.0));
        }
        v.extend([
            l.sram[2].count as f64 / t,
            l.dram[0].avg_bw(),
            l.dram[1].avg_bw(),
            l.dram[2].avg_bw(),
        ]);
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
        let mut cells: Vec<String> = l
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
        cells[2] = l.ifmap_sram_reads().text();
        s += &format!("{i}, {},\n", cells.join(", "));
    }
    s
}

/// The text of SPARSE_REPORT.csv, or `None` when the layers are not sparse.
pub fn sparse_csv(layers: &[LayerReport]) -> Option<String> {
    if layers.iter().all(|l| l.sparse.is_none()) {
        return None;
    }
    let mut s = String::from(SPARSE_HEADER);
    for (i, l) in layers.iter().enumerate() {
        let (Some(sp), Some(bw)) = (&l.sparse, l.metadata_bw()) else {
            continue;
        };
        s += &format!(
            "{i}, {}, {}, {}, {}, {},\n",
            sp.representation,
            sp.original_storage,
            sp.new_storage.text(),
            sp.metadata_storage.text(),
            py_float(bw)
        );
    }
    Some(s)
}

//! The summary of one GEMM or conv run that `tpusim systolic gemm|conv --json` prints
//! and the Python package returns: the run's [`Stats`] with its shape, array and options.

use crate::{ArraySpec, Gemm, RunOptions, Stats};
use serde::Serialize;

/// The `--json` document of `gemm` and `conv` (field names are a contract).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerOut {
    /// Total cycles.
    pub cycles: u64,
    /// Cycles with some fold computing.
    pub compute_cycles: u64,
    /// Exposed stationary-operand load (os: drain) cycles.
    pub weight_load_cycles: u64,
    /// Useful MACs.
    pub macs: u64,
    /// MACs / (cycles · R · C).
    pub utilization: f64,
    /// Folds.
    pub folds: u64,
    /// Operand elements read from SRAM.
    pub sram_reads: u64,
    /// Result elements written to SRAM.
    pub sram_writes: u64,
    /// PE-cycles busy with a valid MAC.
    pub busy_pe_cycles: u64,
    /// Mean used PEs per fold / (R·C).
    pub mapping_efficiency: f64,
    /// Ideal DRAM reads (each distinct input element once).
    pub dram_reads: u64,
    /// Ideal DRAM writes (each distinct output element once).
    pub dram_writes: u64,
    /// GEMM M (per group).
    pub m: u64,
    /// GEMM K (per group).
    pub k: u64,
    /// GEMM N (per group).
    pub n: u64,
    /// GEMMs run (conv groups).
    pub groups: u64,
    /// Array rows.
    pub rows: u64,
    /// Array columns.
    pub cols: u64,
    /// ws, os or is.
    pub dataflow: String,
    /// Whether stationary loads were double-buffered.
    pub double_buffer: bool,
    /// analytic or cycle.
    pub mode: String,
}

impl LayerOut {
    /// The summary of a run of `g` (`groups` times) on `arr` with `o`; `mode` names the
    /// model that timed it (`analytic` or `cycle`).
    pub fn new(
        s: &Stats,
        g: Gemm,
        groups: u64,
        arr: ArraySpec,
        o: RunOptions,
        mode: &str,
    ) -> LayerOut {
        LayerOut {
            cycles: s.cycles,
            compute_cycles: s.compute_cycles,
            weight_load_cycles: s.weight_load_cycles,
            macs: s.macs,
            utilization: s.utilization,
            folds: s.folds,
            sram_reads: s.sram_reads,
            sram_writes: s.sram_writes,
            busy_pe_cycles: s.busy_pe_cycles,
            mapping_efficiency: s.mapping_efficiency,
            dram_reads: s.dram_reads,
            dram_writes: s.dram_writes,
            m: g.m,
            k: g.k,
            n: g.n,
            groups,
            rows: arr.rows,
            cols: arr.cols,
            dataflow: o.dataflow.name().to_string(),
            double_buffer: o.double_buffer,
            mode: mode.to_string(),
        }
    }
}

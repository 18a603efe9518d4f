//! The analytic model: cycles, utilization and SRAM/DRAM traffic of a GEMM or
//! convolution on an R×C array, from closed-form per-fold costs composed by the
//! [`Scheduler`]. Equal to the cycle-accurate engine on every case the engine runs
//! (tests in `tests/engine_vs_analytic.rs`); costs O(folds) time and no memory.

use crate::error::{Result, SystolicError};
use crate::fold::{fold_count, fold_timing, folds};
use crate::schedule::Scheduler;
use crate::shape::{ArraySpec, Dataflow, Workload};
use serde::Serialize;

/// How the array is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RunOptions {
    /// Which operand stays in the PEs.
    pub dataflow: Dataflow,
    /// Double-buffered stationary registers: the next fold's load (os: the previous
    /// fold's drain) overlaps computation. `false`: loads/drains are exposed.
    pub double_buffer: bool,
}

/// Cycle and traffic figures of one layer (GEMM or conv). Element counts are words
/// (one operand or result value each), cycles are array clock cycles.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    /// Total cycles from the first weight load to the last result leaving the array.
    pub cycles: u64,
    /// Cycles in which some fold is streaming or computing.
    pub compute_cycles: u64,
    /// Cycles spent only loading (ws/is) or draining (os) the stationary operand.
    pub weight_load_cycles: u64,
    /// Useful multiply-accumulates, M·N·K·groups.
    pub macs: u64,
    /// PE-cycles doing a MAC on valid operands (equals `macs`: every useful MAC
    /// happens exactly once).
    pub busy_pe_cycles: u64,
    /// busy_pe_cycles / (cycles · R · C), in 0..=1.
    pub utilization: f64,
    /// Mean over folds of used PEs / (R·C), in 0..=1.
    pub mapping_efficiency: f64,
    /// Number of folds (all groups).
    pub folds: u64,
    /// Operand elements read from SRAM into the array (stationary + streamed).
    pub sram_reads: u64,
    /// Stationary-operand elements read from SRAM (ws: W, is: A, os: none).
    pub sram_reads_stationary: u64,
    /// Streamed-operand elements read from SRAM.
    pub sram_reads_streamed: u64,
    /// Result elements written to SRAM (one per output per ws/is K fold: partial sums).
    pub sram_writes: u64,
    /// Ideal DRAM reads: every distinct input and filter element once.
    pub dram_reads: u64,
    /// Ideal DRAM writes: every distinct output element once.
    pub dram_writes: u64,
}

/// Accumulates per-fold timings into [`Stats`] (shared by the analytic model and the
/// engine so both report the same way).
#[derive(Debug, Clone)]
pub(crate) struct StatsBuilder {
    sched: Scheduler,
    folds: u64,
    busy: u64,
    used_sum: f64,
    rs: u64,
    rt: u64,
    w: u64,
}

impl StatsBuilder {
    pub(crate) fn new(opts: RunOptions) -> Self {
        StatsBuilder {
            sched: Scheduler::new(opts.dataflow, opts.double_buffer),
            folds: 0,
            busy: 0,
            used_sum: 0.0,
            rs: 0,
            rt: 0,
            w: 0,
        }
    }
    pub(crate) fn push(&mut self, a: ArraySpec, t: &crate::fold::FoldTiming) {
        self.sched.push(t);
        self.folds += 1;
        self.busy += t.busy;
        self.used_sum += (t.shape.rows_used * t.shape.cols_used) as f64 / a.pes() as f64;
        self.rs += t.reads_stationary;
        self.rt += t.reads_streamed;
        self.w += t.writes;
    }
    pub(crate) fn finish(&self, a: ArraySpec, wl: &Workload) -> Stats {
        let tl = self.sched.finish();
        Stats {
            cycles: tl.cycles,
            compute_cycles: tl.compute_cycles,
            weight_load_cycles: tl.weight_load_cycles,
            macs: wl.macs(),
            busy_pe_cycles: self.busy,
            utilization: self.busy as f64 / (tl.cycles as f64 * a.pes() as f64),
            mapping_efficiency: if self.folds == 0 {
                0.0
            } else {
                self.used_sum / self.folds as f64
            },
            folds: self.folds,
            sram_reads: self.rs + self.rt,
            sram_reads_stationary: self.rs,
            sram_reads_streamed: self.rt,
            sram_writes: self.w,
            dram_reads: wl.unique_inputs,
            dram_writes: wl.unique_outputs,
        }
    }
}

/// Largest fold count the analytic model walks (it is O(folds)); ~0.1 s of work.
pub const MAX_ANALYTIC_FOLDS: u64 = 50_000_000;

/// Analytic cycles, utilization and traffic of a workload on an array.
///
/// ```
/// use tpusim_systolic::{analyze, ArraySpec, Dataflow, Gemm, RunOptions, Workload};
/// let a = ArraySpec::new(4, 4).unwrap();
/// let wl = Workload::from_gemm(Gemm::new(4, 4, 4).unwrap());
/// let s = analyze(a, &wl, RunOptions { dataflow: Dataflow::Ws, double_buffer: true }).unwrap();
/// assert_eq!(s.cycles, 4 + (3 * 4 - 2)); // R-cycle weight load, then the seed's 3N−2
/// ```
pub fn analyze(a: ArraySpec, wl: &Workload, opts: RunOptions) -> Result<Stats> {
    let per = fold_count(opts.dataflow, a, wl.gemm);
    let total = per
        .checked_mul(wl.repeat)
        .ok_or_else(|| crate::error::overflow("fold count"))?;
    if total > MAX_ANALYTIC_FOLDS {
        return Err(SystolicError::TooLarge {
            what: "fold count".into(),
            given: total,
            limit: MAX_ANALYTIC_FOLDS,
        });
    }
    check_cycle_bound(a, wl)?;
    let mut b = StatsBuilder::new(opts);
    for _ in 0..wl.repeat {
        for f in folds(opts.dataflow, a, wl.gemm) {
            b.push(a, &fold_timing(opts.dataflow, a, f));
        }
    }
    Ok(b.finish(a, wl))
}

/// Refuse workloads whose cycle count could overflow u64 (every fold costs at most
/// stream + 3·max(R, C) cycles).
pub(crate) fn check_cycle_bound(a: ArraySpec, wl: &Workload) -> Result<()> {
    let g = wl.gemm;
    let s = g.m.max(g.n).max(g.k);
    let per_fold = s
        .checked_add(
            a.rows
                .max(a.cols)
                .checked_mul(4)
                .ok_or_else(|| crate::error::overflow("array size"))?,
        )
        .ok_or_else(|| crate::error::overflow("cycle count"))?;
    let folds = fold_count(Dataflow::Os, a, g)
        .max(fold_count(Dataflow::Ws, a, g))
        .max(fold_count(Dataflow::Is, a, g));
    per_fold
        .checked_mul(folds)
        .and_then(|x| x.checked_mul(wl.repeat))
        .and_then(|x| x.checked_mul(a.pes()))
        .ok_or_else(|| crate::error::overflow("cycle count"))?;
    Ok(())
}

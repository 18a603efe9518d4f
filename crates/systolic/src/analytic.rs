//! The analytic model: cycles, utilization and SRAM/DRAM traffic of a GEMM or
//! convolution on an R×C array, from closed-form per-fold costs composed by the
//! [`Scheduler`]. Equal to the cycle-accurate engine on every case the engine runs
//! (tests in `tests/engine_vs_analytic.rs`); costs O(1) time for the regular fold grid
//! of a GEMM once its schedule reaches a steady state ([`push_repeated`]), and no memory.

use crate::error::{Result, SystolicError};
use crate::fold::{fold_count, fold_timing, folds, FoldGrid, FoldShape};
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
    /// folds, busy PE-cycles, used PEs summed over folds, stationary reads, streamed
    /// reads, writes
    acc: [u128; 6],
}

/// What one period of pushes (a run of identical folds, or of identical runs) did to a
/// [`StatsBuilder`]: every time the schedule reads moved by `shift`, each tally and
/// count by its own amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    shift: u64,
    tallies: [u64; 6],
    acc: [u128; 6],
}

/// A [`StatsBuilder`]'s state, for [`Step`]s.
#[derive(Debug, Clone, Copy)]
struct Snap {
    times: [u64; 8],
    read: [bool; 8],
    tallies: [u64; 6],
    acc: [u128; 6],
}

impl Snap {
    /// The step from `before` to `self`, when it is a uniform shift: every time the
    /// mode reads moved by the same amount and the last fold's durations are the same.
    fn step_from(&self, before: &Snap) -> Option<Step> {
        let mut shift = None;
        for i in 0..8 {
            if !self.read[i] {
                continue;
            }
            let d = self.times[i].checked_sub(before.times[i])?;
            if *shift.get_or_insert(d) != d {
                return None;
            }
        }
        if self.tallies[3..] != before.tallies[3..] {
            return None;
        }
        let mut tallies = [0u64; 6];
        for ((t, now), was) in tallies
            .iter_mut()
            .zip(self.tallies)
            .zip(before.tallies)
            .take(3)
        {
            *t = now.checked_sub(was)?;
        }
        let mut acc = [0u128; 6];
        for ((a, now), was) in acc.iter_mut().zip(self.acc).zip(before.acc) {
            *a = now.checked_sub(was)?;
        }
        Some(Step {
            shift: shift?,
            tallies,
            acc,
        })
    }
}

impl StatsBuilder {
    pub(crate) fn new(opts: RunOptions) -> Self {
        StatsBuilder {
            sched: Scheduler::new(opts.dataflow, opts.double_buffer),
            acc: [0; 6],
        }
    }
    pub(crate) fn push(&mut self, t: &crate::fold::FoldTiming) {
        self.sched.push(t);
        let add = [
            1,
            t.busy,
            t.shape.rows_used * t.shape.cols_used,
            t.reads_stationary,
            t.reads_streamed,
            t.writes,
        ];
        for (x, d) in self.acc.iter_mut().zip(add) {
            *x += u128::from(d);
        }
    }

    fn snap(&self) -> Snap {
        let (times, read) = self.sched.times();
        Snap {
            times,
            read,
            tallies: self.sched.tallies(),
            acc: self.acc,
        }
    }

    /// Apply `step` `times` more times without pushing; `None` (nothing changed) on
    /// overflow.
    fn advance(&mut self, step: &Step, times: u64) -> Option<()> {
        let mut acc = self.acc;
        for (x, d) in acc.iter_mut().zip(step.acc) {
            *x = x.checked_add(d.checked_mul(u128::from(times))?)?;
        }
        let mut sched = self.sched.clone();
        sched.advance(step.shift, step.tallies, times)?;
        (self.sched, self.acc) = (sched, acc);
        Some(())
    }
    pub(crate) fn finish(&self, a: ArraySpec, wl: &Workload) -> Stats {
        let tl = self.sched.finish();
        let [folds, busy, used, rs, rt, w] = self.acc.map(|x| u64::try_from(x).unwrap_or(u64::MAX));
        Stats {
            cycles: tl.cycles,
            compute_cycles: tl.compute_cycles,
            weight_load_cycles: tl.weight_load_cycles,
            macs: wl.macs(),
            busy_pe_cycles: busy,
            utilization: busy as f64 / (tl.cycles as f64 * a.pes() as f64),
            mapping_efficiency: if folds == 0 {
                0.0
            } else {
                used as f64 / a.pes() as f64 / folds as f64
            },
            folds,
            sram_reads: rs + rt,
            sram_reads_stationary: rs,
            sram_reads_streamed: rt,
            sram_writes: w,
            dram_reads: wl.unique_inputs,
            dram_writes: wl.unique_outputs,
        }
    }
}

/// Push `count` periods, each what `once` pushes. Once two periods in a row were the
/// same uniform shift of the schedule (every time it reads later by the same amount,
/// the same durations, the same counts), every further period is that shift again:
/// the schedule is a max-plus recurrence, so shifting all its inputs shifts all its
/// outputs. The rest are then applied at once (`tests/analytic_fast.rs` checks this
/// against pushing every fold).
pub(crate) fn push_repeated(
    b: &mut StatsBuilder,
    count: u64,
    mut once: impl FnMut(&mut StatsBuilder),
) {
    let mut last: Option<Step> = None;
    let mut done = 0;
    while done < count {
        let before = b.snap();
        once(b);
        done += 1;
        let step = b.snap().step_from(&before);
        if step.is_some()
            && step == last
            && done < count
            && b.advance(&step.unwrap_or_else(|| unreachable!()), count - done)
                .is_some()
        {
            return;
        }
        last = step;
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
    let grid = FoldGrid::new(opts.dataflow, a, wl.gemm);
    let timing = |rows: u64, cols: u64| {
        fold_timing(
            opts.dataflow,
            a,
            FoldShape {
                rows_used: rows,
                cols_used: cols,
                stream: grid.stream,
                row0: 0,
                col0: 0,
            },
        )
    };
    // the fold order of `folds`: column blocks outer, row blocks inner; only the last
    // of each is partial
    let column = |b: &mut StatsBuilder, cols: u64| {
        let full = timing(a.rows, cols);
        push_repeated(b, grid.row_blocks - 1, |b| b.push(&full));
        b.push(&timing(grid.last_rows, cols));
    };
    push_repeated(&mut b, wl.repeat, |b| {
        push_repeated(b, grid.col_blocks - 1, |b| column(b, a.cols));
        column(b, grid.last_cols);
    });
    Ok(b.finish(a, wl))
}

/// The fold walk the analytic model compresses: every fold pushed (for tests).
#[doc(hidden)]
pub fn analyze_fold_by_fold(a: ArraySpec, wl: &Workload, opts: RunOptions) -> Result<Stats> {
    check_cycle_bound(a, wl)?;
    let mut b = StatsBuilder::new(opts);
    for _ in 0..wl.repeat {
        for f in folds(opts.dataflow, a, wl.gemm) {
            b.push(&fold_timing(opts.dataflow, a, f));
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

//! The cycle-accurate engine: runs a GEMM (or a convolution lowered by im2col) fold by
//! fold on an R×C array, moving real operand values through PE registers cycle by
//! cycle, and measures each fold's cycles, MACs, busy PE-cycles, reads and writes. The
//! folds are then composed into a timeline by the same [`crate::Scheduler`] rules the
//! analytic model uses.
//!
//! Independent column blocks of folds run in parallel (rayon); within a block the K
//! folds run in order and accumulate (ws/is).

mod memory;
mod output;
mod simd;
mod stationary;

pub use memory::{check_engine_memory, conv_run_bytes, engine_gemm_bytes, gemm_run_bytes};
pub use stationary::Snapshot;

/// One column block's results: (first column, width, block values, fold timings).
type BlockResult<A> = (usize, usize, Vec<A>, Vec<FoldTiming>);

/// A traced run: the product and every fold's per-cycle snapshots.
pub type Traced<A> = (Matrix<A>, Vec<Vec<Snapshot>>);

use crate::analytic::{RunOptions, Stats, StatsBuilder};
use crate::element::{Acc, Element};
use crate::error::{Result, SystolicError};
use crate::fold::{folds, FoldShape, FoldTiming};
use crate::matrix::Matrix;
use crate::shape::{ArraySpec, Conv, Dataflow, Gemm, Workload};
use rayon::prelude::*;

/// Largest M·N·K the engine accepts (all groups of a convolution together): about ten
/// seconds on two cores (`systolic check` of 2048³, 8.6e9 i8 MACs, takes 4 s; of
/// 64×1e6×174, 1.1e10 f32 MACs, 14 s).
pub const MAX_ENGINE_MACS: u64 = 10_000_000_000;
/// Largest MACs per PE (a lower bound on the cycles the engine steps through) it
/// accepts: a 1×1 array steps 2.7e8 cycles in about 2.5 s.
pub const MAX_ENGINE_MACS_PER_PE: u64 = 1 << 30;
/// Largest operand or result matrix (elements) the engine accepts.
pub const MAX_ENGINE_ELEMS: u64 = 1 << 28;
/// Largest array side the engine accepts.
pub const MAX_ENGINE_SIDE: u64 = 4096;

/// What the engine produced: the product and the measured figures.
#[derive(Debug, Clone)]
pub struct EngineRun<A> {
    /// The result C = A·W (M×N), in the accumulator type.
    pub c: Matrix<A>,
    /// Measured cycles, MACs, utilization and traffic.
    pub stats: Stats,
    /// Every fold's measured timing, in execution order.
    pub folds: Vec<FoldTiming>,
}

/// Check that the engine can run this GEMM on this array.
pub fn check_engine_limits(a: ArraySpec, g: Gemm) -> Result<()> {
    for (v, what) in [(a.rows, "array rows"), (a.cols, "array columns")] {
        if v > MAX_ENGINE_SIDE {
            return Err(SystolicError::TooLarge {
                what: format!("{what} for the cycle engine"),
                given: v,
                limit: MAX_ENGINE_SIDE,
            });
        }
    }
    for (v, what) in [
        (g.m * g.k, "A elements"),
        (g.k * g.n, "W elements"),
        (g.m * g.n, "C elements"),
    ] {
        if v > MAX_ENGINE_ELEMS {
            return Err(SystolicError::TooLarge {
                what: format!("{what} for the cycle engine"),
                given: v,
                limit: MAX_ENGINE_ELEMS,
            });
        }
    }
    check_engine_work(a, g.macs())
}

/// Check that `macs` multiply-accumulates on array `a` are few enough for the engine:
/// at most [`MAX_ENGINE_MACS`] and [`MAX_ENGINE_MACS_PER_PE`] per PE.
fn check_engine_work(a: ArraySpec, macs: u64) -> Result<()> {
    if macs > MAX_ENGINE_MACS {
        return Err(SystolicError::TooLarge {
            what: "MACs for the cycle engine (use the analytic mode)".into(),
            given: macs,
            limit: MAX_ENGINE_MACS,
        });
    }
    let per_pe = macs / a.pes();
    if per_pe > MAX_ENGINE_MACS_PER_PE {
        return Err(SystolicError::TooLarge {
            what: format!(
                "MACs per PE for the cycle engine on a {}x{} array (use the analytic mode)",
                a.rows, a.cols
            ),
            given: per_pe,
            limit: MAX_ENGINE_MACS_PER_PE,
        });
    }
    Ok(())
}

/// Check that the engine can run this convolution before its tensors are made: each
/// group's GEMM within [`check_engine_limits`], the input and filter tensors within
/// [`MAX_ENGINE_ELEMS`] elements and all groups' MACs within the engine's work limits.
pub fn check_conv_engine_limits(a: ArraySpec, conv: &Conv) -> Result<()> {
    let g = conv.gemm()?;
    check_engine_limits(a, g)?;
    let input = [conv.batch, conv.in_h, conv.in_w, conv.in_c]
        .into_iter()
        .try_fold(1u64, u64::checked_mul);
    let filter = [conv.kh, conv.kw, conv.in_c / conv.groups, conv.out_c]
        .into_iter()
        .try_fold(1u64, u64::checked_mul);
    for (v, what) in [(input, "input elements"), (filter, "filter elements")] {
        let v = v.unwrap_or(u64::MAX);
        if v > MAX_ENGINE_ELEMS {
            return Err(SystolicError::TooLarge {
                what: format!("{what} for the cycle engine"),
                given: v,
                limit: MAX_ENGINE_ELEMS,
            });
        }
    }
    check_engine_work(a, g.macs().saturating_mul(conv.groups))
}

/// The GEMM C = A·W describes, after checking that A's columns match W's rows and that
/// the engine can run it on this array.
fn engine_gemm<E: Element>(arr: ArraySpec, a: &Matrix<E>, w: &Matrix<E>) -> Result<Gemm> {
    if a.cols != w.rows {
        return Err(SystolicError::Shape(format!(
            "A is {}×{} but W is {}×{}",
            a.rows, a.cols, w.rows, w.cols
        )));
    }
    let g = Gemm::new(a.rows as u64, a.cols as u64, w.cols as u64)?;
    check_engine_limits(arr, g)?;
    Ok(g)
}

/// Run C = A·W on the array, cycle by cycle.
pub fn run_gemm<E: Element>(
    arr: ArraySpec,
    opts: RunOptions,
    a: &Matrix<E>,
    w: &Matrix<E>,
) -> Result<EngineRun<E::Acc>> {
    let g = engine_gemm(arr, a, w)?;
    let (c, timings) = match opts.dataflow {
        Dataflow::Ws => run_ws(arr, g, a, w),
        Dataflow::Is => run_is(arr, g, a, w),
        Dataflow::Os => run_os(arr, g, a, w),
    };
    let mut b = StatsBuilder::new(opts);
    for t in &timings {
        b.push(t);
    }
    let stats = b.finish(arr, &Workload::from_gemm(g));
    Ok(EngineRun {
        c,
        stats,
        folds: timings,
    })
}

/// Run one weight-stationary GEMM sequentially, recording a [`Snapshot`] of every PE at
/// every compute cycle of every fold (for pictures and the seed test; small arrays
/// only — memory grows as cycles · R · C).
pub fn trace_ws<E: Element>(
    arr: ArraySpec,
    a: &Matrix<E>,
    w: &Matrix<E>,
) -> Result<Traced<E::Acc>> {
    let g = engine_gemm(arr, a, w)?;
    let (r, c) = (arr.rows as usize, arr.cols as usize);
    let (m, n) = (g.m as usize, g.n as usize);
    let rev = reversed_columns(a);
    let mut cm = vec![E::Acc::default(); m * n];
    let mut traces = Vec::new();
    let mut cur_col0 = usize::MAX;
    let mut block: Vec<E::Acc> = Vec::new();
    let fl: Vec<FoldShape> = folds(Dataflow::Ws, arr, g).collect();
    for (idx, f) in fl.iter().enumerate() {
        let (k0, n0, kf, nf) = (
            f.row0 as usize,
            f.col0 as usize,
            f.rows_used as usize,
            f.cols_used as usize,
        );
        if n0 != cur_col0 {
            cur_col0 = n0;
            block = vec![E::Acc::default(); m * nf];
        }
        let tile: Vec<E::Acc> = (0..kf * nf)
            .map(|x| w.at(k0 + x / nf, n0 + x % nf).widen())
            .collect();
        let sf = ws_fold(r, c, &tile, kf, nf, &rev[k0 * m..], m);
        let mut tr = Vec::new();
        stationary::run_fold(&sf, *f, &mut block, Some(&mut tr));
        traces.push(tr);
        let last_of_block = fl.get(idx + 1).map_or(true, |x| x.col0 as usize != n0);
        if last_of_block {
            place_column_block(&mut cm, n, n0, nf, &block);
        }
    }
    Ok((
        Matrix {
            rows: m,
            cols: n,
            data: cm,
        },
        traces,
    ))
}

/// `rev[k * M + u] = A[M − 1 − u][k]`: A's columns, each reversed (ws streams).
fn reversed_columns<E: Element>(a: &Matrix<E>) -> Vec<E::Acc> {
    let (m, k) = (a.rows, a.cols);
    let mut rev = vec![E::Acc::default(); m * k];
    for mm in 0..m {
        let u = m - 1 - mm;
        for kk in 0..k {
            rev[kk * m + u] = a.data[mm * k + kk].widen();
        }
    }
    rev
}

/// `rev[r * C + u] = X[r][C − 1 − u]`: X's rows, each reversed.
fn reversed_rows<E: Element>(x: &Matrix<E>) -> Vec<E::Acc> {
    let (rows, cols) = (x.rows, x.cols);
    let mut rev = vec![E::Acc::default(); rows * cols];
    for rr in 0..rows {
        for u in 0..cols {
            rev[rr * cols + u] = x.data[rr * cols + cols - 1 - u].widen();
        }
    }
    rev
}

/// Group fold shapes by column block (execution order is column block outer).
fn column_blocks(fl: Vec<FoldShape>) -> Vec<Vec<FoldShape>> {
    let mut out: Vec<Vec<FoldShape>> = Vec::new();
    for f in fl {
        match out.last_mut() {
            Some(b) if b[0].col0 == f.col0 => b.push(f),
            _ => out.push(vec![f]),
        }
    }
    out
}

/// The weight-stationary fold over rows `k0..k0 + kf` of W: `tile` is the kf×nf W tile,
/// `rev` A's reversed columns (see [`reversed_columns`]) from row k0 on, `m` the
/// streamed length.
fn ws_fold<'t, A: Acc>(
    r: usize,
    c: usize,
    tile: &'t [A],
    kf: usize,
    nf: usize,
    rev: &'t [A],
    m: usize,
) -> stationary::StationaryFold<'t, A> {
    stationary::StationaryFold {
        r,
        c,
        tile,
        kf,
        nf,
        rev,
        rev_stride: m,
        s: m,
    }
}

/// Copy an M×nf column block (row-major) into columns `n0..n0 + nf` of the M×N result.
fn place_column_block<A: Acc>(cm: &mut [A], n: usize, n0: usize, nf: usize, block: &[A]) {
    if nf == 0 {
        return;
    }
    for (mm, row) in block.chunks_exact(nf).enumerate() {
        cm[mm * n + n0..mm * n + n0 + nf].copy_from_slice(row);
    }
}

/// Build the M×N result from the column blocks (in execution order) with `place`
/// (`place(result, n, first, width, block)`), and concatenate their fold timings.
fn assemble<A: Acc>(
    m: usize,
    n: usize,
    results: Vec<BlockResult<A>>,
    place: impl Fn(&mut [A], usize, usize, usize, &[A]),
) -> (Matrix<A>, Vec<FoldTiming>) {
    let mut cm = vec![A::default(); m * n];
    let mut timings = Vec::new();
    for (first, width, out, ts) in results {
        place(&mut cm, n, first, width, &out);
        timings.extend(ts);
    }
    (
        Matrix {
            rows: m,
            cols: n,
            data: cm,
        },
        timings,
    )
}

fn run_ws<E: Element>(
    arr: ArraySpec,
    g: Gemm,
    a: &Matrix<E>,
    w: &Matrix<E>,
) -> (Matrix<E::Acc>, Vec<FoldTiming>) {
    let (r, c) = (arr.rows as usize, arr.cols as usize);
    let (m, n) = (g.m as usize, g.n as usize);
    let rev = reversed_columns(a);
    let blocks = column_blocks(folds(Dataflow::Ws, arr, g).collect());
    let results: Vec<BlockResult<E::Acc>> = blocks
        .par_iter()
        .map(|blk| {
            let n0 = blk[0].col0 as usize;
            let nf = blk[0].cols_used as usize;
            let mut out = vec![E::Acc::default(); m * nf];
            let mut ts = Vec::with_capacity(blk.len());
            for f in blk {
                let (k0, kf) = (f.row0 as usize, f.rows_used as usize);
                let mut tile = Vec::with_capacity(kf * nf);
                for i in 0..kf {
                    let row = &w.data[(k0 + i) * n + n0..(k0 + i) * n + n0 + nf];
                    tile.extend(row.iter().map(|v| v.widen()));
                }
                let sf = ws_fold(r, c, &tile, kf, nf, &rev[k0 * m..], m);
                ts.push(stationary::run_fold(&sf, *f, &mut out, None));
            }
            (n0, nf, out, ts)
        })
        .collect();
    assemble(m, n, results, place_column_block)
}

fn run_is<E: Element>(
    arr: ArraySpec,
    g: Gemm,
    a: &Matrix<E>,
    w: &Matrix<E>,
) -> (Matrix<E::Acc>, Vec<FoldTiming>) {
    let (r, c) = (arr.rows as usize, arr.cols as usize);
    let (m, k, n) = (g.m as usize, g.k as usize, g.n as usize);
    // streamed: W's rows reversed (row i of the array takes W[k0 + i][s] at position s)
    let rev = reversed_rows(w);
    let blocks = column_blocks(folds(Dataflow::Is, arr, g).collect());
    let results: Vec<BlockResult<E::Acc>> = blocks
        .par_iter()
        .map(|blk| {
            let m0 = blk[0].col0 as usize;
            let mf = blk[0].cols_used as usize;
            let mut out = vec![E::Acc::default(); n * mf]; // Cᵀ block: out[s][j] = C[m0 + j][s]
            let mut ts = Vec::with_capacity(blk.len());
            for f in blk {
                let (k0, kf) = (f.row0 as usize, f.rows_used as usize);
                let mut tile = Vec::with_capacity(kf * mf);
                for i in 0..kf {
                    for j in 0..mf {
                        tile.push(a.data[(m0 + j) * k + k0 + i].widen());
                    }
                }
                let sf = stationary::StationaryFold {
                    r,
                    c,
                    tile: &tile,
                    kf,
                    nf: mf,
                    rev: &rev[k0 * n..],
                    rev_stride: n,
                    s: n,
                };
                ts.push(stationary::run_fold(&sf, *f, &mut out, None));
            }
            (m0, mf, out, ts)
        })
        .collect();
    // each block holds Cᵀ rows: out[s][j] = C[m0 + j][s]
    assemble(m, n, results, |cm, n, m0, mf, out| {
        for s in 0..n {
            for j in 0..mf {
                cm[(m0 + j) * n + s] = out[s * mf + j];
            }
        }
    })
}

fn run_os<E: Element>(
    arr: ArraySpec,
    g: Gemm,
    a: &Matrix<E>,
    w: &Matrix<E>,
) -> (Matrix<E::Acc>, Vec<FoldTiming>) {
    let r = arr.rows as usize;
    let (m, k, n) = (g.m as usize, g.k as usize, g.n as usize);
    let arev = reversed_rows(a);
    let blocks = column_blocks(folds(Dataflow::Os, arr, g).collect());
    let results: Vec<BlockResult<E::Acc>> = blocks
        .par_iter()
        .map(|blk| {
            let n0 = blk[0].col0 as usize;
            let nf = blk[0].cols_used as usize;
            let rows_t = k + nf - 1;
            let mut skew = vec![E::Acc::default(); rows_t * nf];
            for tau in 0..rows_t {
                for j in 0..nf {
                    if tau >= j && tau - j < k {
                        skew[tau * nf + j] = w.data[(tau - j) * n + n0 + j].widen();
                    }
                }
            }
            let mut out = vec![E::Acc::default(); m * nf];
            let mut ts = Vec::with_capacity(blk.len());
            for f in blk {
                let (m0, mf) = (f.row0 as usize, f.rows_used as usize);
                let of = output::OutputFold {
                    r,
                    mf,
                    nf,
                    k,
                    arev: &arev[m0 * k..],
                    skew: &skew,
                };
                ts.push(output::run_fold(&of, *f, &mut out[m0 * nf..(m0 + mf) * nf]));
            }
            (n0, nf, out, ts)
        })
        .collect();
    assemble(m, n, results, place_column_block)
}

/// Largest absolute difference between two result matrices (0 when equal).
pub fn max_abs_diff<A: Acc>(x: &Matrix<A>, y: &Matrix<A>) -> f64 {
    x.data
        .iter()
        .zip(&y.data)
        .map(|(a, b)| (a.to_f64() - b.to_f64()).abs())
        .fold(0.0, f64::max)
}

//! How a GEMM is cut into folds (array-sized tiles of the stationary operand) for each
//! dataflow, and what one fold costs on its own. Shared by the analytic model (which
//! computes [`FoldTiming`] by formula) and the engine (which measures it).

use crate::shape::{ceil_div, ArraySpec, Dataflow, Gemm};
use serde::Serialize;

/// One fold: the stationary tile's used rows × columns and the length of the stream
/// that passes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FoldShape {
    /// Array rows holding data (≤ R): K-slice for ws/is, M-slice for os.
    pub rows_used: u64,
    /// Array columns holding data (≤ C): N-slice for ws, M-slice for is, N-slice for os.
    pub cols_used: u64,
    /// Stream length in vectors: M for ws, N for is, K for os.
    pub stream: u64,
    /// First row of the stationary tile in its dimension (K for ws/is, M for os).
    pub row0: u64,
    /// First column of the stationary tile in its dimension (N for ws/os, M for is).
    pub col0: u64,
}

/// Timing and traffic of one fold in isolation, in cycles and elements. Times are
/// relative to the fold's first streaming cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FoldTiming {
    /// The fold's shape.
    pub shape: FoldShape,
    /// Cycles spent loading the stationary operand before streaming (R for ws/is: the
    /// tile shifts down through all R rows; 0 for os).
    pub pre: u64,
    /// Cycles from the first streaming cycle until the last result leaves the array
    /// (ws/is: S + R + cols_used − 2) or the last MAC is done (os: S + rows_used +
    /// cols_used − 2).
    pub span: u64,
    /// Cycles from the first streaming cycle until (and including) the last MAC:
    /// S + rows_used + cols_used − 2 for every dataflow.
    pub last_mac_end: u64,
    /// Cycles after `span` to drain stationary results (R for os, 0 for ws/is).
    pub post: u64,
    /// PE-cycles doing a MAC with valid operands (= rows_used·cols_used·stream).
    pub busy: u64,
    /// Stationary-operand elements read from SRAM.
    pub reads_stationary: u64,
    /// Streamed-operand elements read from SRAM (os: A and W together).
    pub reads_streamed: u64,
    /// Result elements written to SRAM (partial sums included).
    pub writes: u64,
}

/// Number of folds of one GEMM copy on the array with the dataflow.
pub fn fold_count(df: Dataflow, a: ArraySpec, g: Gemm) -> u64 {
    let (rd, cd) = fold_dims(df, g);
    ceil_div(rd, a.rows) * ceil_div(cd, a.cols)
}

/// The fold grid of one GEMM: row and column blocks, the last (partial) block's
/// extents, and the stream length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FoldGrid {
    pub row_blocks: u64,
    pub col_blocks: u64,
    pub last_rows: u64,
    pub last_cols: u64,
    pub stream: u64,
}

impl FoldGrid {
    pub(crate) fn new(df: Dataflow, a: ArraySpec, g: Gemm) -> FoldGrid {
        let (rd, cd) = fold_dims(df, g);
        let (row_blocks, col_blocks) = (ceil_div(rd, a.rows), ceil_div(cd, a.cols));
        FoldGrid {
            row_blocks,
            col_blocks,
            last_rows: rd - (row_blocks.max(1) - 1) * a.rows,
            last_cols: cd - (col_blocks.max(1) - 1) * a.cols,
            stream: stream_len(df, g),
        }
    }
}

/// (dimension mapped to rows, dimension mapped to columns) for the dataflow.
pub(crate) fn fold_dims(df: Dataflow, g: Gemm) -> (u64, u64) {
    match df {
        Dataflow::Ws => (g.k, g.n),
        Dataflow::Is => (g.k, g.m),
        Dataflow::Os => (g.m, g.n),
    }
}

/// Stream length for the dataflow.
pub(crate) fn stream_len(df: Dataflow, g: Gemm) -> u64 {
    match df {
        Dataflow::Ws => g.m,
        Dataflow::Is => g.n,
        Dataflow::Os => g.k,
    }
}

/// The folds of one GEMM copy in execution order: column-block outer, row-block inner
/// (so ws/is accumulate one output block over consecutive K folds).
pub fn folds(df: Dataflow, a: ArraySpec, g: Gemm) -> impl Iterator<Item = FoldShape> {
    let (rd, cd) = fold_dims(df, g);
    let s = stream_len(df, g);
    let (r, c) = (a.rows, a.cols);
    let (nr, nc) = (ceil_div(rd, r), ceil_div(cd, c));
    (0..nc).flat_map(move |cb| {
        (0..nr).map(move |rb| {
            let row0 = rb * r;
            let col0 = cb * c;
            FoldShape {
                rows_used: (rd - row0).min(r),
                cols_used: (cd - col0).min(c),
                stream: s,
                row0,
                col0,
            }
        })
    })
}

/// The closed-form timing of one fold (what the engine measures, see tests).
pub fn fold_timing(df: Dataflow, a: ArraySpec, f: FoldShape) -> FoldTiming {
    let r = a.rows;
    let busy = f.rows_used * f.cols_used * f.stream;
    let last_mac_end = f.stream + f.rows_used + f.cols_used - 2;
    match df {
        Dataflow::Ws | Dataflow::Is => FoldTiming {
            shape: f,
            pre: r,
            span: f.stream + r + f.cols_used - 2,
            last_mac_end,
            post: 0,
            busy,
            reads_stationary: f.rows_used * f.cols_used,
            reads_streamed: f.stream * f.rows_used,
            writes: f.stream * f.cols_used,
        },
        Dataflow::Os => FoldTiming {
            shape: f,
            pre: 0,
            span: last_mac_end,
            last_mac_end,
            post: r,
            busy,
            reads_stationary: 0,
            reads_streamed: f.stream * (f.rows_used + f.cols_used),
            writes: f.rows_used * f.cols_used,
        },
    }
}

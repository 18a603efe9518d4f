//! A softmax inside a layer group, as TPU-MLIR 1.30.2's local kernel runs it on bm1684x
//! and bm1688 (`bench/tpumlir_softmax.py`: 25 attention probes on each chip apart from
//! the zoo, and the 48 grouped softmaxes of the transformer zoo's own groupings;
//! `tests/data/tpumlir_softmax.csv`).
//!
//! Local memory holds the scores as TPU-MLIR's NCHW view: `planes` (N) of `channels`
//! over the lanes, each channel `rows` rows of `row` elements, the softmax over each row
//! (attention's [b, q, heads, k]: the queries on the lanes, a row a head). For each
//! plane, the kernel's commands:
//! - **AR** (16 to 19 commands): the subtraction of each row's maximum, the exp's
//!   arithmetic, the division by each row's sum and the casts, at
//!   [`LocalSoftmaxFigures::pass_cycles`] an EU pass over the scores at their width,
//!   plus [`LocalSoftmaxFigures::row_pass_cycles`] an f32 EU pass over each row's
//!   maximum and sum (a lane's rows: one value each).
//! - **SFU**: the exp's table, [`LocalSoftmaxFigures::exp_cycles`] an EU pass.
//! - **PorD** (pooling): each row's maximum at the scores' width and its sum in f32. A
//!   row longer than an EU pass is first folded to one pass' width (one pass over it),
//!   then pooled; a pool takes its window's elements a cycle for each output, on bm1688
//!   times the EU passes over the window's elements of a piece of rows
//!   ([`LocalSoftmaxFigures::pool_row_pieces`]).
//!
//! A slice of [1, 384, 4, 384] scores cut in 3 along C on bm1688 took 22,405 cycles in
//! bert_d256_s384's group (41,868 AR, 16,128 SFU and 9,216 PorD over its 3 slices): this
//! gives 22,604. The element-wise rule for chips without these figures
//! ([`super::SOFTMAX_LOCAL_OPS`] EU passes an element) gives 40,704.

/// A chip's figures for its local softmax kernel (its chip file's `local_softmax_*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LocalSoftmaxFigures {
    /// AR cycles an EU pass over the scores (bm1684x 19, bm1688 18.25).
    pub pass_cycles: f64,
    /// AR cycles an f32 EU pass over a lane's row maxima or sums (bm1684x 33, bm1688 35).
    pub row_pass_cycles: f64,
    /// SFU cycles an EU pass over the scores (7 on both).
    pub exp_cycles: f64,
    /// A pool reads a piece of up to an EU pass of rows for each output row, at EU_NUM
    /// elements a cycle (bm1688: a max over [16, 8] rows took 16 · 8 · 8 cycles, over
    /// [4, 8] 4 · 8 · 4); else one row (bm1684x: 16 · 8 and 4 · 8).
    pub pool_row_pieces: bool,
}

/// One slice of a grouped softmax's scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalSoftmax {
    /// Planes (N), run one after another.
    pub planes: u64,
    /// Channels a plane, over the lanes (C).
    pub channels: u64,
    /// Rows a channel holds (H).
    pub rows: u64,
    /// Elements a row, the softmax's axis (W).
    pub row: u64,
}

impl LocalSoftmax {
    /// TIU cycles of this slice on `lanes` lanes, `eu` elements an EU pass at the scores'
    /// width (the f32 maxima and sums at half that).
    pub fn cycles(&self, lanes: u64, eu: u64, f: &LocalSoftmaxFigures) -> f64 {
        let eu = eu.max(2);
        let lane_rows = self.channels.div_ceil(lanes.max(1));
        let passes = lane_rows.saturating_mul(self.rows.saturating_mul(self.row).div_ceil(eu));
        let row_passes = lane_rows.saturating_mul(self.rows.div_ceil(eu / 2));
        let pools = self
            .reduction(lane_rows, eu, f)
            .saturating_add(self.reduction(lane_rows, eu / 2, f));
        let plane = passes as f64 * (f.pass_cycles + f.exp_cycles)
            + row_passes as f64 * f.row_pass_cycles
            + pools as f64;
        plane * self.planes as f64
    }

    /// Pooling cycles of one plane's reduction of every row at `eu` elements a pass.
    fn reduction(&self, lane_rows: u64, eu: u64, f: &LocalSoftmaxFigures) -> u64 {
        let rows = lane_rows.saturating_mul(self.rows);
        let fold = if self.row > eu {
            rows.saturating_mul(self.row.div_ceil(eu))
        } else {
            0
        };
        let window = self.row.min(eu);
        let piece = if f.pool_row_pieces {
            // the rows cut into the fewest pieces of at most `eu`, evenly
            self.rows / self.rows.div_ceil(eu).max(1)
        } else {
            1
        };
        let per_output = window.saturating_mul(piece.max(1).saturating_mul(window).div_ceil(eu));
        fold.saturating_add(rows.saturating_mul(per_output))
    }
}

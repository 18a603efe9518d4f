//! A weight matmul `[b, s, k]·[k, n]` inside a layer group, as TPU-MLIR 1.30.2's local
//! kernel runs it on bm1684x and bm1688 (its profiles of the transformer zoo,
//! `tests/data/tx_zoo/group_matmuls.jsonl`: 182 matmuls, 162 within 5 % of this, every one
//! within 17 %).
//!
//! Local memory holds the activation as `b` planes of `s` rows over the lanes (TPU-MLIR's
//! NCHW view of a value: each plane starts at lane 0).
//! - **Planes that fill the lanes** run one after another, each ⌈s / lanes⌉ passes of
//!   one lane row (`MM2`): `b · ⌈s / lanes⌉` passes, not the ⌈b · s / lanes⌉ a global
//!   kernel takes.
//! - **Planes whose rows fit the lanes together** (b > 1, b · s ≤ lanes: a short
//!   sequence, a decode step) are gathered first: every other plane's rows are copied
//!   beside the first's (`LANE_COPY`, s · k elements, EU_NUM a cycle), one pass of one
//!   lane row computes them all, and the output's planes are copied back apart
//!   (s · n elements each); where another layer reads the input too (TPU-MLIR's
//!   `left_reuse`), the input's planes are copied back as well (gpt2_d640_s1_b8's
//!   [8, 1, 640]·[640, 640] on bm1684x: 7 copies of 20 cycles, one pass of 3,200, 14
//!   copies of 20, and the bias's broadcast and add: 3,699 cycles; this gives 3,620).
//!
//! The bias's broadcast and add (a few dozen cycles) are left out.

use crate::nd_global::matmul_compute;
use crate::timing::Timing;

/// One weight matmul inside a group.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupMatmul {
    /// Planes (`b`: the batch).
    pub planes: u64,
    /// Rows a plane (`s`: the sequence).
    pub rows: u64,
    /// The contracted dimension.
    pub k: u64,
    /// Output columns.
    pub n: u64,
    /// Another layer reads the input too.
    pub input_reused: bool,
}

impl GroupMatmul {
    /// Whether the planes are gathered into one pass.
    pub fn gathers(&self, lanes: u64) -> bool {
        self.planes > 1 && self.planes.saturating_mul(self.rows) <= lanes
    }

    /// Compute cycles on a chip of `lanes` lanes timed by `t`.
    pub fn compute_cycles(&self, lanes: u64, t: &Timing) -> f64 {
        let lanes = lanes.max(1);
        let pass = |rows: u64| matmul_compute([1, rows, self.k, self.n], lanes as f64, t);
        if !self.gathers(lanes) {
            let passes = self.planes.saturating_mul(self.rows.div_ceil(lanes));
            return pass(passes.saturating_mul(lanes));
        }
        let eu = t.eltwise_per_cycle_per_lane.max(1.0);
        let copy = |width: u64| (self.rows.saturating_mul(width) as f64 / eu).ceil();
        let back = if self.input_reused { copy(self.k) } else { 0.0 };
        let per_plane = copy(self.k) + copy(self.n) + back;
        pass(lanes) + (self.planes - 1) as f64 * per_plane
    }
}

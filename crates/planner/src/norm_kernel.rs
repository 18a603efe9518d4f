//! LayerNorm and RMSNorm as TPU-MLIR 1.30.2's kernels run them on bm1684x and bm1688,
//! inside a layer group (its local kernels) and as a global layer: every norm of the
//! transformer zoo's own groupings (`tests/local_norm.rs`) and the zoo's global norms
//! (`tests/nd_global.rs`).
//!
//! A kernel holds `lane_rows` rows on each lane, each `width` elements, the norm over each
//! row. Read off their commands, each is one of four kinds:
//! - a pass over the rows at the value's width (AR sums, squares, scalings, the pools
//!   that fold each row): [`NormFigures::pass_cycles`] an EU pass over a lane's rows;
//! - a pool over each row an element a cycle (the global kernels' means):
//!   [`NormFigures::element_cycles`] an element of a lane's rows;
//! - a command on each row's one value (the mean, the variance's reciprocal square root
//!   on the SFU, the pools' reductions to one element): [`NormFigures::row_cycles`] a
//!   row;
//! - the weight's (and a LayerNorm's bias's) broadcast over the lanes, once:
//!   [`NormFigures::broadcast_passes`] EU passes over a row.
//!
//! Local kernels (a slice's rows: its N times its C over the lanes), read off the tuned
//! networks' grouped norms (gpt2_d256_s64_b2's LayerNorms, llama_d256_s128's RMSNorms):
//! LayerNorm 12 a pass, 82 a row on bm1684x and 44 on bm1688, 4 passes of broadcast;
//! RMSNorm 18, 49 and 35, 1. llama_d512_s96_b3's RMSNorm [3, 96, 512] on bm1684x, 6 rows
//! a lane of 16 passes: 18 · 96 + 49 · 6 + 16 = 2,038 cycles, as profiled; the
//! element-wise rule before it (the norm's FLOPs an element, EU_NUM a cycle) gave 385.
//!
//! Global kernels (all the rows spread over the lanes) pool each row twice (a
//! LayerNorm) or once (an RMSNorm) an element a cycle: LayerNorm 13 a pass on bm1684x and
//! 11 on bm1688, 2 an element, 35 and 32 a row, 4 passes of broadcast; RMSNorm 10, 1,
//! 33 and 31, 2. bm1684x's global LayerNorm of [16, 2, 128], its 32 rows on 32 lanes of 4
//! passes: 13 · 4 + 2 · 128 + 35 + 4 · 4 = 359 cycles, as profiled.

/// A chip's figures for one of its norm kernels (its chip file's `local_layernorm_*`,
/// `local_rmsnorm_*`, `global_layernorm_*` or `global_rmsnorm_*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NormFigures {
    /// Cycles an EU pass over a lane's rows.
    pub pass_cycles: f64,
    /// Cycles an element of a lane's rows (a pool an element a cycle).
    pub element_cycles: f64,
    /// Cycles a row a lane holds.
    pub row_cycles: f64,
    /// EU passes over one row, once.
    pub broadcast_passes: f64,
}

/// A chip's LayerNorm and RMSNorm kernels of one kind (local or global), where its file
/// gives their figures.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NormKernels {
    /// ONNX LayerNormalization.
    pub layer_norm: Option<NormFigures>,
    /// The RMSNorm TPU-MLIR fuses from its pattern of nodes.
    pub rms_norm: Option<NormFigures>,
}

impl NormKernels {
    /// The figures of the kernel that runs a layer of `op_type`, if it is a norm the
    /// chip gives them for.
    pub fn of(&self, op_type: &str) -> Option<NormFigures> {
        match op_type {
            "LayerNormalization" => self.layer_norm,
            "RMSNorm" => self.rms_norm,
            _ => None,
        }
    }
}

/// What one run of a norm kernel holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NormSlice {
    /// Rows a lane holds.
    pub lane_rows: u64,
    /// Elements a row, the norm's axis.
    pub width: u64,
}

impl NormSlice {
    /// TIU cycles of this run, `eu` elements an EU pass.
    pub fn cycles(&self, eu: u64, f: &NormFigures) -> f64 {
        let passes = self.width.div_ceil(eu.max(1)) as f64;
        let rows = self.lane_rows as f64;
        f.pass_cycles * rows * passes
            + f.element_cycles * rows * self.width as f64
            + f.row_cycles * rows
            + f.broadcast_passes * passes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RMS_BM1684X: NormFigures = NormFigures {
        pass_cycles: 18.0,
        element_cycles: 0.0,
        row_cycles: 49.0,
        broadcast_passes: 1.0,
    };

    #[test]
    fn a_slice_pays_its_passes_its_rows_and_one_broadcast() {
        let slice = NormSlice {
            lane_rows: 6,
            width: 512,
        };
        assert_eq!(slice.cycles(32, &RMS_BM1684X), 2038.0);
        // a width short of a pass still takes one
        let narrow = NormSlice {
            lane_rows: 1,
            width: 20,
        };
        assert_eq!(narrow.cycles(32, &RMS_BM1684X), 18.0 + 49.0 + 1.0);
    }

    #[test]
    fn a_global_kernel_pools_its_rows_an_element_a_cycle() {
        let layer_norm = NormFigures {
            pass_cycles: 13.0,
            element_cycles: 2.0,
            row_cycles: 35.0,
            broadcast_passes: 4.0,
        };
        let all = NormSlice {
            lane_rows: 1,
            width: 128,
        };
        assert_eq!(all.cycles(32, &layer_norm), 359.0);
    }

    #[test]
    fn hostile_sizes_stay_finite() {
        let huge = NormSlice {
            lane_rows: u64::MAX,
            width: u64::MAX,
        };
        assert!(huge.cycles(0, &RMS_BM1684X).is_finite());
    }
}

//! TPU-MLIR's calibration: how its layer-group pass estimates the transfers it moves
//! by cycle slack, from our own cycles.
//!
//! TPU-MLIR moves transfers by its own cycle estimates of each op and transfer (logged
//! by its layer-group pass with `debugger=3`, a debugger file whose
//! `conditional_debug_types` list `cycle_slack`, and `--debug-only=cycle_slack`). Where
//! our cycle model matches them (the chip's `cycles_match_tpu_mlir`) the moves are
//! timed with our op cycles as they are and our transfer cycles turned into its
//! estimates ([`Calibration::dma_estimate`]: on bm1684x they are its profile's cycles,
//! on bm1688 everything but the set-up 1.6× faster). Of the lifetimes TPU-MLIR logged
//! for the groups of `tests/data/tpumlir_lmem_alloc.json`, 261 of 269 on bm1684x and
//! 307 of 340 on bm1688 are reproduced (`tests/tpumlir_alloc.rs`; bm1684x's 30-op
//! ResNet-50 batch-8 group 71 of 77, and a 32-op bm1684x group and a 6-op bm1688 group
//! it refused are refused). On a chip without such figures the moves are timed with
//! the plainer op model (`cost::op_cycles_as`) and [`DMA_ESTIMATE_FRACTION`]
//! of our DMA cycles, and the search also requires a fit with the full DMA cycles (the
//! placer's `margin`).

use super::precision::F32Ops;
use crate::cost::Dir;
use crate::timing::{check_figure, chip_figures, ChipTiming};
use serde::{Deserialize, Serialize};

/// The TPU-MLIR figures of an NPU chip file (beside its geometry and timing), each
/// optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChipCalibration {
    /// Whether the planner's op and GDMA cycles for this chip match TPU-MLIR's
    /// own estimates closely enough to reproduce its time-step moves with them (`None`
    /// = false: the moves are then timed with a plainer model, fitted; see
    /// [`Calibration`]). bm1684x: true, checked on its `cycle_slack` debug
    /// log (ResNet-50 batch 8: every op and transfer of its 30-op group within 6 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_match_tpu_mlir: Option<bool>,
    /// How much faster TPU-MLIR's own layer-group estimate of a transfer is
    /// than its codegen profile (which the chip's GDMA figures follow): the estimate is
    /// the set-up plus the rest of the profiled time divided by this (`None` = 1, the
    /// same). bm1688: 1.6, from its `cycle_slack` debug log of ResNet-18/50 and
    /// mini-MobileNetV2 (a 73,728-byte filter 3,054 cycles against 4,714 profiled, a
    /// 401,408-byte map 15,342 against 24,374, a 512-channel 7×7 store 2,051 against
    /// 3,182; 82 of 89 logged filter and map transfers within 0.2 %); bm1684x: 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpu_mlir_dma_speedup: Option<f64>,
    /// The ops TPU-MLIR computes in f32 under a 16-bit type, by the names of
    /// [`super::precision::F32_OP_NAMES`] (`None`: none). bm1684x: `avgpool`, `sigmoid`,
    /// `tanh`, `hard_sigmoid`, `gelu`; bm1688 `avgpool`, `sigmoid`, `tanh` and
    /// `matmul_bias`, a weight matmul's bias held in f32 (see [`super::precision`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpu_mlir_f32_ops: Option<Vec<String>>,
}

impl ChipCalibration {
    /// Check the figures given (the speed-up finite and positive); `chip` names the chip
    /// in the error.
    pub fn validate(&self, chip: &str) -> tpusim_lmem::Result<()> {
        self.f32_ops(chip)?;
        check_figure(
            chip,
            "tpu_mlir_dma_speedup",
            self.tpu_mlir_dma_speedup,
            "finite and positive",
            |x| x.is_finite() && x > 0.0,
        )
    }
}

impl ChipCalibration {
    /// The set `tpu_mlir_f32_ops` names; `chip` names the chip in the error.
    pub fn f32_ops(&self, chip: &str) -> tpusim_lmem::Result<F32Ops> {
        F32Ops::parse(self.tpu_mlir_f32_ops.as_deref().unwrap_or(&[]), chip)
    }
}

/// The share of our DMA cycles TPU-MLIR's estimate of a transfer is taken to be on a
/// chip whose cycles are not known to match its estimates: fitted on bm1688 before its
/// estimates were known (294 of its 340 logged lifetimes then; with full cycles a group
/// TPU-MLIR allocated did not fit).
pub const DMA_ESTIMATE_FRACTION: f64 = 0.25;

/// The figures of a chip that turn our cycles into TPU-MLIR's estimates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Whether our op and transfer cycles match TPU-MLIR's own estimates on this chip
    /// (the chip's `cycles_match_tpu_mlir`; false on a chip without timing figures).
    pub cycles_match: bool,
    /// TPU-MLIR's estimate of a transfer is its set-up plus the rest of our cycles
    /// divided by this (the chip's `tpu_mlir_dma_speedup`, 1 if unset).
    pub dma_speedup: f64,
    /// Set-up cycles of a load (the chip's `gdma_load_setup_cycles`).
    pub load_setup_cycles: f64,
    /// Set-up cycles of a store (the chip's `gdma_store_setup_cycles`).
    pub store_setup_cycles: f64,
}

impl Calibration {
    /// The calibration of a chip with TPU-MLIR figures `figures` and timing `timing`
    /// (an `NpuChip`'s `tpu_mlir` and `timing`). A chip without timing figures (timed
    /// by the structural fallback of [`crate::Timing::for_figures`]) has none.
    pub fn of(figures: &ChipCalibration, timing: &ChipTiming) -> Calibration {
        let timed = chip_figures(timing).is_some();
        let figure = |f: Option<f64>, unset: f64| if timed { f.unwrap_or(unset) } else { unset };
        Calibration {
            cycles_match: timed && figures.cycles_match_tpu_mlir.unwrap_or(false),
            dma_speedup: figure(figures.tpu_mlir_dma_speedup, 1.0),
            load_setup_cycles: figure(timing.gdma_load_setup_cycles, 0.0),
            store_setup_cycles: figure(timing.gdma_store_setup_cycles, 0.0),
        }
    }

    /// TPU-MLIR's own estimate of a transfer our model gives `cycles`: the set-up of
    /// direction `dir` plus the rest divided by [`Calibration::dma_speedup`] (bm1688: a
    /// 73,728-byte filter load, 4,714 cycles profiled, is estimated at
    /// 290 + 4,424 / 1.6 = 3,055; TPU-MLIR logs 3,054).
    pub fn dma_estimate(&self, dir: Dir, cycles: f64) -> f64 {
        let setup = match dir {
            Dir::Load => self.load_setup_cycles,
            Dir::Store => self.store_setup_cycles,
        }
        .min(cycles);
        setup + (cycles - setup) / self.dma_speedup
    }
}

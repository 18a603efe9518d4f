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
//! the plainer op model ([`crate::cost::op_cycles_as`]) and [`DMA_ESTIMATE_FRACTION`]
//! of our DMA cycles, and the search also requires a fit with the full DMA cycles (the
//! placer's `margin`).

use crate::cost::Dir;
use tpusim_lmem::Chip;

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
    /// The calibration of `chip`. A preset without timing figures (timed by the
    /// structural fallback of [`crate::Timing::for_chip`]) has none.
    pub fn for_chip(chip: &Chip) -> Calibration {
        let timed = crate::options::chip_figures(chip).is_some();
        let figure = |f: Option<f64>, unset: f64| if timed { f.unwrap_or(unset) } else { unset };
        Calibration {
            cycles_match: timed && chip.cycles_match_tpu_mlir.unwrap_or(false),
            dma_speedup: figure(chip.tpu_mlir_dma_speedup, 1.0),
            load_setup_cycles: figure(chip.gdma_load_setup_cycles, 0.0),
            store_setup_cycles: figure(chip.gdma_store_setup_cycles, 0.0),
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

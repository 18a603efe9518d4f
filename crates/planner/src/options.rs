//! Planning options and the chip timing figures the cost model uses.

use crate::error::{PlanError, Result};
use crate::plan::TimingUsed;
use tpusim_layout::ElementType;
use tpusim_lmem::Chip;

/// How groups are searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// Dynamic programming over cuts of the op sequence into consecutive groups, each
    /// candidate taking the first slicing that fits (N first, then H), like TPU-MLIR's
    /// default. The baseline.
    Dp,
    /// The same dynamic program, then each chosen group also tries its first few
    /// fitting slicings and keeps the cheapest (more slices can pipeline better).
    /// Never worse than [`Search::Dp`]. The default.
    DpBestSlicing,
}

/// How a group's blocks get their local-memory addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocator {
    /// TPU-MLIR's (the default): a group of two or more ops is software-pipelined, its
    /// loads and stores moved by cycle slack, and its blocks placed by TPU-MLIR's
    /// greedy allocator ([`crate::tpumlir`]), so a group fits exactly when
    /// TPU-MLIR can allocate it, at the addresses TPU-MLIR gives it.
    TpuMlir,
    /// The spec's: resident weights first, then longest lifetime, then largest, with
    /// bank preferences and in-place adds ([`crate::alloc`]); the transfers of a
    /// pipelined group held over every compute step.
    Spec,
}

/// Options of one planning run.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOptions {
    /// Element type of every activation and weight.
    pub dtype: ElementType,
    /// Apply the spec's h/2 rule: a candidate slicing fails when, after backward
    /// slicing, the rows repeated between a tensor's H slices exceed half its height.
    /// Off by default, as in TPU-MLIR today.
    pub h_half_rule: bool,
    /// Group search strategy.
    pub search: Search,
    /// Longest group considered, ops (bounds the search; at most [`MAX_GROUP_OPS`]).
    /// Default 72: TPU-MLIR's own ResNet-50 plan on bm1684x has a 67-op group, which our
    /// search now finds (at 64 it could not; planning ResNet-50 stays under a second).
    pub max_group_ops: usize,
    /// Local-memory allocator.
    pub allocator: Allocator,
}

/// The most ops one group may hold: a group's time steps (ops + 2) are tracked as bits
/// of a 128-bit mask.
pub const MAX_GROUP_OPS: usize = 120;

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            dtype: ElementType::F16,
            h_half_rule: false,
            search: Search::DpBestSlicing,
            max_group_ops: 72,
            allocator: Allocator::TpuMlir,
        }
    }
}

impl PlanOptions {
    /// Error unless the options are usable.
    pub fn validate(&self) -> Result<()> {
        if self.max_group_ops < 1 || self.max_group_ops > MAX_GROUP_OPS {
            return Err(PlanError::BadOption {
                name: "max_group_ops",
                value: self.max_group_ops.to_string(),
                why: "must be between 1 and 120",
            });
        }
        let bits = self.dtype.bits();
        if !matches!(bits, 8 | 16 | 32) {
            return Err(PlanError::BadOption {
                name: "dtype",
                value: self.dtype.name().to_string(),
                why: "the planner handles 8-, 16- and 32-bit element types",
            });
        }
        Ok(())
    }
}

/// The three figures without which a chip is timed by the structural fallback.
pub(crate) struct ChipFigures {
    /// Clock, Hz.
    pub clock: f64,
    /// Load bandwidth, bytes/s.
    pub bw: f64,
    /// Dense MACs per cycle per lane at 16 bits.
    pub macs: f64,
}

/// `chip`'s own timing figures, or `None` when it lacks one of the three (then
/// [`Timing::for_chip`] uses the structural fallback and no other figure applies).
pub(crate) fn chip_figures(chip: &Chip) -> Option<ChipFigures> {
    Some(ChipFigures {
        clock: chip.clock_hz?,
        bw: chip.gdma_bytes_per_s?,
        macs: chip.macs_per_cycle_per_lane?,
    })
}

/// Chip timing for the cost model, per cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Clock, Hz.
    pub clock_hz: f64,
    /// Global → local DMA (load) bytes per cycle.
    pub gdma_bytes_per_cycle: f64,
    /// Local → global DMA (store) bytes per cycle.
    pub gdma_store_bytes_per_cycle: f64,
    /// Least cycles per (n, c) plane of a load (0 = no floor).
    pub gdma_load_cycles_per_plane: f64,
    /// Least cycles per (n, c) plane of a store (0 = no floor).
    pub gdma_store_cycles_per_plane: f64,
    /// Factor on the per-plane floor for small planes (see [`crate::cost::dma_cycles`]).
    pub gdma_small_plane_factor: f64,
    /// Small planes move in rows of at most this many bytes (0 = one row; see
    /// [`crate::cost::small_plane_units`]).
    pub gdma_small_row_bytes: f64,
    /// Exposed share of the smaller of a global layer's DMA and compute time (see
    /// [`crate::cost::global_cost`]).
    pub global_exposed_fraction: f64,
    /// Cycles every load pays on top of its transfer time.
    pub gdma_load_setup_cycles: f64,
    /// Cycles every store pays on top of its transfer time.
    pub gdma_store_setup_cycles: f64,
    /// Coefficient chunks under this many bytes per output channel are small planes
    /// (the chip's EU_BYTES).
    pub small_coeff_bytes: u64,
    /// Dense conv/gemm multiply-accumulates per cycle per lane at the plan's dtype.
    pub macs_per_cycle_per_lane: f64,
    /// A dense conv takes each plane's output positions this many at a time (the
    /// chip's `conv_position_group`, 1 if unset).
    pub conv_position_group: f64,
    /// Element-wise results (pool, add, activation, depthwise MAC) per cycle per lane:
    /// EU_NUM, one per execution unit.
    pub eltwise_per_cycle_per_lane: f64,
    /// Bits per element of the plan's dtype (the rates above are at this width).
    pub dtype_bits: u32,
    /// Where the figures come from.
    pub source: String,
}

impl Timing {
    /// Timing of `chip` at `dtype`. The preset's `macs_per_cycle_per_lane` is taken as
    /// the 16-bit figure; 8-bit doubles it and 32-bit divides it by 8 (the ratios of
    /// Sophgo's published INT8 / FP16 / FP32 peaks for bm1684x: 32 T, 16 T, 2 T).
    /// Presets without timing use a structural fallback, named as such in `source`:
    /// 1 GHz, one MAC per execution unit per cycle (EU_NUM MACs per lane), and one
    /// EU_BYTES row per lane-group of 4 lanes per cycle for DMA
    /// (`eu_bytes · npu_num / 4` bytes per cycle).
    pub fn for_chip(chip: &Chip, dtype: ElementType) -> Result<Timing> {
        let eu_num = tpusim_lmem::eu_num(chip, dtype)? as f64;
        let scale = match dtype.bits() {
            8 => 2.0,
            16 => 1.0,
            _ => 0.125,
        };
        let fallback_dma = (chip.eu_bytes * chip.npu_num) as f64 / 4.0;
        match chip_figures(chip) {
            Some(ChipFigures { clock, bw, macs }) => Ok(Timing {
                clock_hz: clock,
                gdma_bytes_per_cycle: bw / clock,
                gdma_store_bytes_per_cycle: chip.gdma_store_bytes_per_s.unwrap_or(bw) / clock,
                gdma_load_cycles_per_plane: chip.gdma_load_cycles_per_plane.unwrap_or(0.0),
                gdma_store_cycles_per_plane: chip.gdma_store_cycles_per_plane.unwrap_or(0.0),
                gdma_small_plane_factor: chip.gdma_small_plane_factor.unwrap_or(1.0),
                gdma_small_row_bytes: chip.gdma_small_row_bytes.unwrap_or(0.0),
                global_exposed_fraction: chip.global_exposed_fraction.unwrap_or(0.0),
                gdma_load_setup_cycles: chip.gdma_load_setup_cycles.unwrap_or(0.0),
                gdma_store_setup_cycles: chip.gdma_store_setup_cycles.unwrap_or(0.0),
                small_coeff_bytes: chip.eu_bytes,
                macs_per_cycle_per_lane: (macs * scale).max(1.0),
                conv_position_group: chip.conv_position_group.unwrap_or(1.0),
                eltwise_per_cycle_per_lane: eu_num,
                dtype_bits: dtype.bits(),
                source: chip.source.clone().unwrap_or_else(|| {
                    format!("timing figures of chip '{}' (for presets: data/lmem/{}.toml, with their sources)", chip.name, chip.name)
                }),
            }),
            _ => Ok(Timing {
                clock_hz: 1e9,
                gdma_bytes_per_cycle: fallback_dma,
                gdma_store_bytes_per_cycle: fallback_dma,
                gdma_load_cycles_per_plane: 0.0,
                gdma_store_cycles_per_plane: 0.0,
                gdma_small_plane_factor: 1.0,
                gdma_small_row_bytes: 0.0,
                global_exposed_fraction: 0.0,
                gdma_load_setup_cycles: 0.0,
                gdma_store_setup_cycles: 0.0,
                small_coeff_bytes: chip.eu_bytes,
                macs_per_cycle_per_lane: eu_num,
                conv_position_group: 1.0,
                eltwise_per_cycle_per_lane: eu_num,
                dtype_bits: dtype.bits(),
                source: format!(
                    "structural fallback: preset '{}' has no timing figures (1 GHz, EU_NUM MACs/cycle/lane, eu_bytes*npu_num/4 DMA bytes/cycle)",
                    chip.name
                ),
            }),
        }
    }

    /// The timing a plan recorded (`used`), for re-costing transfers of that plan: the
    /// compute rates not recorded there are the structural ones (EU_NUM per lane).
    pub fn from_used(used: &TimingUsed, eu_bytes: u64, dtype_bits: u32) -> Timing {
        let eu_num = (eu_bytes * 8 / u64::from(dtype_bits.max(1))).max(1) as f64;
        Timing {
            clock_hz: used.clock_hz,
            gdma_bytes_per_cycle: used.gdma_bytes_per_cycle,
            gdma_store_bytes_per_cycle: used.gdma_store_bytes_per_cycle,
            gdma_load_cycles_per_plane: used.gdma_load_cycles_per_plane,
            gdma_store_cycles_per_plane: used.gdma_store_cycles_per_plane,
            gdma_small_plane_factor: used.gdma_small_plane_factor,
            gdma_small_row_bytes: used.gdma_small_row_bytes,
            global_exposed_fraction: used.global_exposed_fraction,
            gdma_load_setup_cycles: used.gdma_load_setup_cycles,
            gdma_store_setup_cycles: used.gdma_store_setup_cycles,
            small_coeff_bytes: eu_bytes,
            macs_per_cycle_per_lane: used.macs_per_cycle_per_lane,
            conv_position_group: 1.0,
            eltwise_per_cycle_per_lane: eu_num,
            dtype_bits,
            source: used.source.clone(),
        }
    }

    /// The figures as recorded in a plan.
    pub fn used(&self) -> TimingUsed {
        TimingUsed {
            clock_hz: self.clock_hz,
            gdma_bytes_per_cycle: self.gdma_bytes_per_cycle,
            gdma_store_bytes_per_cycle: self.gdma_store_bytes_per_cycle,
            gdma_load_cycles_per_plane: self.gdma_load_cycles_per_plane,
            gdma_store_cycles_per_plane: self.gdma_store_cycles_per_plane,
            gdma_small_plane_factor: self.gdma_small_plane_factor,
            gdma_small_row_bytes: self.gdma_small_row_bytes,
            global_exposed_fraction: self.global_exposed_fraction,
            gdma_load_setup_cycles: self.gdma_load_setup_cycles,
            gdma_store_setup_cycles: self.gdma_store_setup_cycles,
            macs_per_cycle_per_lane: self.macs_per_cycle_per_lane,
            source: self.source.clone(),
        }
    }
}

//! TPU-MLIR 1.30.2, reproduced: everything the planner knows of TPU-MLIR lives here,
//! behind this boundary, as the systolic crate keeps SCALE-Sim in `scalesim/`.
//!
//! - [`cache`]: its layer-group cache JSON in and out ([`parse`], [`import`],
//!   [`to_text`]), and the op location names it matches on; [`export`] (`export.rs`),
//!   our grouping as such a cache; [`nd_export`] and [`nd_cache`], the same for a
//!   transformer's grouping, out and back in;
//! - [`lowering`]: the ops and casts TPU-MLIR lowers a 16-bit graph to, by name;
//! - [`precision`]: which ops it computes in f32 under a 16-bit type, per chip;
//! - [`steps`]: its time-step table of a group and its software pipelining, with the
//!   transfers moved by cycle slack;
//! - [`alloc`]: its greedy local-memory allocator;
//! - [`margins`]: which values a group cut along H can give readers that need
//!   different rows of them;
//! - [`calib`]: how its transfer estimates follow from our cycles on each chip;
//! - the pipelined placer (`placer.rs`): a group of two or more ops placed with its
//!   steps and allocator, the placer [`crate::Allocator::TpuMlir`] (the default) plans
//!   with.
//!
//! The generic planner knows none of this: it asks a placer (`crate::ctx::Placer`)
//! to place each candidate group, and the façade chooses which.
//!
//! ## Where the reproduction differs from TPU-MLIR
//!
//! Every difference we know of, with what it costs:
//! - **Lifetimes.** Our time steps give the lifetimes TPU-MLIR logged for 261 of 269
//!   buffers on bm1684x and 307 of 340 on bm1688 (`tests/tpumlir_alloc.rs`). The rest
//!   differ where our op or transfer cycles differ from TPU-MLIR's estimates, which
//!   decide its moves by slack.
//! - **Estimates on other chips.** Where a chip's cycles are not known to match
//!   TPU-MLIR's (no `cycles_match_tpu_mlir`), its moves are timed by a plainer op
//!   model and a fixed share of our DMA cycles ([`calib::DMA_ESTIMATE_FRACTION`]),
//!   and the search admits a group only if it also fits with the full DMA cycles (a
//!   margin), so a group we export is one TPU-MLIR can allocate. A grouping imported
//!   from TPU-MLIR's own cache is admitted without that margin.
//! - **Addresses.** The allocator gives TPU-MLIR's addresses to the byte on the 18
//!   groups of its own and of our exports checked (`tests/tpumlir_alloc.rs`); where
//!   the lifetimes differ, the addresses can too.
//! - **A placement our verifier refuses.** Should TPU-MLIR's placement ever break a
//!   rule of our verifier, the group is placed by the planner's own placer with
//!   every pipelined transfer held throughout instead.
//! - **Single ops.** A group of one op is placed by the planner's own placer;
//!   TPU-MLIR only makes `GroupLayer`s of two or more of its ops (a global average
//!   pool alone is one, with the cast TPU-MLIR puts in front of it).
//! - **Streaming weights.** A sliced group reloads its weights in every slice when
//!   together they fill the lane, and holds them resident otherwise.
//! - **The cache.** An export carries our cycles as `group_cost`, and slices only N
//!   and H (`shape_secs` `[n, 1, 1, h, 1]`); TPU-MLIR recomputes its own costs when
//!   it reads the cache, so those figures are informative only.

pub mod alloc;
pub mod cache;
pub mod calib;
mod combine;
mod export;
pub mod lowering;
pub mod margins;
pub(crate) mod nd_attention;
pub mod nd_buffers;
pub mod nd_cache;
pub mod nd_export;
pub mod nd_form;
pub mod nd_fused;
pub mod nd_fusion;
mod nd_order;
pub(crate) mod nd_place;
mod nd_split;
pub mod nd_unconvertible;
pub(crate) mod placer;
pub mod precision;
pub mod steps;

pub use cache::{
    import, loc_name, match_loc, op_loc, parse, to_text, Cache, CacheGlobal, CacheGroup,
    CachePrefix, Imported,
};
pub use calib::{Calibration, ChipCalibration};
pub use export::export;
pub(crate) use placer::PipelinedPlacer;
pub use precision::F32Ops;

#[cfg(test)]
mod tests;

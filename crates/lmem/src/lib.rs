//! # tpusim-lmem
//!
//! The local memory of Sophgo-style NPUs (BM1684X, BM1688, CV18xx, …): a chip has
//! NPU_NUM lanes, each with its own local memory (LMEM) split into banks; channel c of a
//! tensor lives on lane (start_npu + c) mod NPU_NUM and channels beyond the lanes wrap to
//! the next *row* of each lane. This crate answers, for any tensor:
//!
//! - its **strides** in global memory (contiguous) and in the three local layouts
//!   (EU-aligned, compact, line-aligned), for any start lane ([`strides()`]);
//! - the **bytes each lane reserves**, the lanes it touches, whether it fits from a start
//!   address and which banks it spans ([`lane_bytes()`], [`Placement::fit`]);
//! - the **address** of any element and the inverse ([`Placement::address`],
//!   [`Placement::locate`]);
//! - a **lane map** picture as SVG ([`svg::lane_map`]).
//!
//! Chip figures come from built-in presets (from TPU-MLIR's backend headers) or TOML
//! ([`Chip::from_toml`]). Contract: `docs/spec/03-npu-local-memory.md`.
//!
//! ```
//! use tpusim_lmem::{strides, Chip, LocalLayout, TensorShape};
//! use tpusim_layout::ElementType;
//! let mut chip = Chip::preset("bm1684x").unwrap();
//! chip.npu_num = 4; // the spec's example: 4 NPUs, EU_BYTES 64
//! let s = strides(&chip, &TensorShape::nchw(2, 3, 4, 5), ElementType::F16, LocalLayout::Aligned, 2).unwrap();
//! assert_eq!((s.n, s.c, s.h, s.w), (64, 32, 5, 1));
//! ```
//!
//! This crate never prints, never exits and never reads the environment.
#![deny(missing_docs)]

pub mod chip;
pub mod error;
pub mod placement;
pub mod shape;
pub mod strides;
pub mod svg;

pub use chip::Chip;
pub use error::{LmemError, Result};
pub use placement::{
    address, banks_spanned, fits, locate, Addresser, ElementAddress, LaneFit, Placement,
};
pub use shape::{ElementIndex, LocalLayout, TensorShape};
pub use strides::{
    eu_num, global_bytes, lane_bytes, lane_bytes_unaligned, lanes_used, rows_per_batch, strides,
    Storage, Strides,
};
pub use tpusim_layout::ElementType;

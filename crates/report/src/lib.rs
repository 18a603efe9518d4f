//! # tpusim-report
//!
//! The end-to-end job of tpusim: time a whole network on one chip — a TPU (HBM, VMEM,
//! MXUs, VPU, tiled layouts) or a Sophgo-style NPU (GMEM, LMEM lanes and banks) — and
//! show where time and memory go.
//!
//! Module map:
//! - [`model`]: the report data (the `--json` contract) and its queries (top layers,
//!   top padded tensors, sum of groups).
//! - [`terminal`], [`html`], [`svg`], [`units`]: renderers (text table, self-contained
//!   HTML page with inline SVG pictures) — pure functions from a [`Report`] to text.
//! - [`sweep`]: grids of runs from a TOML file, run in parallel, CSV out.
//!
//! This crate never prints, exits or reads the environment: it returns values and
//! [`ReportError`]s.
#![deny(missing_docs)]

pub mod build;
pub mod error;
pub mod html;
pub mod machine;
pub mod model;
pub mod schedule;
pub mod storage;
pub mod svg;
pub mod sweep;
pub mod terminal;
pub mod timing;
pub mod units;

pub use build::{report, report_graph, ModelSource, Request};
pub use error::{ReportError, Result};
pub use machine::Machine;
pub use model::{BlockReport, GroupReport, LayerReport, LayoutPicture, Report, TensorReport};

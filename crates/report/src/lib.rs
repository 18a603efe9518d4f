//! # tpusim-report
//!
//! The end-to-end job of tpusim: time a whole network on one chip — a TPU (HBM, VMEM,
//! MXUs, VPU, tiled layouts) or a Sophgo-style NPU (GMEM, LMEM lanes and banks) — and
//! show where time and memory go.
//!
//! ```no_run
//! use tpusim_report::{report, terminal, Request};
//! let r = report(&Request::default_run()).unwrap(); // ResNet-50, batch 1, 224², v5e
//! assert!(r.roofline_lower_bound_s <= r.total_time_s);
//! print!("{}", terminal::summary(&r));
//! ```
//!
//! Module map (data flows top to bottom):
//! - [`machine`]: one machine model for a TPU (chip crate) or an NPU (lmem presets), and
//!   the on-chip memory the planner places blocks in (a TPU's VMEM as 128 lanes);
//! - [`storage`]: every tensor in the chip's layout — TPU tiles from the layout crate,
//!   NPU lane footprints from the lmem crate — with logical, moved and stored bytes;
//! - [`timing`]: compute time of an op or slice — the systolic crate's analytic model on
//!   the MXUs, the VPU rate for vector work; the planner's cost model on an NPU;
//! - [`schedule`]: whole-model time from the planner's plan (per group and step,
//!   max(DMA, compute), fill and drain; global ops alone);
//! - [`build`]: the pipeline from a [`Request`] to a [`Report`], with the roofline
//!   lower bound;
//! - [`capacity`]: whether weights and live activations fit HBM, and what would;
//! - [`model`]: the report data (the `--json` contract) and its queries (top layers,
//!   top padded tensors, sum of groups).
//! - [`glossary`]: the overlap rule and what every column means, for both renderers;
//! - [`terminal`], [`html`], [`svg`], [`breakdown`], [`units`]: renderers (text table, self-contained
//!   HTML page with inline SVG pictures) — pure functions from a [`Report`] to text.
//! - [`sweep`]: grids of runs from a TOML file, run in parallel, CSV out;
//!   [`sweep_html`] draws them (throughput against batch per chip and model).
//!
//! Invariants: `total_time_s` is the sum of the groups' times, and equals `compute_s` +
//! `exposed_dma_s` (the overlap rule in [`glossary`]); on an NPU it is the plan's time
//! (`tpusim plan` gives the same cycles); every op is in exactly
//! one group (a global op is a group of one); the roofline lower bound never exceeds
//! the planned time (tests/pipeline.rs proves it over models, chips, batches, dtypes);
//! bytes moved are never below logical bytes. This crate never prints, exits or reads
//! the environment (files are read by the caller): it returns values and
//! [`ReportError`]s.
#![deny(missing_docs)]

pub mod breakdown;
pub mod build;
pub mod capacity;
pub mod error;
pub mod glossary;
pub mod html;
pub mod machine;
pub mod model;
pub mod request;
mod rows;
pub mod schedule;
pub mod storage;
pub mod svg;
pub mod sweep;
pub mod sweep_html;
pub mod terminal;
pub mod timing;
pub mod units;

pub use build::{report, report_graph, report_with_progress};
pub use error::{ReportError, Result};
pub use machine::Machine;
pub use model::{BlockReport, GroupReport, LayerReport, LayoutPicture, Report, TensorReport};
pub use request::{ChipFile, ModelArg, ModelSource, Request, DEFAULT_MODEL, DEFAULT_RESOLUTION};

//! # tpusim-systolic
//!
//! Systolic arrays (the TPU MXU and the seed's weight-stationary array) in three forms:
//!
//! * a **cycle-accurate engine** ([`run_gemm`], [`run_conv`]) that moves real numbers
//!   (i8→i32, i32→i64, bf16→f32, f32) through an R×C grid of PEs for the
//!   weight-, output- and input-stationary dataflows and measures cycles, MACs, busy
//!   PE-cycles, reads and writes;
//! * an **analytic model** ([`analyze`]) that gives the same figures in microseconds
//!   for any GEMM or convolution (tests prove it equal to the engine);
//! * **SCALE-Sim compatibility** ([`scalesim`]): its config and topology files in, its
//!   three reports out, and a mode reproducing its numbers exactly.
//!
//! The library never prints, exits or reads the environment; errors are
//! [`SystolicError`] values naming the offending input.
#![deny(missing_docs)]

mod analytic;
mod conv;
mod element;
mod engine;
mod error;
mod fold;
mod matrix;
pub mod scalesim;
mod schedule;
mod shape;
mod svg;

pub use analytic::{analyze, RunOptions, Stats, MAX_ANALYTIC_FOLDS};
pub use conv::{conv_reference, im2col, run_conv, weights_to_gemm, ConvRun};
pub use element::{Acc, Element};
pub use engine::{
    check_engine_limits, max_abs_diff, run_gemm, trace_ws, EngineRun, Snapshot, Traced,
    MAX_ENGINE_ELEMS, MAX_ENGINE_MACS, MAX_ENGINE_SIDE,
};
pub use error::{Result, SystolicError};
pub use fold::{fold_count, fold_timing, folds, FoldShape, FoldTiming};
pub use half::bf16;
pub use matrix::{reference_matmul, Matrix};
pub use schedule::{Scheduler, Timeline};
pub use shape::{ArraySpec, Conv, Dataflow, Gemm, Workload};
pub use svg::{render_ws_svg, SVG_MAX_CYCLES, SVG_MAX_PES};

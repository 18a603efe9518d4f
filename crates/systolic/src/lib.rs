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
//! * **SCALE-Sim compatibility** ([`scalesim`]): its config, topology and layout files
//!   in, its reports out, and a mode reproducing its numbers exactly — refetches of
//!   operands larger than half their SRAM and array stalls included, CALC and USER,
//!   N:M sparse layers and custom layouts with SRAM bank conflicts.
//!
//! The library never prints, exits or reads the environment; errors are
//! [`SystolicError`] values naming the offending input.
//!
//! ## The cycle model
//!
//! A GEMM C\[M,N\] = A\[M,K\]·W\[K,N\] is cut into folds ([`folds`]): ws maps K to
//! rows and N to columns and streams the M rows of A; is maps K × M and streams the N
//! columns of W; os maps M × N and streams K. One fold with `ru` rows and `cu`
//! columns used and a stream of S vectors costs ([`fold_timing`]):
//!
//! * ws/is: R cycles to load the stationary tile (it shifts down through all R rows),
//!   then S + R + cu − 2 cycles until its last result leaves the bottom edge — the
//!   seed's 3N − 2 for an N×N fold;
//! * os: S + ru + cu − 2 cycles until its last MAC, then R cycles to drain the results.
//!
//! Folds are composed by [`Scheduler`]: unpipelined, loads/drains are exposed; double
//! buffered (the default), the next fold's load overlaps the current fold's stream, so
//! for long streams only the first load shows. [`Stats`] reports cycles, exposed
//! `weight_load_cycles`, MACs, busy PE-cycles, utilization, mapping efficiency, SRAM
//! reads/writes and ideal DRAM traffic. Where this differs from SCALE-Sim see
//! [`scalesim`].
//!
//! ## For other components
//!
//! ```
//! use tpusim_systolic::{analyze, ArraySpec, Conv, Dataflow, RunOptions, Workload};
//! let mut conv = Conv::simple(56, 56, 64, 3, 3, 64);
//! conv.pad_h = 1;
//! conv.pad_w = 1;
//! let wl = Workload::from_conv(&conv).unwrap();
//! let s = analyze(ArraySpec::new(128, 128).unwrap(), &wl,
//!                 RunOptions { dataflow: Dataflow::Ws, double_buffer: true }).unwrap();
//! assert!(s.utilization > 0.4 && s.cycles > wl.macs() / (128 * 128));
//! ```
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
mod summary;
mod svg;

pub use analytic::{analyze, analyze_fold_by_fold, RunOptions, Stats, MAX_ANALYTIC_FOLDS};
pub use conv::{conv_reference, im2col, run_conv, weights_to_gemm, ConvRun};
pub use element::{Acc, Element};
pub use engine::{
    check_conv_engine_limits, check_engine_limits, check_engine_memory, conv_run_bytes,
    engine_gemm_bytes, gemm_run_bytes, max_abs_diff, run_gemm, trace_ws, EngineRun, Snapshot,
    Traced, MAX_ENGINE_ELEMS, MAX_ENGINE_MACS, MAX_ENGINE_MACS_PER_PE, MAX_ENGINE_SIDE,
};
pub use error::{Result, SystolicError};
pub use fold::{fold_count, fold_timing, folds, FoldShape, FoldTiming};
pub use half::bf16;
pub use matrix::{reference_matmul, Matrix};
pub use schedule::{Scheduler, Timeline};
pub use shape::{ArraySpec, Conv, Dataflow, Gemm, Workload};
pub use summary::LayerOut;
pub use svg::{render_ws_svg, SVG_MAX_CYCLES, SVG_MAX_PES};

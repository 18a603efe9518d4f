//! # tpusim-chip
//!
//! A model of TPU-style chips and pods at the level of "How to Scale Your Model"
//! (Austin et al., the TPU and sharding chapters): a chip database, roofline
//! estimates, pod slices on a torus, ICI/PCIe/DCN transfers and collectives.
//! Contract: `docs/spec/02-tpu-chip-model.md`. This crate never prints, never
//! exits and never reads the environment or files: the `tpusim` CLI does the I/O.
//!
//! ## Should I use this?
//!
//! Use it for back-of-the-envelope times (seconds, within the book's assumptions):
//! how long a matmul takes on a chip and which roof binds, how many hosts a slice
//! spans, how long an AllGather over two axes of a v5e pod takes. It is not a
//! cycle model (see `tpusim-systolic` for that).
//!
//! ## The library API (what the report component calls)
//!
//! ```
//! use tpusim_chip::{lookup, roofline, Chip, RateClass, Source};
//!
//! let v5e: Chip = lookup("v5e").unwrap();               // by name or alias
//! assert_eq!(v5e.hbm_bytes_per_s, 8.1e11);               // HBM bandwidth, B/s
//! assert_eq!(v5e.vmem_bytes_per_s(), Some(22.0 * 8.1e11)); // VMEM → MXU, B/s
//! assert_eq!(v5e.peak(RateClass::Int8).ops_per_s, 3.94e14); // peak per dtype
//! assert_eq!((v5e.mxus_per_core, v5e.mxu_dim, v5e.clock_hz), (4, Some(128), Some(1.5e9)));
//! assert_eq!(v5e.vpu_flops_per_s(), Some(8.0 * 128.0 * 4.0 * 1.5e9)); // VPU FLOP/s
//!
//! // A roofline of (FLOPs, bytes, source) at the bf16 MXU rate:
//! let r = roofline(&v5e, 2.7e11, 16e9, Source::Hbm).unwrap();
//! assert_eq!(r.bound, "hbm");
//! assert!((r.t_lower_s - 16e9 / 8.1e11).abs() < 1e-12);
//!
//! // A chip from TOML text (the schema of data/chips/*.toml), validated:
//! let text = tpusim_chip::database::builtin_toml("v5e").unwrap()
//!     .replace("name = \"v5e\"", "name = \"mine\"");
//! let mine = Chip::from_toml_str(&text, "example").unwrap();
//! assert_eq!(mine.name, "mine");
//! ```
//!
//! For other dtypes, units (MXU/VPU) or bandwidth overrides build [`Roofs`] with
//! [`Roofs::of`] and call [`roofline::estimate`]; for matmuls (padding to the MXU,
//! critical batch size) call [`roofline::matmul`].
//!
//! ## Module map
//!
//! - [`chip`]: the [`Chip`] record (every figure, named as in the TOML), validation,
//!   derived figures (VPU FLOP/s, VMEM bandwidth, peaks per dtype with fallbacks).
//! - [`database`]: the built-in chips (`data/chips/*.toml`, embedded) and lookup.
//! - [`dtype`]: rate classes (bf16, f32, int8, int4, fp8) and packed byte sizes.
//! - [`roofline`]: T_math, T_comms, bounds, intensity, matmul padding, critical batch.
//! - [`slice`]: slice shapes, wraparound rules, hosts/cores/FLOP/s/HBM, hop distance,
//!   bisection.
//! - [`transfer`]: point-to-point over ICI, host ↔ chip, host loads, gather/scatter,
//!   slice ↔ slice over DCN.
//! - [`collective`]: AllGather, ReduceScatter, AllReduce, AllToAll over mesh axes.
//! - [`svg`]: a log-log roofline plot as SVG text.
//!
//! ## Conventions and invariants
//!
//! - Sizes are bytes (u64, checked arithmetic where they come from counts), rates are
//!   per second (f64), times are seconds.
//! - Times follow the book: overlapped work takes the max of its terms (the lower
//!   bound); the sum is reported as the upper bound where it differs.
//! - Hop distance is a metric, wraparound never lengthens a path, and no collective
//!   is faster than V / (W · axes) (property tests in `tests/properties.rs`).
//! - Where the book prints a rounded number that differs from its own arithmetic by
//!   more than 2% (problems 2, 4, 6 and 7), we follow the arithmetic; the CLI tests
//!   pin each difference.
#![deny(missing_docs)]

pub mod chip;
pub mod collective;
pub mod database;
pub mod dtype;
pub mod error;
pub mod roofline;
pub mod slice;
pub mod svg;
pub mod transfer;

pub use chip::{Chip, Derived, Peak, Wraparound};
pub use collective::{collective, Collective, CollectiveEstimate};
pub use database::{builtin, lookup};
pub use dtype::RateClass;
pub use error::{ChipError, Result};
pub use roofline::{roofline, Matmul, MatmulEstimate, Roofline, Roofs, Source, Unit};
pub use slice::{parse_shape, Slice, SliceInfo};

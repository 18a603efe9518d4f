//! # tpusim-layout
//!
//! XLA tiled layouts: element types, shapes with layouts in XLA's text format (parse,
//! validate, print), index mapping under repeated tiling, sizes as XLA allocates them,
//! the TPU default tilings, and fast conversion of real data between layouts.
//!
//! Contract: `shared/spec/01-tiled-layouts.md`. This crate never prints, never exits and
//! never reads the environment.
#![deny(missing_docs)]

pub mod element_type;

pub use element_type::{ElementType, UnknownElementType};

//! # tpusim-layout
//!
//! XLA tiled layouts: element types, shapes with layouts in XLA's text format (parse,
//! validate, print), index mapping under repeated tiling, sizes as XLA allocates them,
//! the TPU default tilings, and fast conversion of real data between layouts.
//!
//! Contract: `docs/spec/01-tiled-layouts.md`. This crate never prints, never exits and
//! never reads the environment.
//!
//! ```
//! use tpusim_layout::{parse_valid, Geometry, sizes};
//! let s = parse_valid("F32[3,5]{1,0:T(2,2)}").unwrap();
//! assert_eq!(s.to_string(), "f32[3,5]{1,0:T(2,2)}");
//! let a = s.as_array().unwrap();
//! assert_eq!(Geometry::new(a).unwrap().linear_index(&[2, 3]).unwrap(), 17);
//! assert_eq!(sizes(a).unwrap().array_size_bytes, 96);
//! ```
#![deny(missing_docs)]

pub mod convert;
pub mod element_type;
pub mod error;
pub mod geometry;
pub mod hlo;
pub mod info;
pub mod npy;
pub mod parse;
pub mod shape;
pub mod size;
pub mod svg;
pub mod tpu;
pub mod validate;

pub use convert::{split_major, Piece, Relayout};
pub use element_type::{ElementType, UnknownElementType};
pub use error::{LayoutError, Result};
pub use geometry::Geometry;
pub use info::{shape_info, DimValue, ShapeInfo};
pub use parse::{parse_array, parse_shape, parse_shape_prefix};
pub use shape::{ArrayShape, Dim, Layout, Shape, SplitConfig, Tile, TileDim};
pub use size::{element_bits, sizes, Sizes};
pub use tpu::{doc_default, tpu_default, TpuGen, MAX_DEFAULT_RANK};
pub use validate::{parse_valid, validate};

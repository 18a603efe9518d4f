//! # tpusim-chip
//!
//! (docs below)
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
pub use database::{builtin, lookup};
pub use dtype::RateClass;
pub use error::{ChipError, Result};
pub use collective::{collective, Collective, CollectiveEstimate};
pub use roofline::{roofline, Matmul, MatmulEstimate, Roofline, Roofs, Source, Unit};
pub use slice::{parse_shape, Slice};

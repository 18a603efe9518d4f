//! # tpusim-systolic
//!
//! (crate under construction: see ARCHITECTURE.md for its place in the workspace)
#![deny(missing_docs)]

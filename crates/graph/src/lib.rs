//! # tpusim-graph
//!
//! The network IR ([`ir`]): ops over 4-D (N, C, H, W) tensors in topological order, and
//! the importers that build it (ONNX files, SCALE-Sim topology CSVs, built-in models).
//! Never prints, exits or reads the environment: importers take bytes/text and return a
//! [`Graph`] or a typed error ([`GraphError`]) whose message is one line for a user.
//!
//! Module map:
//! - [`ir`]: the types; [`builder`]: build graphs op by op; [`infer`]: output shapes;
//! - [`validate`]: the IR invariants every graph satisfies (all importers run it);
//! - [`cost`]: MACs, FLOPs and weight counts per op; [`fuse`]: batch-norm/activation
//!   folding into the producing op (TPU-MLIR's inference form); [`cast`]: f32 network
//!   inputs cast to the network's element type on the chip (as TPU-MLIR compiles them);
//! - [`models`]: built-in torchvision models; [`onnx`] and [`topology`]: importers.
//!
//! Entry points: [`import`] (any [`ModelSource`]), or [`load`] (built-in name),
//! [`from_onnx_bytes`], [`from_topology_csv`]. All return graphs as written (batch-norm
//! and activations as separate ops, validated); call [`fuse::fuse`] for the fused form
//! TPU-MLIR plans (BN folded into convs, Relu/Relu6 into their producers).
#![deny(missing_docs)]

pub mod builder;
pub mod cast;
pub mod cost;
pub mod error;
pub mod fuse;
pub mod infer;
pub mod ir;
pub mod models;
pub mod nd;
pub mod onnx;
pub mod order;
pub mod query;
pub mod source;
pub mod topology;
pub mod validate;

pub use builder::GraphBuilder;
pub use error::{GraphError, Result};
pub use ir::*;
pub use source::{import, ModelSource};

/// Builds the built-in model `model` (see [`models::list`]) for `batch` images of
/// `resolution = (H, W)` pixels. The graph is unfused; see [`fuse::fuse`].
pub fn load(model: &str, batch: u64, resolution: (u64, u64)) -> Result<Graph> {
    models::build(model, batch, resolution)
}

/// Imports an ONNX model from the bytes of a `.onnx` file; `batch` and `resolution`
/// (H, W) override the input shapes when given (see [`onnx::OnnxOptions`]).
pub fn from_onnx_bytes(
    bytes: &[u8],
    batch: Option<u64>,
    resolution: Option<(u64, u64)>,
) -> Result<Graph> {
    onnx::from_onnx_bytes(bytes, &onnx::OnnxOptions { batch, resolution })
}

/// Imports a SCALE-Sim topology CSV (conv or GEMM format) as a chain graph named `name`
/// with batch size `batch` (see [`topology`]).
pub fn from_topology_csv(text: &str, name: &str, batch: u64) -> Result<Graph> {
    topology::from_topology_csv(text, name, batch)
}

//! An N-D graph for transformers: any rank, the ops exporters write
//! (`torch.onnx.export`, Hugging Face `optimum`), shape subgraphs folded to
//! constants, dynamic axes bound by the caller, and the work of every node (the
//! matmuls with their batch, rows, reduction and columns; the vector work; data
//! movement) for a timing model to price. The CNN graph ([`crate::ir`]) keeps its NCHW
//! meaning; this one is what a transformer imports as.
//!
//! Weights are never read: an initializer's dims are enough (its data, inline or in an
//! external file, is skipped), so a 7B model's graph imports without its 14 GB.

mod fold;
mod gathers;
mod import;
mod infer;
mod slim;

pub use import::{import_onnx, is_transformer_onnx, Bind};
pub use slim::slim_onnx;

use serde::Serialize;

/// What a node costs, in elements (a timing model multiplies by its byte widths).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Work {
    /// `batch` products `[m, k]·[k, n]`; `weight` when the right operand is a
    /// weight (an initializer), else an activation.
    Matmul {
        /// Independent products.
        batch: u64,
        /// Rows.
        m: u64,
        /// Reduction length.
        k: u64,
        /// Columns.
        n: u64,
        /// The right operand is a weight.
        weight: bool,
    },
    /// Element-wise work, reductions, softmax and norms: `flops` in all.
    Vector {
        /// FLOPs.
        flops: f64,
    },
    /// Data movement that copies (transpose, concat, slice, gather, expand, …).
    Move,
    /// Free: a view (reshape, squeeze, unsqueeze, identity) or folded to a constant.
    Free,
}

/// What an input of a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NdInputKind {
    /// A run-time value (an activation, or an integer index).
    Activation,
    /// A weight (an initializer the node reads).
    Weight,
    /// A constant folded at import (a shape, a scalar, a mask).
    Constant,
}

/// One input of a node: the value it reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdEdge {
    /// The value's name (an ONNX value name).
    pub name: String,
    /// Its dimensions.
    pub dims: Vec<u64>,
    /// Activation, weight or constant.
    pub kind: NdInputKind,
    /// A one-element constant's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scalar: Option<f64>,
}

/// One node of the graph with its work.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdNode {
    /// Node name (or its first output when unnamed).
    pub name: String,
    /// ONNX op type.
    pub op_type: String,
    /// Its work.
    pub work: Work,
    /// Activation elements it reads.
    pub elements_in: f64,
    /// Weight elements it reads.
    pub weight_elements: f64,
    /// Elements it writes.
    pub elements_out: f64,
    /// Dimensions of its first output.
    pub out_dims: Vec<u64>,
    /// What it reads, in input order.
    pub inputs: Vec<NdEdge>,
    /// The names of the values it writes.
    pub outputs: Vec<String>,
    /// A Transpose's permutation (output dim i is input dim `perm[i]`); empty for every
    /// other op.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub perm: Vec<usize>,
}

/// A graph input with its bound dimensions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdInput {
    /// Name.
    pub name: String,
    /// Dimensions after binding dynamic axes.
    pub dims: Vec<u64>,
    /// Of 32-bit floats (a compiler running the graph in 16 bits casts it on entry).
    #[serde(skip)]
    pub f32: bool,
}

/// An imported transformer graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdGraph {
    /// Graph name.
    pub name: String,
    /// Inputs as bound.
    pub inputs: Vec<NdInput>,
    /// Nodes in graph order (folded ones included, as `Free`).
    pub nodes: Vec<NdNode>,
    /// Parameters: elements of every initializer that is not a folded shape constant.
    pub parameters: u64,
    /// ONNX opset of the default domain.
    pub opset: i64,
    /// The file's ONNX IR version (TPU-MLIR 1.30.2's onnx 1.16.2 checks models up to
    /// 10, and simplifies none above it).
    #[serde(skip)]
    pub ir_version: i64,
}

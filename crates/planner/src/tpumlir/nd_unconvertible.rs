//! ONNX ops the N-D importer reads that TPU-MLIR 1.30.2's ONNX front end cannot
//! convert (`OnnxConverter.onnxop_factory` has no entry for them), so it refuses the
//! whole graph at `model_transform.py`: neither its own grouping nor an exported cache
//! of ours can be compiled, and our NPU cycles cannot be checked against it.
//!
//! Read from TPU-MLIR 1.30.2's `python/transform/OnnxConverter.py` and `OnnxOpt.py`,
//! and checked by running its `model_transform.py` on the dynamo exports of
//! `crates/graph/tests/data/nd` (simplified to their static shapes, as its flow does):
//! - `IsNaN` (and `IsInf`): the guards SDPA attention puts after its softmax, which
//!   transformers 5's default `attn_implementation="sdpa"` exports ("Op not
//!   support:{'IsNaN'}", dyn_gpt2_sdpa);
//! - `Gelu`: the opset-20 op the dynamo exporter writes for GELU (TPU-MLIR's own
//!   `GELU` is a fusion of the Erf form older exporters write; "Op not
//!   support:{'Gelu'}", dyn_bert_eager);
//! - `ReduceMean` from opset 18 on, where its axes are an input: the norm rewrites of
//!   `OnnxOpt` were written for the attribute and, matching a ReduceMean with one more
//!   input, refuse the graph ("Unsupport opset for ReduceMean", dyn_qwen3_sdpa).
//!
//! A node folded to a constant (`Work::Free`) never reaches TPU-MLIR: its simplifier
//! folds it too.

use tpusim_graph::nd::{NdGraph, Work};

/// Op types TPU-MLIR 1.30.2 has no ONNX converter for, among those the importer reads.
pub const UNCONVERTIBLE_OPS: [&str; 3] = ["IsNaN", "IsInf", "Gelu"];

/// The first opset whose ReduceMean takes its axes as an input.
const REDUCE_MEAN_AXES_INPUT: i64 = 18;

/// The nodes of `g` TPU-MLIR 1.30.2 cannot convert, as `'name' (OpType)`, in graph
/// order.
pub fn unconvertible_nodes(g: &NdGraph) -> Vec<String> {
    let refused = |op: &str| {
        UNCONVERTIBLE_OPS.contains(&op) || (op == "ReduceMean" && g.opset >= REDUCE_MEAN_AXES_INPUT)
    };
    g.nodes
        .iter()
        .filter(|n| n.work != Work::Free && refused(&n.op_type))
        .map(|n| format!("'{}' ({})", n.name, n.op_type))
        .collect()
}

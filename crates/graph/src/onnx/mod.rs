//! ONNX import: `.onnx` bytes → [`Graph`].
//!
//! Shapes are computed by our own inference ([`crate::infer`]) from the graph input
//! shapes alone, so models without `value_info` import fine; when `value_info` is present
//! (and no batch/resolution override is given) every recorded shape is cross-checked
//! against ours and a disagreement is an error. Initializers become weight tensors (with
//! their ONNX names); small constants (Reshape shapes, Resize scales, Clip bounds) are
//! read as values. Batch-norm keeps its scale and bias as weights (mean and variance fold
//! into them in the inference form). Ops: see [`SUPPORTED_OPS`]; any other op type is an
//! error naming it and its node.

mod nodes;
pub(crate) mod proto;

use std::collections::HashMap;

use onnx_protobuf::{GraphProto, Message, ModelProto};

use crate::builder::GraphBuilder;
use crate::error::{GraphError, Result};
use crate::ir::{Graph, Shape4, TensorId};
use proto::{ConstData, Dim};

/// ONNX op types the importer understands.
pub const SUPPORTED_OPS: &[&str] = &[
    "Conv",
    "ConvTranspose",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "BatchNormalization",
    "Relu",
    "Clip",
    "LeakyRelu",
    "Sigmoid",
    "Tanh",
    "HardSigmoid",
    "HardSwish",
    "Add",
    "Mul",
    "Concat",
    "Upsample",
    "Resize",
    "Gemm",
    "MatMul",
    "Flatten",
    "Reshape",
    "Identity",
    "Dropout",
    "Constant",
];

/// Import options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OnnxOptions {
    /// Replace the batch dimension (dim 0) of every graph input; also fills a symbolic
    /// batch. Default: the file's batch, or 1 when symbolic.
    pub batch: Option<u64>,
    /// Replace (or fill symbolic) height and width of 4-D graph inputs, in pixels.
    pub resolution: Option<(u64, u64)>,
}

/// A named value during import: an activation of the graph being built, or a constant.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    /// An activation tensor and its ONNX dims (rank 1–4).
    Act { id: TensorId, dims: Vec<u64> },
    /// An initializer or `Constant` output.
    Const(ConstData),
}

/// Maps ONNX dims (rank ≤ 4) to our 4-D shape: `[n,c,h,w]` as is, `[n,c,h]` → `n×c×h×1`,
/// `[n,k]` → `n×k×1×1`, `[k]` → `1×k×1×1`, scalar → `1×1×1×1`.
pub(crate) fn to_shape4(dims: &[u64]) -> Option<Shape4> {
    Some(match *dims {
        [] => Shape4::new(1, 1, 1, 1),
        [k] => Shape4::new(1, k, 1, 1),
        [n, k] => Shape4::new(n, k, 1, 1),
        [n, c, h] => Shape4::new(n, c, h, 1),
        [n, c, h, w] => Shape4::new(n, c, h, w),
        _ => return None,
    })
}

/// Import state shared by the node converters.
pub(crate) struct Importer {
    pub b: GraphBuilder,
    pub values: HashMap<String, Value>,
    weights: HashMap<(String, Shape4), TensorId>,
    /// Shapes recorded in the file (`value_info` and graph outputs), for cross-checking.
    recorded: HashMap<String, Vec<Dim>>,
    pub opts: OnnxOptions,
    /// The model's own batch (dim 0 of the first input) before any override.
    pub file_batch: Option<u64>,
    pub opset: i64,
}

impl Importer {
    /// A weight tensor for the constant `name` with our shape `shape` (created once).
    pub fn weight(&mut self, name: &str, shape: Shape4) -> TensorId {
        if let Some(&t) = self.weights.get(&(name.to_string(), shape)) {
            return t;
        }
        let t = self.b.weight(name, shape);
        self.weights.insert((name.to_string(), shape), t);
        t
    }

    /// Records the output value `name` and cross-checks it with the file's shape.
    pub fn set_act(
        &mut self,
        node: &str,
        op_type: &str,
        name: &str,
        id: TensorId,
        dims: Vec<u64>,
    ) -> Result<()> {
        let overridden = self.opts.batch.is_some() || self.opts.resolution.is_some();
        if let (false, Some(rec)) = (overridden, self.recorded.get(name)) {
            let fixed: Option<Vec<u64>> = rec
                .iter()
                .map(|d| match d {
                    Dim::Value(v) => u64::try_from(*v).ok(),
                    Dim::Param(_) => None,
                })
                .collect();
            if let Some(f) = fixed {
                if f != dims {
                    return Err(GraphError::Onnx {
                        node: node.to_string(),
                        op_type: op_type.to_string(),
                        reason: format!("the file records shape {f:?} for '{name}' but inference gives {dims:?}"),
                    });
                }
            }
        }
        self.values
            .insert(name.to_string(), Value::Act { id, dims });
        Ok(())
    }
}

/// Imports an ONNX model from its protobuf bytes. The graph is named after the ONNX
/// graph (or `onnx` when unnamed) and is unfused (see [`crate::fuse::fuse`]).
pub fn from_onnx_bytes(bytes: &[u8], opts: &OnnxOptions) -> Result<Graph> {
    let model = ModelProto::parse_from_bytes(bytes).map_err(|e| {
        GraphError::OnnxDecode(format!("its bytes do not decode as an ONNX protobuf ({e})"))
    })?;
    let Some(graph) = model.graph.as_ref() else {
        if model.ir_version == 0 && model.opset_import.is_empty() {
            return Err(GraphError::OnnxDecode(
                "no graph, ir_version or opset_import in it: is it an ONNX file?".into(),
            ));
        }
        return Err(GraphError::OnnxDecode("the model has no graph".into()));
    };
    if graph.node.is_empty() {
        return Err(GraphError::OnnxDecode(
            "the model's graph has no nodes".into(),
        ));
    }
    let opset = model
        .opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map_or(13, |o| o.version);
    let name = if graph.name.is_empty() {
        "onnx"
    } else {
        graph.name.as_str()
    };
    let mut imp = Importer {
        b: GraphBuilder::new(name),
        values: HashMap::new(),
        weights: HashMap::new(),
        recorded: HashMap::new(),
        opts: *opts,
        file_batch: None,
        opset,
    };
    for v in graph.value_info.iter().chain(&graph.output) {
        if let Some(d) = proto::value_info_dims(v) {
            imp.recorded.insert(v.name.clone(), d);
        }
    }
    for t in &graph.initializer {
        imp.values
            .insert(t.name.clone(), Value::Const(proto::const_data(t)));
    }
    add_inputs(&mut imp, graph)?;
    for node in &graph.node {
        nodes::convert(&mut imp, node)?;
    }
    for o in &graph.output {
        match imp.values.get(&o.name) {
            Some(Value::Act { id, .. }) => imp.b.output(*id),
            Some(Value::Const(_)) => {
                return Err(GraphError::OnnxDecode(format!(
                    "graph output '{}' is a constant",
                    o.name
                )))
            }
            None => {
                return Err(GraphError::OnnxDecode(format!(
                    "graph output '{}' is never produced",
                    o.name
                )))
            }
        }
    }
    imp.b.finish()
}

/// Adds the graph inputs that are not initializers, applying the batch/resolution options.
fn add_inputs(imp: &mut Importer, graph: &GraphProto) -> Result<()> {
    for v in &graph.input {
        if imp.values.contains_key(&v.name) {
            continue; // an initializer listed as input (older exporters)
        }
        let bad =
            |reason: String| GraphError::OnnxDecode(format!("graph input '{}': {reason}", v.name));
        let dims = proto::value_info_dims(v).ok_or_else(|| bad("no tensor shape".into()))?;
        if dims.len() != 4 && dims.len() != 2 {
            return Err(bad(format!(
                "rank {} (only 4-D NCHW and 2-D inputs are supported)",
                dims.len()
            )));
        }
        let mut out = Vec::with_capacity(4);
        for (i, d) in dims.iter().enumerate() {
            let fixed = match d {
                Dim::Value(x) if *x > 0 => Some(*x as u64),
                // 0 or -1 marks a dynamic size in some exporters: like a symbolic one.
                _ => None,
            };
            if i == 0 && imp.file_batch.is_none() {
                imp.file_batch = fixed;
            }
            let given = match (i, dims.len()) {
                (0, _) => Some(imp.opts.batch.or(fixed).unwrap_or(1)),
                (2, 4) => imp.opts.resolution.map(|r| r.0).or(fixed),
                (3, 4) => imp.opts.resolution.map(|r| r.1).or(fixed),
                _ => fixed,
            };
            let Some(x) = given else {
                let what = match i {
                    2 | 3 => "symbolic height/width: give a resolution",
                    _ => "symbolic non-batch dimension",
                };
                return Err(bad(format!("dimension {i} is {what}")));
            };
            if x == 0 {
                return Err(bad(format!("dimension {i} is 0")));
            }
            out.push(x);
        }
        let shape = to_shape4(&out).ok_or_else(|| bad("unsupported rank".into()))?;
        let id = imp.b.input(&v.name, shape);
        imp.values
            .insert(v.name.clone(), Value::Act { id, dims: out });
    }
    Ok(())
}

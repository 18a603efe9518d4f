//! Reading an ONNX transformer into the N-D graph.

use super::fold::{count, Val, MAX_ELEMENTS};
use super::infer::{infer, Fail};
use super::{NdEdge, NdGraph, NdInput, NdInputKind, NdNode, Work};
use crate::error::{GraphError, Result};
use crate::onnx::proto::{attr_ints, const_data, value_info_dims, Dim};
use onnx_protobuf::{ModelProto, NodeProto};
use protobuf::Message;
use std::collections::{HashMap, HashSet};

/// How dynamic axes are bound: an axis named like a batch takes `batch`, one named
/// like a past (cache) length takes `past`, any other named or unknown axis `seq`
/// (the first unnamed one of an input is its batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bind {
    /// Sequences.
    pub batch: u64,
    /// Tokens per sequence.
    pub seq: u64,
    /// Cached tokens per sequence (inputs such as `past_key_values.0.key`).
    pub past: u64,
}

fn bind_dim(d: &Dim, position: usize, bind: &Bind) -> u64 {
    match d {
        Dim::Value(v) if *v > 0 => *v as u64,
        Dim::Param(p) => bind_param(&p.to_ascii_lowercase(), position, bind),
        _ if position == 0 => bind.batch,
        _ => bind.seq,
    }
}

/// A named axis: a sum of terms (optimum's `past_sequence_length + sequence_length`
/// of a mask over the cache and the new tokens, or `past_sequence_length + 1`) binds
/// to the sum of theirs, a total length to past + seq.
fn bind_param(p: &str, position: usize, bind: &Bind) -> u64 {
    if p.contains('+') {
        return p
            .split('+')
            .map(|t| {
                let t = t.trim();
                t.parse::<u64>()
                    .unwrap_or_else(|_| bind_param(t, position.max(1), bind))
            })
            .fold(0u64, u64::saturating_add);
    }
    if p.contains("batch") {
        bind.batch
    } else if p.contains("past") || p.contains("cache") {
        bind.past
    } else if p.contains("total") {
        bind.past.saturating_add(bind.seq)
    } else if p.is_empty() && position == 0 {
        bind.batch
    } else {
        bind.seq
    }
}

/// What an exporter can do instead of writing `node`.
fn hint(node: &NodeProto) -> String {
    if !node.domain.is_empty() && node.domain != "ai.onnx" {
        return format!(
            "it is an op of the '{}' domain (onnxruntime's fused transformer ops): export without the onnxruntime transformer optimizer (optimum: --optimize none / O0; torch.onnx.export writes standard ops)",
            node.domain
        );
    }
    match node.op_type.as_str() {
        "Attention" | "RMSNormalization" | "RotaryEmbedding" => {
            "it is an opset-23 op: export at opset 17 to 21 (torch.onnx.export(..., opset_version=17)) to have it written with standard ops".into()
        }
        "If" | "Loop" | "Scan" => {
            "control flow is not imported: export with fixed shapes (no dynamic branches), e.g. torch.onnx.export without dynamo control flow, or optimum with --no-post-process".into()
        }
        _ => "export at opset 17 with torch.onnx.export(..., opset_version=17), which writes transformers with MatMul, Softmax, LayerNormalization and element-wise ops".into(),
    }
}

fn node_name(node: &NodeProto) -> String {
    if !node.name.is_empty() {
        node.name.clone()
    } else {
        node.output.first().cloned().unwrap_or_default()
    }
}

/// Import an ONNX model's bytes as an N-D graph, dynamic axes bound by `bind`.
/// Whether an ONNX model is a transformer for this importer rather than a CNN for
/// [`crate::onnx`]: no convolution, pooling or batch norm, and a MatMul, Softmax or
/// LayerNormalization, or an input that is neither 2-D nor 4-D.
pub fn is_transformer_onnx(bytes: &[u8]) -> bool {
    let Ok(model) = ModelProto::parse_from_bytes(bytes) else {
        return false;
    };
    let Some(graph) = model.graph.as_ref() else {
        return false;
    };
    let has = |ops: &[&str]| graph.node.iter().any(|n| ops.contains(&n.op_type.as_str()));
    if has(&[
        "Conv",
        "ConvTranspose",
        "MaxPool",
        "AveragePool",
        "GlobalAveragePool",
        "BatchNormalization",
    ]) {
        return false;
    }
    let odd_rank = graph
        .input
        .iter()
        .filter_map(value_info_dims)
        .any(|d| d.len() != 2 && d.len() != 4);
    odd_rank || has(&["MatMul", "Softmax", "LayerNormalization"])
}

/// Import an ONNX model's bytes as an N-D graph, dynamic axes bound by `bind`.
pub fn import_onnx(bytes: &[u8], bind: &Bind) -> Result<NdGraph> {
    let model = ModelProto::parse_from_bytes(bytes).map_err(|e| {
        GraphError::OnnxDecode(format!("its bytes do not decode as an ONNX protobuf ({e})"))
    })?;
    let graph = model
        .graph
        .as_ref()
        .ok_or_else(|| GraphError::OnnxDecode("the model has no graph".into()))?;
    let opset = model
        .opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map_or(13, |o| o.version);
    let mut values: HashMap<String, Val> = HashMap::new();
    let mut producer: HashMap<String, String> = HashMap::new();
    let mut parameters = 0u64;
    for t in &graph.initializer {
        let c = const_data(t);
        let dims: Vec<u64> = c.dims.iter().map(|&d| d.max(0) as u64).collect();
        let elements = count(&dims).ok_or_else(|| {
            GraphError::OnnxDecode(format!(
                "initializer '{}' of dims {dims:?} has more than {MAX_ELEMENTS} elements",
                t.name
            ))
        })?;
        let int = matches!(t.data_type, 6 | 7 | 9);
        let v = match c.values {
            Some(vals) if int || elements <= 1 => Val::constant(dims, vals, int),
            // A large integer or boolean table (a mask buffer) is data, not weights.
            None if int => Val::typed(dims, true),
            _ => {
                parameters = parameters.saturating_add(elements);
                Val {
                    weight: true,
                    ..Val::act(dims)
                }
            }
        };
        values.insert(t.name.clone(), v);
    }
    let mut inputs = Vec::new();
    for i in &graph.input {
        if values.contains_key(&i.name) {
            continue;
        }
        let dims = value_info_dims(i).ok_or_else(|| {
            GraphError::OnnxDecode(format!("graph input '{}' has no tensor shape", i.name))
        })?;
        let dims: Vec<u64> = dims
            .iter()
            .enumerate()
            .map(|(p, d)| bind_dim(d, p, bind))
            .collect();
        let elem_type = i.type_.as_ref().and_then(|t| match &t.value {
            Some(onnx_protobuf::type_proto::Value::TensorType(tt)) => Some(tt.elem_type),
            _ => None,
        });
        inputs.push(NdInput {
            name: i.name.clone(),
            dims: dims.clone(),
            f32: elem_type == Some(1),
        });
        let int = elem_type.is_some_and(|e| matches!(e, 6 | 7 | 9));
        values.insert(
            i.name.clone(),
            Val {
                int,
                ..Val::act(dims)
            },
        );
    }
    let stored: HashSet<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
    let mut nodes = Vec::with_capacity(graph.node.len());
    for node in &graph.node {
        nodes.push(import_node(
            node,
            opset,
            &mut values,
            &mut producer,
            &stored,
        )?);
    }
    Ok(NdGraph {
        name: if graph.name.is_empty() {
            "onnx".into()
        } else {
            graph.name.clone()
        },
        inputs,
        nodes,
        parameters,
        opset,
        ir_version: model.ir_version,
    })
}

fn import_node(
    node: &NodeProto,
    opset: i64,
    values: &mut HashMap<String, Val>,
    producer: &mut HashMap<String, String>,
    stored: &HashSet<&str>,
) -> Result<NdNode> {
    let name = node_name(node);
    let wrong = |reason: String| GraphError::Onnx {
        node: name.clone(),
        op_type: node.op_type.clone(),
        reason,
    };
    let present: Vec<&String> = node.input.iter().take_while(|n| !n.is_empty()).collect();
    let mut ins = Vec::with_capacity(present.len());
    for n in &present {
        let v = values.get(n.as_str()).ok_or_else(|| {
            wrong(format!(
                "its input '{n}' is produced by no earlier node, initializer or graph input"
            ))
        })?;
        ins.push(v.clone());
    }
    let out = infer(node, &ins, opset).map_err(|f| match f {
        Fail::Unsupported => GraphError::OnnxUnsupportedHint {
            op_type: if node.domain.is_empty() { node.op_type.clone() } else { format!("{}.{}", node.domain, node.op_type) },
            node: name.clone(),
            hint: hint(node),
        },
        Fail::NotConst { index, what } => {
            let input = present.get(index).map_or("?".to_string(), |s| s.to_string());
            let from = producer.get(&input).cloned().unwrap_or_else(|| "a graph input".into());
            wrong(format!(
                "its {what} (input '{input}') does not fold to a constant: it comes from {from}, which depends on the values of the graph's inputs, not only on their shapes; export with static shapes, or bind the dynamic axes (--batch, --seq) so the shape subgraph folds"
            ))
        }
        Fail::Bad(reason) => wrong(reason),
    })?;
    let acts: f64 = ins
        .iter()
        .filter(|v| v.konst.is_none() && !v.weight)
        .map(Val::elements)
        .sum();
    let weights: f64 = ins.iter().filter(|v| v.weight).map(Val::elements).sum();
    let produced: f64 = out
        .vals
        .iter()
        .take(node.output.len())
        .map(Val::elements)
        .sum();
    let out_dims = out.vals.first().map(|v| v.dims.clone()).unwrap_or_default();
    let (elements_in, weight_elements, elements_out) = match out.work {
        Work::Free => (0.0, 0.0, 0.0),
        // An embedding lookup reads the rows it gathers, not the whole table.
        Work::Move if ins.first().is_some_and(|v| v.weight) => (acts, produced, produced),
        _ => (acts, weights, produced),
    };
    for (i, o) in node.output.iter().enumerate() {
        if o.is_empty() {
            continue;
        }
        if let Some(v) = out.vals.get(i) {
            if count(&v.dims).is_none() {
                return Err(wrong(format!(
                    "output '{o}' of dims {:?} has more than {MAX_ELEMENTS} elements",
                    v.dims
                )));
            }
        }
        let v = out
            .vals
            .get(i)
            .cloned()
            .ok_or_else(|| wrong(format!("output {i} ('{o}') is not one this op produces")))?;
        producer.insert(o.clone(), format!("node '{name}' ({})", node.op_type));
        values.insert(o.clone(), v);
    }
    let inputs = present
        .iter()
        .zip(&ins)
        .map(|(n, v)| NdEdge {
            name: n.to_string(),
            dims: v.dims.clone(),
            // a large integer table (a mask buffer) is stored data, read as a weight is
            kind: if v.weight || (v.konst.is_none() && stored.contains(n.as_str())) {
                NdInputKind::Weight
            } else if v.konst.is_some() {
                NdInputKind::Constant
            } else {
                NdInputKind::Activation
            },
            scalar: v.konst.as_ref().filter(|k| k.len() == 1).map(|k| k[0]),
        })
        .collect();
    Ok(NdNode {
        name,
        op_type: node.op_type.clone(),
        work: out.work,
        elements_in,
        weight_elements,
        elements_out,
        out_dims,
        inputs,
        outputs: node
            .output
            .iter()
            .filter(|o| !o.is_empty())
            .cloned()
            .collect(),
        perm: transpose_perm(node, ins.first().map_or(0, |v| v.dims.len())),
    })
}

/// A Transpose's permutation over `rank` dims (its `perm`, else the dims reversed, as
/// ONNX defines it), negative axes counted from the end; empty for other ops. Inference
/// has already refused a permutation that does not fit the rank.
fn transpose_perm(node: &NodeProto, rank: usize) -> Vec<usize> {
    if node.op_type != "Transpose" {
        return Vec::new();
    }
    let perm = attr_ints(node, "perm");
    if perm.is_empty() {
        return (0..rank).rev().collect();
    }
    perm.iter()
        .map(|&a| a.rem_euclid(rank.max(1) as i64) as usize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{bind_param, Bind};

    #[test]
    fn named_axes_bind_as_exporters_name_them() {
        let b = Bind {
            batch: 3,
            seq: 5,
            past: 40,
        };
        let at = |p: &str| bind_param(p, 1, &b);
        assert_eq!(at("batch_size"), 3);
        assert_eq!(at("sequence_length"), 5);
        assert_eq!(at("past_sequence_length"), 40);
        assert_eq!(at("past_sequence_length + sequence_length"), 45);
        assert_eq!(at("past_sequence_length + 1"), 41);
        assert_eq!(at("total_sequence_length"), 45);
        assert_eq!(bind_param("", 0, &b), 3);
    }
}

//! TPU-MLIR 1.30.2's inference form of a transformer graph (`tpusim_graph::nd`): the
//! layers its F16/BF16 lowering makes of the ONNX nodes, read off its `*_tpu_opt.mlir`
//! for the transformer zoo of `bench/tpumlir_tx_zoo.py` on bm1684x.
//!
//! - A weight MatMul takes the bias Add after it.
//! - RMSNorm written out (Pow 2, ReduceMean, Add ε, Sqrt, Reciprocal, Mul by x, Mul by the
//!   weight) is one `RMSNorm` layer.
//! - x·Sigmoid(x) is one SiLU activation.
//! - The transposes into and out of the attention's two matmuls are folded into them
//!   (TPU-MLIR's `hdim_is_batch` MatMul reads the heads where they lie).
//! - Under a 16-bit type, `Pow(x, c)` for any other c runs in f32 as |x|, ln, ×(c − 1), exp
//!   and a product with x, between a cast in and a cast out; the chip's f32 ops
//!   (`tpu_mlir_f32_ops`: tanh, sigmoid, …) run between two casts.
//!
//! Nodes that do no work (views, folded shape arithmetic) make no layer.

use super::F32Ops;
use std::collections::HashMap;
use tpusim_graph::nd::{NdGraph, NdInputKind, NdNode, Work};

/// One layer of TPU-MLIR's form.
#[derive(Debug, Clone, PartialEq)]
pub struct TxLayer {
    /// The graph node it stands for (the last of a fused pattern).
    pub name: String,
    /// What it is: the ONNX op type, or the fused layer's (`RMSNorm`, `SiLU`, `Cast`, and
    /// the f32 parts of a Pow: `Abs`, `Log`, `MulConst`, `Exp`, `Mul`).
    pub op_type: String,
    /// Its work.
    pub work: Work,
    /// Activation elements it reads.
    pub elements_in: f64,
    /// Weight elements it reads.
    pub weight_elements: f64,
    /// Elements it writes.
    pub elements_out: f64,
    /// Bits of what it reads and computes, where wider than the plan's type (f32 parts).
    pub wide_in: bool,
    /// Bits of what it writes, where wider than the plan's type.
    pub wide_out: bool,
    /// Indices of the graph nodes it stands for (none for the casts and the other parts
    /// a lowering adds).
    pub nodes: Vec<usize>,
    /// The activations and weights it reads (folded constants left out).
    pub reads: Vec<TxValue>,
    /// The values it writes.
    pub writes: Vec<TxValue>,
}

/// A value a layer reads or writes.
#[derive(Debug, Clone, PartialEq)]
pub struct TxValue {
    /// Its name: the ONNX value's, or `<layer>#<part>` for one a lowering adds.
    pub name: String,
    /// Its dimensions.
    pub dims: Vec<u64>,
    /// A weight.
    pub weight: bool,
    /// Held in f32 under a 16-bit plan.
    pub wide: bool,
}

impl TxValue {
    /// Its elements.
    pub fn elements(&self) -> f64 {
        self.dims.iter().map(|&d| d as f64).product()
    }
}

/// What `n` reads: its activations and weights.
fn reads_of(n: &NdNode) -> Vec<TxValue> {
    n.inputs
        .iter()
        .filter(|e| e.kind != NdInputKind::Constant)
        .map(|e| TxValue {
            name: e.name.clone(),
            dims: e.dims.clone(),
            weight: e.kind == NdInputKind::Weight,
            wide: false,
        })
        .collect()
}

/// What `n` writes: its outputs, the first of its first output's dims and the others
/// sharing what is left of its elements.
fn writes_of(n: &NdNode) -> Vec<TxValue> {
    let first: f64 = n.out_dims.iter().map(|&d| d as f64).product();
    let rest = (n.elements_out - first).max(0.0);
    let others = n.outputs.len().saturating_sub(1).max(1) as f64;
    n.outputs
        .iter()
        .enumerate()
        .map(|(i, o)| TxValue {
            name: o.clone(),
            dims: if i == 0 {
                n.out_dims.clone()
            } else {
                vec![(rest / others).round() as u64]
            },
            weight: false,
            wide: false,
        })
        .collect()
}

impl TxLayer {
    fn of(i: usize, n: &NdNode) -> TxLayer {
        TxLayer {
            name: n.name.clone(),
            op_type: n.op_type.clone(),
            work: n.work,
            elements_in: n.elements_in,
            weight_elements: n.weight_elements,
            elements_out: n.elements_out,
            wide_in: false,
            wide_out: false,
            nodes: vec![i],
            reads: reads_of(n),
            writes: writes_of(n),
        }
    }

    /// A synthetic value of this layer's output shape, `<name>#<part>`.
    fn own_value(&self, part: &str, wide: bool) -> TxValue {
        let dims = self
            .writes
            .first()
            .map(|v| v.dims.clone())
            .unwrap_or_default();
        TxValue {
            name: format!("{}#{part}", self.name),
            dims,
            weight: false,
            wide,
        }
    }

    /// A part of a lowered node (standing for no node of its own): `op_type` over its
    /// elements, reading `reads` and writing `writes`.
    fn part(base: &TxLayer, op_type: &str, reads: Vec<TxValue>, writes: Vec<TxValue>) -> TxLayer {
        let per = base.elements_out;
        let inputs = reads.len() as f64;
        let wide_in = reads.iter().any(|v| v.wide);
        let wide_out = writes.iter().any(|v| v.wide);
        TxLayer {
            op_type: op_type.into(),
            work: if op_type == "Cast" {
                Work::Move
            } else {
                Work::Vector { flops: per }
            },
            elements_in: per * inputs,
            weight_elements: 0.0,
            wide_in,
            wide_out,
            nodes: Vec::new(),
            reads,
            writes,
            ..base.clone()
        }
    }
}

/// The graph's consumers: value name → indices of the nodes that read it.
fn consumers(g: &NdGraph) -> HashMap<&str, Vec<usize>> {
    let mut map: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        for e in &n.inputs {
            map.entry(e.name.as_str()).or_default().push(i);
        }
    }
    map
}

struct Form<'a> {
    g: &'a NdGraph,
    readers: HashMap<&'a str, Vec<usize>>,
    taken: Vec<bool>,
}

impl<'a> Form<'a> {
    /// The one node that reads `node`'s first output, if exactly one does and it is of
    /// `op_type`.
    fn sole_reader(&self, node: usize, op_type: &str) -> Option<usize> {
        let out = self.g.nodes[node].outputs.first()?;
        match self.readers.get(out.as_str()).map(Vec::as_slice) {
            Some(&[j]) if self.g.nodes[j].op_type == op_type && !self.taken[j] => Some(j),
            _ => None,
        }
    }

    fn input_named(&self, node: usize, name: &str) -> bool {
        self.g.nodes[node].inputs.iter().any(|e| e.name == name)
    }

    fn scalar(&self, node: usize) -> Option<f64> {
        self.g.nodes[node].inputs.iter().find_map(|e| e.scalar)
    }

    /// RMSNorm from its Pow 2: the seven nodes, or `None`.
    fn rms_norm(&self, pow: usize) -> Option<Vec<usize>> {
        let x = &self.g.nodes[pow].inputs.first()?.name;
        let mean = self.sole_reader(pow, "ReduceMean")?;
        let eps = self.sole_reader(mean, "Add")?;
        let sqrt = self.sole_reader(eps, "Sqrt")?;
        let inv = self.sole_reader(sqrt, "Reciprocal")?;
        let norm = self
            .sole_reader(inv, "Mul")
            .filter(|&m| self.input_named(m, x))?;
        let scale = self.sole_reader(norm, "Mul")?;
        let weighted = self.g.nodes[scale]
            .inputs
            .iter()
            .any(|e| e.kind == NdInputKind::Weight);
        weighted.then(|| vec![pow, mean, eps, sqrt, inv, norm, scale])
    }

    /// x·Sigmoid(x) from the Sigmoid: the Mul, or `None`.
    fn silu(&self, sigmoid: usize) -> Option<usize> {
        let x = &self.g.nodes[sigmoid].inputs.first()?.name;
        self.sole_reader(sigmoid, "Mul")
            .filter(|&m| self.input_named(m, x))
    }

    /// The bias Add right after a weight MatMul, or `None`.
    fn bias(&self, matmul: usize) -> Option<usize> {
        let add = self.sole_reader(matmul, "Add")?;
        let n = &self.g.nodes[add];
        let last = n.out_dims.last().copied().unwrap_or(0) as f64;
        (n.weight_elements > 0.0 && n.weight_elements <= last).then_some(add)
    }

    /// Whether a Transpose feeds or is fed by a matmul of two activations only.
    fn folds_into_attention(&self, t: usize) -> bool {
        let is_attention =
            |j: usize| matches!(self.g.nodes[j].work, Work::Matmul { weight: false, .. });
        let n = &self.g.nodes[t];
        let reads = n
            .outputs
            .first()
            .and_then(|o| self.readers.get(o.as_str()))
            .is_some_and(|r| !r.is_empty() && r.iter().all(|&j| is_attention(j)));
        let fed = n.inputs.first().is_some_and(|e| {
            self.g.nodes[..t]
                .iter()
                .rposition(|p| p.outputs.contains(&e.name))
                .is_some_and(is_attention)
        });
        reads || fed
    }
}

/// TPU-MLIR's layers of `g` under a plan of `bits`-bit data on a chip whose compiler runs
/// `f32_ops` in f32 (an empty set: a chip that is not TPU-MLIR's, whose graph stays as
/// written but for the fusions).
pub fn lower(g: &NdGraph, f32_ops: F32Ops, bits: u32) -> Vec<TxLayer> {
    let mut form = Form {
        g,
        readers: consumers(g),
        taken: vec![false; g.nodes.len()],
    };
    let narrow = bits < 32 && !f32_ops.is_empty();
    let mut layers = Vec::new();
    for (i, n) in g.nodes.iter().enumerate() {
        if form.taken[i] || n.work == Work::Free {
            continue;
        }
        let mut layer = TxLayer::of(i, n);
        match n.op_type.as_str() {
            "Pow" if form.scalar(i) == Some(2.0) => {
                if let Some(nodes) = form.rms_norm(i) {
                    let last = &g.nodes[nodes[6]];
                    let flops = nodes.iter().map(|&j| match g.nodes[j].work {
                        Work::Vector { flops } => flops,
                        _ => 0.0,
                    });
                    let mut reads = layer.reads;
                    reads.extend(reads_of(last).into_iter().filter(|v| v.weight));
                    layer = TxLayer {
                        name: last.name.clone(),
                        op_type: "RMSNorm".into(),
                        work: Work::Vector { flops: flops.sum() },
                        weight_elements: last.weight_elements,
                        elements_out: last.elements_out,
                        nodes: nodes.clone(),
                        reads,
                        writes: writes_of(last),
                        ..layer
                    };
                    nodes.iter().for_each(|&j| form.taken[j] = true);
                }
            }
            "Sigmoid" => {
                if let Some(mul) = form.silu(i) {
                    form.taken[mul] = true;
                    layer.name = g.nodes[mul].name.clone();
                    layer.op_type = "SiLU".into();
                    layer.nodes.push(mul);
                    layer.writes = writes_of(&g.nodes[mul]);
                }
            }
            "MatMul" if matches!(n.work, Work::Matmul { weight: true, .. }) => {
                if let Some(add) = form.bias(i) {
                    form.taken[add] = true;
                    layer.weight_elements += g.nodes[add].weight_elements;
                    layer.nodes.push(add);
                    layer
                        .reads
                        .extend(reads_of(&g.nodes[add]).into_iter().filter(|v| v.weight));
                    layer.writes = writes_of(&g.nodes[add]);
                }
            }
            "Transpose" if form.folds_into_attention(i) => continue,
            _ => {}
        }
        form.taken[i] = true;
        if narrow && layer.op_type == "Pow" {
            layers.extend(pow_in_f32(&layer));
        } else if narrow && runs_in_f32(f32_ops, &layer.op_type) {
            layers.extend(between_casts(layer));
        } else {
            layers.push(layer);
        }
    }
    layers
}

fn runs_in_f32(f32_ops: F32Ops, op_type: &str) -> bool {
    let onnx = if op_type == "SiLU" {
        "Sigmoid"
    } else {
        op_type
    };
    f32_ops.runs_in_f32_onnx(onnx)
}

/// `layer` in f32 between a cast in and a cast out.
fn between_casts(layer: TxLayer) -> Vec<TxLayer> {
    let (acts, weights): (Vec<TxValue>, Vec<TxValue>) =
        layer.reads.iter().cloned().partition(|v| !v.weight);
    let wide_in = layer.own_value("f32_in", true);
    let wide_out = layer.own_value("f32_out", true);
    let cast_in = TxLayer {
        elements_in: layer.elements_in,
        ..TxLayer::part(&layer, "Cast", acts, vec![wide_in.clone()])
    };
    let cast_out = TxLayer::part(&layer, "Cast", vec![wide_out.clone()], layer.writes.clone());
    let mut reads = vec![wide_in];
    reads.extend(weights);
    let wide = TxLayer {
        wide_in: true,
        wide_out: true,
        reads,
        writes: vec![wide_out],
        ..layer
    };
    vec![cast_in, wide, cast_out]
}

/// `Pow(x, c)` in f32: cast, |x|, ln, ×(c − 1), exp, × x, cast.
fn pow_in_f32(layer: &TxLayer) -> Vec<TxLayer> {
    let x: Vec<TxValue> = layer.reads.iter().filter(|v| !v.weight).cloned().collect();
    let v = |part: &str| layer.own_value(part, true);
    let part =
        |t: &str, reads: Vec<TxValue>, writes: Vec<TxValue>| TxLayer::part(layer, t, reads, writes);
    vec![
        part("Cast", x, vec![v("x")]),
        part("Abs", vec![v("x")], vec![v("abs")]),
        part("Log", vec![v("abs")], vec![v("log")]),
        part("MulConst", vec![v("log")], vec![v("scaled")]),
        part("Exp", vec![v("scaled")], vec![v("exp")]),
        TxLayer {
            nodes: layer.nodes.clone(),
            ..part("Mul", vec![v("x"), v("exp")], vec![v("pow")])
        },
        part("Cast", vec![v("pow")], layer.writes.clone()),
    ]
}

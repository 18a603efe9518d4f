//! TPU-MLIR 1.30.2's inference form of a transformer graph (`tpusim_graph::nd`): the
//! layers its F16/BF16 lowering makes of the ONNX nodes, read off its `*_tpu_opt.mlir`
//! for the transformer zoo of `bench/tpumlir_tx_zoo.py` on bm1684x.
//!
//! - A weight MatMul takes the bias Add after it, and its name.
//! - RMSNorm written out (Pow 2, ReduceMean, Add ε, Sqrt, Reciprocal, Mul by x, Mul by the
//!   weight) is one `RMSNorm` layer.
//! - x·Sigmoid(x) is one SiLU activation.
//! - The attention's two matmuls read the heads where they lie, with the permutes TPU-MLIR
//!   adds around them ([`super::nd_attention`]); the other transposes next to an
//!   attention matmul make no layer.
//! - A transpose (0, 2, 1, 3) elsewhere (LLaMA's Q, K and V before the rotary embedding
//!   and the key/value repeat) is a `Permute`, as in TPU-MLIR's form.
//! - A Split is one slice per piece (`split_28_0_Split`, …).
//! - Under a 16-bit type the graph's outputs are cast to f32 (`matmul_158_0_MatMul_f32`).
//! - `Pow(x, 2)` otherwise is x·x and `Pow(x, 0.5)` a Sqrt (TPU-MLIR's `PowToBinary`).
//! - Under a 16-bit type, `Pow(x, c)` for any other c runs in f32 as |x|, ln, ×(c − 1), exp
//!   and a product with x, between a cast in and a cast out; the chip's f32 ops
//!   (`tpu_mlir_f32_ops`: tanh, sigmoid, sqrt, a Div by an activation, …) run between
//!   two casts, none between two of them in a row.
//! - A weight MatMul whose output (its bias added) a Split cuts into columns is one MatMul
//!   per piece, named as [`super::nd_split`] says.
//!
//! The layers come in TPU-MLIR's op order, the casts named as it names them, each permute
//! beside the group that will fuse it ([`super::nd_order`]).
//!
//! Nodes that do no work (views, folded shape arithmetic) make no layer, and neither do
//! nodes of weights and constants alone: TPU-MLIR folds them into weights (GPT-2's
//! position embedding becomes the Add's weight `gather_12_0_f16`; a causal mask sliced
//! from its buffer the Where's).

use super::nd_split::{cut_at_top, names_where_cut, Piece, PieceNames};
use super::F32Ops;
use std::collections::HashMap;
use tpusim_graph::nd::{NdGraph, NdInput, NdInputKind, NdNode, Work};

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
    /// An attention matmul that reads the heads where they lie (TPU-MLIR's
    /// `hdim_is_batch`, [`super::nd_attention`]): it may join a layer group.
    pub heads_as_batch: bool,
    /// One head of an attention TPU-MLIR fuses into `tpu.Attention`
    /// ([`super::nd_fused`]), with its shape.
    pub head: Option<super::nd_fused::AttentionHead>,
    /// Indices of the graph nodes it stands for (none for the casts and the other parts
    /// a lowering adds).
    pub nodes: Vec<usize>,
    /// The activations and weights it reads (folded constants left out).
    pub reads: Vec<TxValue>,
    /// The values it writes.
    pub writes: Vec<TxValue>,
    /// The names TPU-MLIR gives the ops it stands for (`<ONNX output>_<ONNX type>`, a
    /// Split one per output, a fused pattern its last node's, a cast its producer's and
    /// reader's joined with `_f32` or `_f16`, a lowered Pow's parts `_abs`, `_log`,
    /// `_mul_const`, `_exp`).
    pub locs: Vec<String>,
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
    /// A weight an element-wise binary layer broadcasts against an activation, which
    /// TPU-MLIR cuts in the group's slices with that activation (every other weight it
    /// holds whole).
    pub split: bool,
    /// An activation TPU-MLIR holds whole in a group cut in slices: the right operand
    /// of a heads-as-batch matmul (K of Q·Kᵀ, V of P·V), as it holds a matmul's weight.
    pub held: bool,
}

impl TxValue {
    /// An activation named `name` of `dims`, in the plan's type.
    pub fn activation(name: impl Into<String>, dims: Vec<u64>) -> TxValue {
        TxValue {
            name: name.into(),
            dims,
            weight: false,
            wide: false,
            split: false,
            held: false,
        }
    }

    /// Its elements.
    pub fn elements(&self) -> f64 {
        self.dims.iter().map(|&d| d as f64).product()
    }
}

/// TPU-MLIR's names of the ops node `n` becomes: `<first output>_<type>`, and a Split
/// one Slice per output.
pub(super) fn locs_of(n: &NdNode) -> Vec<String> {
    let named = |o: &String| format!("{o}_{}", n.op_type);
    if n.op_type == "Split" {
        return n.outputs.iter().map(named).collect();
    }
    n.outputs.first().map(named).into_iter().collect()
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
            split: false,
            held: false,
        })
        .collect()
}

/// A weight of a layer that is not a matmul (a norm's scale, rotary's cos/sin tables,
/// a mask) as TPU-MLIR holds it, laid out as an activation: reshaped to the output's
/// rank, leading dims of 1 (llama_d320_s256's [256, 64] cos table is loaded as
/// [1, 1, 256, 64], 32 KiB of every bm1688 lane), and cut in the group's slices when an
/// element-wise binary layer broadcasts it (that table, in two H slices); a Where's
/// tiled to the output and held whole (its causal mask, [1, 5, 256, 256], 128 KiB of
/// every lane in a group of 4 H slices on bm1684x).
fn broadcast_weights(l: &mut TxLayer) {
    if matches!(l.work, Work::Matmul { .. }) {
        return;
    }
    let Some(out) = l.writes.first().map(|v| v.dims.clone()) else {
        return;
    };
    let binary = matches!(
        l.op_type.as_str(),
        "Add" | "Sub" | "Mul" | "Div" | "Max" | "Min"
    );
    let mut tiled = 0.0;
    for v in l.reads.iter_mut().filter(|v| v.weight) {
        if l.op_type == "Where" {
            // tiled to the output (`where_89_0_Where_Tile`), loaded whole, and so read
            // whole by a global Where too (bm1688: 31,740 cycles for [1, 8, 128, 128],
            // its two full-size inputs' worth)
            let before = v.elements();
            v.dims = out.clone();
            tiled += v.elements() - before;
            continue;
        }
        if v.dims.len() < out.len() {
            let mut dims = vec![1; out.len() - v.dims.len()];
            dims.extend(&v.dims);
            v.dims = dims;
        }
        v.split = binary;
    }
    l.weight_elements += tiled.max(0.0);
}

/// What `n` writes: its outputs, the first of its first output's dims, each other one
/// the same dims but for the last, which takes its share of the elements left (a Split's
/// pieces).
pub(super) fn writes_of(n: &NdNode) -> Vec<TxValue> {
    let first: f64 = n.out_dims.iter().map(|&d| d as f64).product();
    let rest = (n.elements_out - first).max(0.0);
    let others = n.outputs.len().saturating_sub(1).max(1) as f64;
    let lead: f64 = n
        .out_dims
        .split_last()
        .map_or(1.0, |(_, r)| r.iter().map(|&d| d as f64).product());
    n.outputs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let mut dims = n.out_dims.clone();
            if i > 0 {
                let last = (rest / others / lead.max(1.0)).round() as u64;
                match dims.last_mut() {
                    Some(d) => *d = last,
                    None => dims.push(last),
                }
            }
            TxValue {
                name: o.clone(),
                dims,
                weight: false,
                wide: false,
                split: false,
                held: false,
            }
        })
        .collect()
}

impl TxLayer {
    pub(super) fn of(i: usize, n: &NdNode) -> TxLayer {
        TxLayer {
            name: n.name.clone(),
            op_type: n.op_type.clone(),
            work: n.work,
            elements_in: n.elements_in,
            weight_elements: n.weight_elements,
            elements_out: n.elements_out,
            wide_in: false,
            wide_out: false,
            heads_as_batch: false,
            head: None,
            nodes: vec![i],
            reads: reads_of(n),
            writes: writes_of(n),
            locs: locs_of(n),
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
            split: false,
            held: false,
        }
    }

    /// A part of a lowered node (standing for no node of its own): `op_type` over its
    /// elements, reading `reads` and writing `writes`.
    pub(super) fn part(
        base: &TxLayer,
        op_type: &str,
        reads: Vec<TxValue>,
        writes: Vec<TxValue>,
    ) -> TxLayer {
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
            head: None,
            nodes: Vec::new(),
            reads,
            writes,
            locs: Vec::new(),
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

/// A Split, or Slices, cutting a weight matmul's output into columns, and TPU-MLIR's
/// names of its pieces.
struct ColumnSplit {
    /// The Split node, or the Slice nodes in column order.
    cutters: Vec<usize>,
    /// The pieces, in column order.
    pieces: Vec<TxValue>,
    /// Cut by `model_transform` rather than the lowering ([`super::nd_split::cut_at_top`]).
    at_top: bool,
    /// Its pieces' names, in its order.
    names: Vec<PieceNames>,
}

/// The views TPU-MLIR names other than `<output>_<type>` ([`super::nd_split`]): TPU-MLIR's
/// name by the value each writes.
pub(super) fn renamed_views(g: &NdGraph) -> HashMap<String, String> {
    let form = Form {
        g,
        readers: consumers(g),
        taken: vec![false; g.nodes.len()],
    };
    g.nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| {
            n.op_type == "MatMul" && matches!(n.work, Work::Matmul { weight: true, .. })
        })
        .filter_map(|(i, n)| {
            let bias = form.bias(i);
            let locs = locs_of(bias.map_or(n, |a| &g.nodes[a]));
            form.column_split(i, bias, &locs)
        })
        .flat_map(|cut| cut.names.into_iter().filter_map(|p| p.view))
        .map(|v| (v.output, v.loc))
        .collect()
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

    /// The Split or Slices cutting weight matmul `matmul`'s output (its `bias` added)
    /// into columns, with TPU-MLIR's names of its pieces (`locs`: the matmul's).
    fn column_split(
        &self,
        matmul: usize,
        bias: Option<usize>,
        locs: &[String],
    ) -> Option<ColumnSplit> {
        let from = bias.unwrap_or(matmul);
        let split = self
            .sole_reader(from, "Split")
            .filter(|&j| splits_columns(&self.g.nodes[matmul], &self.g.nodes[j]));
        let (cutters, values) = match split {
            Some(j) => (vec![j], writes_of(&self.g.nodes[j])),
            None => {
                let slices = self.column_slices(matmul, from)?;
                let values = slices
                    .iter()
                    .filter_map(|&j| writes_of(&self.g.nodes[j]).into_iter().next())
                    .collect();
                (slices, values)
            }
        };
        let pieces: Vec<Piece> = values
            .iter()
            .map(|v| Piece {
                value: &v.name,
                columns: v.dims.last().copied().unwrap_or(0),
                view_output: self.sole_view_of(&v.name),
            })
            .collect();
        let at_top = cut_at_top(&pieces);
        let cutter = if split.is_some() { "Split" } else { "Slice" };
        let names = names_where_cut(locs.first()?, &pieces, at_top, cutter);
        Some(ColumnSplit {
            cutters,
            pieces: values.clone(),
            at_top,
            names,
        })
    }

    /// The Slices that cut `from`'s output (weight matmul `matmul`'s) into columns, in
    /// column order: its readers, two or more, each a Slice of the last axis by one step,
    /// together taking every column once.
    fn column_slices(&self, matmul: usize, from: usize) -> Option<Vec<usize>> {
        let out = self.g.nodes[from].outputs.first()?;
        let readers = self.readers.get(out.as_str())?;
        if readers.len() < 2 {
            return None;
        }
        let columns = *self.g.nodes[matmul].out_dims.last()?;
        let mut cut: Vec<(u64, u64, usize)> = Vec::new();
        for &j in readers {
            let n = &self.g.nodes[j];
            if n.op_type != "Slice" || self.taken[j] || !splits_columns(&self.g.nodes[matmul], n) {
                return None;
            }
            let scalar = |k: usize| n.inputs.get(k).and_then(|e| e.scalar);
            let last = (n.out_dims.len() as f64) - 1.0;
            let along_last = matches!(scalar(3), Some(a) if a == -1.0 || a == last);
            let one_step = n.inputs.len() < 5 || scalar(4) == Some(1.0);
            let start = scalar(1).filter(|s| *s >= 0.0)?;
            if !along_last || !one_step {
                return None;
            }
            cut.push((start as u64, *n.out_dims.last()?, j));
        }
        cut.sort_unstable();
        let mut next = 0u64;
        for &(start, width, _) in &cut {
            if start != next {
                return None;
            }
            next = start.checked_add(width)?;
        }
        (next == columns).then(|| cut.into_iter().map(|(_, _, j)| j).collect())
    }

    /// The layer of `layers` that absorbs node `i`, a Mul or Div by a scalar constant,
    /// as TPU-MLIR folds such a scale into what it scales when it is that op's one reader:
    /// a weight MatMul's weights, a Gather's table, or another scale (hf_gemma2's
    /// `…/Mul_2` is its embedding Gather with the table scaled by √d, its
    /// `/model/Div_output_0_Div` the LM head's MatMul over the logit soft-cap, and the
    /// attention scale `…/Mul_8` before the soft-cap's Div `…/Div_2` leaves no op).
    fn absorbing_layer(&self, i: usize, layers: &[TxLayer]) -> Option<usize> {
        let n = &self.g.nodes[i];
        let scalar = n
            .inputs
            .iter()
            .any(|e| e.kind == NdInputKind::Constant && e.scalar.is_some());
        if !matches!(n.op_type.as_str(), "Mul" | "Div") || !scalar || n.inputs.len() != 2 {
            return None;
        }
        let input = n
            .inputs
            .iter()
            .find(|e| e.kind == NdInputKind::Activation)?;
        let p = self.g.nodes[..i]
            .iter()
            .rposition(|q| q.outputs.first() == Some(&input.name))?;
        if self.readers.get(input.name.as_str()).map(Vec::as_slice) != Some(&[i]) {
            return None;
        }
        let q = &self.g.nodes[p];
        let weight_matmul =
            q.op_type == "MatMul" && matches!(q.work, Work::Matmul { weight: true, .. });
        let table = q.op_type == "Gather"
            && q.inputs
                .first()
                .is_some_and(|e| e.kind == NdInputKind::Weight);
        let scale = self.absorbs_as_scale(p);
        if !(weight_matmul || table || scale) {
            return None;
        }
        layers.iter().rposition(|l| {
            l.nodes.last() == Some(&p) && l.writes.iter().any(|v| v.name == input.name)
        })
    }

    /// Whether node `p` is a Mul or Div by a scalar constant of one activation.
    fn absorbs_as_scale(&self, p: usize) -> bool {
        let q = &self.g.nodes[p];
        matches!(q.op_type.as_str(), "Mul" | "Div")
            && q.inputs.len() == 2
            && q.inputs
                .iter()
                .any(|e| e.kind == NdInputKind::Constant && e.scalar.is_some())
            && q.inputs.iter().any(|e| e.kind == NdInputKind::Activation)
    }

    /// What the view reading `value` writes, when a Reshape or Squeeze is its one reader.
    fn sole_view_of(&self, value: &str) -> Option<&'a str> {
        match self.readers.get(value).map(Vec::as_slice) {
            Some(&[j]) if matches!(self.g.nodes[j].op_type.as_str(), "Reshape" | "Squeeze") => {
                self.g.nodes[j].outputs.first().map(String::as_str)
            }
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

    /// GELU in its erf form from its first node, x/√2 (or x·(1/√2)): Erf, + 1, × x,
    /// × 0.5, as an exporter writes `x·0.5·(1 + erf(x/√2))`. The five nodes, or `None`.
    fn gelu_erf(&self, scale: usize) -> Option<Vec<usize>> {
        let by = self.scalar(scale)?;
        let root2 = match self.g.nodes[scale].op_type.as_str() {
            "Div" => by,
            "Mul" => 1.0 / by,
            _ => return None,
        };
        if (root2 - std::f64::consts::SQRT_2).abs() > 1e-3 {
            return None;
        }
        let x = &self.g.nodes[scale]
            .inputs
            .iter()
            .find(|e| e.kind == NdInputKind::Activation)?
            .name;
        let erf = self.sole_reader(scale, "Erf")?;
        let one = self
            .sole_reader(erf, "Add")
            .filter(|&a| self.scalar(a) == Some(1.0))?;
        let by_x = self
            .sole_reader(one, "Mul")
            .filter(|&m| self.input_named(m, x))?;
        let half = self
            .sole_reader(by_x, "Mul")
            .filter(|&m| self.scalar(m) == Some(0.5))?;
        Some(vec![scale, erf, one, by_x, half])
    }

    /// The graph input node `i` reads, through views (Hugging Face's `attention_mask`
    /// under an Unsqueeze), if any.
    fn graph_input_behind(&self, i: usize) -> Option<&'a NdInput> {
        let views: HashMap<&str, &str> = super::nd_attention::view_nodes(self.g)
            .map(|v| (v.output, v.input))
            .collect();
        let mut at = self.g.nodes[i].inputs.first()?.name.as_str();
        for _ in 0..=views.len() {
            if let Some(input) = self.g.inputs.iter().find(|x| x.name == at) {
                return Some(input);
            }
            at = views.get(at)?;
        }
        None
    }

    /// A Cast of graph input `input` (an integer mask to a float) as TPU-MLIR runs it
    /// under a 16-bit type: the input cast to f32 where it enters (`attention_mask_f32`),
    /// then to 16 bits before the cast's reader (`cast_8_0_Castsub_10_0_Sub_f16`).
    fn input_cast(&self, i: usize, input: &NdInput, cast: &TxLayer) -> Vec<TxLayer> {
        let wide = |dims: &[u64]| TxValue {
            name: format!("{}#f32", input.name),
            dims: dims.to_vec(),
            weight: false,
            wide: true,
            split: false,
            held: false,
        };
        let entering = TxValue::activation(input.name.clone(), input.dims.clone());
        let read_dims = cast
            .reads
            .first()
            .map_or(input.dims.clone(), |v| v.dims.clone());
        let reader = self.g.nodes[i]
            .outputs
            .first()
            .and_then(|o| self.readers.get(o.as_str()))
            .and_then(|r| r.first())
            .and_then(|&j| locs_of(&self.g.nodes[j]).into_iter().next())
            .unwrap_or_default();
        let own = cast.locs.first().cloned().unwrap_or_default();
        let to_f32 = TxLayer {
            locs: vec![format!("{}_f32", input.name)],
            elements_in: entering.elements(),
            elements_out: entering.elements(),
            nodes: Vec::new(),
            ..TxLayer::part(
                cast,
                "Cast",
                vec![entering.clone()],
                vec![wide(&input.dims)],
            )
        };
        let to_16 = TxLayer {
            locs: vec![format!("{own}{reader}_f16")],
            nodes: cast.nodes.clone(),
            ..TxLayer::part(cast, "Cast", vec![wide(&read_dims)], cast.writes.clone())
        };
        vec![to_f32, to_16]
    }

    /// What an attention matmul reads for `v` when a transpose of the last two dims (Kᵀ)
    /// wrote it, which TPU-MLIR folds into the matmul (its `right_transpose`): the
    /// transpose's input, as it lies; `None` otherwise. A transpose that only moves a
    /// dim of one (Kᵀ of a single key, `[…, 1, d] → […, d, 1]`) TPU-MLIR makes a
    /// reshape instead, and the matmul reads the input in the transposed dims: `d`
    /// rows of one element (llama_d768_s1_b4's scores on bm1684x: 30,867 cycles, a
    /// row's transfer each).
    fn folded_transpose_of(&self, v: &TxValue) -> Option<TxValue> {
        let t = self
            .g
            .nodes
            .iter()
            .find(|n| n.op_type == "Transpose" && n.outputs.first() == Some(&v.name))?;
        let r = t.perm.len();
        let swaps_last_two = r >= 2
            && t.perm[..r - 2].iter().enumerate().all(|(k, &a)| a == k)
            && t.perm[r - 2..] == [r - 1, r - 2];
        let input = t.inputs.first().filter(|_| swaps_last_two)?;
        let dims = if moves_only_ones(&t.perm, &input.dims) {
            v.dims.clone()
        } else {
            input.dims.clone()
        };
        Some(TxValue {
            name: input.name.clone(),
            dims,
            ..v.clone()
        })
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
    lower_fused(g, f32_ops, bits, &Fusions::default())
}

/// The attentions TPU-MLIR fuses into `tpu.Attention` ([`super::nd_fusion`]) and the
/// chip's lanes and 16-bit EU rows their weights are laid out over.
#[derive(Debug, Clone, Default)]
pub struct Fusions {
    /// The fused attentions.
    pub attentions: Vec<super::nd_fusion::FusedAttention>,
    /// Lanes.
    pub lanes: u64,
    /// 16-bit elements an EU row.
    pub eu: u64,
}

/// TPU-MLIR's layers of `g` on `chip` in `dtype`: [`lower`], with the attentions
/// TPU-MLIR fuses there (bm1684x, 16-bit types) as its heads and their adds.
pub fn lower_on(
    g: &NdGraph,
    chip: &crate::NpuChip,
    dtype: tpusim_layout::ElementType,
) -> Vec<TxLayer> {
    let fusions = Fusions {
        attentions: super::nd_fusion::modelled_attentions(g, &chip.geometry.name, dtype.bits()),
        lanes: chip.geometry.npu_num,
        eu: (chip.geometry.eu_bytes / 2).max(1),
    };
    lower_fused(g, chip.f32_ops_at(dtype), dtype.bits(), &fusions)
}

fn lower_fused(g: &NdGraph, f32_ops: F32Ops, bits: u32, fusions: &Fusions) -> Vec<TxLayer> {
    let mut form = Form {
        g,
        readers: consumers(g),
        taken: vec![false; g.nodes.len()],
    };
    let attention = super::nd_attention::attention(g, &form.readers);
    let narrow = bits < 32 && !f32_ops.is_empty();
    let mut layers = Vec::new();
    let mut folded: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for f in &fusions.attentions {
        f.nodes.iter().for_each(|&j| form.taken[j] = true);
    }
    for (i, n) in g.nodes.iter().enumerate() {
        if let Some(f) = fusions.attentions.iter().find(|f| f.last == i) {
            layers.extend(super::nd_fused::layers(g, f, fusions.lanes, fusions.eu));
            continue;
        }
        if form.taken[i] || n.work == Work::Free || attention.absorbed.contains(&i) {
            continue;
        }
        // a node of weights and constants alone (a Slice of the causal-mask buffer, the
        // position embedding's Gather) is folded into a weight, as TPU-MLIR does
        let live = n
            .inputs
            .iter()
            .any(|e| e.kind == NdInputKind::Activation && !folded.contains(e.name.as_str()));
        if !live {
            folded.extend(n.outputs.iter().map(String::as_str));
            continue;
        }
        if let Some(at) = form.absorbing_layer(i, &layers) {
            // TPU-MLIR folds the scale into the op before it, which takes its name
            form.taken[i] = true;
            let l = &mut layers[at];
            l.name = n.name.clone();
            l.writes = writes_of(n);
            l.locs = locs_of(n);
            l.nodes.push(i);
            continue;
        }
        let mut layer = TxLayer::of(i, n);
        if let Some(rewrite) = attention.rewrites.get(&i).cloned() {
            form.taken[i] = true;
            layers.extend(super::nd_attention::rewritten(g, i, rewrite, layer));
            continue;
        }
        match n.op_type.as_str() {
            "Pow" if form.scalar(i) == Some(2.0) => {
                if let Some(nodes) = form.rms_norm(i) {
                    // TPU-MLIR names it after its last node, the weight's Mul
                    layer = fused(g, &nodes, layer, "RMSNorm", "Mul");
                    nodes.iter().for_each(|&j| form.taken[j] = true);
                } else {
                    // TPU-MLIR's `PowToBinary`: x·x in the plan's type, named as the Pow
                    layer.op_type = "Mul".into();
                }
            }
            // and x^0.5 a Sqrt
            "Pow" if form.scalar(i) == Some(0.5) => layer.op_type = "Sqrt".into(),
            "Div" | "Mul" => {
                if let Some(nodes) = form.gelu_erf(i) {
                    layer = fused(g, &nodes, layer, "Gelu", "GELU");
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
                    layer.locs = locs_of(&g.nodes[mul]);
                }
            }
            "MatMul" if matches!(n.work, Work::Matmul { weight: true, .. }) => {
                let bias = form.bias(i);
                if let Some(add) = bias {
                    form.taken[add] = true;
                    layer.weight_elements += g.nodes[add].weight_elements;
                    layer.nodes.push(add);
                    // the bias, in f32 where the chip keeps it so (`matmul_bias`)
                    let wide = narrow && f32_ops.matmul_bias();
                    layer.reads.extend(
                        reads_of(&g.nodes[add])
                            .into_iter()
                            .filter(|v| v.weight)
                            .map(|v| TxValue { wide, ..v }),
                    );
                    layer.writes = writes_of(&g.nodes[add]);
                    // TPU-MLIR's fused matmul takes the add's name (gpt2_d768_s64's FFN:
                    // `add_68_0_Add`, its cast to f32 `add_68_0_Addpow_70_0_Pow_abs_f32`)
                    layer.locs = locs_of(&g.nodes[add]);
                }
                if let Some(cut) = form.column_split(i, bias, &layer.locs) {
                    form.taken[i] = true;
                    cut.cutters.iter().for_each(|&j| form.taken[j] = true);
                    layers.extend(matmuls_per_split(&layer, &cut));
                    continue;
                }
            }
            "Cast" if narrow => {
                if let Some(input) = form.graph_input_behind(i) {
                    form.taken[i] = true;
                    layers.extend(form.input_cast(i, input, &layer));
                    continue;
                }
            }
            "Transpose" if form.folds_into_attention(i) => continue,
            // TPU-MLIR's `tpu.Permute` (0, 2, 1, 3): the heads to the front of Q, K and V
            // before the rotary embedding, which its layer groups load through (the
            // group's load does the permute: llama_d320_s256's `transpose_40_0_Transpose`
            // runs inside its rotary group's load, no layer of its own)
            "Transpose" if n.perm == [0, 2, 1, 3] => layer.op_type = "Permute".into(),
            "Split" => {
                form.taken[i] = true;
                layers.extend(split_pieces(&layer));
                continue;
            }
            _ => {}
        }
        form.taken[i] = true;
        // a Div by a constant is TPU-MLIR's 16-bit MulConst
        let by_constant = layer.op_type == "Div"
            && !n.inputs.get(1).is_some_and(|e| {
                e.kind == NdInputKind::Activation && !folded.contains(e.name.as_str())
            });
        if narrow && layer.op_type == "Pow" {
            layers.extend(pow_in_f32(&layer));
        } else if narrow && !by_constant && runs_in_f32(f32_ops, &layer.op_type) {
            layers.extend(between_casts(layer));
        } else {
            layers.push(layer);
        }
    }
    let mut layers = f32_runs_joined(layers);
    for v in layers.iter_mut().flat_map(|l| l.reads.iter_mut()) {
        if folded.contains(v.name.as_str()) {
            v.weight = true;
        }
    }
    for l in layers.iter_mut() {
        broadcast_weights(l);
        if l.heads_as_batch {
            // TPU-MLIR's `is_matmul_right_tensor`: loaded whole into every slice
            l.reads.iter_mut().skip(1).for_each(|v| v.held = true);
        }
    }
    for l in layers
        .iter_mut()
        .filter(|l| l.op_type == "MatMul" && !l.heads_as_batch)
    {
        for v in l.reads.iter_mut().filter(|v| !v.weight) {
            if let Some(kt) = form.folded_transpose_of(v) {
                *v = kt;
            }
        }
    }
    if narrow {
        let casts = output_casts(&layers, &form.readers);
        layers.extend(casts);
        f32_input_casts(g, fusions, &mut layers);
    }
    let mut layers = super::nd_order::tpu_mlir_order(g, layers);
    super::nd_order::name_casts(&mut layers);
    super::nd_order::permutes_beside_their_groups(layers)
}

/// Whether permuting `dims` by `perm` keeps the order of every dim larger than one:
/// a reshape, which TPU-MLIR's canonicaliser makes of such a Permute.
fn moves_only_ones(perm: &[usize], dims: &[u64]) -> bool {
    let moved: Vec<usize> = perm
        .iter()
        .copied()
        .filter(|&a| dims.get(a).is_some_and(|&d| d > 1))
        .collect();
    moved.windows(2).all(|w| w[0] < w[1])
}

/// The casts to f32 of the graph's outputs (what no node reads), as TPU-MLIR adds them
/// under a 16-bit type, named `<producer>_f32` (`matmul_158_0_MatMul_f32`, which its own
/// caches group with the matmul).
fn output_casts(layers: &[TxLayer], readers: &HashMap<&str, Vec<usize>>) -> Vec<TxLayer> {
    let read: std::collections::HashSet<&str> = layers
        .iter()
        .flat_map(|l| l.reads.iter().map(|v| v.name.as_str()))
        .chain(readers.keys().copied())
        .collect();
    let mut casts = Vec::new();
    for l in layers {
        for v in l.writes.iter().filter(|v| !v.wide) {
            if read.contains(v.name.as_str()) {
                continue;
            }
            let wide = TxValue {
                name: format!("{}#f32", v.name),
                wide: true,
                split: false,
                held: false,
                ..v.clone()
            };
            let producer = l.locs.last().cloned().unwrap_or_default();
            casts.push(TxLayer {
                name: l.name.clone(),
                locs: vec![format!("{producer}_f32")],
                elements_in: v.elements(),
                elements_out: v.elements(),
                ..TxLayer::part(l, "Cast", vec![v.clone()], vec![wide])
            });
        }
    }
    casts
}

/// The casts to 16 bits TPU-MLIR puts on the graph's f32 inputs under a 16-bit type: one
/// for each value the layers read that is such an input or a view of it, before its
/// first reader, named `<input or view><first reader>_f16` after the first graph node
/// that reads it (a weight matmul by the name of its bias add, as TPU-MLIR fuses them):
/// hf_qkv_static's `x/q/Add_output_0_Add_f16` and `/Unsqueeze_1_output_0_Unsqueeze/
/// Sub_output_0_Sub_f16`, the mask's, which its own cache groups with the Sub.
fn f32_input_casts(g: &NdGraph, fusions: &Fusions, layers: &mut Vec<TxLayer>) {
    let views: HashMap<&str, &tpusim_graph::nd::NdNode> = super::nd_attention::view_nodes(g)
        .map(|v| (v.output, v.node))
        .collect();
    let of_f32_input = |name: &str| {
        let mut name = name.to_string();
        for _ in 0..=views.len() {
            if g.inputs.iter().any(|i| i.f32 && i.name == name) {
                return true;
            }
            match views.get(name.as_str()).and_then(|n| n.inputs.first()) {
                Some(e) => name.clone_from(&e.name),
                None => return false,
            }
        }
        false
    };
    let mut cast_values: Vec<String> = Vec::new();
    for l in layers.iter() {
        for v in l.reads.iter().filter(|v| !v.weight && !v.wide) {
            if !cast_values.contains(&v.name) && of_f32_input(&v.name) {
                cast_values.push(v.name.clone());
            }
        }
    }
    for name in cast_values {
        let Some(at) = layers
            .iter()
            .position(|l| l.reads.iter().any(|v| v.name == name))
        else {
            continue;
        };
        let Some(read) = layers[at].reads.iter().find(|v| v.name == name).cloned() else {
            continue;
        };
        let producer = views
            .get(name.as_str())
            .map_or(name.clone(), |n| format!("{name}_{}", n.op_type));
        let narrow = TxValue {
            name: format!("{name}#f16"),
            ..read.clone()
        };
        let cast = TxLayer {
            name: format!("{name}#f16"),
            locs: vec![format!(
                "{producer}{}_f16",
                first_reader_loc(g, fusions, &name)
            )],
            elements_in: read.elements(),
            elements_out: read.elements(),
            ..TxLayer::part(
                &layers[at],
                "Cast",
                vec![TxValue { wide: true, ..read }],
                vec![narrow.clone()],
            )
        };
        for v in layers.iter_mut().flat_map(|l| l.reads.iter_mut()) {
            if v.name == name {
                v.name.clone_from(&narrow.name);
            }
        }
        layers.insert(at, cast);
    }
}

/// TPU-MLIR's name of the first graph node (not a view) that reads `value`: a weight
/// matmul's is its bias add's, where one follows; one a fused attention stands for, as
/// the attention names it ([`super::nd_fusion::FusedAttention::input_reader_loc`]).
fn first_reader_loc(g: &NdGraph, fusions: &Fusions, value: &str) -> String {
    let Some((i, n)) = g
        .nodes
        .iter()
        .enumerate()
        .find(|(_, n)| n.work != Work::Free && n.inputs.iter().any(|e| e.name == value))
    else {
        return String::new();
    };
    if let Some(f) = fusions.attentions.iter().find(|f| f.nodes.contains(&i)) {
        return f.input_reader_loc.clone();
    }
    let bias_add = n.outputs.first().and_then(|o| {
        let readers: Vec<&NdNode> = g
            .nodes
            .iter()
            .filter(|r| r.inputs.iter().any(|e| &e.name == o))
            .collect();
        match readers.as_slice() {
            [add] if add.op_type == "Add" && add.weight_elements > 0.0 => Some(*add),
            _ => None,
        }
    });
    let named = if matches!(n.work, Work::Matmul { weight: true, .. }) {
        bias_add.unwrap_or(n)
    } else {
        n
    };
    locs_of(named).into_iter().next().unwrap_or_default()
}

/// `nodes` (a pattern from `first`, its layer) as one `op_type` layer: reading what the
/// first node reads and the weights of them all, named and written as its last node, its
/// ops named `<last output>_<loc_type>` (TPU-MLIR's fused GELU: `mul_77_0_GELU`; an
/// RMSNorm: its weight's Mul, `mul_22_0_Mul`).
fn fused(g: &NdGraph, nodes: &[usize], first: TxLayer, op_type: &str, loc_type: &str) -> TxLayer {
    let last = &g.nodes[nodes[nodes.len() - 1]];
    let flops = nodes.iter().map(|&j| match g.nodes[j].work {
        Work::Vector { flops } => flops,
        _ => 0.0,
    });
    let mut reads: Vec<TxValue> = first.reads.iter().filter(|v| !v.weight).cloned().collect();
    reads.extend(
        nodes
            .iter()
            .flat_map(|&j| reads_of(&g.nodes[j]))
            .filter(|v| v.weight),
    );
    TxLayer {
        name: last.name.clone(),
        op_type: op_type.into(),
        work: Work::Vector { flops: flops.sum() },
        weight_elements: nodes.iter().map(|&j| g.nodes[j].weight_elements).sum(),
        elements_out: last.elements_out,
        nodes: nodes.to_vec(),
        reads,
        writes: writes_of(last),
        locs: last
            .outputs
            .first()
            .map(|o| format!("{o}_{loc_type}"))
            .into_iter()
            .collect(),
        ..first
    }
}

/// Whether `split` cuts `matmul`'s output along its last dim (its first output is as
/// long in every other dim).
fn splits_columns(matmul: &NdNode, split: &NdNode) -> bool {
    let (a, b) = (&matmul.out_dims, &split.out_dims);
    a.len() == b.len()
        && !a.is_empty()
        && a[..a.len() - 1] == b[..b.len() - 1]
        && b[b.len() - 1] < a[a.len() - 1]
}

/// A weight MatMul whose output a Split cuts into columns, as TPU-MLIR runs it: one
/// MatMul per piece, each on its columns of the weight, named as [`super::nd_split`] says.
/// Pieces `model_transform` cuts (llama_d320_s256's merged QKV: `_v_163_Split`,
/// `_v_164_Split`, `_v_165_Split`) TPU-MLIR runs first to last: they are listed last to
/// first here, so that its order, which takes the latest ready layer first, puts them
/// back. Pieces the lowering cuts it runs last to first: they are listed in order.
fn matmuls_per_split(whole: &TxLayer, cut: &ColumnSplit) -> Vec<TxLayer> {
    let Work::Matmul {
        batch,
        m,
        k,
        n,
        weight,
    } = whole.work
    else {
        return vec![whole.clone()];
    };
    let count = cut.pieces.len();
    let mut layers: Vec<TxLayer> = cut
        .pieces
        .iter()
        .cloned()
        .enumerate()
        .map(|(j, piece)| {
            let cols = piece.dims.last().copied().unwrap_or(0);
            let share = cols as f64 / n.max(1) as f64;
            let reads = whole
                .reads
                .iter()
                .map(|v| {
                    if v.weight {
                        let mut dims = v.dims.clone();
                        if let Some(last) = dims.last_mut() {
                            *last = cols;
                        }
                        TxValue {
                            name: format!("{}#{j}", v.name),
                            dims,
                            ..v.clone()
                        }
                    } else {
                        v.clone()
                    }
                })
                .collect();
            TxLayer {
                name: format!("{}#{j}", whole.name),
                work: Work::Matmul {
                    batch,
                    m,
                    k,
                    n: cols,
                    weight,
                },
                weight_elements: whole.weight_elements * share,
                elements_out: piece.elements(),
                nodes: piece_nodes(whole, cut, j, count),
                reads,
                locs: cut
                    .names
                    .get(j)
                    .map(|p| p.matmul.clone())
                    .into_iter()
                    .collect(),
                writes: vec![piece],
                ..whole.clone()
            }
        })
        .collect();
    if cut.at_top {
        layers.reverse();
    }
    layers
}

/// The graph nodes piece `j` of `count` stands for: the first the matmul and its bias
/// add, the last a Split, and each its own Slice.
fn piece_nodes(whole: &TxLayer, cut: &ColumnSplit, j: usize, count: usize) -> Vec<usize> {
    let mut nodes = if j == 0 {
        whole.nodes.clone()
    } else {
        Vec::new()
    };
    match cut.cutters.as_slice() {
        [split] if cut.cutters.len() < count => {
            if j + 1 == count {
                nodes.push(*split);
            }
        }
        slices => nodes.extend(slices.get(j)),
    }
    nodes
}

/// A Split as TPU-MLIR runs it: one slice per piece (`split_28_0_Split`, …), each its
/// own op, so that a group may take some pieces and leave others global (GPT-2's Q and K
/// slices join Q·Kᵀ's group, V's runs alone).
fn split_pieces(split: &TxLayer) -> Vec<TxLayer> {
    split
        .writes
        .iter()
        .zip(&split.locs)
        .enumerate()
        .map(|(j, (piece, loc))| TxLayer {
            name: format!("{}#{j}", split.name),
            elements_in: piece.elements(),
            elements_out: piece.elements(),
            nodes: if j == 0 {
                split.nodes.clone()
            } else {
                Vec::new()
            },
            writes: vec![piece.clone()],
            locs: vec![loc.clone()],
            ..split.clone()
        })
        .collect()
}

fn runs_in_f32(f32_ops: F32Ops, op_type: &str) -> bool {
    f32_ops.runs_in_f32_onnx(op_type)
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

/// `layers` with each f32 value kept in f32 between two f32 layers: a cast down that only
/// a cast up reads goes, with that cast up, and the cast up's readers read the f32 value
/// (TPU-MLIR casts only where types differ: hf_qwen2's RMSNorm casts up before its Sqrt
/// and down after the Div reading it, `…/Add_output_0_Add…/Sqrt_output_0_Sqrt_f32` and
/// `…/Div_output_0_Div…/Mul_output_0_Mul_f16`, none between).
fn f32_runs_joined(layers: Vec<TxLayer>) -> Vec<TxLayer> {
    let lowered_cast = |l: &TxLayer| l.op_type == "Cast" && l.nodes.is_empty();
    let mut reads: HashMap<&str, usize> = HashMap::new();
    for v in layers.iter().flat_map(|l| l.reads.iter()) {
        *reads.entry(v.name.as_str()).or_default() += 1;
    }
    let mut dropped = vec![false; layers.len()];
    let mut kept_wide: HashMap<String, TxValue> = HashMap::new();
    for (i, down) in layers.iter().enumerate() {
        let (Some(wide), Some(narrow)) = (down.reads.first(), down.writes.first()) else {
            continue;
        };
        if !lowered_cast(down)
            || !wide.wide
            || narrow.wide
            || reads.get(narrow.name.as_str()) != Some(&1)
        {
            continue;
        }
        let up = layers.iter().position(|l| {
            lowered_cast(l) && l.reads.first().is_some_and(|v| v.name == narrow.name)
        });
        let Some(j) = up.filter(|&j| layers[j].writes.first().is_some_and(|v| v.wide)) else {
            continue;
        };
        dropped[i] = true;
        dropped[j] = true;
        kept_wide.insert(layers[j].writes[0].name.clone(), wide.clone());
    }
    let mut out: Vec<TxLayer> = layers
        .into_iter()
        .zip(dropped)
        .filter_map(|(l, gone)| (!gone).then_some(l))
        .collect();
    for v in out.iter_mut().flat_map(|l| l.reads.iter_mut()) {
        if let Some(wide) = kept_wide.get(&v.name) {
            *v = wide.clone();
        }
    }
    out
}

/// `Pow(x, c)` in f32: cast, |x|, ln, ×(c − 1), exp, × x, cast.
fn pow_in_f32(layer: &TxLayer) -> Vec<TxLayer> {
    let x: Vec<TxValue> = layer.reads.iter().filter(|v| !v.weight).cloned().collect();
    let v = |part: &str| layer.own_value(part, true);
    let part =
        |t: &str, reads: Vec<TxValue>, writes: Vec<TxValue>| TxLayer::part(layer, t, reads, writes);
    // TPU-MLIR names the parts after the Pow: `pow_70_0_Pow_abs`, …, the product
    // `pow_70_0_Pow` itself
    let pow = layer.locs.first().cloned().unwrap_or_default();
    let named = |l: TxLayer, suffix: &str| TxLayer {
        locs: vec![format!("{pow}{suffix}")],
        ..l
    };
    vec![
        part("Cast", x, vec![v("x")]),
        named(part("Abs", vec![v("x")], vec![v("abs")]), "_abs"),
        named(part("Log", vec![v("abs")], vec![v("log")]), "_log"),
        named(
            part("MulConst", vec![v("log")], vec![v("scaled")]),
            "_mul_const",
        ),
        named(part("Exp", vec![v("scaled")], vec![v("exp")]), "_exp"),
        TxLayer {
            nodes: layer.nodes.clone(),
            ..named(part("Mul", vec![v("x"), v("exp")], vec![v("pow")]), "")
        },
        part("Cast", vec![v("pow")], layer.writes.clone()),
    ]
}

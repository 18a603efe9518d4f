//! TPU-MLIR 1.30.2's form of the attention's two matmuls (of two activations, over the
//! heads), read off its caches and profiles of the transformer zoo on bm1684x and its
//! `MatMulHdimBatchPattern`:
//!
//! - **Both operands permuted** (`Transpose` (0, 2, ·, ·) of [b, s, h, d] each, each read
//!   only by the matmul: GPT-2's Q·Kᵀ). The matmul reads the heads where they lie, as
//!   `<matmul>_hdim_is_batch` writing [b, s, h, s′], and a permute (0, 2, 1, 3) named
//!   after the matmul brings the scores to [b, h, s, s′]. A scale (Div or Mul by a
//!   scalar) right after moves before that permute, named `<scale>_<matmul>`, and the
//!   permute becomes `<matmul>_<scale>` (`div_47_0_Div_matmul_45_0_MatMul`, then
//!   `matmul_45_0_MatMul_div_47_0_Div`).
//! - **The right operand and the output permuted** (0, 2, 1, 3) (P·V, then the heads
//!   put back: GPT-2 and llama_d320_s256). The left operand is permuted instead
//!   (`<its producer>_permute`) and the matmul, `<matmul>_hdim_is_batch`, writes
//!   [b, s, h, d] where the output's transpose did. Where V is repeated over groups of
//!   heads first (llama_d128_s64's Unsqueeze/Expand/Reshape) this does not apply, and
//!   the matmul and its transposes stay as written.
//!
//! The permutes these rewrites add run as global layers, and they take time (2,513
//! cycles for [1, 4, 64, 64] on bm1684x); the transposes they replace make no layer.
//! The other transposes next to an attention matmul (Kᵀ, which the matmul reads as it
//! lies, and llama_d128_s64's) make none either (`nd_form`): TPU-MLIR's profiles show
//! no time for them.
//! The matmuls may join layer groups (TPU-MLIR groups GPT-2's Q and K slices with
//! Q·Kᵀ and its scale, and llama_d320_s256's P·V with the output projection and FFN).

use super::nd_form::{locs_of, writes_of, TxLayer, TxValue};
use std::collections::{HashMap, HashSet};
use tpusim_graph::nd::{NdGraph, NdInputKind, NdNode, Work};

/// How TPU-MLIR rewrites one attention matmul.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Rewrite {
    /// Both operands permuted (0, 2, ·, ·) (`left` and `right`: the transposes reading
    /// the operands as they lie); the scale node after it, if any; `through`: the nodes
    /// after the scale that run on the scores as they lie, up to the softmax that P·V
    /// reads, when the permute back cancels P·V's (empty: the permute stays).
    BothPermuted {
        left: usize,
        right: usize,
        scale: Option<usize>,
        through: Vec<usize>,
    },
    /// The right operand and the output permuted (0, 2, 1, 3); `permute_left`: whether
    /// the left operand is permuted first (not when Q·Kᵀ's permute cancels it).
    RightAndOutputPermuted {
        right: usize,
        output: usize,
        permute_left: bool,
    },
}

/// What TPU-MLIR makes of a graph's attention matmuls.
#[derive(Debug, Default)]
pub(super) struct Attention {
    /// Matmul node → its rewrite.
    pub rewrites: HashMap<usize, Rewrite>,
    /// Nodes that make no layer of their own: transposes folded into a matmul, and the
    /// scales a rewrite took.
    pub absorbed: HashSet<usize>,
}

/// Who writes and who reads each value of `g`.
struct Wiring<'g> {
    g: &'g NdGraph,
    writer: HashMap<&'g str, usize>,
    readers: &'g HashMap<&'g str, Vec<usize>>,
}

impl<'g> Wiring<'g> {
    /// The node writing input `k` of node `i`, if it is a transpose read by node `i`
    /// alone.
    fn sole_transpose(&self, i: usize, k: usize) -> Option<usize> {
        let e = self.g.nodes[i].inputs.get(k)?;
        let t = *self.writer.get(e.name.as_str())?;
        let only =
            matches!(self.readers.get(e.name.as_str()).map(Vec::as_slice), Some([j]) if *j == i);
        (self.g.nodes[t].op_type == "Transpose" && only).then_some(t)
    }

    /// The transposes into input `k` of node `i`, each read only by the next (an
    /// exporter writes Kᵀ as (0, 2, 1, 3) then (0, 1, 3, 2); onnxsim and TPU-MLIR make
    /// them one): the chain from the matmul back, and the permutation they make
    /// together. `None` when no transpose writes that input.
    fn transposes_into(&self, i: usize, k: usize) -> Option<(Vec<usize>, Vec<usize>)> {
        let mut t = self.sole_transpose(i, k)?;
        let mut chain = vec![t];
        let mut perm = self.g.nodes[t].perm.clone();
        while let Some(up) = self.sole_transpose(t, 0) {
            let inner = &self.g.nodes[up].perm;
            if inner.len() != perm.len() || chain.len() >= self.g.nodes.len() {
                break;
            }
            // out dim d is the outer transpose's input dim perm[d], the inner's input
            // dim inner[perm[d]]
            perm = perm
                .iter()
                .map(|&d| inner.get(d).copied().unwrap_or(d))
                .collect();
            chain.push(up);
            t = up;
        }
        Some((chain, perm))
    }

    /// The one node reading node `i`'s output.
    fn sole_reader(&self, i: usize) -> Option<usize> {
        let out = self.g.nodes[i].outputs.first()?;
        match self.readers.get(out.as_str()).map(Vec::as_slice) {
            Some(&[j]) => Some(j),
            _ => None,
        }
    }

    /// Node `d` when it scales node `i`'s output by a scalar (Div or Mul by a constant).
    fn scale_of(&self, i: usize) -> Option<usize> {
        let d = self.sole_reader(i)?;
        let n = &self.g.nodes[d];
        let by_scalar = n
            .inputs
            .iter()
            .any(|e| e.kind == NdInputKind::Constant && e.scalar.is_some());
        (matches!(n.op_type.as_str(), "Div" | "Mul") && by_scalar && n.inputs.len() == 2)
            .then_some(d)
    }

    fn rewrite_of(&self, i: usize) -> Option<(Rewrite, Vec<usize>)> {
        const HEADS_FIRST: [usize; 4] = [0, 2, 1, 3];
        let starts_heads = |p: &[usize]| p.len() == 4 && p[..2] == [0, 2];
        let l = self.transposes_into(i, 0);
        let r = self.transposes_into(i, 1);
        if let (Some((lc, lp)), Some((rc, rp))) = (&l, &r) {
            if starts_heads(lp) && starts_heads(rp) {
                let scale = self.scale_of(i);
                let (left, right) = (*lc.last()?, *rc.last()?);
                let mut absorbed: Vec<usize> = lc.iter().chain(rc).copied().collect();
                absorbed.extend(scale);
                let through = Vec::new();
                let rewrite = Rewrite::BothPermuted {
                    left,
                    right,
                    scale,
                    through,
                };
                return Some((rewrite, absorbed));
            }
        }
        let (rc, rp) = r?;
        let output = self.sole_reader(i)?;
        let o = &self.g.nodes[output];
        (rp == HEADS_FIRST && o.op_type == "Transpose" && o.perm == HEADS_FIRST).then(|| {
            let right = rc.last().copied().unwrap_or(output);
            let rewrite = Rewrite::RightAndOutputPermuted {
                right,
                output,
                permute_left: true,
            };
            let mut absorbed = rc.clone();
            absorbed.push(output);
            (rewrite, absorbed)
        })
    }
}

/// TPU-MLIR's rewrites of `g`'s attention matmuls (`readers`: value → nodes reading it).
pub(super) fn attention(g: &NdGraph, readers: &HashMap<&str, Vec<usize>>) -> Attention {
    let mut writer = HashMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        for o in &n.outputs {
            writer.insert(o.as_str(), i);
        }
    }
    let w = Wiring { g, writer, readers };
    let mut out = Attention::default();
    for (i, n) in g.nodes.iter().enumerate() {
        let act_by_act = matches!(n.work, Work::Matmul { weight: false, .. });
        if !act_by_act || n.out_dims.len() != 4 {
            continue;
        }
        if let Some((rewrite, absorbed)) = w.rewrite_of(i) {
            out.rewrites.insert(i, rewrite);
            out.absorbed.extend(absorbed);
        }
    }
    cancel_permutes(&w, &mut out);
    out
}

/// Where the scores of a rewritten Q·Kᵀ go, after its scale, through element-wise work
/// with a mask broadcast over the heads and the query rows ([b, 1, 1, s], BERT's padding
/// mask) and a softmax straight into a rewritten P·V, TPU-MLIR runs them all on the
/// scores as they lie and drops both permutes (its BERT on bm1684x: the mask's Add and
/// the softmax in Q·Kᵀ's group, no permute left). A Where (GPT-2's causal mask over
/// [1, 1, s, s]) stops it.
fn cancel_permutes(w: &Wiring, out: &mut Attention) {
    let broadcast = |n: &NdNode| {
        n.inputs.len() == 2
            && n.inputs.iter().any(|e| {
                e.dims.len() == 4 && e.dims[1] == 1 && e.dims[2] == 1 && e.dims != n.out_dims
            })
    };
    let starts: Vec<(usize, usize)> = out
        .rewrites
        .iter()
        .filter_map(|(&m, r)| match r {
            Rewrite::BothPermuted { scale: Some(d), .. } => Some((m, *d)),
            _ => None,
        })
        .collect();
    for (m, d) in starts {
        let mut chain = Vec::new();
        let mut at = d;
        while let Some(r) = w.sole_reader(at) {
            let n = &w.g.nodes[r];
            let element_wise = matches!(n.op_type.as_str(), "Add" | "Sub" | "Mul") && broadcast(n);
            if !(element_wise || n.op_type == "Softmax") || chain.len() >= w.g.nodes.len() {
                break;
            }
            chain.push(r);
            at = r;
            if n.op_type == "Softmax" {
                break;
            }
        }
        let ends_in_softmax = chain
            .last()
            .is_some_and(|&j| w.g.nodes[j].op_type == "Softmax");
        let Some(pv) = w.sole_reader(at).filter(|_| ends_in_softmax) else {
            continue;
        };
        let Some(Rewrite::RightAndOutputPermuted { permute_left, .. }) = out.rewrites.get_mut(&pv)
        else {
            continue;
        };
        *permute_left = false;
        out.absorbed.extend(chain.iter().copied());
        if let Some(Rewrite::BothPermuted { through, .. }) = out.rewrites.get_mut(&m) {
            *through = chain;
        }
    }
}

/// The ONNX op types that only view their input.
pub(super) const VIEWS: [&str; 4] = ["Reshape", "Flatten", "Squeeze", "Unsqueeze"];

/// A view node of a graph (Reshape, Flatten, Squeeze, Unsqueeze).
pub(super) struct ViewNode<'g> {
    /// The node.
    pub node: &'g NdNode,
    /// Its first output.
    pub output: &'g str,
    /// The activation it views.
    pub input: &'g str,
    /// From or to a value of at most two dims: TPU-MLIR lays such a value out one
    /// element a plane, and the view runs outside any layer group (`nd_export`).
    pub flat: bool,
    /// TPU-MLIR's name of it: `<output>_<type>`, or the name a split matmul's lowering
    /// gives it ([`super::nd_split`]).
    pub loc: String,
    /// Rebuilt by that lowering right after the matmul writing what it views: a layer
    /// group holding the matmul holds the view too, or the view would sit inside it.
    pub tied: bool,
}

/// Every view node of `g`. A view of a flat view is flat too: TPU-MLIR merges views in a
/// row into one (hf_qkv_static's two Unsqueezes of its [1, 64] mask are one global
/// `/Unsqueeze_1_output_0_Unsqueeze`; listed in a group, it loaded the mask one element
/// a plane, 1,024 bytes in 4,853 cycles).
pub(super) fn view_nodes(g: &NdGraph) -> impl Iterator<Item = ViewNode<'_>> {
    let mut flat_outputs: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut renamed = super::nd_form::renamed_views(g);
    g.nodes
        .iter()
        .filter(|n| n.work == Work::Free && VIEWS.contains(&n.op_type.as_str()))
        .filter_map(|node| {
            let input = node
                .inputs
                .iter()
                .find(|e| e.kind == NdInputKind::Activation)?;
            let output = node.outputs.first()?;
            let flat = node.out_dims.len() <= 2
                || input.dims.len() <= 2
                || flat_outputs.contains(input.name.as_str());
            if flat {
                flat_outputs.insert(output);
            }
            let rebuilt = renamed.remove(output.as_str());
            let tied = rebuilt.is_some();
            let loc = rebuilt.unwrap_or_else(|| format!("{output}_{}", node.op_type));
            Some(ViewNode {
                node,
                output,
                input: &input.name,
                flat,
                loc,
                tied,
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// Every view of `g`: its output → what it views, and whether it is flat.
pub(crate) fn view_edges(g: &NdGraph) -> HashMap<String, (String, bool)> {
    view_nodes(g)
        .map(|v| (v.output.to_string(), (v.input.to_string(), v.flat)))
        .collect()
}

/// A view TPU-MLIR runs inside a layer group (of values of three dims or more): what
/// it reads and what it writes, a buffer of its own.
#[derive(Debug, Clone)]
pub(crate) struct GroupView {
    /// The value it views.
    pub input: TxValue,
    /// Its output.
    pub output: TxValue,
}

/// Every view of `g` that is not flat.
pub(crate) fn group_views(g: &NdGraph) -> Vec<GroupView> {
    view_nodes(g)
        .filter(|v| !v.flat)
        .map(|v| {
            let dims = v
                .node
                .inputs
                .iter()
                .find(|e| e.name == v.input)
                .map_or(&v.node.out_dims, |e| &e.dims);
            GroupView {
                input: TxValue::activation(v.input, dims.clone()),
                output: TxValue::activation(v.output, v.node.out_dims.clone()),
            }
        })
        .collect()
}

/// The value behind `name` in memory, read with `dims`: through the views (of values of
/// three dims or more: a view from or to a 2-D value moves it, `nd_export`) to the value
/// they view.
fn held(g: &NdGraph, name: &str, dims: &[u64]) -> TxValue {
    let deep: HashMap<&str, &str> = view_nodes(g)
        .filter(|v| !v.flat)
        .map(|v| (v.output, v.input))
        .collect();
    let mut at = name;
    for _ in 0..deep.len() {
        match deep.get(at) {
            Some(&up) => at = up,
            None => break,
        }
    }
    TxValue::activation(at.to_string(), dims.to_vec())
}

/// `dims` with the second and third swapped (a permute (0, 2, 1, 3)).
fn heads_swapped(dims: &[u64]) -> Vec<u64> {
    let mut d = dims.to_vec();
    if d.len() >= 3 {
        d.swap(1, 2);
    }
    d
}

/// What node `t` (a transpose) reads, held as [`held`] finds it.
fn operand_of(g: &NdGraph, t: usize) -> Option<TxValue> {
    let e = g.nodes[t].inputs.first()?;
    Some(held(g, &e.name, &e.dims))
}

/// A permute TPU-MLIR adds, named `loc`: a global layer moving what it reads.
fn permute(base: &TxLayer, read: TxValue, write: TxValue, loc: String) -> TxLayer {
    let elements = write.elements();
    TxLayer {
        op_type: "Permute".into(),
        work: Work::Move,
        elements_in: elements,
        weight_elements: 0.0,
        elements_out: elements,
        wide_in: false,
        wide_out: false,
        heads_as_batch: false,
        head: None,
        nodes: Vec::new(),
        reads: vec![read],
        writes: vec![write],
        locs: vec![loc],
        ..base.clone()
    }
}

/// Node `j` (after a rewritten Q·Kᵀ's scale) run on the scores as they lie: reading
/// `prev` for the scores, writing `<output>#hdim` of the swapped dims, its name as
/// TPU-MLIR leaves it (`add_57_0_Add`, `softmax_58_0_Softmax`).
fn as_they_lie(g: &NdGraph, j: usize, prev: &TxValue) -> TxLayer {
    let n = &g.nodes[j];
    let mut layer = TxLayer::of(j, n);
    // the scores as written, [b, h, s, s]
    let scores = heads_swapped(&prev.dims);
    for v in layer
        .reads
        .iter_mut()
        .filter(|v| !v.weight && v.dims == scores)
    {
        *v = prev.clone();
    }
    if !layer.reads.iter().any(|v| v.name == prev.name) {
        layer.reads.insert(0, prev.clone());
    }
    layer.writes = vec![TxValue::activation(
        format!("{}#hdim", n.outputs.first().cloned().unwrap_or_default()),
        heads_swapped(&n.out_dims),
    )];
    layer
}

/// The first name TPU-MLIR gives node `n`'s ops.
fn loc_of(n: &NdNode) -> String {
    locs_of(n).into_iter().next().unwrap_or_default()
}

/// The layers TPU-MLIR makes of matmul node `i` under `rewrite` (`layer`: the matmul as
/// written).
pub(super) fn rewritten(g: &NdGraph, i: usize, rewrite: Rewrite, layer: TxLayer) -> Vec<TxLayer> {
    match rewrite {
        Rewrite::BothPermuted {
            left,
            right,
            scale,
            through,
        } => both_permuted(g, i, [left, right], scale, &through, layer),
        Rewrite::RightAndOutputPermuted {
            right,
            output,
            permute_left,
        } => right_and_output_permuted(g, i, right, output, permute_left, layer),
    }
}

/// Q·Kᵀ reading both operands as they lie (`operands`: the transposes reading them),
/// then its scale, then the permute back or the nodes `through` to the softmax.
fn both_permuted(
    g: &NdGraph,
    i: usize,
    operands: [usize; 2],
    scale: Option<usize>,
    through: &[usize],
    layer: TxLayer,
) -> Vec<TxLayer> {
    let m = &g.nodes[i];
    let mloc = loc_of(m);
    let hdim_loc = format!("{mloc}_hdim_is_batch");
    let out = m.outputs.first().cloned().unwrap_or_default();
    let scores = TxValue::activation(format!("{out}#hdim"), heads_swapped(&m.out_dims));
    let matmul = TxLayer {
        reads: operands
            .into_iter()
            .filter_map(|t| operand_of(g, t))
            .collect(),
        writes: vec![scores.clone()],
        locs: vec![hdim_loc],
        heads_as_batch: true,
        ..layer.clone()
    };
    let Some(d) = scale else {
        let back = writes_of(m).into_iter().next().unwrap_or(scores.clone());
        return vec![matmul, permute(&layer, scores, back, mloc)];
    };
    let dn = &g.nodes[d];
    let dloc = loc_of(dn);
    let scaled = TxValue {
        name: format!("{}#hdim", dn.outputs.first().cloned().unwrap_or_default()),
        ..scores.clone()
    };
    let scale = TxLayer {
        reads: vec![scores],
        writes: vec![scaled.clone()],
        locs: vec![format!("{dloc}_{mloc}")],
        ..TxLayer::of(d, dn)
    };
    if through.is_empty() {
        let back = writes_of(dn).into_iter().next().unwrap_or(scaled.clone());
        let moved = permute(&scale, scaled, back, format!("{mloc}_{dloc}"));
        return vec![matmul, scale, moved];
    }
    let mut layers = vec![matmul, scale];
    let mut prev = scaled;
    for &j in through {
        let layer = as_they_lie(g, j, &prev);
        prev = layer.writes[0].clone();
        layers.push(layer);
    }
    layers
}

/// P·V with the heads as a batch, its left operand permuted first unless Q·Kᵀ's chain
/// left it as it lies.
fn right_and_output_permuted(
    g: &NdGraph,
    i: usize,
    right: usize,
    output: usize,
    permute_left: bool,
    layer: TxLayer,
) -> Vec<TxLayer> {
    let m = &g.nodes[i];
    let hdim_loc = format!("{}_hdim_is_batch", loc_of(m));
    let Some(x) = m.inputs.first() else {
        return vec![layer];
    };
    let mut layers = Vec::new();
    // P reads as Q·Kᵀ's chain left the scores, or permuted before it
    let lhs = if permute_left {
        let producer = g
            .nodes
            .iter()
            .find(|n| n.outputs.contains(&x.name))
            .map(loc_of)
            .unwrap_or_else(|| x.name.clone());
        let held = held(g, &x.name, &x.dims);
        let permuted = TxValue {
            name: format!("{}#permute", held.name),
            dims: heads_swapped(&x.dims),
            ..held.clone()
        };
        let loc = format!("{producer}_permute");
        layers.push(permute(&layer, held, permuted.clone(), loc));
        permuted
    } else {
        TxValue::activation(format!("{}#hdim", x.name), heads_swapped(&x.dims))
    };
    let mut reads = vec![lhs];
    reads.extend(operand_of(g, right));
    layers.push(TxLayer {
        reads,
        writes: writes_of(&g.nodes[output]),
        locs: vec![hdim_loc],
        nodes: vec![i, output],
        heads_as_batch: true,
        ..layer
    });
    layers
}

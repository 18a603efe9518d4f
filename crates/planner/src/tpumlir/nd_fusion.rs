//! Where TPU-MLIR 1.30.2 fuses a whole attention into `tpu.Attention` on bm1684x (the
//! planner models it as TPU-MLIR lowers it, one op a head: [`super::nd_fused`]). Read
//! from its source (bm1684x's Top optimisations) and
//! checked against its caches of the transformer zoo, where only bert_d384_s128 is
//! fused (its cache names per-head `…_head_k` ops and `…_attention_out_fuse_k` adds).
//!
//! Three of its rewrites come into it, each reproduced here on the ONNX graph:
//! - `MatMulWithBias`: a weight matmul whose one reader adds a weight bias is one
//!   matmul, writing the sum.
//! - `SplitMatMulPattern`: a weight matmul whose output (through Reshapes that are its
//!   only reader) is split by slices covering its last dim becomes one matmul a slice,
//!   with that slice of the weight. A slice's width counts the dims from the matmul's
//!   last on, so a 2-D Gemm split after a Reshape to [b, s, 3d] (the older BERT
//!   exports) is not split.
//! - `ConvertMatMul2Attention`, from the output projection back ("one reader": the value
//!   is read by that node alone):
//!   - the output projection: a weight matmul, one reader;
//!   - its input: Reshape (one reader) of a Transpose (one reader) of, optionally, a
//!     Reshape (one reader) of P·V, a matmul;
//!   - P·V's left operand: a Softmax (one reader) of, optionally, an Add of a mask of
//!     `batch × its last dim` elements (`batch`: the output projection's input's first
//!     dim, so a 2-D projection input of `b · s` rows fails), of a scale by a constant
//!     (one reader) of Q·Kᵀ, a matmul;
//!   - Q·Kᵀ's left operand: optionally a Reshape (one reader), of a Transpose (one
//!     reader) of a Reshape (one reader) of the query projection, a weight matmul; its
//!     right operand likewise from the key projection (after one more Transpose, or
//!     not); P·V's right operand from the value projection;
//!   - the projections' inputs: not Q and K one value with V another; the same first
//!     dim;
//!   - at most 2048 × 320 × 4 input elements a batch, and `(2 |Wq| + |Wk| + |Wv|) /
//!     heads` at most 1024 × 128 × 4 weight elements.
//!
//! A Reshape whose target shape the graph computes (an export with dynamic axes) is
//! folded by TPU-MLIR's simplifier, unless the file's IR version is one its onnx does
//! not check: then the Reshape is a shape op, and breaks the pattern where it stands.
//!
//! TPU-MLIR does not fuse on bm1688, bm1690, SG2380, MARS3 or SGTPUV8, nor in its
//! high-precision mode. Of the planner's presets only bm1684x is reported: the CV18xx
//! chips pass the pattern's chip check, but their lowering was not tried. Reshapes are
//! taken as written (TPU-MLIR may merge two in a row; no zoo network tells whether that
//! lets a pattern match).

use std::collections::HashMap;
use tpusim_graph::nd::{NdEdge, NdGraph, NdInputKind, NdNode};

/// The newest ONNX IR version TPU-MLIR 1.30.2's onnx (1.16.2) checks, and so simplifies:
/// a model above it fails the check ("onnx model check failed", then "onnxsim opt
/// failed"), and the shapes its graph computes stay shape ops.
const MAX_SIMPLIFIED_IR_VERSION: i64 = 10;

/// The output projections (ONNX node names) whose attention TPU-MLIR 1.30.2 fuses into
/// `tpu.Attention` on `chip` (a preset name; only bm1684x is known to), in graph order.
pub fn fused_attentions(g: &NdGraph, chip: &str) -> Vec<String> {
    let form = Form::new(g);
    form.fused_on(chip)
        .into_iter()
        .map(|f| f.output_projection.to_string())
        .collect()
}

/// An attention TPU-MLIR 1.30.2 fuses, as its lowering makes it: one `tpu.Attention` a
/// head (`<out>_head_<k>`), each reading the projections' input, the mask and its slice
/// of the four weights and writing a partial output of the whole output's shape, and
/// adds of them in turn (`<out>_attention_out_fuse_<k>`, the last named `<out>`).
#[derive(Debug, Clone, PartialEq)]
pub struct FusedAttention {
    /// The output projection's node name.
    pub output_projection: String,
    /// The graph nodes it stands for: the output projection (with its bias) and all it
    /// reads back to the projections' input and the mask.
    pub nodes: Vec<usize>,
    /// The node writing the output (the output projection, or its bias Add).
    pub last: usize,
    /// The projections' input, [batch, queries, d_model].
    pub input: NdEdge,
    /// The additive mask, if any.
    pub mask: Option<NdEdge>,
    /// The output value's name.
    pub output: String,
    /// TPU-MLIR's name of the output (`<output>_<type of the node writing it>`).
    pub output_loc: String,
    /// Heads.
    pub heads: u64,
    /// Dims a head.
    pub head_dim: u64,
    /// The output projection adds a bias.
    pub out_bias: bool,
    /// TPU-MLIR's name of the first op reading the input after its Top rewrites: the
    /// first projection's (its bias add's, as `MatMulWithBias` names it), the first of
    /// `SplitMatMulPattern`'s matmuls (`<add>_matmul_1`) where the projections were one.
    pub input_reader_loc: String,
}

/// The attentions TPU-MLIR 1.30.2 fuses into `tpu.Attention` on `chip`, in graph order,
/// with what each stands for (only on bm1684x). A single head is one op, `<out>_head_0`,
/// that the output's readers read (`tests/data/tx_fusion/hf_qkv_one_head` compiled so).
pub fn fused_attention_forms(g: &NdGraph, chip: &str) -> Vec<FusedAttention> {
    let form = Form::new(g);
    form.fused_on(chip)
        .iter()
        .filter_map(|f| form.as_layers(f))
        .filter(|f| f.heads >= 1)
        .collect()
}

/// The fused attentions the planner models on `chip` in `bits`-bit data: those of
/// [`fused_attention_forms`] under a 16-bit type (TPU-MLIR also fuses under F32, running
/// the heads in f16; that is not modelled).
pub fn modelled_attentions(g: &NdGraph, chip: &str, bits: u32) -> Vec<FusedAttention> {
    if bits == 16 {
        fused_attention_forms(g, chip)
    } else {
        Vec::new()
    }
}

/// The output projections of the attentions TPU-MLIR fuses on `chip` that the planner
/// does not model in `bits`-bit data (an F32 plan).
pub fn unmodelled_attentions(g: &NdGraph, chip: &str, bits: u32) -> Vec<String> {
    let modelled: Vec<String> = modelled_attentions(g, chip, bits)
        .into_iter()
        .map(|f| f.output_projection)
        .collect();
    fused_attentions(g, chip)
        .into_iter()
        .filter(|name| !modelled.contains(name))
        .collect()
}

/// The graph's nodes by the values they write, and how many nodes read each value
/// (a folded `Shape` node's read not counted: TPU-MLIR's graph has none).
struct Form<'a> {
    nodes: &'a [NdNode],
    ir_version: i64,
    writer: HashMap<&'a str, usize>,
    readers: HashMap<&'a str, Vec<usize>>,
}

/// A weight matmul as TPU-MLIR's rewrites leave it: what it reads, the weight elements
/// it holds, and the value it writes.
struct Projection<'a> {
    input: &'a NdEdge,
    weight_elements: u64,
}

impl<'a> Form<'a> {
    fn new(g: &'a NdGraph) -> Self {
        let mut writer = HashMap::new();
        let mut readers: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, n) in g.nodes.iter().enumerate() {
            for o in &n.outputs {
                writer.insert(o.as_str(), i);
            }
            if n.op_type == "Shape" {
                continue;
            }
            for e in &n.inputs {
                readers.entry(e.name.as_str()).or_default().push(i);
            }
        }
        Form {
            nodes: &g.nodes,
            ir_version: g.ir_version,
            writer,
            readers,
        }
    }

    /// The attentions TPU-MLIR fuses on `chip` (a preset name; only bm1684x is known
    /// to), in graph order.
    fn fused_on(&self, chip: &str) -> Vec<Fused<'a>> {
        if !chip.eq_ignore_ascii_case("bm1684x") {
            return Vec::new();
        }
        self.nodes
            .iter()
            .filter_map(|n| self.attention_ending_at(n))
            .filter(Fused::within_bm1684x_limits)
            .collect()
    }

    fn writer_of(&self, value: &str) -> Option<&'a NdNode> {
        self.writer.get(value).map(|&i| &self.nodes[i])
    }

    /// The node writing `e`, if it is an `op`.
    fn made_by(&self, e: &NdEdge, op: &str) -> Option<&'a NdNode> {
        self.writer_of(&e.name).filter(|n| n.op_type == op)
    }

    fn readers_of(&self, value: &str) -> &[usize] {
        self.readers.get(value).map_or(&[], Vec::as_slice)
    }

    /// Whether `n`'s first output has one reader.
    fn one_reader(&self, n: &NdNode) -> bool {
        n.outputs
            .first()
            .is_some_and(|o| self.readers_of(o).len() == 1)
    }

    /// A MatMul or Gemm by a weight.
    fn is_weight_matmul(n: &NdNode) -> bool {
        matches!(n.op_type.as_str(), "MatMul" | "Gemm")
            && n.inputs
                .get(1)
                .is_some_and(|r| r.kind == NdInputKind::Weight)
    }

    /// The value a weight matmul `m` writes once `MatMulWithBias` has taken the bias Add
    /// its one reader may be.
    fn with_bias(&self, m: &'a NdNode) -> Option<&'a str> {
        let out = m.outputs.first()?.as_str();
        match self.readers_of(out) {
            [r] => {
                let add = &self.nodes[*r];
                let bias = add.op_type == "Add"
                    && add.inputs.len() == 2
                    && add.inputs.iter().any(|e| e.kind == NdInputKind::Weight);
                Some(if bias {
                    add.outputs.first()?.as_str()
                } else {
                    out
                })
            }
            _ => Some(out),
        }
    }

    /// The weight matmul writing `e` after `MatMulWithBias` and `SplitMatMulPattern`.
    fn projection(&self, e: &NdEdge) -> Option<Projection<'a>> {
        let n = self.writer_of(&e.name)?;
        if Self::is_weight_matmul(n) {
            return Some(Self::whole(n));
        }
        if n.op_type == "Add" {
            let m = self.matmul_before(n)?;
            return (self.with_bias(m)? == e.name).then(|| Self::whole(m));
        }
        if n.op_type == "Split" {
            return self.split_projection(n, e);
        }
        None
    }

    /// The weight matmul `add` reads (whose bias it may add).
    fn matmul_before(&self, add: &NdNode) -> Option<&'a NdNode> {
        add.inputs.iter().find_map(|x| {
            self.writer_of(&x.name)
                .filter(|m| Self::is_weight_matmul(m))
        })
    }

    fn whole(m: &'a NdNode) -> Projection<'a> {
        Projection {
            input: &m.inputs[0],
            weight_elements: m.inputs[1].dims.iter().product(),
        }
    }

    /// Slice `e` of `split` as `SplitMatMulPattern` makes it: its own matmul, when the
    /// split reads (through Reshapes each read by the next alone) a weight matmul and
    /// the slices' widths (their dims from the matmul's last on) add up to the matmul's
    /// last dim.
    fn split_projection(&self, split: &'a NdNode, e: &NdEdge) -> Option<Projection<'a>> {
        // two slices or more, each value on the way read by the next alone
        (split.outputs.len() >= 2).then_some(())?;
        let mut src = split.inputs.first()?.name.as_str();
        (self.readers_of(src).len() == 1).then_some(())?;
        let mut steps = 0..self.nodes.len();
        let matmul = loop {
            steps.next()?;
            let n = self.writer_of(src)?;
            if n.op_type == "Reshape" {
                src = n.inputs.first()?.name.as_str();
                let only = self.readers_of(src).len() == 1;
                only.then_some(())?;
                continue;
            }
            let m = if n.op_type == "Add" {
                self.matmul_before(n)?
            } else {
                Self::is_weight_matmul(n).then_some(n)?
            };
            (self.with_bias(m)? == src).then_some(())?;
            break m;
        };
        let from = matmul.out_dims.len().checked_sub(1)?;
        let last = *matmul.out_dims.last()?;
        // a slice's width: its dims from the matmul's last on
        let width =
            |o: &str| -> Option<u64> { Some(self.slice_dims_of(o)?.get(from..)?.iter().product()) };
        let mut total = 0u64;
        for o in &split.outputs {
            total = total.checked_add(width(o)?)?;
        }
        (total == last).then_some(())?;
        let this = width(&e.name)?;
        let whole = Self::whole(matmul);
        Some(Projection {
            input: whole.input,
            weight_elements: whole.weight_elements / last.max(1) * this,
        })
    }

    /// The dims of a Split's output `o`, as its first reader reads it (the graph keeps a
    /// node's first output's dims only).
    fn slice_dims_of(&self, o: &str) -> Option<Vec<u64>> {
        let reader = *self.readers_of(o).first()?;
        let edge = self.nodes[reader].inputs.iter().find(|x| x.name == o)?;
        Some(edge.dims.clone())
    }

    /// The Reshape writing `e`, if TPU-MLIR keeps it a `top.Reshape`. Its simplifier
    /// folds a target shape the graph computes from the input's (hf_qkv_dynamic,
    /// exported with dynamic axes, is fused), except in a file of an IR version above
    /// 10, which it does not simplify: it keeps such a shape as shape ops (bert_tiny's
    /// output projection reads a `tpu.ShapeAssign`, and is not fused). A Reshape of a
    /// slice that `SplitMatMulPattern` replaces with a matmul gets a Reshape of its own.
    fn reshape(&self, e: &NdEdge) -> Option<&'a NdNode> {
        let r = self.made_by(e, "Reshape")?;
        if self.ir_version <= MAX_SIMPLIFIED_IR_VERSION {
            return Some(r);
        }
        let constant_shape = r.inputs.get(1).is_some_and(|s| {
            self.writer_of(&s.name)
                .map_or(true, |w| w.op_type == "Constant")
        });
        let of_a_slice = r
            .inputs
            .first()
            .is_some_and(|x| self.made_by(x, "Split").is_some());
        (constant_shape || of_a_slice).then_some(r)
    }

    /// TPU-MLIR's `is_reshape_permute`: Reshape ← Transpose ← (Reshape ←) the value it
    /// returns.
    fn reshape_permute(&self, e: &NdEdge) -> Option<&'a NdEdge> {
        let reshape0 = self.reshape(e).filter(|n| self.one_reader(n))?;
        let permute0 = self
            .made_by(reshape0.inputs.first()?, "Transpose")
            .filter(|n| self.one_reader(n))?;
        let inner = permute0.inputs.first()?;
        match self.reshape(inner) {
            None => Some(inner),
            Some(r) if self.one_reader(r) => r.inputs.first(),
            Some(_) => None,
        }
    }

    /// TPU-MLIR's `is_permute_reshape`: (Reshape ←) Transpose ← Reshape ← the value it
    /// returns.
    fn permute_reshape(&self, e: &'a NdEdge) -> Option<&'a NdEdge> {
        let permute_out = match self.reshape(e) {
            None => e,
            Some(r) if self.one_reader(r) => r.inputs.first()?,
            Some(_) => return None,
        };
        let permute0 = self
            .made_by(permute_out, "Transpose")
            .filter(|n| self.one_reader(n))?;
        let reshape1 = self
            .reshape(permute0.inputs.first()?)
            .filter(|n| self.one_reader(n))?;
        reshape1.inputs.first()
    }

    /// The attention whose output projection is `op`, if TPU-MLIR's pattern matches it
    /// (its size limits aside).
    fn attention_ending_at(&self, op: &'a NdNode) -> Option<Fused<'a>> {
        if !Self::is_weight_matmul(op) || self.readers_of(self.with_bias(op)?).len() != 1 {
            return None;
        }
        let pv = self.made_by(self.reshape_permute(op.inputs.first()?)?, "MatMul")?;
        let softmax = self
            .made_by(pv.inputs.first()?, "Softmax")
            .filter(|n| self.one_reader(n))?;
        let batch = *op.inputs.first()?.dims.first()?;
        let (scaled, mask) = match self.made_by(softmax.inputs.first()?, "Add") {
            Some(add) => {
                let mask = add.inputs.get(1)?;
                let elements: u64 = mask.dims.iter().product();
                (batch.checked_mul(*mask.dims.last()?) == Some(elements)).then_some(())?;
                (add.inputs.first()?, Some(mask))
            }
            None => (softmax.inputs.first()?, None),
        };
        let scale = self.scale_by_constant(scaled)?;
        let qk = self.made_by(scale.inputs.first()?, "MatMul")?;
        let q = self.projection(self.permute_reshape(qk.inputs.first()?)?)?;
        let k_in = qk.inputs.get(1)?;
        let k_out = self
            .made_by(k_in, "Transpose")
            .filter(|n| self.one_reader(n))
            .and_then(|t| self.permute_reshape(t.inputs.first()?))
            .or_else(|| self.permute_reshape(k_in))?;
        let k = self.projection(k_out)?;
        let v = self.projection(self.permute_reshape(pv.inputs.get(1)?)?)?;
        let (qi, ki, vi) = (q.input, k.input, v.input);
        if qi.name == ki.name && qi.name != vi.name {
            return None;
        }
        let first = |e: &NdEdge| e.dims.first().copied();
        if first(qi) != first(ki) || first(qi) != first(vi) {
            return None;
        }
        let n = first(qi)?.max(1);
        let heads = match pv.out_dims.as_slice() {
            [b, _, _] => b / n,
            [_, h, ..] => *h,
            _ => return None,
        };
        Some(Fused {
            output_projection: &op.name,
            projection_node: op,
            input: qi,
            mask,
            heads,
            input_per_batch: qi.dims.iter().product::<u64>() / n,
            weights_per_head: (2 * q.weight_elements + k.weight_elements + v.weight_elements)
                / heads.max(1),
        })
    }

    /// The fused attention `f` as TPU-MLIR's lowering makes it: the nodes it stands for
    /// are those the output reads back to the input and the mask (activations only).
    fn as_layers(&self, f: &Fused<'a>) -> Option<FusedAttention> {
        let op = f.projection_node;
        let output = self.with_bias(op)?.to_string();
        let last_node = self.writer_of(&output)?;
        let last = *self.writer.get(output.as_str())?;
        let stops = [Some(f.input.name.as_str()), f.mask.map(|m| m.name.as_str())];
        let mut seen = std::collections::HashSet::from([last]);
        let mut todo = vec![last];
        while let Some(i) = todo.pop() {
            for e in self.nodes[i].inputs.iter() {
                if e.kind != NdInputKind::Activation || stops.contains(&Some(e.name.as_str())) {
                    continue;
                }
                if let Some(&w) = self.writer.get(e.name.as_str()) {
                    if seen.insert(w) {
                        todo.push(w);
                    }
                }
            }
        }
        let mut nodes: Vec<usize> = seen.into_iter().collect();
        nodes.sort_unstable();
        // the output projection reads the heads' outputs side by side
        let head_dim = op.inputs.first()?.dims.last()? / f.heads.max(1);
        let input_reader_loc = self.first_reader_loc(&nodes, &f.input.name)?;
        Some(FusedAttention {
            output_projection: f.output_projection.to_string(),
            nodes,
            last,
            input: f.input.clone(),
            mask: f.mask.cloned(),
            output_loc: format!("{output}_{}", last_node.op_type),
            output,
            heads: f.heads,
            head_dim,
            out_bias: last_node.op_type == "Add",
            input_reader_loc,
        })
    }

    /// TPU-MLIR's name of the first of `nodes` (in graph order) that reads `input`, a
    /// weight matmul, after `MatMulWithBias` and `SplitMatMulPattern`.
    fn first_reader_loc(&self, nodes: &[usize], input: &str) -> Option<String> {
        let m = nodes
            .iter()
            .map(|&i| &self.nodes[i])
            .find(|n| n.inputs.first().is_some_and(|e| e.name == input))?;
        let out = self.with_bias(m)?;
        let named = self.writer_of(out)?;
        let loc = format!("{out}_{}", named.op_type);
        // through Reshapes each read by the next alone, to a Split
        let mut at = out;
        for _ in 0..self.nodes.len() {
            let [r] = self.readers_of(at) else { break };
            match self.nodes[*r].op_type.as_str() {
                "Reshape" => at = self.nodes[*r].outputs.first()?.as_str(),
                "Split" => return Some(format!("{loc}_matmul_1")),
                _ => break,
            }
        }
        Some(loc)
    }

    /// A scale by a constant (TPU-MLIR's `MulConst`: a Mul or Div by one number) with one
    /// reader, writing `e`.
    fn scale_by_constant(&self, e: &NdEdge) -> Option<&'a NdNode> {
        let n = self.writer_of(&e.name)?;
        let by_constant = matches!(n.op_type.as_str(), "Mul" | "Div")
            && n.inputs.get(1).is_some_and(|c| c.scalar.is_some());
        (by_constant && self.one_reader(n)).then_some(n)
    }
}

/// An attention TPU-MLIR's pattern matches, with the sizes its bm1684x limits read.
struct Fused<'a> {
    /// The output projection's node name.
    output_projection: &'a str,
    /// The output projection.
    projection_node: &'a NdNode,
    /// The projections' input.
    input: &'a NdEdge,
    /// The additive mask, if any.
    mask: Option<&'a NdEdge>,
    /// Heads.
    heads: u64,
    /// Elements of the projections' input, per batch.
    input_per_batch: u64,
    /// `(2 |Wq| + |Wk| + |Wv|) / heads`, elements.
    weights_per_head: u64,
}

impl Fused<'_> {
    fn within_bm1684x_limits(&self) -> bool {
        self.input_per_batch <= 2048 * 320 * 4 && self.weights_per_head <= 1024 * 128 * 4
    }
}

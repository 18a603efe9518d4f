//! Network inputs that arrive in a wider element type than the network runs in.
//!
//! An ONNX model's inputs are f32. When TPU-MLIR compiles it for F16 or BF16 it keeps
//! the input f32 in global memory (unless `model_deploy --quant_input`) and inserts a
//! cast to the narrow type in front of the first consumers; that cast is an op like any
//! other, which its layer-group pass can put in a group (ResNet-18 at batch 4 on
//! bm1684x: inside the first, H-sliced group) or run alone from global memory. The
//! planner needs it in the graph to cost it and to choose where it runs.
//!
//! The same compilers run some ops in f32 under a 16-bit type, with casts in and out
//! ([`cast_wide`]); those casts are ops too.

use crate::builder::unique;
use crate::ir::{Graph, Op, OpKind, Tensor, TensorId, TensorKind};
use std::collections::HashSet;

/// `g` with a [`OpKind::Cast`] after every network input that some op reads: the input
/// tensor keeps its name and gets `bits` ([`Tensor::bits`]); a new tensor
/// `<input>_cast` (the network's element type) replaces it for every consumer, made by
/// an op of the same name placed first. Tensor ids of `g` are unchanged (new ones are
/// appended); op ids shift by the number of casts. Inputs nobody reads stay as they are.
pub fn cast_inputs(g: &Graph, bits: u32) -> Graph {
    let mut out = g.clone();
    let mut casts = Vec::new();
    // new names must differ from every tensor and op name
    let mut taken: HashSet<String> = names_in_use(g);
    for &x in &g.inputs {
        let Some(t) = g.tensors.get(x) else { continue };
        if t.kind != TensorKind::Activation || !g.ops.iter().any(|o| o.inputs.contains(&x)) {
            continue;
        }
        let (name, y) = cast_tensor(&mut out, &mut taken, x, None);
        out.tensors[x].bits = Some(bits);
        for op in &mut out.ops {
            for i in op.inputs.iter_mut().filter(|i| **i == x) {
                *i = y;
            }
        }
        casts.push(cast_op(name, x, y));
    }
    casts.append(&mut out.ops);
    out.ops = casts;
    out
}

/// `g` with a [`OpKind::Cast`] to `bits` after every network output that `narrow`
/// picks, as TPU-MLIR stores a 16-bit network's outputs in f32 (unless `model_deploy
/// --quant_output`): the output's producer keeps its tensor, a new tensor
/// `<output>_cast` at `bits` made by an op of the same name right after the producer
/// becomes the network output. Outputs no op writes stay as they are.
pub fn cast_outputs(g: &Graph, bits: u32, narrow: impl Fn(TensorId) -> bool) -> Graph {
    let mut out = g.clone();
    let mut taken: HashSet<String> = names_in_use(g);
    let mut ops: Vec<Op> = Vec::with_capacity(g.ops.len() + g.outputs.len());
    for op in &g.ops {
        ops.push(op.clone());
        for &y in &op.outputs {
            let t = &g.tensors[y];
            if !narrow(y) || t.kind != TensorKind::Activation || !g.outputs.contains(&y) {
                continue;
            }
            let (name, wide) = cast_tensor(&mut out, &mut taken, y, Some(bits));
            for o in out.outputs.iter_mut().filter(|o| **o == y) {
                *o = wide;
            }
            ops.push(cast_op(name, y, wide));
        }
    }
    out.ops = ops;
    out
}

/// A new activation tensor `<x>_cast` (a name no other has) of `x`'s shape held at
/// `bits`, appended to `g`: its name and id.
fn cast_tensor(
    g: &mut Graph,
    taken: &mut HashSet<String>,
    x: TensorId,
    bits: Option<u32>,
) -> (String, TensorId) {
    let t = &g.tensors[x];
    let name = unique(taken, &format!("{}_cast", t.name));
    let shape = t.shape;
    g.tensors.push(Tensor {
        name: name.clone(),
        shape,
        kind: TensorKind::Activation,
        bits,
    });
    (name, g.tensors.len() - 1)
}

/// Every tensor and op name of `g` (a new name must be none of them).
fn names_in_use(g: &Graph) -> HashSet<String> {
    g.tensors
        .iter()
        .map(|t| t.name.clone())
        .chain(g.ops.iter().map(|o| o.name.clone()))
        .collect()
}

/// A cast op `name` of tensor `from` into tensor `to`.
fn cast_op(name: String, from: TensorId, to: TensorId) -> Op {
    Op {
        name,
        kind: OpKind::Cast,
        inputs: vec![from],
        weights: vec![],
        outputs: vec![to],
        fused_act: None,
        source_type: None,
    }
}

/// How an op of [`cast_wide_by`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// In the network's element type.
    Narrow,
    /// In the wider type, between casts.
    Wide,
    /// Wide inside, from either width: it reads each input as it is and writes the
    /// network's type (a compiler's own cast in front of it is its own business, as
    /// TPU-MLIR's f32 global average pool after a 16-bit op).
    Either,
}

/// `g` with the ops `wide` picks computed in `bits`, wider than the network's element
/// type, as an NPU compiler runs some ops (an average pool, a sigmoid) in f32 under a
/// 16-bit type: each such op reads a [`OpKind::Cast`] of every input not already that
/// wide, and its output is held at `bits` ([`Tensor::bits`]); an op of the network's
/// type reading a wide tensor reads a cast of it back. A view (flatten, reshape) is as
/// wide as its input. One cast of a tensor serves all its readers of the other width
/// (as TPU-MLIR shares it): named `<reader>_cast<k>` after the first, placed right
/// before it. Ops that are casts already are left alone.
pub fn cast_wide(g: &Graph, wide: impl Fn(&Op) -> bool, bits: u32) -> Graph {
    cast_wide_by(
        g,
        |op| if wide(op) { Width::Wide } else { Width::Narrow },
        bits,
    )
}

/// [`cast_wide`] with a [`Width`] for every op: an op of [`Width::Either`] reads its
/// inputs without casts, but for a narrow input some wide op casts up anyway: that
/// op reads the one cast up too (TPU-MLIR's one f32 cast of a tensor serves every f32
/// reader, a global average pool's as well), so the cast is made in front of whichever
/// reads it first.
pub fn cast_wide_by(g: &Graph, width: impl Fn(&Op) -> Width, bits: u32) -> Graph {
    let first = insert_casts(g, &width, bits, &HashSet::new());
    // the casts up the pass made (tensors past `g`'s are theirs)
    let cast_up: HashSet<TensorId> = first
        .ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Cast))
        .filter(|o| {
            o.outputs
                .iter()
                .all(|&y| y >= g.tensors.len() && first.tensors[y].bits == Some(bits))
        })
        .flat_map(|o| o.inputs.iter().copied())
        .collect();
    if cast_up.is_empty() {
        return first;
    }
    insert_casts(g, &width, bits, &cast_up)
}

/// [`cast_wide_by`]'s pass: every op of `g` reading its inputs at its width, through
/// one cast per tensor; an op of [`Width::Either`] reads a cast up of the narrow
/// tensors in `shared_up`.
fn insert_casts(
    g: &Graph,
    width: &impl Fn(&Op) -> Width,
    bits: u32,
    shared_up: &HashSet<TensorId>,
) -> Graph {
    let mut out = g.clone();
    let mut taken: HashSet<String> = names_in_use(g);
    let mut is_wide = vec![false; g.tensors.len()];
    // the cast of a tensor to the other width, once made
    let mut cast_of: std::collections::HashMap<usize, usize> = Default::default();
    let mut ops = Vec::with_capacity(g.ops.len());
    for op in &g.ops {
        let mut op = op.clone();
        if matches!(op.kind, OpKind::Cast) {
            ops.push(op);
            continue;
        }
        let view = matches!(op.kind, OpKind::Flatten | OpKind::Reshape);
        let either = !view && width(&op) == Width::Either;
        let runs_wide = if view {
            op.inputs.first().is_some_and(|&t| is_wide[t])
        } else {
            width(&op) == Width::Wide
        };
        let mut made = 0;
        for k in 0..op.inputs.len() {
            let t = op.inputs[k];
            let to_wide = match (view, either) {
                (true, _) => continue,
                (false, true) if !is_wide[t] && shared_up.contains(&t) => true,
                (false, true) => continue,
                (false, false) if is_wide[t] == runs_wide => continue,
                (false, false) => runs_wide,
            };
            let y = match cast_of.get(&t) {
                Some(&y) => y,
                None => {
                    let name = unique(&mut taken, &format!("{}_cast{made}", op.name));
                    made += 1;
                    let y = out.tensors.len();
                    out.tensors.push(Tensor {
                        name: name.clone(),
                        shape: out.tensors[t].shape,
                        kind: TensorKind::Activation,
                        bits: to_wide.then_some(bits),
                    });
                    is_wide.push(to_wide);
                    ops.push(cast_op(name, t, y));
                    cast_of.insert(t, y);
                    y
                }
            };
            op.inputs[k] = y;
        }
        for &y in &op.outputs {
            is_wide[y] = runs_wide;
            if runs_wide && !view {
                out.tensors[y].bits = Some(bits);
            }
        }
        ops.push(op);
    }
    out.ops = ops;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::GraphBuilder;
    use crate::ir::Shape4;
    use crate::validate::validate;

    #[test]
    fn every_read_input_gets_a_cast_in_front_and_keeps_its_name() {
        let mut b = GraphBuilder::new("two");
        let x = b.input("x", Shape4::new(2, 3, 8, 8));
        let unused = b.input("unused", Shape4::new(1, 1, 1, 1));
        let y = b.conv("conv", x, 3, 3, 1, 1, 1, false).unwrap();
        b.add_op("sum", OpKind::Add, &[x, y], &[]).unwrap();
        let g = b.finish().unwrap();
        let c = cast_inputs(&g, 32);
        validate(&c).unwrap();
        assert_eq!(c.ops.len(), g.ops.len() + 1);
        assert_eq!(c.ops[0].kind, OpKind::Cast);
        assert_eq!(c.ops[0].name, "x_cast");
        assert_eq!(c.ops[0].inputs, vec![x]);
        assert_eq!(c.tensors[x].bits, Some(32));
        assert_eq!(c.tensors[x].name, "x");
        let xc = c.ops[0].outputs[0];
        assert_eq!(c.tensors[xc].shape, g.tensors[x].shape);
        assert_eq!(c.tensors[xc].bits, None);
        // no op but the cast reads the f32 input any more
        assert!(c.ops[1..].iter().all(|o| !o.inputs.contains(&x)));
        assert!(c.ops[1..].iter().filter(|o| o.inputs.contains(&xc)).count() == 2);
        assert_eq!(
            c.tensors[unused].bits, None,
            "an input nobody reads is left alone"
        );
    }

    #[test]
    fn a_wide_op_reads_a_cast_and_its_narrow_readers_a_cast_back() {
        let mut b = GraphBuilder::new("w");
        let x = b.input("x", Shape4::new(1, 4, 8, 8));
        let y = b.conv("conv", x, 4, 3, 1, 1, 1, false).unwrap();
        let s = b.act("sig", y, crate::ir::Activation::Sigmoid).unwrap();
        let f = b.add_op("flat", OpKind::Flatten, &[s], &[]).unwrap();
        let m = b.add_op("mul", OpKind::Mul, &[y, s], &[]).unwrap();
        let a = b.add_op("add", OpKind::Add, &[m, s], &[]).unwrap();
        b.output(f);
        b.output(a);
        let g = b.finish().unwrap();
        let w = cast_wide(&g, |o| matches!(o.kind, OpKind::Act(_)), 32);
        validate(&w).unwrap();
        let kinds: Vec<&str> = w.ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "conv",
                "sig_cast0",
                "sig",
                "flat",
                "mul_cast0",
                "mul",
                "add"
            ]
        );
        let sig = &w.ops[2];
        assert_eq!(w.tensors[sig.outputs[0]].bits, Some(32));
        assert_eq!(
            w.tensors[w.ops[1].outputs[0]].bits,
            Some(32),
            "the cast up is wide"
        );
        // the flatten reads the wide tensor as it is; the mul reads a narrow cast of it
        assert_eq!(w.ops[3].inputs, vec![sig.outputs[0]]);
        assert_eq!(w.tensors[w.ops[4].outputs[0]].bits, None);
        assert_eq!(w.ops[5].inputs, vec![y, w.ops[4].outputs[0]]);
        // the add reads the same narrow cast: one cast serves every reader
        assert_eq!(w.ops[6].inputs[1], w.ops[4].outputs[0]);
        // nothing wide, nothing changes
        assert_eq!(cast_wide(&g, |_| false, 32), g);
    }

    #[test]
    fn a_narrow_output_leaves_through_a_cast_right_after_its_producer() {
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 4, 8, 8));
        let y = b.conv("conv", x, 4, 3, 1, 1, 1, false).unwrap();
        let z = b.act("tanh", y, crate::ir::Activation::Tanh).unwrap();
        b.output(y);
        b.output(z);
        let g = b.finish().unwrap();
        // the tanh's output is held wide already: only the conv's is cast
        let w = cast_outputs(&g, 32, |t| t == y);
        validate(&w).unwrap();
        let names: Vec<&str> = w.ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["conv", "conv_cast", "tanh"]);
        let cast = &w.ops[1];
        assert_eq!(cast.kind, OpKind::Cast);
        assert_eq!(cast.inputs, vec![y]);
        assert_eq!(w.outputs, vec![cast.outputs[0], z]);
        assert_eq!(w.tensors[cast.outputs[0]].bits, Some(32));
        assert_eq!(w.tensors[cast.outputs[0]].name, "conv_cast");
        // the tanh still reads the conv's own tensor
        assert_eq!(w.ops[2].inputs, vec![y]);
        assert_eq!(cast_outputs(&g, 32, |_| false), g);
    }

    #[test]
    fn an_op_of_either_width_reads_a_wide_tensor_without_a_cast() {
        // a SiLU in f32 feeding a global average pool (computed wide from either width)
        // and a mul (narrow): only the mul reads a cast back
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 4, 8, 8));
        let s = b.act("silu", x, crate::ir::Activation::Silu).unwrap();
        let p = b.add_op("gap", OpKind::GlobalAvgPool, &[s], &[]).unwrap();
        let m = b.add_op("mul", OpKind::Mul, &[s, x], &[]).unwrap();
        b.output(p);
        b.output(m);
        let g = b.finish().unwrap();
        let width = |o: &Op| match o.kind {
            OpKind::Act(_) => Width::Wide,
            OpKind::GlobalAvgPool => Width::Either,
            _ => Width::Narrow,
        };
        let w = cast_wide_by(&g, width, 32);
        validate(&w).unwrap();
        let names: Vec<&str> = w.ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["silu_cast0", "silu", "gap", "mul_cast0", "mul"]);
        let silu_out = w.ops[1].outputs[0];
        assert_eq!(
            w.ops[2].inputs,
            vec![silu_out],
            "the pool reads the f32 tensor"
        );
        assert_eq!(
            w.tensors[w.ops[2].outputs[0]].bits, None,
            "and writes 16 bits"
        );
        assert_eq!(w.ops[4].inputs[0], w.ops[3].outputs[0]);
    }

    #[test]
    fn an_op_of_either_width_shares_the_cast_up_a_wide_reader_makes() {
        // psp_pool_64's shape: a ReLU read by a global average pool (either width)
        // before an f32 average pool: the pool reads the one cast up, made in front of it
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 4, 8, 8));
        let r = b.act("relu", x, crate::ir::Activation::Relu).unwrap();
        let p = b.add_op("gap", OpKind::GlobalAvgPool, &[r], &[]).unwrap();
        // the mul stands for the f32 average pool
        let a = b.add_op("avg", OpKind::Mul, &[r, r], &[]).unwrap();
        b.output(p);
        b.output(a);
        let g = b.finish().unwrap();
        let width = |o: &Op| match o.kind {
            OpKind::Mul => Width::Wide,
            OpKind::GlobalAvgPool => Width::Either,
            _ => Width::Narrow,
        };
        let w = cast_wide_by(&g, width, 32);
        validate(&w).unwrap();
        let names: Vec<&str> = w.ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["relu", "gap_cast0", "gap", "avg"]);
        let up = w.ops[1].outputs[0];
        assert_eq!(w.tensors[up].bits, Some(32));
        assert_eq!(w.ops[2].inputs, vec![up], "the pool reads the cast up");
        assert_eq!(w.ops[3].inputs, vec![up, up], "so does the wide op");
        // with no wide reader the pool reads the narrow tensor as it is
        let either_only = |o: &Op| match o.kind {
            OpKind::GlobalAvgPool => Width::Either,
            _ => Width::Narrow,
        };
        assert_eq!(cast_wide_by(&g, either_only, 32), g);
    }
}

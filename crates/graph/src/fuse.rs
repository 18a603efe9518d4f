//! Batch-norm and activation folding: the inference form TPU-MLIR plans.
//!
//! Rules (each applies only when the intermediate tensor has exactly one consumer and is
//! not a graph output, so no observable value disappears):
//! - **BatchNorm after Conv/Deconv** folds into the conv's weights: the BN op is dropped,
//!   its scale disappears into the filter, and the conv keeps its bias (or gains one, the
//!   BN's shift tensor `1×c×1×1`). The conv then writes the BN's output tensor.
//! - **Relu / Relu6 after Conv, Deconv, Gemm, BatchNorm, Add or Mul** becomes the
//!   producing op's [`Op::fused_act`] (TPU-MLIR's `do_relu` with `relu_limit` 6 for
//!   Relu6); the activation op is dropped. Other activations (sigmoid, leaky relu, …)
//!   stay separate ops, as they do in TPU-MLIR.
//!
//! Unused tensors (the folded intermediates, BN scales) are removed and ids renumbered;
//! the result passes the validator.

use crate::error::Result;
use crate::ir::{Activation, Graph, Op, OpKind, TensorId};

/// Returns `g` with batch-norms and Relu/Relu6 folded into their producers (see the
/// module docs). `g` must be valid; the result is validated.
pub fn fuse(g: &Graph) -> Result<Graph> {
    crate::validate::validate(g)?;
    let n = g.tensors.len();
    let mut uses = vec![0usize; n];
    for op in &g.ops {
        for &t in &op.inputs {
            uses[t] += 1;
        }
    }
    for &t in &g.outputs {
        uses[t] += 1;
    }
    let mut producer: Vec<Option<usize>> = vec![None; n];
    for (i, op) in g.ops.iter().enumerate() {
        producer[op.outputs[0]] = Some(i);
    }
    let mut ops: Vec<Op> = g.ops.clone();
    let mut removed = vec![false; ops.len()];
    for i in 0..ops.len() {
        let [x] = ops[i].inputs[..] else { continue };
        let Some(p) = producer[x] else { continue };
        if uses[x] != 1 || removed[p] || ops[p].fused_act.is_some() {
            continue;
        }
        let fold = match (&ops[i].kind, &ops[p].kind) {
            (OpKind::BatchNorm, OpKind::Conv(_) | OpKind::Deconv { .. }) => {
                if ops[p].weights.len() == 1 {
                    let shift = ops[i].weights[1];
                    ops[p].weights.push(shift);
                }
                true
            }
            (
                OpKind::Act(a @ (Activation::Relu | Activation::Relu6)),
                OpKind::Conv(_)
                | OpKind::Deconv { .. }
                | OpKind::Gemm
                | OpKind::BatchNorm
                | OpKind::Add
                | OpKind::Mul,
            ) => {
                ops[p].fused_act = Some(*a);
                true
            }
            _ => false,
        };
        if fold {
            let out = ops[i].outputs[0];
            ops[p].outputs = vec![out];
            producer[out] = Some(p);
            removed[i] = true;
        }
    }
    let ops: Vec<Op> = ops
        .into_iter()
        .zip(removed)
        .filter(|(_, r)| !r)
        .map(|(o, _)| o)
        .collect();
    compact(g, ops)
}

/// Rebuilds `g` with `ops`, dropping tensors no op or graph input/output references and
/// renumbering ids; validates the result.
fn compact(g: &Graph, ops: Vec<Op>) -> Result<Graph> {
    let mut keep = vec![false; g.tensors.len()];
    for op in &ops {
        for &t in op.inputs.iter().chain(&op.weights).chain(&op.outputs) {
            keep[t] = true;
        }
    }
    for &t in g.inputs.iter().chain(&g.outputs) {
        keep[t] = true;
    }
    let mut new_id: Vec<Option<TensorId>> = vec![None; g.tensors.len()];
    let mut tensors = Vec::new();
    for (i, t) in g.tensors.iter().enumerate() {
        if keep[i] {
            new_id[i] = Some(tensors.len());
            tensors.push(t.clone());
        }
    }
    // Every referenced id was kept above, so the lookups below always succeed.
    let map = |ids: &[TensorId]| ids.iter().filter_map(|&t| new_id[t]).collect::<Vec<_>>();
    let ops = ops
        .into_iter()
        .map(|o| Op {
            inputs: map(&o.inputs),
            weights: map(&o.weights),
            outputs: map(&o.outputs),
            ..o
        })
        .collect();
    let out = Graph {
        name: g.name.clone(),
        tensors,
        ops,
        inputs: map(&g.inputs),
        outputs: map(&g.outputs),
    };
    crate::validate::validate(&out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::GraphBuilder;
    use crate::ir::Shape4;

    #[test]
    fn conv_bn_relu_becomes_one_op() {
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 3, 8, 8));
        let y = b.conv("c", x, 4, 3, 1, 1, 1, false).unwrap();
        let y = b.batchnorm("bn", y).unwrap();
        let y = b.act("relu", y, Activation::Relu).unwrap();
        b.output(y);
        let g = fuse(&b.finish().unwrap()).unwrap();
        assert_eq!(g.ops.len(), 1);
        let op = &g.ops[0];
        assert_eq!(op.fused_act, Some(Activation::Relu));
        assert_eq!(op.weights.len(), 2);
        assert_eq!(g.tensors[op.weights[1]].name, "bn.bias");
        assert_eq!(g.tensors[op.outputs[0]].name, "relu");
        assert_eq!(g.tensors.len(), 4); // x, filter, bias, output
    }

    #[test]
    fn keeps_bias_and_respects_multiple_consumers() {
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 3, 8, 8));
        let c = b.conv("c", x, 4, 3, 1, 1, 1, true).unwrap();
        let y = b.batchnorm("bn", c).unwrap();
        // `y` has two consumers: the relu must not fold into the conv.
        let r = b.act("relu", y, Activation::Relu).unwrap();
        let s = b.add_op("add", OpKind::Add, &[r, y], &[]).unwrap();
        let s = b.act("relu2", s, Activation::Relu).unwrap();
        let t = b.act("sig", s, Activation::Sigmoid).unwrap();
        b.output(t);
        let g = fuse(&b.finish().unwrap()).unwrap();
        let kinds: Vec<_> = g
            .ops
            .iter()
            .map(|o| (o.name.as_str(), o.fused_act))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("c", None),
                ("relu", None),
                ("add", Some(Activation::Relu)),
                ("sig", None)
            ]
        );
        assert_eq!(g.tensors[g.ops[0].weights[1]].name, "c.bias");
    }

    #[test]
    fn graph_output_is_not_folded() {
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 3, 8, 8));
        let c = b.conv("c", x, 4, 3, 1, 1, 1, false).unwrap();
        let r = b.act("relu", c, Activation::Relu).unwrap();
        b.output(c);
        b.output(r);
        let g = fuse(&b.finish().unwrap()).unwrap();
        assert_eq!(g.ops.len(), 2);
    }
}

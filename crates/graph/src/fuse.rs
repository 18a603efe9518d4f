//! Batch-norm and activation folding, and TPU-MLIR's other canonicalizations of CNNs: the
//! inference form TPU-MLIR plans.
//!
//! Rules (each applies only when the intermediate tensor has exactly one consumer and is
//! not a graph output, so no observable value disappears):
//! - **BatchNorm after Conv** folds into the conv's weights: the BN op is dropped,
//!   its scale disappears into the filter, and the conv keeps its bias (or gains one, the
//!   BN's shift tensor `1×c×1×1`). The conv keeps its own output tensor, which the BN's
//!   readers now read (TPU-MLIR names the folded op after the conv's output, `conv19_Conv`,
//!   not the BN's); only when the BN's output is a graph output does the conv write it.
//!   A BatchNorm after a transposed conv stays an op of its own, as TPU-MLIR 1.30.2 keeps
//!   it: the zoo's tanh_deconv_b4 (ConvTranspose, BatchNormalization, Relu) is cached by
//!   TPU-MLIR as `deconv11_ConvTranspose` and `relu17_Relu`, the BN with its ReLU.
//! - **Relu / Relu6 after Conv, Deconv, Gemm, BatchNorm, Add or Mul** becomes the
//!   producing op's [`Op::fused_act`] (TPU-MLIR's `do_relu` with `relu_limit` 6 for
//!   Relu6); the activation op is dropped. Other activations (sigmoid, leaky relu, …)
//!   stay separate ops, as they do in TPU-MLIR.
//!
//! - **A linear 1×1 conv into the conv after it** (TPU-MLIR 1.30.2's
//!   `Conv1x1Convkxk2dMerge` canonicalization): conv A with a 1×1 kernel, stride 1, no
//!   padding, one group and no activation, whose output only conv B reads, B with no
//!   padding and one group. B then reads A's input with a merged filter
//!   `(B's out channels, A's in channels, kh, kw)`, keeps its bias (or gains one of its
//!   out channels from A's), and A is dropped. MobileNetV2's last bottleneck conv
//!   (960 → 320) merges into the 1×1 conv after it (320 → 1280) as a 960 → 1280 conv of
//!   2.4 MB of f16 weights, and the first block's projection (32 → 16) into the next
//!   expansion (16 → 96); TPU-MLIR's layer-group caches list neither dropped conv.
//!
//! - **`x · sigmoid(x)` becomes one SiLU** (TPU-MLIR's `MulToSiLU`): a Mul of two inputs
//!   with no fused activation, one of them a sigmoid of the other that nothing else reads.
//!   The SiLU keeps the Mul's output and, for TPU-MLIR's names, its op type
//!   ([`Op::source_type`] `Mul`: `mul5_Mul`); the sigmoid is dropped. Applied first, so
//!   a ReLU after such a Mul stays a separate op.
//!
//! Unused tensors (the folded intermediates, BN scales) are removed and ids renumbered;
//! the result passes the validator.

use crate::error::Result;
use crate::ir::{Activation, Graph, Op, OpKind, Shape4, Tensor, TensorId};

/// Returns `g` with batch-norms and Relu/Relu6 folded into their producers and linear
/// 1×1 convs merged into the conv after them (see the module docs). `g` must be valid;
/// the result is validated.
pub fn fuse(g: &Graph) -> Result<Graph> {
    merge_linear_1x1(&fold(&silu(g)?)?)
}

/// How many times each tensor is read (graph outputs count once) and which op writes it.
fn uses_and_producers(g: &Graph) -> (Vec<usize>, Vec<Option<usize>>) {
    let n = g.tensors.len();
    let mut uses = vec![0usize; n];
    for &t in g.ops.iter().flat_map(|op| &op.inputs).chain(&g.outputs) {
        uses[t] += 1;
    }
    let mut producer: Vec<Option<usize>> = vec![None; n];
    for (i, op) in g.ops.iter().enumerate() {
        producer[op.outputs[0]] = Some(i);
    }
    (uses, producer)
}

/// TPU-MLIR's `MulToSiLU` canonicalization alone: a two-input Mul (no fused activation)
/// of `x` and `sigmoid(x)`, where the sigmoid's output has no other reader, becomes one
/// SiLU of `x` named after the Mul (`mul5_Mul`); the sigmoid is dropped.
fn silu(g: &Graph) -> Result<Graph> {
    crate::validate::validate(g)?;
    let (uses, producer) = uses_and_producers(g);
    let mut ops: Vec<Op> = g.ops.clone();
    let mut removed = vec![false; ops.len()];
    for i in 0..ops.len() {
        let op = &ops[i];
        if !matches!(op.kind, OpKind::Mul) || op.fused_act.is_some() || !op.weights.is_empty() {
            continue;
        }
        let [a, b] = op.inputs[..] else { continue };
        // the sigmoid writing `s` from `x` alone, read only here
        let sigmoid_of = |s: TensorId, x: TensorId| {
            producer[s].filter(|&p| {
                let sig = &ops[p];
                !removed[p]
                    && uses[s] == 1
                    && sig.kind == OpKind::Act(Activation::Sigmoid)
                    && sig.fused_act.is_none()
                    && sig.inputs == [x]
            })
        };
        let (x, sigmoid) = match (sigmoid_of(b, a), sigmoid_of(a, b)) {
            (Some(p), _) => (a, p),
            (None, Some(p)) => (b, p),
            (None, None) => continue,
        };
        removed[sigmoid] = true;
        let op = &mut ops[i];
        op.kind = OpKind::Act(Activation::Silu);
        op.inputs = vec![x];
        op.source_type = Some("Mul".into());
    }
    compact(g, kept(ops, &removed))
}

/// The ops of `ops` not `removed`.
fn kept(ops: Vec<Op>, removed: &[bool]) -> Vec<Op> {
    ops.into_iter()
        .zip(removed)
        .filter(|(_, r)| !**r)
        .map(|(o, _)| o)
        .collect()
}

/// Batch-norm and activation folding alone.
fn fold(g: &Graph) -> Result<Graph> {
    crate::validate::validate(g)?;
    let (mut uses, mut producer) = uses_and_producers(g);
    let mut ops: Vec<Op> = g.ops.clone();
    let mut removed = vec![false; ops.len()];
    for i in 0..ops.len() {
        let [x] = ops[i].inputs[..] else { continue };
        let Some(p) = producer[x] else { continue };
        if uses[x] != 1 || removed[p] || ops[p].fused_act.is_some() {
            continue;
        }
        let fold = match (&ops[i].kind, &ops[p].kind) {
            (OpKind::BatchNorm, OpKind::Conv(_)) => {
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
        if !fold {
            continue;
        }
        removed[i] = true;
        let out = ops[i].outputs[0];
        let bn = matches!(ops[i].kind, OpKind::BatchNorm);
        if bn && !g.outputs.contains(&out) {
            // the conv keeps its own output: readers of the BN's now read the conv's
            for later in &mut ops[i + 1..] {
                for t in later.inputs.iter_mut().filter(|t| **t == out) {
                    *t = x;
                }
            }
            uses[x] = uses[out];
        } else {
            ops[p].outputs = vec![out];
            producer[out] = Some(p);
        }
    }
    compact(g, kept(ops, &removed))
}

/// Merges each linear 1×1 conv into the one conv that reads its output (see the module
/// docs), repeatedly, so a chain of them merges into its last conv.
fn merge_linear_1x1(g: &Graph) -> Result<Graph> {
    let mut g = g.clone();
    loop {
        let (uses, producer) = uses_and_producers(&g);
        let linear_1x1 = |op: &Op| match &op.kind {
            OpKind::Conv(p) => {
                p.kernel == [1, 1]
                    && p.stride == [1, 1]
                    && p.pad == [0; 4]
                    && p.groups == 1
                    && op.fused_act.is_none()
            }
            _ => false,
        };
        let pair = g.ops.iter().enumerate().find_map(|(b, op)| {
            let OpKind::Conv(p) = &op.kind else {
                return None;
            };
            if p.pad != [0; 4] || p.groups != 1 {
                return None;
            }
            let &x = op.inputs.first()?;
            let a = producer[x]?;
            (uses[x] == 1 && linear_1x1(&g.ops[a])).then_some((a, b))
        });
        let Some((a, b)) = pair else {
            return compact(&g, g.ops.clone());
        };
        let (opa, opb) = (g.ops[a].clone(), g.ops[b].clone());
        let fb = g.tensors[opb.weights[0]].clone();
        let c_in = g.tensors[opa.inputs[0]].shape.c;
        let filter = Tensor {
            name: format!("{}_merge_filter_weight", opb.name),
            shape: Shape4::new(fb.shape.n, c_in, fb.shape.h, fb.shape.w),
            ..fb
        };
        let mut weights = vec![g.tensors.len()];
        g.tensors.push(filter);
        match (opb.weights.get(1), opa.weights.get(1)) {
            (Some(&bias), _) => weights.push(bias),
            (None, Some(&ba)) => {
                let bias = Tensor {
                    name: format!("{}_merge_bias_weight", opb.name),
                    shape: Shape4::new(1, g.tensors[opb.weights[0]].shape.n, 1, 1),
                    ..g.tensors[ba].clone()
                };
                weights.push(g.tensors.len());
                g.tensors.push(bias);
            }
            (None, None) => {}
        }
        g.ops[b] = Op {
            inputs: opa.inputs.clone(),
            weights,
            ..opb
        };
        g.ops.remove(a);
    }
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
    fn a_folded_batch_norm_leaves_the_conv_its_own_output() {
        // conv → bn → add: TPU-MLIR names the folded op after the conv's output
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 4, 8, 8));
        let y = b.conv("c", x, 4, 3, 1, 1, 1, false).unwrap();
        let y = b.batchnorm("bn", y).unwrap();
        let y = b.add_op("sum", OpKind::Add, &[y, x], &[]).unwrap();
        b.output(y);
        let g = fuse(&b.finish().unwrap()).unwrap();
        assert_eq!(g.ops.len(), 2);
        let conv_out = g.ops[0].outputs[0];
        assert_eq!(g.tensors[conv_out].name, "c");
        assert_eq!(g.ops[1].inputs[0], conv_out);
        assert!(g.tensors.iter().all(|t| t.name != "bn"));
    }

    #[test]
    fn a_batch_norm_after_a_transposed_conv_stays_with_its_relu() {
        // TPU-MLIR 1.30.2 keeps ConvTranspose and BatchNormalization apart: the zoo's
        // tanh_deconv_b4 is cached as `deconv11_ConvTranspose` and `relu17_Relu`
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 8, 8, 8));
        let params = crate::ir::ConvParams {
            kernel: [2, 2],
            stride: [2, 2],
            pad: [0; 4],
            dilation: [1, 1],
            groups: 1,
        };
        let y = b.deconv("d", x, 4, params, [0, 0], true).unwrap();
        let y = b.batchnorm("bn", y).unwrap();
        let y = b.act("relu", y, Activation::Relu).unwrap();
        b.output(y);
        let g = fuse(&b.finish().unwrap()).unwrap();
        assert_eq!(g.ops.len(), 2);
        assert!(matches!(g.ops[0].kind, OpKind::Deconv { .. }));
        assert_eq!(g.ops[0].fused_act, None);
        assert!(matches!(g.ops[1].kind, OpKind::BatchNorm));
        assert_eq!(g.ops[1].fused_act, Some(Activation::Relu));
        assert_eq!(g.tensors[g.ops[1].outputs[0]].name, "relu");
    }

    #[test]
    fn x_times_its_sigmoid_becomes_one_silu_named_after_the_mul() {
        // swish as torch exports it: Mul(x, Sigmoid(x)), in either operand order
        for sigmoid_first in [false, true] {
            let mut b = GraphBuilder::new("t");
            let x = b.input("x", Shape4::new(1, 4, 8, 8));
            let y = b.conv("c", x, 4, 3, 1, 1, 1, true).unwrap();
            let s = b.act("sig", y, Activation::Sigmoid).unwrap();
            let ins = if sigmoid_first { [s, y] } else { [y, s] };
            let m = b.add_op("mul5", OpKind::Mul, &ins, &[]).unwrap();
            b.output(m);
            let g = fuse(&b.finish().unwrap()).unwrap();
            assert_eq!(g.ops.len(), 2);
            let silu = &g.ops[1];
            assert_eq!(silu.kind, OpKind::Act(Activation::Silu));
            assert_eq!(silu.inputs, g.ops[0].outputs);
            assert_eq!(g.tensors[silu.outputs[0]].name, "mul5");
            assert_eq!(silu.source_type.as_deref(), Some("Mul"));
        }
        // a sigmoid read elsewhere too, or of another tensor, stays a sigmoid and a mul
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 4, 8, 8));
        let y = b.conv("c", x, 4, 3, 1, 1, 1, true).unwrap();
        let s = b.act("sig", y, Activation::Sigmoid).unwrap();
        let m = b.add_op("gate", OpKind::Mul, &[x, s], &[]).unwrap();
        let m2 = b.add_op("swish", OpKind::Mul, &[y, s], &[]).unwrap();
        b.output(m);
        b.output(m2);
        let g = fuse(&b.finish().unwrap()).unwrap();
        assert!(g
            .ops
            .iter()
            .all(|o| o.kind != OpKind::Act(Activation::Silu)));
        assert_eq!(g.ops.len(), 4);
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
    fn a_linear_1x1_conv_merges_into_the_conv_after_it() {
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 960, 7, 7));
        let y = b.conv("proj", x, 320, 1, 1, 0, 1, true).unwrap();
        let y = b.batchnorm("bn", y).unwrap();
        let y = b.conv("last", y, 1280, 1, 1, 0, 1, false).unwrap();
        let y = b.act("relu6", y, Activation::Relu6).unwrap();
        b.output(y);
        let g = fuse(&b.finish().unwrap()).unwrap();
        assert_eq!(g.ops.len(), 1);
        let op = &g.ops[0];
        assert_eq!(
            (op.name.as_str(), op.fused_act),
            ("last", Some(Activation::Relu6))
        );
        assert_eq!(g.tensors[op.inputs[0]].name, "x");
        assert_eq!(g.tensors[op.weights[0]].shape, Shape4::new(1280, 960, 1, 1));
        // the projection's bias becomes one of the merged conv's out channels
        assert_eq!(g.tensors[op.weights[1]].shape, Shape4::new(1, 1280, 1, 1));
        assert_eq!(g.tensors[op.outputs[0]].shape, Shape4::new(1, 1280, 7, 7));
    }

    #[test]
    fn convs_merge_only_when_linear_unpadded_and_alone() {
        let build = |act: bool, pad: u64, stride: u64, twice: bool| {
            let mut b = GraphBuilder::new("t");
            let x = b.input("x", Shape4::new(1, 32, 8, 8));
            let mut y = b.conv("a", x, 16, 1, stride, 0, 1, false).unwrap();
            if act {
                y = b.act("r", y, Activation::Relu).unwrap();
            }
            let z = b.conv("b", y, 64, 3, 1, pad, 1, false).unwrap();
            if twice {
                let w = b.conv("c", y, 64, 1, 1, 0, 1, false).unwrap();
                b.output(w);
            }
            b.output(z);
            fuse(&b.finish().unwrap()).unwrap().ops.len()
        };
        assert_eq!(build(false, 0, 1, false), 1); // 3x3 unpadded after it: merged
        assert_eq!(build(true, 0, 1, false), 2); // an activation between
        assert_eq!(build(false, 1, 1, false), 2); // the second conv pads
        assert_eq!(build(false, 0, 2, false), 2); // the 1x1 conv strides
        assert_eq!(build(false, 0, 1, true), 3); // two readers
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

//! TPU-MLIR's in-place concat. A global Concat whose inputs its address assignment
//! can lay end to end in the output's buffer is marked `only_merge`: each producer
//! stores into its part of the output and the Concat itself moves nothing and takes no
//! time. TPU-MLIR 1.30.2's rule (`tpu::ConcatOp::supportInplace`), for the static,
//! channel-axis concats of a CNN graph:
//! - every dimension before the axis is 1 (a batch of one), so each input is one
//!   contiguous block of the output;
//! - no input is a weight, and none is produced by another Concat;
//! - no input appears twice in it, at most two of its inputs have other uses, and no
//!   input with other uses already belongs to an in-place Concat (the first Concat in
//!   op order takes it);
//! - an input produced by a Reshape or Flatten reads a tensor some op produced and
//!   nothing else reads;
//! - no fused activation, and on BM1684 not in int8.
//!
//! Only on the processors TPU-MLIR compiles for ([`TPU_MLIR_CHIPS`], by preset name):
//! another chip (a TPU's VMEM as `report` plans it, a chip file of a user's own) keeps
//! every Concat a copy.
//!
//! Seen in the zoo's dil124_odd_72 on bm1688: TPU-MLIR's own grouping leaves two
//! concats of [1, 71, 36, 36] global, both `only_merge = true` in its final MLIR with
//! the inputs at consecutive addresses, and its profile has no command for either.

use tpusim_graph::query::Uses;
use tpusim_graph::{Graph, Op, OpKind};

/// The processors TPU-MLIR 1.30.2's `model_deploy.py --chip` accepts.
pub const TPU_MLIR_CHIPS: [&str; 15] = [
    "bm1684", "bm1684x", "bm1684x2", "bm1688", "bm1690", "bm1690e", "cv180x", "cv181x", "cv182x",
    "cv183x", "cv184x", "cv186x", "sg2262", "sg2380", "sgtpuv8",
];

/// For each op of `graph`, whether it is a Concat TPU-MLIR runs in place when it is
/// global, on a chip named `chip` at `bits` per element.
pub fn inplace_concats(graph: &Graph, uses: &Uses, chip: &str, bits: u32) -> Vec<bool> {
    let quantized_bm1684 = chip == "bm1684" && bits == 8;
    let mut inplace = vec![false; graph.ops.len()];
    if quantized_bm1684 || !TPU_MLIR_CHIPS.contains(&chip) {
        return inplace;
    }
    let use_count = operand_uses(graph, uses);
    for (i, op) in graph.ops.iter().enumerate() {
        inplace[i] = supports_inplace(graph, uses, &use_count, &inplace, op);
    }
    inplace
}

/// How many operand slots read each tensor, a graph output counting as one more (an
/// MLIR value's uses, the function's return among them).
fn operand_uses(graph: &Graph, uses: &Uses) -> Vec<usize> {
    let mut n = vec![0usize; graph.tensors.len()];
    for op in &graph.ops {
        for &t in op.inputs.iter().chain(&op.weights) {
            if let Some(c) = n.get_mut(t) {
                *c += 1;
            }
        }
    }
    for (c, out) in n.iter_mut().zip(&uses.is_output) {
        *c += usize::from(*out);
    }
    n
}

/// `supportInplace` for one op, the Concats before it already decided in `inplace`.
fn supports_inplace(
    graph: &Graph,
    uses: &Uses,
    use_count: &[usize],
    inplace: &[bool],
    op: &Op,
) -> bool {
    if !matches!(op.kind, OpKind::Concat) || op.fused_act.is_some() || !op.weights.is_empty() {
        return false;
    }
    let single_batch = op
        .outputs
        .first()
        .and_then(|&t| graph.tensors.get(t))
        .is_some_and(|t| t.shape.n == 1);
    if !single_batch {
        return false;
    }
    let mut shared = 0;
    for &x in &op.inputs {
        if use_count.get(x).copied().unwrap_or(0) > 1 {
            shared += 1;
            let twice = op.inputs.iter().filter(|&&i| i == x).count() > 1;
            let taken = uses
                .consumers
                .get(x)
                .is_some_and(|readers| readers.iter().any(|&r| inplace.get(r) == Some(&true)));
            if twice || taken {
                return false;
            }
        }
        if shared > 2 || !producer_allows(graph, uses, use_count, x) {
            return false;
        }
    }
    true
}

/// The producer side of the rule: a graph input is fine, another Concat is not, and a
/// view must read a produced tensor nothing else reads.
fn producer_allows(graph: &Graph, uses: &Uses, use_count: &[usize], x: usize) -> bool {
    let Some(p) = uses.producer.get(x).copied().flatten() else {
        return true;
    };
    let Some(op) = graph.ops.get(p) else {
        return false;
    };
    match op.kind {
        OpKind::Concat => false,
        OpKind::Reshape | OpKind::Flatten => op.inputs.first().is_some_and(|&src| {
            uses.producer.get(src).copied().flatten().is_some()
                && use_count.get(src).copied().unwrap_or(0) <= 1
        }),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpusim_graph::{GraphBuilder, Shape4};

    /// Three convs of one input, concatenated: the shape of dil124_odd_72's blocks;
    /// with `second`, another Concat of two of them after it.
    fn branches(n: u64, second: bool) -> Graph {
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(n, 8, 16, 16));
        let ys: Vec<_> = (0..3)
            .map(|i| b.conv(&format!("c{i}"), x, 4, 3, 1, 1, 1, true).unwrap())
            .collect();
        let cat = b.add_op("cat", OpKind::Concat, &ys, &[]).unwrap();
        b.output(cat);
        if second {
            let other = b.add_op("cat2", OpKind::Concat, &ys[..2], &[]).unwrap();
            b.output(other);
        }
        b.finish().unwrap()
    }

    fn concat_marks(g: &Graph, chip: &str, bits: u32) -> Vec<(String, bool)> {
        let marks = inplace_concats(g, &Uses::new(g), chip, bits);
        g.ops
            .iter()
            .zip(marks)
            .filter(|(op, _)| matches!(op.kind, OpKind::Concat))
            .map(|(op, m)| (op.name.clone(), m))
            .collect()
    }

    #[test]
    fn a_single_batch_concat_of_produced_tensors_is_in_place() {
        let g = branches(1, false);
        assert_eq!(concat_marks(&g, "bm1688", 16), [("cat".to_string(), true)]);
    }

    #[test]
    fn a_batch_of_two_interleaves_its_inputs_so_it_moves_them() {
        let g = branches(2, false);
        assert_eq!(concat_marks(&g, "bm1688", 16), [("cat".to_string(), false)]);
    }

    #[test]
    fn the_first_concat_takes_an_input_two_concats_share() {
        let g = branches(1, true);
        let marks = concat_marks(&g, "bm1684x", 16);
        assert_eq!(
            marks,
            [("cat".to_string(), true), ("cat2".to_string(), false)]
        );
    }

    #[test]
    fn a_chip_tpu_mlir_does_not_compile_for_keeps_concats_copies() {
        let g = branches(1, false);
        assert_eq!(concat_marks(&g, "v5e", 16), [("cat".to_string(), false)]);
    }

    #[test]
    fn bm1684_in_int8_never_concats_in_place() {
        let g = branches(1, false);
        assert_eq!(concat_marks(&g, "bm1684", 8), [("cat".to_string(), false)]);
        assert_eq!(concat_marks(&g, "bm1684", 16), [("cat".to_string(), true)]);
    }
}

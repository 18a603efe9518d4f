//! Which transformer groups TPU-MLIR 1.30.2 lays out as `GROUP_SMALL_C` (its
//! `can_be_group_small_c`, `GroupMethod.cpp`): a group whose ops are all activations
//! (its `ActiveOp`: tanh, sigmoid, SiLU, …), casts, scalar multiplies (`MulConstOp`),
//! additions of two equal shapes, norms and softmaxes over the last axis, each reading a
//! 4-D value whose N · C · H rows fill the lanes evenly, or whose H exceeds its C where C
//! is under half the lanes. 3-D values are never (but ViT's 197 tokens at a batch over
//! 4). Such a group holds every value as its rows over the lanes
//! ([`crate::timestep::small_c_dims`]): hf_gemma2's logit soft-cap on bm1688, a scale,
//! cast, tanh and cast of its [1, 4, 64, 64] scores, holds them as 8 × 32 × 64 × 1 (its
//! `n_slice` 8, `c_slice` 32), the tanh 7,320 cycles on all 32 lanes where 4 heads on 4
//! lanes would take eight times that. Every other group of the compiles whose
//! `group_type` was read (8 zoo networks on bm1684x, the user exports on both chips,
//! bench/RESULTS-plan.md) is `GROUP_MM`, laid out as [`super::nchw`] says.

use crate::tpumlir::nd_form::{TxLayer, TxValue};
use tpusim_graph::nd::Work;

/// TPU-MLIR's `ActiveOp` kinds in our form.
const ACTIVATIONS: [&str; 9] = [
    "Tanh", "Sigmoid", "SiLU", "Gelu", "Exp", "Log", "Sqrt", "Erf", "Abs",
];

/// Whether `members` (two or more) make a `GROUP_SMALL_C` group on a chip of `lanes`
/// lanes.
pub(super) fn is_small_c_group(members: &[TxLayer], lanes: u64) -> bool {
    members.len() > 1 && members.iter().all(|l| small_c_member(l, lanes))
}

/// Whether `l` may be in a `GROUP_SMALL_C` group: its op one TPU-MLIR allows there and
/// its first input shaped as it requires.
fn small_c_member(l: &TxLayer, lanes: u64) -> bool {
    let activations: Vec<&TxValue> = l.reads.iter().filter(|v| !v.weight).collect();
    let op = l.op_type.as_str();
    let allowed = l.head.is_none()
        && match op {
            "Cast" | "LayerNormalization" | "RMSNorm" | "Softmax" => true,
            // a multiply or divide by a scalar is TPU-MLIR's MulConst
            "Mul" | "Div" => activations.len() == 1 && l.reads.len() == 1,
            "Add" => activations.len() == 2 && activations[0].dims == activations[1].dims,
            _ => ACTIVATIONS.contains(&op) && matches!(l.work, Work::Vector { .. }),
        };
    allowed
        && activations
            .first()
            .is_some_and(|v| small_c_shape(&v.dims, lanes))
}

/// TPU-MLIR's shape rule for an op's first input in a `GROUP_SMALL_C` group.
fn small_c_shape(d: &[u64], lanes: u64) -> bool {
    let rows_fill_lanes = |rows: &[u64]| {
        let n = rows.iter().try_fold(1u64, |a, &b| a.checked_mul(b));
        lanes > 0 && n.is_some_and(|n| n % lanes == 0)
    };
    match d.len() {
        4 => rows_fill_lanes(&d[..3]) || (d[2] > d[1] && d[1] < lanes / 2),
        5 => rows_fill_lanes(&d[..4]) || (d[3] > d[1] && d[1] < lanes / 2),
        3 => d[0] > 4 && d[1] == 197,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{is_small_c_group, small_c_shape};
    use crate::tpumlir::nd_form::{TxLayer, TxValue};
    use tpusim_graph::nd::Work;

    fn layer(op_type: &str, reads: Vec<TxValue>) -> TxLayer {
        TxLayer {
            name: op_type.into(),
            op_type: op_type.into(),
            work: Work::Vector { flops: 1.0 },
            elements_in: 1.0,
            weight_elements: 0.0,
            elements_out: 1.0,
            wide_in: false,
            wide_out: false,
            heads_as_batch: false,
            head: None,
            nodes: vec![0],
            reads,
            writes: vec![TxValue::activation("out", vec![1, 4, 64, 64])],
            locs: Vec::new(),
        }
    }

    #[test]
    fn scales_and_activations_of_scores_make_a_small_c_group_and_a_masked_add_does_not() {
        let scores = || TxValue::activation("s", vec![1, 4, 64, 64]);
        let mask = TxValue::activation("m", vec![1, 1, 64, 64]);
        // a divide by a scalar is TPU-MLIR's MulConst, as a multiply is
        for scale in ["Mul", "Div"] {
            let group = [layer(scale, vec![scores()]), layer("Tanh", vec![scores()])];
            assert!(is_small_c_group(&group, 32), "{scale}");
        }
        let masked = [
            layer("Mul", vec![scores()]),
            layer("Add", vec![scores(), mask]),
        ];
        assert!(!is_small_c_group(&masked, 32));
        assert!(!is_small_c_group(&[layer("Tanh", vec![scores()])], 32));
    }

    #[test]
    fn scores_whose_rows_fill_the_lanes_are_small_c_and_sequences_are_not() {
        // hf_gemma2's soft-capped scores [1, 4, 64, 64] on bm1688's 32 lanes
        assert!(small_c_shape(&[1, 4, 64, 64], 32));
        // rows 3 · 5 · 7 = 105 do not fill 32 lanes, but H 7 > C 5 and C < 16
        assert!(small_c_shape(&[3, 5, 7, 8], 32));
        assert!(!small_c_shape(&[1, 20, 7, 8], 32));
        assert!(!small_c_shape(&[1, 64, 256], 32));
        assert!(small_c_shape(&[8, 197, 768], 32));
        assert!(!small_c_shape(&[64, 64], 32));
    }
}

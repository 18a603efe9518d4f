//! MaxText's dropping mixture of experts (`sparse_matmul: False` with
//! `capacity_factor > 0`; `layers/moe.py`, `generate_masks` and `dense_matmul`):
//! each expert computes a fixed capacity of token slots per sequence, filled by a
//! one-hot dispatch einsum (`BSM,BSEC -> EBCM`) and emptied by a combine einsum
//! (`EBCM,BSEC -> BSM`), both matmuls on the MXUs. Tokens past an expert's capacity
//! are dropped; empty slots are computed all the same. Dropless routing (grouped
//! matmuls, MaxText's default and ours) computes only the routed tokens' work.

use crate::model::Model;
use crate::remat::{MlpRerun, Remat};

/// Token slots of one expert for one sequence of `seq` tokens, as MaxText sizes them:
/// `int(max(ceil(seq·k / E) · CF, CF))`.
pub fn expert_capacity(m: &Model, seq: u64, factor: f64) -> f64 {
    let (e, k) = (m.experts as f64, m.experts_active as f64);
    ((seq as f64 * k / e).ceil() * factor).max(factor).floor()
}

/// Expert slots computed per token: `E·C / seq` (the routed tokens' `k` at a
/// capacity factor of 1 with no rounding).
pub fn slots_per_token(m: &Model, seq: u64, factor: f64) -> f64 {
    m.experts as f64 * expert_capacity(m, seq, factor) / seq as f64
}

/// FLOPs per token, over all layers, that the dropping MoE executes beyond the
/// routed tokens' own expert work in a training step: its forward pass (empty slots
/// of every expert matmul, dispatch and combine at `2·E·C·D` a token each) three
/// times over (forward, and the backward's two products per matmul), and again as
/// much of the forward as `remat` reruns (the whole layer, or the MLP's input
/// projections and the dispatch feeding them).
pub fn extra_flops_per_token(m: &Model, seq: u64, factor: f64, remat: Remat) -> f64 {
    if m.experts <= 1 {
        return 0.0;
    }
    let d = m.d_model as f64;
    let per_slot = 2.0 * d * m.d_ff as f64;
    let empty = slots_per_token(m, seq, factor) - m.experts_active as f64;
    let one_hot = 2.0 * m.experts as f64 * expert_capacity(m, seq, factor) * d;
    let matrices = m.mlp_matrices() as f64;
    let forward = empty * per_slot * matrices + 2.0 * one_hot;
    let rerun = match remat.mlp_rerun(m) {
        MlpRerun::Nothing => 0.0,
        MlpRerun::Inputs => empty * per_slot * (matrices - 1.0) + one_hot,
        MlpRerun::Whole => forward,
    };
    m.layers as f64 * (3.0 * forward + rerun)
}

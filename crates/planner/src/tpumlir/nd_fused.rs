//! A fused attention ([`super::nd_fusion`]) as TPU-MLIR 1.30.2 lowers and runs it on
//! bm1684x: one `tpu.Attention` a head and the adds of their outputs (the layers), the
//! local buffer it asks for, and the cycles of its kernel.
//!
//! Read off TPU-MLIR's source (`AttentionOp::getBufferSize_bm1684x`, `AllowDataSplit`,
//! `lowering_multi_attention_float`, `weight_reorder`) and off its profiles of a sweep of
//! Hugging-Face-style attention blocks (`bench/tpumlir_fusion_nets.py --sweep`, 8 blocks
//! to read from and 4 held out; `crates/planner/tests/data/tx_fusion/sweep.jsonl`):
//! - A head runs, for each sample, the Q, K and V projections, Q·Kᵀ, the softmax, P·V
//!   and its slice of the output projection. Every matmul is one `MM2`: ⌈m / lanes⌉ ·
//!   (k in whole EU rows) · n / MACs a lane cycles (exact in all 12 blocks).
//! - The rest (the scale, the mask, the softmax's passes and reductions in f32, the
//!   biases) is fitted on the 8 blocks: [`SOFTMAX_FIXED`] + [`SOFTMAX_PER_F32_ROW`] per
//!   f32 EU row of the [queries, keys] scores (keys in whole f16 EU rows) +
//!   [`SOFTMAX_PER_LANE_ROW`] per lane's worth of queries + [`SOFTMAX_PER_HEAD_ROW`] per
//!   f32 EU row of a head's [queries, head_dim]. The 4 held-out blocks are within 1.1 %.
//! - It may be cut along the batch only (its keys are its own input), and our plans cut
//!   only C and H: a group holding it runs whole, as every group of the sweep does.
//! - The last head also adds the output projection's bias (TPU-MLIR gives it 24 to 80
//!   cycles more); that is not modelled.

use super::nd_form::{TxLayer, TxValue};
use super::nd_fusion::FusedAttention;
use crate::timing::Timing;
use tpusim_graph::nd::{NdGraph, Work};

/// The shape of one head of a fused attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttentionHead {
    /// Samples.
    pub batch: u64,
    /// Queries (and keys) a sample.
    pub queries: u64,
    /// Width of the input and the output.
    pub d_model: u64,
    /// Width of a head.
    pub head_dim: u64,
}

/// Fitted TIU cycles of a head's non-matmul work per sample (see the module doc).
pub const SOFTMAX_FIXED: f64 = 12.65;
/// Per f32 EU row of the scores a lane holds.
pub const SOFTMAX_PER_F32_ROW: f64 = 16.23;
/// Per lane's worth of queries.
pub const SOFTMAX_PER_LANE_ROW: f64 = 75.35;
/// Per f32 EU row of a head's [queries, head_dim] a lane holds.
pub const SOFTMAX_PER_HEAD_ROW: f64 = 4.78;

impl AttentionHead {
    /// TIU cycles of the head's kernel over its `batch` samples on `lanes` lanes with
    /// timing `t` (16-bit data: EU_NUM elements a row, f32 half as many).
    pub fn kernel_cycles(&self, lanes: f64, t: &Timing) -> f64 {
        self.matmul_cycles(lanes, t) + self.batch as f64 * self.other_cycles_a_sample(lanes, t)
    }

    /// TIU cycles of the head's six matmuls over its samples (its `MM2` commands): Q, K
    /// and V, Q·Kᵀ, P·V and its slice of the output projection.
    pub fn matmul_cycles(&self, lanes: f64, t: &Timing) -> f64 {
        let eu = t.eltwise_per_cycle_per_lane.max(1.0);
        let macs = t.used.macs_per_cycle_per_lane.max(1.0);
        let lanes = lanes.max(1.0);
        let mm = |m: u64, k: u64, n: u64| {
            (m as f64 / lanes).ceil() * (k as f64 / eu).ceil() * eu * n as f64 / macs
        };
        let (s, d, dh) = (self.queries, self.d_model, self.head_dim);
        let a_sample = 3.0 * mm(s, d, dh) + mm(s, dh, s) + mm(s, s, dh) + mm(s, dh, d);
        self.batch as f64 * a_sample
    }

    /// The fitted cycles of a sample's other work (see the module doc).
    fn other_cycles_a_sample(&self, lanes: f64, t: &Timing) -> f64 {
        let eu = t.eltwise_per_cycle_per_lane.max(1.0);
        let (s, dh) = (self.queries as f64, self.head_dim as f64);
        let rows = (s / lanes.max(1.0)).ceil();
        let keys = (s / eu).ceil() * eu;
        let f32_eu = (eu / 2.0).max(1.0);
        SOFTMAX_FIXED
            + SOFTMAX_PER_F32_ROW * rows * (keys / f32_eu).ceil()
            + SOFTMAX_PER_LANE_ROW * rows
            + SOFTMAX_PER_HEAD_ROW * rows * (dh / f32_eu).ceil()
    }

    /// FLOPs of the head: its six matmuls and about five per score for the softmax.
    fn flops(&self) -> f64 {
        let (b, s, d, dh) = (
            self.batch as f64,
            self.queries as f64,
            self.d_model as f64,
            self.head_dim as f64,
        );
        b * (2.0 * (3.0 * s * d * dh + 2.0 * s * s * dh + s * dh * d) + 5.0 * s * s)
    }
}

/// Bytes a lane keeps for a head's work (`AttentionOp::getBufferSize_bm1684x`, 16-bit
/// data): the softmax's f32 rows (a max per query row, tables of 32 and 192 words, four
/// f32 copies of the scores) and K and V of a head; at most a third of the lane.
pub fn buffer_bytes(head: &AttentionHead, lanes: u64, eu_bytes: u64, lane_bytes: u64) -> u64 {
    let align = |n: u64, to: u64| n.div_ceil(to.max(1)).saturating_mul(to.max(1));
    let eu_f32 = (eu_bytes / 4).max(1);
    let eu_f16 = (eu_bytes / 2).max(1);
    let per_lane = head.queries.div_ceil(lanes.max(1));
    let softmax = per_lane
        .saturating_mul(eu_f32 * 4)
        .saturating_add(align(32, eu_f32) * 4)
        .saturating_add(align(192, eu_f32) * 4)
        .saturating_add(per_lane.saturating_mul(align(head.queries, eu_f32).saturating_mul(16)));
    let d_size = align(head.head_dim, eu_f16).saturating_mul(2);
    let k_and_v = d_size.saturating_mul(head.queries.div_ceil(lanes.max(1)).saturating_mul(2));
    softmax.saturating_add(k_and_v).min(lane_bytes / 3)
}

/// The layers of fused attention `f` of graph `g` on a chip of `lanes` lanes and EU rows
/// of `eu` 16-bit elements: the heads, first to last, then the adds.
pub(super) fn layers(g: &NdGraph, f: &FusedAttention, lanes: u64, eu: u64) -> Vec<TxLayer> {
    let dims = &f.input.dims;
    let (batch, queries, d_model) = match dims.as_slice() {
        [b, s, d] => (*b, *s, *d),
        _ => return Vec::new(),
    };
    let head = AttentionHead {
        batch,
        queries,
        d_model,
        head_dim: f.head_dim,
    };
    let name = &g.nodes[f.last].name;
    let out_dims = vec![batch, queries, d_model];
    // a single head writes the output itself (no add follows it)
    let partial = |k: u64| {
        let name = if f.heads == 1 {
            f.output.clone()
        } else {
            format!("{}#head_{k}", f.output)
        };
        TxValue::activation(name, out_dims.clone())
    };
    let input = TxValue::activation(f.input.name.clone(), f.input.dims.clone());
    let mask = f
        .mask
        .as_ref()
        .map(|m| TxValue::activation(m.name.clone(), m.dims.clone()));
    let mut out = Vec::new();
    for k in 0..f.heads {
        let last = k + 1 == f.heads;
        let weights = head_weights(f, k, d_model, lanes, eu, last);
        let mut reads = vec![input.clone()];
        reads.extend(weights.iter().cloned());
        reads.extend(mask.clone());
        let weight_elements: f64 = weights.iter().map(TxValue::elements).sum();
        let out_value = partial(k);
        out.push(TxLayer {
            name: format!("{name}#head_{k}"),
            op_type: "Attention".into(),
            work: Work::Vector {
                flops: head.flops(),
            },
            elements_in: reads
                .iter()
                .filter(|v| !v.weight)
                .map(TxValue::elements)
                .sum(),
            weight_elements,
            elements_out: out_value.elements(),
            wide_in: false,
            wide_out: false,
            heads_as_batch: false,
            head: Some(head),
            nodes: if k == 0 { f.nodes.clone() } else { Vec::new() },
            reads,
            writes: vec![out_value],
            locs: vec![format!("{}_head_{k}", f.output_loc)],
        });
    }
    let mut sum = partial(0);
    for k in 1..f.heads {
        let last = k + 1 == f.heads;
        let (written, loc) = if last {
            (
                TxValue::activation(f.output.clone(), out_dims.clone()),
                f.output_loc.clone(),
            )
        } else {
            (
                TxValue::activation(format!("{}#fuse_{k}", f.output), out_dims.clone()),
                format!("{}_attention_out_fuse_{k}", f.output_loc),
            )
        };
        // an element-wise add of two partial outputs (a head's layer as the base)
        let add = TxLayer::part(&out[0], "Add", vec![sum, partial(k)], vec![written.clone()]);
        out.push(TxLayer {
            name: format!("{name}#fuse_{k}"),
            locs: vec![loc],
            ..add
        });
        sum = written;
    }
    out
}

/// Head `k`'s weights as TPU-MLIR reorders them: Q, K and V side by side over the lanes,
/// [1, lanes, 3 ⌈d_model / lanes⌉, head_dim in whole EU rows]; their biases (and on the
/// `last` head the output's), [1, 1, 3 head_dim (+ d_model)]; the output projection's
/// rows, [1, head_dim, d_model].
fn head_weights(
    f: &FusedAttention,
    k: u64,
    d_model: u64,
    lanes: u64,
    eu: u64,
    last: bool,
) -> Vec<TxValue> {
    let weight = |part: &str, dims: Vec<u64>| TxValue {
        weight: true,
        ..TxValue::activation(format!("{}#head_{k}_{part}", f.output), dims)
    };
    let dh = f.head_dim;
    let qkv_rows = d_model.div_ceil(lanes.max(1)).saturating_mul(3);
    let qkv_cols = dh.div_ceil(eu.max(1)).saturating_mul(eu.max(1));
    let mut v = vec![weight("qkv", vec![1, lanes, qkv_rows, qkv_cols])];
    if f.out_bias {
        let bias = dh
            .saturating_mul(3)
            .saturating_add(if last { d_model } else { 0 });
        v.push(weight("bias", vec![1, 1, bias]));
    }
    v.push(weight("out", vec![1, dh, d_model]));
    v
}

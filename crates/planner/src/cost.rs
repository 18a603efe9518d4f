//! The cost model: GDMA time (bytes / DMA rate) and compute time (MACs or element
//! operations / rate per lane, with channels quantised to whole lane rows) per step,
//! the max of the two per step, summed over slices with pipeline fill and drain. A
//! global op pays all of its global-memory traffic and overlaps it with its compute.

use crate::options::Timing;
use crate::range::Range;
use tpusim_graph::{Graph, Op, OpKind, Shape4};

/// Bytes of `elements` elements of `bits`-bit data, rounded up.
pub fn bytes_of(elements: u64, bits: u32) -> u64 {
    ((elements as u128 * bits as u128).div_ceil(8)).min(u64::MAX as u128) as u64
}

/// Global-memory bytes of a (n-range, h-range) part of a tensor of shape `s`.
pub fn part_bytes(s: Shape4, n: Range, h: Range, bits: u32) -> u64 {
    let e = (n[1] - n[0])
        .saturating_mul(s.c)
        .saturating_mul(h[1] - h[0])
        .saturating_mul(s.w);
    bytes_of(e, bits)
}

/// Cycles to compute `op` for output batches `n_len` and output rows `h_len` (whole op:
/// pass the full N and H). Channels map to lanes: an op on C channels takes
/// ⌈C / NPU_NUM⌉ lane rows.
pub fn op_cycles(graph: &Graph, op: &Op, n_len: u64, h_len: u64, npu_num: u64, t: &Timing) -> f64 {
    let Some(out) = op.outputs.first().and_then(|&o| graph.tensors.get(o)) else {
        return 0.0;
    };
    let y = out.shape;
    let x = op
        .inputs
        .first()
        .and_then(|&i| graph.tensors.get(i))
        .map(|t| t.shape)
        .unwrap_or(y);
    let rows = |c: u64| c.div_ceil(npu_num.max(1)) as f64;
    let pos = (n_len * h_len * y.w) as f64;
    match &op.kind {
        OpKind::Conv(p) => {
            let icg = (x.c / p.groups.max(1)).max(1);
            let taps = (p.kernel[0] * p.kernel[1]) as f64;
            if icg == 1 && p.groups > 1 {
                rows(y.c) * pos * taps / t.eltwise_per_cycle_per_lane
            } else {
                rows(y.c) * pos * icg as f64 * taps / t.macs_per_cycle_per_lane
            }
        }
        OpKind::Deconv { params: p, .. } => {
            let icg = (x.c / p.groups.max(1)).max(1);
            let taps =
                (p.kernel[0] * p.kernel[1]) as f64 / (p.stride[0] * p.stride[1]).max(1) as f64;
            rows(y.c) * pos * icg as f64 * taps.max(1.0) / t.macs_per_cycle_per_lane
        }
        OpKind::MaxPool(p) | OpKind::AvgPool(p) => {
            rows(y.c) * pos * (p.kernel[0] * p.kernel[1]) as f64 / t.eltwise_per_cycle_per_lane
        }
        OpKind::GlobalAvgPool | OpKind::GlobalMaxPool => {
            rows(x.c) * (n_len * x.h * x.w) as f64 / t.eltwise_per_cycle_per_lane
        }
        OpKind::BatchNorm
        | OpKind::Act(_)
        | OpKind::Add
        | OpKind::Mul
        | OpKind::Concat
        | OpKind::Upsample { .. } => rows(y.c) * pos / t.eltwise_per_cycle_per_lane,
        OpKind::Gemm => {
            let k = x.c.saturating_mul(x.h).saturating_mul(x.w);
            rows(y.c.saturating_mul(y.h).saturating_mul(y.w)) * (n_len * k) as f64
                / t.macs_per_cycle_per_lane
        }
        OpKind::Flatten | OpKind::Reshape => 0.0,
    }
}

/// True for ops that are only views of global memory (no data moves, no compute).
pub fn is_view(op: &Op) -> bool {
    matches!(op.kind, OpKind::Flatten | OpKind::Reshape)
}

/// Global-memory bytes and cycles of `op` run alone: every input and weight loaded,
/// every output stored, DMA overlapped with compute. Views cost nothing.
pub fn global_cost(graph: &Graph, op: &Op, bits: u32, npu_num: u64, t: &Timing) -> (u64, u64) {
    if is_view(op) {
        return (0, 0);
    }
    let mut bytes = 0u64;
    for &i in op
        .inputs
        .iter()
        .chain(op.weights.iter())
        .chain(op.outputs.iter())
    {
        if let Some(x) = graph.tensors.get(i) {
            bytes = bytes.saturating_add(bytes_of(x.shape.elements().unwrap_or(u64::MAX), bits));
        }
    }
    let y = op
        .outputs
        .first()
        .and_then(|&o| graph.tensors.get(o))
        .map(|t| t.shape);
    let comp = y
        .map(|s| op_cycles(graph, op, s.n, s.h, npu_num, t))
        .unwrap_or(0.0);
    let dma = bytes as f64 / t.gdma_bytes_per_cycle;
    (bytes, comp.max(dma).ceil() as u64)
}

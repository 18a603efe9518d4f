//! A layer of a transformer's TPU-MLIR form (`tpumlir::nd_form`: fused norms, SiLU and
//! biases, f32 parts) timed as a global layer: its activations and weights loaded from
//! global memory, computed, its output stored. This is how TPU-MLIR runs the ops it does
//! not put in a layer group; `nd_plan` prices its global runs so, and their sum with every
//! layer global is the plan's `ungrouped_cycles`. The transfer model is the planner's own
//! (flat byte ranges at the chip's load and store rates, `cost::flat_dma_cycles`), fitted
//! on CNN layers; TPU-MLIR's global transformer layers on bm1684x check it
//! (`tests/nd_global.rs`).
//!
//! What TPU-MLIR 1.30.2's profiles of the transformer zoo (bench/tpumlir_tx_zoo.py) show,
//! and this model follows:
//! - a global MatMul does not overlap its transfers with its compute: its cycles are the
//!   loads, the stores and the MACs at the chip's rate one after another (128×2048 by
//!   2048×512 in f16 on bm1684x: 68,193 cycles; transfers 51,761 + MACs 16,384);
//! - element-wise layers are their transfers (at 0.93 of the rates fitted on conv
//!   tensors);
//! - a cast is its transfers too (f16 in, f32 out).

use crate::cost::{act_dma_cycles, flat_dma_cycles, Dir, GlobalOpCost};
use crate::timing::Timing;
use crate::tpumlir::nd_form::{TxLayer, TxValue};
use serde::Serialize;
use tpusim_graph::nd::Work;
use tpusim_graph::Shape4;

/// One layer of the graph's TPU-MLIR form (`tpumlir::nd_form`) as a global layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdLayer {
    /// The graph node it stands for (the last of a fused pattern).
    pub name: String,
    /// Its type: the ONNX op type, or the fused or lowered layer's.
    pub op_type: String,
    /// Its work.
    pub work: Work,
    /// Computed in f32 (the chip's `tpu_mlir_f32_ops`, a lowered Pow).
    pub f32: bool,
    /// An attention matmul reading the heads as a batch (`tpumlir::nd_attention`).
    pub heads_as_batch: bool,
    /// How many graph nodes it stands for (a matmul and its bias add: 2).
    pub nodes: usize,
    /// Global-memory bytes moved.
    pub bytes: u64,
    /// Compute cycles.
    pub compute_cycles: u64,
    /// Transfer cycles.
    pub dma_cycles: u64,
    /// Cycles of the layer.
    pub cycles: u64,
}

/// The layers with their costs as global layers.
pub(crate) fn timed_layers(layers: &[TxLayer], costs: &[GlobalOpCost]) -> Vec<NdLayer> {
    layers
        .iter()
        .zip(costs)
        .map(|(l, c)| NdLayer {
            name: l.name.clone(),
            op_type: l.op_type.clone(),
            work: l.work,
            f32: l.wide_in || l.wide_out,
            heads_as_batch: l.heads_as_batch,
            nodes: l.nodes.len(),
            bytes: c.bytes,
            compute_cycles: c.compute_cycles,
            dma_cycles: c.dma_cycles,
            cycles: c.cycles,
        })
        .collect()
}

/// Transfers of a layer that moves what it reads in and what it writes out a row of the
/// last dim at a time, each row a plane of the transfer model:
/// - a permute TPU-MLIR adds around an attention matmul (`tpumlir::nd_attention`):
///   TPU-MLIR's own on bm1684x take 9.8 cycles a row whatever the row's length (64 to
///   128 elements): [1, 4, 64, 64] 2,513 cycles, [1, 4, 128, 128] 5,026,
///   [2, 8, 64, 64] 10,052, [3, 6, 96, 96] 16,963;
/// - an attention matmul over the heads (of two activations, the heads a batch dim
///   before the rows, as written): TPU-MLIR's on bm1684x (`tests/nd_global.rs`), all
///   five of the LLaMA-style zoo's, within 0.05 % ([1, 4, 64, 32]·[1, 4, 64, 32]ᵀ 4,089
///   cycles, where the bytes at the flat rates take a third of that). The matmuls that
///   read the heads where they lie (`heads_as_batch`) move their values flat.
fn row_by_row_dma_cycles(l: &TxLayer, bits: u32, t: &Timing) -> f64 {
    let load: f64 = l
        .reads
        .iter()
        .map(|v| row_dma_cycles(t, Dir::Load, v, bits))
        .sum();
    let store: f64 = l
        .writes
        .iter()
        .map(|v| row_dma_cycles(t, Dir::Store, v, bits))
        .sum();
    load + store
}

/// One transfer of `v` a row of its last dim at a time: each row a plane of the
/// transfer model. How a permute moves, alone or fused into the load or store of the
/// layer group next to it.
pub(crate) fn row_dma_cycles(t: &Timing, dir: Dir, v: &TxValue, bits: u32) -> f64 {
    let inner = v.dims.last().copied().unwrap_or(1).max(1);
    let rows = (v.elements() / inner as f64).ceil() as u64;
    act_dma_cycles(
        t,
        dir,
        Shape4::new(1, rows, 1, inner),
        [0, 1],
        [0, 1],
        bits,
        1,
    )
}

/// Cycles of a softmax row of up to this many elements as a global layer (TPU-MLIR's
/// bm1684x kernel: [1, 4, 64, 64] and [2, 8, 64, 64] scores, gpt2_d64_s64 and
/// gpt2_d256_s64_b2, 13.1 a row).
pub const SOFTMAX_ROW_CYCLES: f64 = 13.1;
/// Cycles an element of a longer softmax row (llama_d256_s128's [1, 8, 128, 128]:
/// 14,211 cycles, 0.108 an element).
pub const SOFTMAX_ELEMENT_CYCLES: f64 = 0.108;

/// A softmax along the last dim as a global layer: each row at least
/// [`SOFTMAX_ROW_CYCLES`], a long one [`SOFTMAX_ELEMENT_CYCLES`] an element. Held out
/// (`tests/nd_global.rs`): [3, 6, 96, 96] 23,305 cycles (this: 22,637), [1, 5, 256, 256]
/// 33,905 (35,389), [4, 8, 32, 32] 12,978 (13,414). The transfer model alone gives a
/// fifth to a half of these.
fn softmax_global_cycles(l: &TxLayer) -> f64 {
    let Some(out) = l.writes.first() else {
        return 0.0;
    };
    let row = out.dims.last().copied().unwrap_or(1).max(1) as f64;
    let rows = out.elements() / row;
    rows * SOFTMAX_ROW_CYCLES.max(row * SOFTMAX_ELEMENT_CYCLES)
}

/// The element-wise layers of TPU-MLIR's form: each output element from the elements at
/// its position alone.
pub(crate) const ELEMENT_WISE: [&str; 19] = [
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Where",
    "Neg",
    "SiLU",
    "Sigmoid",
    "Tanh",
    "Relu",
    "Erf",
    "Abs",
    "Log",
    "Exp",
    "MulConst",
    "Pow",
    "Sqrt",
    "Reciprocal",
    "Gelu",
];

/// One layer's cost as a global layer in a plan of `bits`-bit data (its wide parts in
/// f32) on a chip of `lanes` lanes.
pub fn layer_cost(l: &TxLayer, bits: u32, lanes: u64, t: &Timing) -> GlobalOpCost {
    let bytes = |elements: f64, b: u32| (elements * f64::from(b) / 8.0).ceil().max(0.0) as u64;
    let wide = bits.max(32);
    let (in_bits, out_bits) = (
        if l.wide_in { wide } else { bits },
        if l.wide_out { wide } else { bits },
    );
    let load = bytes(l.elements_in, in_bits).saturating_add(bytes(l.weight_elements, bits));
    let store = bytes(l.elements_out, out_bits);
    let attention = matches!(l.work, Work::Matmul { weight: false, .. }) && !l.heads_as_batch;
    let dma = if l.op_type == "Permute" || attention {
        row_by_row_dma_cycles(l, bits, t)
    } else {
        let (ld, st) = (
            flat_dma_cycles(t, Dir::Load, load),
            flat_dma_cycles(t, Dir::Store, store),
        );
        // the element-wise kernel's slices load and store at once; a norm's or
        // softmax's kernel does not (bm1688: a global LayerNorm [1, 64, 128] takes 3,336
        // cycles, its load and store in turn 2,427)
        let overlap = if ELEMENT_WISE.contains(&l.op_type.as_str()) || l.op_type == "Cast" {
            t.used.global_dma_overlap
        } else {
            0.0
        };
        ld + st - overlap * ld.min(st)
    };
    if matches!(l.op_type.as_str(), "Softmax" | "LogSoftmax") {
        let cycles = softmax_global_cycles(l).max(dma);
        return GlobalOpCost {
            bytes: load.saturating_add(store),
            cycles: cycles.ceil() as u64,
            compute_cycles: cycles.round() as u64,
            dma_cycles: dma.round() as u64,
        };
    }
    let lanes = lanes as f64;
    let (compute, serial) = match l.work {
        Work::Matmul { batch, m, k, n, .. } => {
            let macs = batch as f64 * m as f64 * k as f64 * n as f64;
            (
                macs / (lanes * t.used.macs_per_cycle_per_lane.max(1.0)),
                true,
            )
        }
        Work::Vector { flops } => {
            let width = f64::from(in_bits.max(out_bits)) / f64::from(t.dtype_bits.max(1));
            (
                flops * width / (lanes * t.eltwise_per_cycle_per_lane.max(1.0)),
                false,
            )
        }
        Work::Move | Work::Free => (0.0, false),
    };
    let cycles = if serial {
        compute + dma
    } else {
        compute.max(dma) + t.used.global_exposed_fraction * compute.min(dma)
    };
    GlobalOpCost {
        bytes: load.saturating_add(store),
        cycles: cycles.ceil() as u64,
        compute_cycles: compute.round() as u64,
        dma_cycles: dma.round() as u64,
    }
}

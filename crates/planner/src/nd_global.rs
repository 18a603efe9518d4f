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

use crate::cost::{flat_dma_cycles, Dir, GlobalOpCost};
use crate::timing::Timing;
use crate::tpumlir::nd_form::TxLayer;
use serde::Serialize;
use tpusim_graph::nd::Work;

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
            nodes: l.nodes.len(),
            bytes: c.bytes,
            compute_cycles: c.compute_cycles,
            dma_cycles: c.dma_cycles,
            cycles: c.cycles,
        })
        .collect()
}

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
    let dma = flat_dma_cycles(t, Dir::Load, load) + flat_dma_cycles(t, Dir::Store, store);
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

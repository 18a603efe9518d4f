//! A transformer graph (`tpusim_graph::nd`) timed on an NPU with every node run as a
//! global layer: its activations and weights loaded from global memory, computed, its
//! output stored, one layer after another. This is how TPU-MLIR runs the ops it does not
//! put in a layer group, so the total is an upper bound on a grouped plan's (grouping
//! keeps tensors in local memory between ops). The transfer model is the planner's own
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
//! - a bias Add right after a weight MatMul is part of the MatMul (TPU-MLIR's MatMul takes
//!   the bias), and costs nothing on its own;
//! - ops in the chip's `tpu_mlir_f32_ops` (tanh, sigmoid, …) run in f32 between two casts.

use crate::cost::{flat_dma_cycles, Dir, GlobalOpCost};
use crate::error::Result;
use crate::timing::Timing;
use crate::NpuChip;
use serde::Serialize;
use tpusim_graph::nd::{NdGraph, NdNode, Work};
use tpusim_layout::ElementType;

/// One node of the graph as a global layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdLayer {
    /// Node name.
    pub name: String,
    /// ONNX op type.
    pub op_type: String,
    /// Its work.
    pub work: Work,
    /// Computed in f32 between two casts (the chip's `tpu_mlir_f32_ops`).
    pub f32: bool,
    /// A bias add taken by the weight matmul before it: no layer of its own.
    pub fused_into_matmul: bool,
    /// Global-memory bytes moved.
    pub bytes: u64,
    /// Compute cycles.
    pub compute_cycles: u64,
    /// Transfer cycles.
    pub dma_cycles: u64,
    /// Cycles of the layer.
    pub cycles: u64,
}

/// A transformer graph timed layer by layer on an NPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdNpuTime {
    /// The chip.
    pub chip: String,
    /// Bits of the activations and weights.
    pub dtype_bits: u32,
    /// The chip's clock, Hz.
    pub clock_hz: f64,
    /// Every node that does work, in graph order.
    pub layers: Vec<NdLayer>,
    /// Cycles of all layers, one after another.
    pub cycles: u64,
    /// Their compute cycles.
    pub compute_cycles: u64,
    /// Their transfer cycles.
    pub dma_cycles: u64,
    /// Global-memory bytes moved.
    pub bytes: u64,
    /// `cycles` at the chip's clock.
    pub seconds: f64,
}

/// Time `g` on `chip` in `dtype`, every node a global layer.
pub fn time_nd_graph(g: &NdGraph, chip: &NpuChip, dtype: ElementType) -> Result<NdNpuTime> {
    let t = chip.timing_at(dtype)?;
    let f32_ops = chip.f32_ops_at(dtype);
    let lanes = chip.geometry.npu_num.max(1);
    let bits = dtype.bits();
    let mut layers: Vec<NdLayer> = Vec::new();
    for node in &g.nodes {
        if node.work == Work::Free {
            continue;
        }
        let fused = is_bias_add(node) && layers.last().is_some_and(is_weight_matmul);
        let f32 = f32_ops.runs_in_f32_onnx(&node.op_type);
        let c = if fused {
            GlobalOpCost::default()
        } else {
            node_cost(node, bits, f32, lanes, &t)
        };
        layers.push(NdLayer {
            name: node.name.clone(),
            op_type: node.op_type.clone(),
            work: node.work,
            f32,
            fused_into_matmul: fused,
            bytes: c.bytes,
            compute_cycles: c.compute_cycles,
            dma_cycles: c.dma_cycles,
            cycles: c.cycles,
        });
    }
    let sum = |f: fn(&NdLayer) -> u64| layers.iter().fold(0u64, |a, l| a.saturating_add(f(l)));
    let cycles = sum(|l| l.cycles);
    Ok(NdNpuTime {
        chip: chip.geometry.name.clone(),
        dtype_bits: bits,
        clock_hz: t.used.clock_hz,
        cycles,
        compute_cycles: sum(|l| l.compute_cycles),
        dma_cycles: sum(|l| l.dma_cycles),
        bytes: sum(|l| l.bytes),
        seconds: cycles as f64 / t.used.clock_hz.max(1.0),
        layers,
    })
}

/// One node's cost as a global layer of `bits`-bit data (`f32`: computed in f32 between
/// a cast in and a cast out) on a chip of `lanes` lanes.
pub fn node_cost(node: &NdNode, bits: u32, f32: bool, lanes: u64, t: &Timing) -> GlobalOpCost {
    let bytes = |elements: f64, b: u32| (elements * f64::from(b) / 8.0).ceil().max(0.0) as u64;
    // (an embedding Gather's weight elements are the rows it gathers: the importer's count)
    let weights = node.weight_elements;
    let op_bits = if f32 { bits.max(32) } else { bits };
    let load = bytes(node.elements_in, op_bits).saturating_add(bytes(weights, bits));
    let store = bytes(node.elements_out, op_bits);
    let mut dma = flat_dma_cycles(t, Dir::Load, load) + flat_dma_cycles(t, Dir::Store, store);
    let mut moved = load.saturating_add(store);
    if f32 {
        // the casts: the input read narrow and written wide, the output back
        let (narrow_in, narrow_out) = (
            bytes(node.elements_in, bits),
            bytes(node.elements_out, bits),
        );
        dma += flat_dma_cycles(t, Dir::Load, narrow_in)
            + flat_dma_cycles(t, Dir::Store, bytes(node.elements_in, op_bits));
        dma += flat_dma_cycles(t, Dir::Load, bytes(node.elements_out, op_bits))
            + flat_dma_cycles(t, Dir::Store, narrow_out);
        moved = moved
            .saturating_add(narrow_in)
            .saturating_add(narrow_out)
            .saturating_add(bytes(node.elements_in, op_bits))
            .saturating_add(bytes(node.elements_out, op_bits));
    }
    let lanes = lanes as f64;
    let (compute, serial) = match node.work {
        Work::Matmul { batch, m, k, n, .. } => {
            let macs = batch as f64 * m as f64 * k as f64 * n as f64;
            (
                macs / (lanes * t.used.macs_per_cycle_per_lane.max(1.0)),
                true,
            )
        }
        Work::Vector { flops } => {
            let width = f64::from(op_bits) / f64::from(t.dtype_bits.max(1));
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
        bytes: moved,
        cycles: cycles.ceil() as u64,
        compute_cycles: compute.round() as u64,
        dma_cycles: dma.round() as u64,
    }
}

/// An Add of a weight no larger than its output's last dimension: a bias.
fn is_bias_add(node: &NdNode) -> bool {
    node.op_type == "Add"
        && node.weight_elements > 0.0
        && node
            .out_dims
            .last()
            .is_some_and(|&d| node.weight_elements <= d as f64)
}

fn is_weight_matmul(layer: &NdLayer) -> bool {
    matches!(layer.work, Work::Matmul { weight: true, .. })
}

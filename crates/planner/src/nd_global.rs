//! A layer of a transformer's TPU-MLIR form (`tpumlir::nd_form`: fused norms, SiLU and
//! biases, f32 parts) timed as a global layer: its activations and weights loaded from
//! global memory, computed, its output stored. This is how TPU-MLIR runs the ops it does
//! not put in a layer group; `nd_plan` prices its global runs so, and their sum with every
//! layer global is the plan's `ungrouped_cycles`. TPU-MLIR's global transformer layers on
//! bm1684x and bm1688 check it (`tests/nd_global.rs`, `tests/nd_plan.rs`).
//!
//! What TPU-MLIR 1.30.2's profiles of the transformer zoo (bench/tpumlir_tx_zoo.py) show,
//! and this model follows:
//! - a global kernel moves its operands flat, faster than a layer group's lane-spread
//!   tensors: element-wise layers and casts as matrices (the chip's
//!   `gdma_matrix_bytes_per_s`: bm1684x 58.2 bytes a cycle in where its groups move
//!   54.4, bm1688 26.67 where 16.7), matmuls and softmaxes on bm1688 at its
//!   `global_tensor_bytes_per_s`;
//! - a global MatMul loads, multiplies and stores one after another while its operands
//!   fit half the local memory (128×2048 by 2048×512 in f16 on bm1684x: 68,193 cycles;
//!   transfers 51,761 + MACs 16,384), and slices past that ([`matmul`]);
//! - element-wise layers, casts, activations and softmaxes run double-buffered over their
//!   slices ([`double_buffered`]): their transfers where the compute is light, the compute
//!   of a function table (`function_ops`) or a softmax's rows where it is not.

pub mod matmul;

use crate::cost::{act_dma_cycles, Dir, GlobalOpCost};
use crate::timing::Timing;
use crate::tpumlir::nd_form::{TxLayer, TxValue};
pub use matmul::LocalMemory;
use matmul::MatmulTraffic;
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
///   read the heads where they lie (`heads_as_batch`) move their values flat;
/// - a softmax on a chip without a global tensor rate (bm1684x).
///
/// Its loads' cycles and its stores'.
fn rows_each_way(l: &TxLayer, bits: u32, t: &Timing) -> [f64; 2] {
    let rows = |values: &[TxValue], dir| -> f64 {
        values.iter().map(|v| row_dma_cycles(t, dir, v, bits)).sum()
    };
    [rows(&l.reads, Dir::Load), rows(&l.writes, Dir::Store)]
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

/// EU operations a global softmax computes an element (max, subtract, exp, sum,
/// divide, at the plan's width), over its rows a lane holds and the chip's
/// `global_softmax_row_cycles` a row: TPU-MLIR 1.30.2's global softmaxes of the transformer
/// zoo, rows of 32 to 256, lie on this line on both chips (bm1684x 0.81 cycles an element of
/// a lane's row at 32 EUs, bm1688 3.25 at 8).
pub const SOFTMAX_OPS_PER_ELEMENT: f64 = 26.0;

/// Compute cycles of a softmax along the last dim of `l`'s output as a global layer:
/// the rows over the lanes, each its fixed cycles and [`SOFTMAX_OPS_PER_ELEMENT`] an
/// element over EU_NUM (at `width` times the plan's type).
fn softmax_compute(l: &TxLayer, lanes: f64, width: f64, t: &Timing) -> f64 {
    let Some(out) = l.writes.first() else {
        return 0.0;
    };
    let row = out.dims.last().copied().unwrap_or(1).max(1) as f64;
    let rows_a_lane = (out.elements() / row / lanes).ceil();
    let eu = t.eltwise_per_cycle_per_lane.max(1.0) / width;
    rows_a_lane * (t.used.global_softmax_row_cycles + row * SOFTMAX_OPS_PER_ELEMENT / eu)
}

/// EU operations an element of TPU-MLIR's function-table kernels (`ActiveOp`: the SFU and
/// the EUs in turn), global or in a layer group, both chips alike: cycles are the elements
/// a lane holds times these over EU_NUM at the op's width. From TPU-MLIR 1.30.2's profiles
/// of the transformer zoo: a global f32 exp 22, log 37, tanh 57 (bm1688 [128, 512]: 11,270,
/// 18,952 and 29,190 cycles of compute; bm1684x 1,410, 2,370, 3,778), GELU's erf form 80
/// (bm1688 f16 [192, 1024]: 59,910; bm1684x in f32: 15,556); a grouped SiLU 57 (bm1684x
/// [1, 64, 344]: 1,276 cycles), a sigmoid as much. `None`: the op's FLOPs an element.
pub fn function_ops(op_type: &str) -> Option<f64> {
    Some(match op_type {
        "Exp" => 22.0,
        "Log" => 37.0,
        "Tanh" | "SiLU" | "Sigmoid" => 57.0,
        "Gelu" => 80.0,
        _ => return None,
    })
}

/// Most slices [`double_buffered`] follows one by one.
pub(crate) const MAX_PIPELINE_SLICES: u64 = 1 << 12;

/// Cycles of a global layer cut into `slices` equal slices, double-buffered: one GDMA
/// engine takes the transfers in the order L1, L2, S1, L3, S2, …, Sn, each store after its
/// slice's compute, each compute after its load and the compute before. TPU-MLIR
/// 1.30.2's global activations and softmaxes on both chips (bm1688 tanh [288, 768] in 4
/// slices: 114,941 cycles, this 115,556; bm1684x GELU [64, 512] in 2: 5,405, this 5,405).
pub(crate) fn double_buffered(load: f64, compute: f64, store: f64, slices: u64) -> f64 {
    let n = slices.clamp(1, MAX_PIPELINE_SLICES);
    let slice = Stages {
        load: load / n as f64,
        compute: compute / n as f64,
        store: store / n as f64,
    };
    pipelined((0..n).map(|_| slice))
}

/// One slice's load, compute and store cycles in [`pipelined`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stages {
    /// Its loads.
    pub load: f64,
    /// Its compute.
    pub compute: f64,
    /// Its stores.
    pub store: f64,
}

/// Cycles of slices run double-buffered, in order, as [`double_buffered`] times equal
/// ones: one GDMA engine takes the transfers in the order L1, L2, S1, L3, S2, …, Sn,
/// each store after its slice's compute, each compute after its load and the compute
/// before.
pub(crate) fn pipelined(slices: impl IntoIterator<Item = Stages>) -> f64 {
    let mut slices = slices.into_iter().peekable();
    let Some(first) = slices.peek().copied() else {
        return 0.0;
    };
    let (mut dma, mut computed, mut loaded) = (first.load, 0.0_f64, first.load);
    while let Some(this) = slices.next() {
        computed = computed.max(loaded) + this.compute;
        if let Some(next) = slices.peek() {
            dma += next.load;
            loaded = dma;
        }
        dma = dma.max(computed) + this.store;
    }
    dma
}

/// Slices TPU-MLIR cuts a global element-wise layer or softmax loading `load` bytes into
/// in local memory `lmem`: a sixteenth of the local memory each (bm1688: 256 KiB; its
/// global softmaxes of 128 and 256 KiB run whole, 320 KiB in 2, 640 KiB in 3, 1 MiB in
/// 4), and an activation of a function table at least 2 where a lane loads over
/// [`WHOLE_ACTIVATION_LANE_BYTES`].
fn vector_slices(l: &TxLayer, load: u64, lmem: &LocalMemory) -> u64 {
    let slices = load.div_ceil((lmem.bytes() / 16).max(1)).max(1);
    let a_lane = load / lmem.lanes.max(1);
    if function_ops(&l.op_type).is_some() && a_lane > WHOLE_ACTIVATION_LANE_BYTES {
        slices.max(2)
    } else {
        slices
    }
}

/// Bytes a lane loads up to which TPU-MLIR runs a global activation of a function table
/// in one piece: bm1684x's of 64 KiB (1 KiB a lane) run whole, its 128 KiB and larger
/// and every one of bm1688's (64 KiB up, 2 KiB a lane) in at least two slices, their
/// compute then under the other slice's transfers.
const WHOLE_ACTIVATION_LANE_BYTES: u64 = 1024;

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
/// f32) in local memory `lmem`.
pub fn layer_cost(l: &TxLayer, bits: u32, lmem: &LocalMemory, t: &Timing) -> GlobalOpCost {
    let wide = bits.max(32);
    let (in_bits, out_bits) = (
        if l.wide_in { wide } else { bits },
        if l.wide_out { wide } else { bits },
    );
    let load = bytes_of(l.elements_in, in_bits).saturating_add(bytes_of(l.weight_elements, bits));
    let store = bytes_of(l.elements_out, out_bits);
    let cost = |cycles: f64, compute: f64, dma: f64| GlobalOpCost {
        bytes: load.saturating_add(store),
        cycles: cycles.ceil() as u64,
        compute_cycles: compute.round() as u64,
        dma_cycles: dma.round() as u64,
    };
    let lanes = lmem.lanes.max(1) as f64;
    if let Work::Matmul {
        batch,
        m,
        k,
        n,
        weight,
    } = l.work
    {
        let traffic = matmul_traffic(l, bits, [in_bits, bits, out_bits], t);
        let compute = matmul_compute([batch, m, k, n], lanes, t);
        let rows = batch.saturating_mul(m);
        if t.matmul_vector_step_bytes.is_some() && weight && !matmul::runs_lane_rows(m, n, t) {
            let products = vector_products([batch, m, k, n], [in_bits, bits, out_bits], 0);
            let dma = products.dma_cycles(t, lmem.lanes);
            return cost(products.cycles(t, lmem.lanes), compute, dma);
        }
        let cycles = matmul::cycles(&traffic, rows, compute, lmem);
        return cost(cycles, compute, traffic.dma_cycles());
    }
    let width = f64::from(in_bits.max(out_bits)) / f64::from(t.dtype_bits.max(1));
    if l.op_type == "Permute" {
        let dma = permute_cycles(l, bits, load, t);
        return cost(dma, 0.0, dma);
    }
    let [ld, st] = transfers(l, bits, [load, store], t);
    if let Some(head) = &l.head {
        // a fused attention head alone: its loads, kernel and store in turn
        let compute = head.kernel_cycles(lanes, t);
        return cost(ld + compute + st, compute, ld + st);
    }
    let compute = if matches!(l.op_type.as_str(), "Softmax" | "LogSoftmax") {
        softmax_compute(l, lanes, width, t)
    } else if let Work::Vector { flops } = l.work {
        let ops = function_ops(&l.op_type).map_or(flops, |per| per * l.elements_out);
        ops * width / (lanes * t.eltwise_per_cycle_per_lane.max(1.0))
    } else {
        0.0
    };
    let cycles = double_buffered(ld, compute, st, vector_slices(l, load, lmem));
    cost(cycles, compute, ld + st)
}

/// MAC cycles of `batch` matmuls of [m, k]·[k, n] on `lanes` lanes: where its rows run
/// across the lanes ([`matmul::runs_lane_rows`]), each lane's worth of rows one pass of k
/// steps with n in whole EU_NUM groups over a lane's MACs; else as vector products on a
/// chip that times them ([`matmul::VectorProducts`]), or the MACs at the full rate.
pub(crate) fn matmul_compute([batch, m, k, n]: [u64; 4], lanes: f64, t: &Timing) -> f64 {
    let macs = t.used.macs_per_cycle_per_lane.max(1.0);
    let lane_rows = matmul::runs_lane_rows(m, n, t);
    if !lane_rows && t.matmul_vector_step_bytes.is_some() {
        return vector_products([batch, m, k, n], [16, 16, 16], 0).compute_cycles(t);
    }
    let (batch, m, k, n) = (batch as f64, m as f64, k as f64, n as f64);
    if !lane_rows {
        return batch * m * k * n / (lanes * macs);
    }
    let eu = t.eltwise_per_cycle_per_lane.max(1.0);
    batch * (m / lanes).ceil() * k * (n / eu).ceil() * eu / macs
}

/// `batch` matmuls of [m, k]·[k, n] as one of vector products, their input, weight and
/// output at `bits` and a bias of `bias_bytes`.
pub(crate) fn vector_products(
    [batch, m, k, n]: [u64; 4],
    [input_bits, weight_bits, output_bits]: [u32; 3],
    bias_bytes: u64,
) -> matmul::VectorProducts {
    matmul::VectorProducts {
        rows: batch.saturating_mul(m),
        k,
        n,
        input_bits,
        weight_bits,
        output_bits,
        bias_bytes,
    }
}

/// Bytes of `elements` elements of `bits`-bit data, rounded up.
fn bytes_of(elements: f64, bits: u32) -> u64 {
    (elements * f64::from(bits) / 8.0).ceil().max(0.0) as u64
}

/// Cycles of a transfer of `bytes` bytes at `rate` bytes a cycle after `setup`.
fn flat(setup: f64, bytes: u64, rate: f64) -> f64 {
    setup + bytes as f64 / rate.max(f64::MIN_POSITIVE)
}

/// A permute's transfers: a row at a time, or where the chip has a global tensor rate, as
/// one copy within global memory at half that rate, each byte through the engine twice
/// (bm1688: TPU-MLIR's [1, 4, 128, 128] f16 permute takes 10,120 cycles, 290 + 131,072
/// bytes at 13.33 a cycle).
fn permute_cycles(l: &TxLayer, bits: u32, load: u64, t: &Timing) -> f64 {
    let u = &t.used;
    if u.global_tensor_bytes_per_cycle > 0.0 {
        return flat(
            u.gdma_load_setup_cycles,
            load,
            u.global_tensor_bytes_per_cycle / 2.0,
        );
    }
    rows_each_way(l, bits, t).iter().sum()
}

/// A layer's load and store cycles (not a matmul's or a permute's): an element-wise
/// layer's or a cast's as flat matrices at the chip's matrix rates; a softmax's flat at
/// the global tensor rate where the chip has one, else a row at a time (bm1684x [3, 6,
/// 96, 96]: 8,189 cycles in, 10,795 out, its 1,728 rows at the per-plane floors); any
/// other's flat at the load and store rates (bm1688: a global LayerNorm [1, 64, 128]
/// takes 3,336 cycles, its load and store at those rates 2,427).
fn transfers(l: &TxLayer, bits: u32, [load, store]: [u64; 2], t: &Timing) -> [f64; 2] {
    let u = &t.used;
    let softmax = matches!(l.op_type.as_str(), "Softmax" | "LogSoftmax");
    // a plan recorded before the matrix rates has them 0: the load and store rates
    let or = |rate: f64, otherwise: f64| if rate > 0.0 { rate } else { otherwise };
    let [load_rate, store_rate] =
        if ELEMENT_WISE.contains(&l.op_type.as_str()) || l.op_type == "Cast" {
            [
                or(u.gdma_matrix_bytes_per_cycle, u.gdma_bytes_per_cycle),
                or(
                    u.gdma_matrix_store_bytes_per_cycle,
                    u.gdma_store_bytes_per_cycle,
                ),
            ]
        } else if softmax && u.global_tensor_bytes_per_cycle > 0.0 {
            [u.global_tensor_bytes_per_cycle; 2]
        } else if softmax {
            return rows_each_way(l, bits, t);
        } else {
            [u.gdma_bytes_per_cycle, u.gdma_store_bytes_per_cycle]
        };
    [
        flat(u.gdma_load_setup_cycles, load, load_rate),
        flat(u.gdma_store_setup_cycles, store, store_rate),
    ]
}

/// A matmul's traffic at `[input, weight, output]` bits: each operand flat, one set-up
/// apiece, at the chip's global tensor rate where it has one, else at its load and store
/// rates, an attention matmul's operands (not read with the heads as a batch) then a
/// row at a time.
fn matmul_traffic(
    l: &TxLayer,
    bits: u32,
    [in_bits, w_bits, out_bits]: [u32; 3],
    t: &Timing,
) -> MatmulTraffic {
    let u = &t.used;
    let input_bytes = bytes_of(l.elements_in, in_bits);
    let weight_bytes = bytes_of(l.weight_elements, w_bits);
    let output_bytes = bytes_of(l.elements_out, out_bits);
    let attention = matches!(l.work, Work::Matmul { weight: false, .. }) && !l.heads_as_batch;
    let tensor = u.global_tensor_bytes_per_cycle;
    if tensor <= 0.0 && attention {
        let [input_cycles, output_cycles] = rows_each_way(l, bits, t);
        return MatmulTraffic {
            input_bytes,
            input_cycles,
            weight_bytes: 0,
            weight_cycles: 0.0,
            output_bytes,
            output_cycles,
        };
    }
    let (load_rate, store_rate) = if tensor > 0.0 {
        (tensor, tensor)
    } else {
        (u.gdma_bytes_per_cycle, u.gdma_store_bytes_per_cycle)
    };
    let weights = l.reads.iter().filter(|v| v.weight).count();
    let activations = (l.reads.len() - weights).max(1) as f64;
    let weights = weights.max(usize::from(weight_bytes > 0)) as f64;
    let outputs = l.writes.len().max(1) as f64;
    MatmulTraffic {
        input_bytes,
        input_cycles: flat(
            activations * u.gdma_load_setup_cycles,
            input_bytes,
            load_rate,
        ),
        weight_bytes,
        weight_cycles: if weight_bytes > 0 {
            flat(weights * u.gdma_load_setup_cycles, weight_bytes, load_rate)
        } else {
            0.0
        },
        output_bytes,
        output_cycles: flat(
            outputs * u.gdma_store_setup_cycles,
            output_bytes,
            store_rate,
        ),
    }
}

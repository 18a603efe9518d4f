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
//!   `global_tensor_bytes_per_s`; a small matrix at the chip's matrix floor for each
//!   lane its elements spread over, each operand apart ([`matrix_transfers`]);
//! - a Gather (the embedding), a Tile (GQA's K and V) and a Permute copy within global
//!   memory in one command at the chip's `gdma_global_copy_bytes_per_s` (a Gather after
//!   loading its indices, one a matrix row; a Permute at least
//!   `gdma_global_copy_cycles_per_row` a row): [`copy_cycles`], [`permute_cycles`];
//! - a global MatMul loads, multiplies and stores one after another while its operands
//!   fit half the local memory (128×2048 by 2048×512 in f16 on bm1684x: 68,193 cycles;
//!   transfers 51,761 + MACs 16,384), and slices past that ([`matmul`]);
//! - element-wise layers, casts, activations and softmaxes run double-buffered over their
//!   slices ([`double_buffered`]): their transfers where the compute is light, the compute
//!   of a function table (`function_ops`) or a softmax's rows where it is not.

pub mod matmul;

use crate::cost::{act_dma_cycles, act_plane_cycles, dma_cycles_with_floor, Dir, GlobalOpCost};
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
    if let Some(dma) = copy_cycles(l, store, t).or_else(|| ones_cycles(l, store, t)) {
        return cost(dma, 0.0, dma);
    }
    if let Some((compute, dma)) = global_norm_cycles(l, [in_bits, bits, out_bits], lmem.lanes, t) {
        return cost(compute + dma, compute, dma);
    }
    let slices = vector_slices(l, load, lmem);
    let [ld, st] = if let Some(tensors) = broadcast_tensor_transfers(l, [in_bits, out_bits], t) {
        tensors
    } else if is_matrix_layer(l) {
        let operand_bits = OperandBits {
            activation: in_bits,
            weight: bits,
            wide,
            output: out_bits,
        };
        matrix_transfers(l, operand_bits, slices, lmem.lanes, t)
    } else {
        transfers(l, bits, [load, store], t)
    };
    if let Some(head) = &l.head {
        // a fused attention head alone: its loads, kernel and store in turn
        let compute = head.kernel_cycles(lanes, t);
        return cost(ld + compute + st, compute, ld + st);
    }
    let compute = if matches!(l.op_type.as_str(), "Softmax" | "LogSoftmax") {
        softmax_compute(l, lanes, width, t)
    } else if let Some(passes) = broadcast_binary_compute(l, lanes, width, t) {
        passes
    } else if let Work::Vector { flops } = l.work {
        let ops = function_ops(&l.op_type).map_or(flops, |per| per * l.elements_out);
        ops * width / (lanes * t.eltwise_per_cycle_per_lane.max(1.0))
    } else {
        0.0
    };
    let cycles = double_buffered(ld, compute, st, slices);
    cost(cycles, compute, ld + st)
}

/// Compute cycles of a global binary layer (Add, Sub, Mul, Div, Max, Min) one of whose
/// operands has one channel (dim 1) where its output has more: a mask of one head added
/// to every head's scores. TPU-MLIR's kernel runs it as in a layer group of one N
/// (`nd_plan`'s binary passes): that operand broadcast to every lane first (LANE_BC, one
/// EU pass over its plane), then two passes over the output's positions a lane.
/// hf_phi3's mask add on bm1688, [1, 4, 64, 64] + [1, 1, 64, 64] f16: 512 cycles of
/// LANE_BC and 1,024 of AR, where the flops over the lanes came to 64
/// (`bench/tpumlir_global_broadcast.py`). `None` for any other layer. Positions are
/// EU_NUM at `width` times the plan's type.
fn broadcast_binary_compute(l: &TxLayer, lanes: f64, width: f64, t: &Timing) -> Option<f64> {
    let (one_channel, out) = one_channel_operand(l)?;
    let eu = t.eltwise_per_cycle_per_lane.max(1.0);
    let plane = |d: &[u64]| d[2..].iter().map(|&x| x as f64).product::<f64>();
    let n = out.dims[0].max(1) as f64;
    let lane_rows = n * (out.dims[1] as f64 / lanes).ceil();
    let passes = lane_rows * (plane(&out.dims) / eu).ceil() * n.max(2.0) / n;
    let broadcast = (one_channel.dims[0].max(1) as f64 * plane(&one_channel.dims) / eu).ceil();
    Some((passes + broadcast) * width)
}

/// The operand of one channel of a binary layer whose output has more, and that output:
/// [`broadcast_binary_compute`]'s layers.
fn one_channel_operand(l: &TxLayer) -> Option<(&TxValue, &TxValue)> {
    let binary = matches!(
        l.op_type.as_str(),
        "Add" | "Sub" | "Mul" | "Div" | "Max" | "Min"
    );
    let out = l.writes.first()?;
    if !binary || l.reads.len() != 2 || out.dims.len() < 3 || out.dims[1] < 2 {
        return None;
    }
    let one_channel = l
        .reads
        .iter()
        .find(|v| v.dims.len() == out.dims.len() && v.dims[1] == 1)?;
    Some((one_channel, out))
}

/// The loads and stores of a broadcast binary layer ([`one_channel_operand`]) on a chip
/// that moves small maps in rows and has no global tensor rate (bm1684x): each operand
/// one tensor transfer of its N · C planes ([`act_plane_cycles`]), not the flat matrices
/// of an element-wise layer of equal shapes. bm1684x [1, 4, 64, 64] + [1, 1, 64, 64] f16:
/// the scores load in 606 cycles, the mask in 303 (its one plane of 8 KiB in two rows at
/// 4 × its bytes' time each, half of them a row) and the sum stores in 799, as this says
/// (1,709 cycles in all, 1,708 compiled; 5 of the 6 probes of
/// `bench/tpumlir_global_broadcast.py` so; the held-out [3, 2, 40, 40]'s mask, three
/// planes of 3,200 bytes, takes 355 cycles where this says 237). `None` for other layers
/// and chips.
fn broadcast_tensor_transfers(
    l: &TxLayer,
    [in_bits, out_bits]: [u32; 2],
    t: &Timing,
) -> Option<[f64; 2]> {
    let u = &t.used;
    if u.gdma_act_row_bytes <= 0.0 || u.global_tensor_bytes_per_cycle > 0.0 {
        return None;
    }
    one_channel_operand(l)?;
    let planes = |v: &TxValue| v.dims[0].saturating_mul(v.dims[1]);
    let moved = |dir, values: &[TxValue], bits: u32| -> f64 {
        values
            .iter()
            .map(|v| act_plane_cycles(t, dir, bytes_of(v.elements(), bits), planes(v)))
            .sum()
    };
    Some([
        moved(Dir::Load, &l.reads, in_bits),
        moved(Dir::Store, &l.writes, out_bits),
    ])
}

/// A global LayerNorm's or RMSNorm's compute and transfer cycles, where the chip gives
/// its global kernel ([`crate::norm_kernel`]): its rows spread over the lanes, loaded,
/// normed and stored one after another (TPU-MLIR 1.30.2's global norms of the zoo, e.g.
/// bm1684x [16, 2, 128]: 303 + 18 + 18 cycles in, 359 computing, 399 out, 1,097 in all,
/// where the norm's FLOPs and its bytes at the load and store rates came to 377). Each
/// operand one transfer ([`norm_transfer`]): the value's rows, the weight and bias one
/// plane each. `None` for any other layer, or one the form lists no output of.
fn global_norm_cycles(
    l: &TxLayer,
    [in_bits, w_bits, out_bits]: [u32; 3],
    lanes: u64,
    t: &Timing,
) -> Option<(f64, f64)> {
    let figures = t.global_norms.of(&l.op_type)?;
    let out = l.writes.first()?;
    let width = out.dims.last().copied().unwrap_or(1).max(1);
    let rows = rows_of(out) as u64;
    let slice = crate::norm_kernel::NormSlice {
        lane_rows: rows.div_ceil(lanes.max(1)),
        width,
    };
    let compute = slice.cycles(t.eltwise_per_cycle_per_lane.max(1.0) as u64, &figures);
    let mut dma = norm_transfer(t, Dir::Store, bytes_of(out.elements(), out_bits), rows);
    for v in &l.reads {
        dma += if v.weight {
            norm_transfer(t, Dir::Load, bytes_of(v.elements(), w_bits), 1)
        } else {
            norm_transfer(
                t,
                Dir::Load,
                bytes_of(v.elements(), in_bits),
                rows_of(v) as u64,
            )
        };
    }
    Some((compute, dma))
}

/// One transfer of a global norm's operand of `bytes` in `planes` planes (rows): flat at
/// the chip's global tensor rate where it has one (bm1688 [8, 1, 640] f16: 674 cycles in,
/// its set-up and 10,240 bytes at 26.67), else as activation planes moved in the chip's
/// rows of `gdma_act_row_bytes` ([`act_plane_cycles`]; bm1684x [16, 2, 128]: 32 rows of
/// 256 bytes in two rows of 4,096 at four times the floor, 303 cycles).
fn norm_transfer(t: &Timing, dir: Dir, bytes: u64, planes: u64) -> f64 {
    let tensor = t.used.global_tensor_bytes_per_cycle;
    if tensor > 0.0 {
        return dma_cycles_with_floor(t, dir, bytes, 0.0, tensor);
    }
    act_plane_cycles(t, dir, bytes, planes.max(1))
}

/// A global Gather's or Tile's (our form's Expand) cycles: TPU-MLIR copies the rows it
/// gathers, or the copies it tiles, from global memory to global memory in one command
/// ([`global_copy_cycles`]), a Gather after loading its indices as a matrix, one 4-byte
/// index a row at the matrix floor (bm1684x: [2, 256] indices in 2,259 cycles, 4.4 an
/// index; bm1688: [1, 384] in 1,442, its set-up and 3.0 an index). `None` for any other
/// layer.
fn copy_cycles(l: &TxLayer, out_bytes: u64, t: &Timing) -> Option<f64> {
    let copy = global_copy_cycles(t, out_bytes);
    match l.op_type.as_str() {
        "Expand" => Some(copy),
        "Gather" => {
            let indices = l.elements_in.max(0.0) as u64;
            let index_bytes = indices.saturating_mul(4);
            Some(crate::cost::matrix_rows_dma_cycles(t, Dir::Load, index_bytes, indices) + copy)
        }
        _ => None,
    }
}

/// A softmax over an axis of one element: its output is all ones, which TPU-MLIR writes
/// as a constant (one `GDMA_CONSTANT` command), an element a matrix row at the matrix
/// load floor after the load's set-up (the decode blocks' scores of one key: bm1684x
/// [8, 10, 1, 1] in 353 cycles, 80 at 4.4; bm1688 [4, 12, 1, 1] in 434, 290 and 48 at
/// 3.0). `None` for any other layer.
fn ones_cycles(l: &TxLayer, out_bytes: u64, t: &Timing) -> Option<f64> {
    let out = l.writes.first()?;
    let one_wide = out.dims.last() == Some(&1);
    (l.op_type == "Softmax" && one_wide).then(|| {
        crate::cost::matrix_rows_dma_cycles(t, Dir::Load, out_bytes, out.elements() as u64)
    })
}

/// Cycles of a copy of `bytes` from global memory to global memory, after the load's
/// set-up: at the chip's `gdma_global_copy_bytes_per_s`, else at half its global tensor
/// rate (each byte through the engine twice), else at its load rate.
fn global_copy_cycles(t: &Timing, bytes: u64) -> f64 {
    let u = &t.used;
    let rate = if u.gdma_global_copy_bytes_per_cycle > 0.0 {
        u.gdma_global_copy_bytes_per_cycle
    } else if u.global_tensor_bytes_per_cycle > 0.0 {
        u.global_tensor_bytes_per_cycle / 2.0
    } else {
        u.gdma_bytes_per_cycle
    };
    flat(u.gdma_load_setup_cycles, bytes, rate)
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
pub(crate) fn bytes_of(elements: f64, bits: u32) -> u64 {
    (elements * f64::from(bits) / 8.0).ceil().max(0.0) as u64
}

/// Cycles of a transfer of `bytes` bytes at `rate` bytes a cycle after `setup`.
fn flat(setup: f64, bytes: u64, rate: f64) -> f64 {
    setup + bytes as f64 / rate.max(f64::MIN_POSITIVE)
}

/// A permute's cycles: one copy within global memory ([`global_copy_cycles`]), never
/// under the chip's floor for each row it moves (bm1684x: [3, 6, 96, 96] f16 in 16,963
/// cycles, 1,728 rows at 9.82, where its bytes take 5,184; bm1688: [1, 4, 128, 128] in
/// 10,120, its set-up and 131,072 bytes at 13.33 a cycle); on a chip with neither a copy
/// nor a global tensor rate, its load and its store a row at a time.
fn permute_cycles(l: &TxLayer, bits: u32, load: u64, t: &Timing) -> f64 {
    if !copies_within_global_memory(t) {
        return rows_each_way(l, bits, t).iter().sum();
    }
    let rows: f64 = l.reads.iter().map(rows_of).sum();
    permuting_copy(t, load, rows)
}

/// Cycles of a global permute of `v` at `bits` ([`permute_cycles`]'s rule).
pub(crate) fn permuted_copy_cycles(t: &Timing, v: &TxValue, bits: u32) -> f64 {
    if !copies_within_global_memory(t) {
        return row_dma_cycles(t, Dir::Load, v, bits) + row_dma_cycles(t, Dir::Store, v, bits);
    }
    permuting_copy(t, bytes_of(v.elements(), bits), rows_of(v))
}

/// Whether the chip gives a rate for copies within global memory (its own, or its
/// global tensor rate).
fn copies_within_global_memory(t: &Timing) -> bool {
    t.used.gdma_global_copy_bytes_per_cycle > 0.0 || t.used.global_tensor_bytes_per_cycle > 0.0
}

/// Rows of `v`'s last dim.
fn rows_of(v: &TxValue) -> f64 {
    v.elements() / v.dims.last().copied().unwrap_or(1).max(1) as f64
}

/// An attention matmul's loads and stores on a chip with a global tensor rate: each
/// operand flat at that rate after its set-up, never under the matrix floor a row of
/// its last dim (bm1688: llama_d768_s1_b4's scores read Kᵀ [4, 12, 64, 1] in 3,072
/// rows of one element, 10,964 cycles where the bytes take 230).
fn attention_rows_floored(l: &TxLayer, bits: u32, t: &Timing) -> [f64; 2] {
    let u = &t.used;
    let moved = |values: &[TxValue], dir, floor: f64| -> f64 {
        values
            .iter()
            .map(|v| {
                let bytes = bytes_of(v.elements(), bits);
                let rate = u.global_tensor_bytes_per_cycle;
                dma_cycles_with_floor(t, dir, bytes, rows_of(v) * floor, rate)
            })
            .sum()
    };
    [
        moved(&l.reads, Dir::Load, u.gdma_matrix_load_cycles_per_plane),
        moved(&l.writes, Dir::Store, u.gdma_matrix_store_cycles_per_plane),
    ]
}

/// A weight matmul's traffic on a chip that moves small maps in rows and has no global
/// tensor rate (bm1684x): each operand one tensor transfer whose (n, c) planes are its
/// rows ([`act_plane_cycles`], the rule of the CNN planner's activations). Operands of
/// few short rows pay the small-plane floor a row: hf_phi3's [64, 32] · [32, 32] f16
/// loads its input in 1,213 cycles and its weight in 606 and stores in 1,599 (64, 32
/// and 64 rows at 4 × 4.74 and 4 × 6.25), where their bytes at the rates take 76, 38
/// and 100. Operands are the layer's reads and writes where it lists them, else its
/// input's rows of K, its weight's K rows and its output's rows of N.
fn planed_traffic(l: &TxLayer, [in_bits, w_bits, out_bits]: [u32; 3], t: &Timing) -> MatmulTraffic {
    let Work::Matmul { batch, m, k, .. } = l.work else {
        return MatmulTraffic::default();
    };
    let rows = batch.saturating_mul(m) as f64;
    let cycles = |dir, transfers: Vec<(u64, f64)>| -> f64 {
        transfers
            .into_iter()
            .filter(|&(bytes, _)| bytes > 0)
            .map(|(bytes, planes)| act_plane_cycles(t, dir, bytes, planes.ceil() as u64))
            .sum()
    };
    let of = |values: &[TxValue], weight: bool, bits: u32| -> Vec<(u64, f64)> {
        values
            .iter()
            .filter(|v| v.weight == weight)
            .map(|v| (bytes_of(v.elements(), bits), rows_of(v)))
            .collect()
    };
    let or = |listed: Vec<(u64, f64)>, whole: (u64, f64)| {
        if listed.is_empty() {
            vec![whole]
        } else {
            listed
        }
    };
    let input = or(
        of(&l.reads, false, in_bits),
        (bytes_of(l.elements_in, in_bits), rows),
    );
    let weight = or(
        of(&l.reads, true, w_bits),
        (bytes_of(l.weight_elements, w_bits), k as f64),
    );
    let output = or(
        of(&l.writes, false, out_bits),
        (bytes_of(l.elements_out, out_bits), rows),
    );
    let sum = |parts: &[(u64, f64)]| parts.iter().map(|&(bytes, _)| bytes).sum();
    MatmulTraffic {
        input_bytes: sum(&input),
        input_cycles: cycles(Dir::Load, input),
        weight_bytes: sum(&weight),
        weight_cycles: cycles(Dir::Load, weight),
        output_bytes: sum(&output),
        output_cycles: cycles(Dir::Store, output),
    }
}

/// A copy of `bytes` in `rows` rows within global memory, permuting them: never under
/// the chip's floor a row after the set-up.
fn permuting_copy(t: &Timing, bytes: u64, rows: f64) -> f64 {
    let u = &t.used;
    let per_row =
        u.gdma_global_copy_cycles_per_row * short_row_factor(t, bytes as f64 / rows.max(1.0));
    let floor = u.gdma_load_setup_cycles + rows * per_row;
    let rate = u.gdma_global_permute_bytes_per_cycle;
    let permuted = if rate > 0.0 {
        flat(u.gdma_load_setup_cycles, bytes, rate)
    } else {
        0.0
    };
    global_copy_cycles(t, bytes).max(floor).max(permuted)
}

/// How many times the row floor a permuting copy's rows of `row_bytes` bytes pay: rows of
/// S / 2 to S bytes, S the chip's `gdma_global_copy_short_row_bytes`, pay (2S / their
/// bytes)² (bm1684x, S = 32: rows of 16 bytes 16 times, of 32 bytes 4 times), others
/// once. Shorter rows were not measured: the permutes of rows of one element the
/// attention's rewrites add (gpt2_d640_s1_b8's scores, one key) leave no command in
/// TPU-MLIR's program, and (2S / 2)² = 1,024 floors would make them the network's
/// costliest layers.
fn short_row_factor(t: &Timing, row_bytes: f64) -> f64 {
    let short = t.used.gdma_global_copy_short_row_bytes;
    if short <= 0.0 || row_bytes > short || row_bytes < short / 2.0 {
        return 1.0;
    }
    (2.0 * short / row_bytes).powi(2)
}

/// A layer's load and store cycles (not a matmul's, a permute's, a copy's or a matrix
/// layer's, [`matrix_transfers`]): a softmax's flat at the global tensor rate where the
/// chip has one, never under the matrix floor of a row each of its rows (bm1688: [2, 4,
/// 12, 12] loads 2,304 bytes in 578 cycles, its set-up and 96 rows at 3.0, where the
/// bytes take 86), else a row at a time (bm1684x [3, 6,
/// 96, 96]: 8,189 cycles in, 10,795 out, its 1,728 rows at the per-plane floors); any
/// other's flat at the load and store rates (a norm's on a chip whose file gives no
/// global norm kernel: [`global_norm_cycles`]).
fn transfers(l: &TxLayer, bits: u32, [load, store]: [u64; 2], t: &Timing) -> [f64; 2] {
    let u = &t.used;
    let softmax = matches!(l.op_type.as_str(), "Softmax" | "LogSoftmax");
    if softmax && u.global_tensor_bytes_per_cycle > 0.0 {
        // flat, but never under the matrix floor of a row each of the softmax's rows
        let rows: f64 = l.writes.iter().map(rows_of).sum();
        let moved = |dir, bytes, floor: f64| {
            dma_cycles_with_floor(t, dir, bytes, rows * floor, u.global_tensor_bytes_per_cycle)
        };
        return [
            moved(Dir::Load, load, u.gdma_matrix_load_cycles_per_plane),
            moved(Dir::Store, store, u.gdma_matrix_store_cycles_per_plane),
        ];
    }
    if softmax {
        return rows_each_way(l, bits, t);
    }
    [
        flat(u.gdma_load_setup_cycles, load, u.gdma_bytes_per_cycle),
        flat(
            u.gdma_store_setup_cycles,
            store,
            u.gdma_store_bytes_per_cycle,
        ),
    ]
}

/// An element-wise layer or a cast, which TPU-MLIR's global kernels move as flat
/// matrices (`GDMA_MATRIX` commands).
fn is_matrix_layer(l: &TxLayer) -> bool {
    ELEMENT_WISE.contains(&l.op_type.as_str()) || l.op_type == "Cast"
}

/// The bits a matrix layer's operands move at: its activations', its weights' (and a
/// wide weight's), its output's.
#[derive(Debug, Clone, Copy)]
struct OperandBits {
    activation: u32,
    weight: u32,
    wide: u32,
    output: u32,
}

/// A matrix layer's ([`is_matrix_layer`]) load and store cycles over `slices` slices:
/// each operand of each slice one matrix transfer at the chip's matrix rates, never
/// under the matrix floor of the lanes its elements spread over
/// ([`crate::cost::matrix_dma_cycles`], the rule of the CNN zoo's global casts), each
/// with its set-up. A small one pays that floor: bm1684x's global add of two [1, 64, 64]
/// f16 moves each operand in 282 cycles and its output in 372, 64 lanes at 4.4 and 5.8
/// (940 cycles in all, where the bytes at the rates take 471), its casts of [1, 64]
/// token indices 655 (their bytes 10). A Where runs its own kernel, its matrices in rows
/// of 64 elements whatever its shape ([4, 12, 1, 1] loaded in 3 cycles): its bytes at
/// the rates alone. Operands are the layer's reads and writes where it lists them, else
/// its activation, weight and output elements.
fn matrix_transfers(
    l: &TxLayer,
    bits: OperandBits,
    slices: u64,
    lanes: u64,
    t: &Timing,
) -> [f64; 2] {
    let slices = slices.max(1);
    let floored = l.op_type != "Where";
    let cycles = |dir: Dir, operands: Vec<(f64, u32)>| -> f64 {
        operands
            .into_iter()
            .filter(|&(elements, _)| elements > 0.0)
            .map(|(elements, b)| {
                let per_slice = (elements / slices as f64).ceil();
                let rows = if floored {
                    crate::cost::matrix_planes(per_slice as u64, lanes)
                } else {
                    0
                };
                let bytes = bytes_of(per_slice, b);
                slices as f64 * crate::cost::matrix_rows_dma_cycles(t, dir, bytes, rows)
            })
            .sum()
    };
    let reads = if l.reads.is_empty() {
        vec![
            (l.elements_in, bits.activation),
            (l.weight_elements, bits.weight),
        ]
    } else {
        l.reads
            .iter()
            .map(|v| {
                let b = match (v.weight, v.wide) {
                    (_, true) => bits.wide,
                    (true, false) => bits.weight,
                    (false, false) => bits.activation,
                };
                (v.elements(), b)
            })
            .collect()
    };
    let writes = if l.writes.is_empty() {
        vec![(l.elements_out, bits.output)]
    } else {
        l.writes
            .iter()
            .map(|v| (v.elements(), bits.output))
            .collect()
    };
    [cycles(Dir::Load, reads), cycles(Dir::Store, writes)]
}

/// A matmul's traffic at `[input, weight, output]` bits: each operand flat, one set-up
/// apiece, at the chip's global tensor rate where it has one; a weight matmul's on a chip
/// without one that moves small maps in rows as tensors of its rows
/// ([`planed_traffic`]), any other's at the load and store rates. An attention matmul's operands (not read with the heads as a batch) move a row
/// at a time without a tensor rate, and with one flat but never under the matrix floor
/// a row ([`attention_rows_floored`]).
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
    if attention {
        // a row at a time without a tensor rate; with one flat at it, but never under
        // the matrix floor a row of each operand, as a softmax's
        let [input_cycles, output_cycles] = if tensor <= 0.0 {
            rows_each_way(l, bits, t)
        } else {
            attention_rows_floored(l, bits, t)
        };
        return MatmulTraffic {
            input_bytes,
            input_cycles,
            weight_bytes: 0,
            weight_cycles: 0.0,
            output_bytes,
            output_cycles,
        };
    }
    let weight_matmul = matches!(l.work, Work::Matmul { weight: true, .. });
    if weight_matmul && tensor <= 0.0 && u.gdma_act_row_bytes > 0.0 {
        return planed_traffic(l, [in_bits, w_bits, out_bits], t);
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

//! Time steps of one loop iteration (one slice) of a group of `k` ops, and the
//! local-memory blocks with their lifetimes.
//!
//! Step 0 only loads (the first op's inputs and weights); step `j` in `1..=k` computes
//! op `j−1` while loading what op `j` needs (prefetch one step early: a weight used at
//! step `j` is held over `[j−1, j]`, the spec's `[T5,T5] → [T2,T5]` widening to the
//! previous compute step) and storing what op `j−2` produced; step `k+1` only stores.
//! When the group is sliced (more than one slice), weights stay resident (`end = None`)
//! and are loaded in the first slice only, unless they are *streamed*: then each slice
//! loads them again one step before use and frees them after it, as unsliced groups do
//! (the compiler does this when its held weights do not fit: its ResNet-18 batch-4 group of
//! layers 1–4 on bm1688, N cut in 4, reloads every filter in each of the 4 slices, as
//! its cycle profile shows). Loads of step 0 and stores of step `k+1` run during the
//! neighbouring slices' compute steps (software pipelining: slice s+1 loads while
//! slice s computes while slice s−1 stores); the cost model puts each in the step with
//! the most DMA slack, as the compiler's time-step pass moves transfers by slack.

use crate::error::Result;
use crate::plan::BlockKind;
use crate::slicing::{GroupTensors, Slicing};
use tpusim_graph::{Activation, Graph, OpId, OpKind, TensorId, TensorKind};
use tpusim_layout::ElementType;
use tpusim_lmem::{Chip, LocalLayout, TensorShape};

/// A block before placement.
#[derive(Debug, Clone)]
pub struct BlockSpec {
    /// Block name (tensor name or `<op>.buffer`).
    pub name: String,
    /// What it holds.
    pub kind: BlockKind,
    /// The tensor it holds (activations and weights).
    pub tensor: Option<TensorId>,
    /// Owner op (buffers).
    pub op: Option<OpId>,
    /// Bytes per lane.
    pub size: u64,
    /// Bits per element as the block is held and moved: the tensor's type
    /// ([`tensor_type`]), a bias at 32 bits under a narrower type ([`weight_type`]).
    pub bits: u32,
    /// First step held.
    pub start: u64,
    /// Last step held; `None` = resident.
    pub end: Option<u64>,
    /// Step of its load, if loaded from global memory.
    pub load_step: Option<u64>,
    /// Step of its store, if stored.
    pub store_step: Option<u64>,
    /// Steps whose compute op reads or writes it.
    pub compute_steps: Vec<u64>,
    /// Its lifetime in the placer's own step table, when the placer keeps one (the
    /// plan records it, see [`crate::plan::Block::placer_ts`]).
    pub placer_ts: Option<[u64; 2]>,
    /// Where a sliced group's compiler runs this block's transfer for the neighbouring
    /// slice (its step-0 load during the previous slice, its step-`k+1` store during
    /// the next one), when the placer reproduces that compiler's moves; `None`: the
    /// cost model puts it in the step with the most DMA slack.
    pub neighbour_step: Option<u64>,
}

/// The step table in ids: for each step `0..=k+1`, the compute op and block indices
/// loaded and stored.
#[derive(Debug, Clone)]
pub struct Steps {
    /// Ops in the group.
    pub k: u64,
    /// Compute op of each step.
    pub compute: Vec<Option<OpId>>,
    /// Blocks loaded in each step.
    pub loads: Vec<Vec<usize>>,
    /// Blocks stored in each step.
    pub stores: Vec<Vec<usize>>,
}

/// The element type tensor `t` is held in: the one the model fixes for it
/// ([`tpusim_graph::Tensor::bits`], e.g. an f32 network input ahead of its cast), else
/// the plan's `dtype`.
pub fn tensor_type(graph: &Graph, t: TensorId, dtype: ElementType) -> ElementType {
    match graph.tensors.get(t).and_then(|x| x.bits) {
        Some(b) if b != dtype.bits() => match b {
            64 => ElementType::F64,
            32 => ElementType::F32,
            16 => ElementType::F16,
            _ => ElementType::S8,
        },
        _ => dtype,
    }
}

/// Whether a group of `ops` holds element-wise ops alone (casts and activations), which
/// TPU-MLIR lays out as `GROUP_SMALL_C` ([`small_c_dims`], [`GroupTensors::spread`]).
pub fn is_small_c_group(graph: &Graph, mut ops: impl Iterator<Item = OpId>) -> bool {
    ops.all(|o| matches!(graph.ops[o].kind, OpKind::Act(_) | OpKind::Cast))
}

/// The (n, c, h, w) a group of element-wise ops alone ([`GroupTensors::spread`]) holds an
/// (n, c, h, w) tensor as: TPU-MLIR's `GROUP_SMALL_C` layout (`getNCHW` for that group
/// type) puts the n · c · h rows of W elements over the lanes, `npu_num` of them a lane
/// row when they divide evenly, else n · c rows of h.
pub fn small_c_dims(n: u64, c: u64, h: u64, w: u64, npu_num: u64) -> (u64, u64, u64, u64) {
    let rows = n.saturating_mul(c).saturating_mul(h);
    let npu = npu_num.max(1);
    if rows % npu == 0 {
        (rows / npu, npu, w, 1)
    } else {
        (n.saturating_mul(c), h, w, 1)
    }
}

/// Aligned bytes per lane of an (n, c, h, w) tensor (lmem crate).
pub fn lane_size(chip: &Chip, dtype: ElementType, n: u64, c: u64, h: u64, w: u64) -> Result<u64> {
    Ok(tpusim_lmem::lane_bytes(
        chip,
        &TensorShape::nchw(n.max(1), c.max(1), h.max(1), w.max(1)),
        dtype,
        LocalLayout::Aligned,
        0,
    )?)
}

/// How a weight tensor is laid out in local memory: channels over lanes along its first
/// dimension (output channels of a filter), the rest of each channel packed along W.
pub fn weight_local_shape(s: tpusim_graph::Shape4) -> (u64, u64, u64, u64) {
    if s.n > 1 {
        (1, s.n, 1, s.c.saturating_mul(s.h).saturating_mul(s.w))
    } else {
        (1, s.c, 1, s.h.saturating_mul(s.w))
    }
}

/// Whether the NPU backend lowers `kind` on `in_c` input channels with its "3ic" trick:
/// kernel rows (or, see [`crate::cost`], the whole kernel) folded into the input
/// channels, the input broadcast over the lanes into a scratch buffer. TPU-MLIR 1.30.2's
/// weight reorder sets `use_3ic_optimize` for a dense conv with a kernel taller than 1
/// when `in_c · kh` is at most its IC_PARALLEL (`ic_parallel`: bm1684x 64, bm1688 32,
/// the int8 count under every type): every such conv of the zoos' final MLIR has it
/// (bm1684x: 8, 12, 16 and 20 channels on 3×3 kernels, 4 and 8 on 5×5; not 24 on 3×3
/// or 13 on 5×5; bm1688: 8 on 3×3, not 12, nor 8 on 5×5), and its codegen profile
/// runs them with one lane broadcast per input channel. Depthwise convs too, by the same
/// rule (`bench/tpumlir_cnn_op_sweep.py`: bm1684x 4 to 16 channels on 3×3, 4 to 12 on
/// 5×5; bm1688 4 and 8 on 3×3, 4 on 5×5; the fold's commands priced exactly). (A
/// kernel one row high whose columns fit is folded by columns there; not modelled.)
pub fn is_3ic_conv(kind: &OpKind, in_c: u64, ic_parallel: u64) -> bool {
    matches!(kind, OpKind::Conv(p) if (p.groups == 1 || p.groups == in_c)
        && p.kernel[0] > 1
        && in_c.saturating_mul(p.kernel[0]) <= ic_parallel)
}

/// Bytes per lane of a weight block: [`weight_local_shape`] in the compact layout (no
/// per-channel EU alignment, the size not rounded up), as the backend holds
/// coefficients; a bias (a
/// per-channel vector after an op's first weight) stays at 32 bits when the plan's
/// type is narrower (the backend keeps f32 biases in F16 models, int32 in INT8 ones: the
/// compiled graph gives a 256-channel bias 16 bytes per lane on bm1684x's 64 lanes).
pub fn weight_block_size(
    chip: &Chip,
    dtype: ElementType,
    shape: tpusim_graph::Shape4,
    is_bias: bool,
) -> Result<u64> {
    let (n, c, h, w) = weight_local_shape(shape);
    let ty = weight_type(dtype, is_bias);
    Ok(tpusim_lmem::lane_bytes_unaligned(
        chip,
        &TensorShape::nchw(n.max(1), c.max(1), h.max(1), w.max(1)),
        ty,
        LocalLayout::Compact,
        0,
    )?)
}

/// Whether weight `i` of an op's weights is a bias: a per-channel vector after the
/// first weight.
pub fn is_bias(i: usize, shape: tpusim_graph::Shape4) -> bool {
    i > 0 && shape.n <= 1 && shape.h <= 1 && shape.w <= 1
}

/// Whether weight `wi` (of `shape`) of `op` is a bias the backend holds at 32 bits under
/// a narrower type ([`weight_type`]): every bias but one of an op its pooling unit runs
/// depthwise ([`runs_depthwise`]), which stays in the plan's type. TPU-MLIR 1.30.2's
/// programs, F16 on both chips (`bench/tpumlir_dw_bias.py`): depthwise convs on the
/// pooling unit and batch-norms lowered depthwise load f16 biases; depthwise convs on
/// the CONV unit, dense and grouped convs and dense batch-norms f32 ones. On bm1688 the
/// difference is paid in time: 96 f16 channels (192 bytes, one row of small planes) load
/// in 2,133 cycles, 96 f32 ones (two rows) in 1,211.
pub fn wide_bias(
    graph: &Graph,
    op: &tpusim_graph::Op,
    wi: usize,
    shape: tpusim_graph::Shape4,
    ic_per_pass: u64,
    npu_num: u64,
) -> bool {
    is_bias(wi, shape) && !runs_depthwise(graph, op, ic_per_pass, npu_num)
}

/// Whether the pooling unit runs `op` depthwise: a depthwise conv on more channels than
/// one pass of the CONV unit's input channels (`ic_per_pass`, [`crate::Timing::
/// conv_ic_per_pass`]: bm1684x 32, bm1688 16 at F16; fewer run on the CONV unit), or a
/// batch-norm no conv absorbed that is not lowered dense ([`bn_is_dense`]). With
/// `ic_per_pass` 0 every depthwise conv counts (the verifier, which has no timing, so
/// accepts a bias held either way).
pub fn runs_depthwise(
    graph: &Graph,
    op: &tpusim_graph::Op,
    ic_per_pass: u64,
    npu_num: u64,
) -> bool {
    let in_c = op
        .inputs
        .first()
        .and_then(|&i| graph.tensors.get(i))
        .map_or(0, |t| t.shape.c);
    match &op.kind {
        OpKind::Conv(p) => p.groups > 1 && p.groups == in_c && in_c > ic_per_pass,
        OpKind::BatchNorm => !bn_is_dense(in_c, npu_num),
        _ => false,
    }
}

/// The element type the backend holds and moves a weight in: a bias at 32 bits when the
/// plan's type is narrower (see [`weight_block_size`]; its profiles load a 2,048-channel
/// f32 bias of an F16 ResNet-50 in 19,412 cycles, two rows of small planes, where 16
/// bits would take twice that), any other weight in `dtype`.
pub fn weight_type(dtype: ElementType, is_bias: bool) -> ElementType {
    if is_bias && dtype.bits() < 32 {
        ElementType::F32
    } else {
        dtype
    }
}

/// Whether TPU-MLIR lowers a batch-norm that no conv absorbed, on `channels` channels,
/// to a dense 1×1 conv on the MAC array (else a depthwise one, an EU pass): up to half
/// the lanes' worth. Its profiles of the zoo: the U-Net's 16 and 32 channels dense on
/// bm1684x's 64 lanes, 64 depthwise; 16 dense on bm1688's 32 lanes, 32 and 64
/// depthwise; the DenseNet's 24 and 30 dense on bm1684x, 33 to 57 depthwise.
pub fn bn_is_dense(channels: u64, npu_num: u64) -> bool {
    channels <= npu_num / 2
}

/// Scratch bytes per lane an op needs for the largest slice, if any: a transposed conv
/// expands its input with zeros (stride−1 rows/cols between pixels); average pools
/// accumulate in f32 when the data type is narrower; sigmoid, tanh, hard-sigmoid and
/// hard-swish need scratch room for their output; depthwise and first-layer
/// (3-channel) convs get the buffers the backend reserves for them (read from the
/// `buffer_size` of the compiled graph, bm1684x and bm1688, every case reproduced exactly):
/// a depthwise conv holds its output slice at 32 bits, one input plane and its taps (so
/// does a batch-norm no conv absorbed, when TPU-MLIR makes it depthwise); a
/// conv on few input channels ([`is_3ic_conv`] under `ic_parallel`) is lowered with
/// kernel rows (and columns, when `ic·kh·kw ≤ EU_BYTES/2`) folded into channels
/// ("3ic"), which needs one channel of the rearranged input per lane.
pub fn buffer_size(
    chip: &Chip,
    dtype: ElementType,
    kind: &OpKind,
    in_nch: (u64, u64, u64, u64),
    out_nch: (u64, u64, u64, u64),
    ic_parallel: u64,
) -> Result<Option<u64>> {
    // a conv's input channels a pass through the MAC array (`conv_ic_bytes`)
    let conv_pass = crate::timing::ic_per_pass(ic_parallel, dtype.bits());
    match kind {
        OpKind::Conv(p)
            if p.groups > 1
                && p.groups == in_nch.1
                && p.groups == out_nch.1
                && !is_3ic_conv(kind, in_nch.1, ic_parallel) =>
        {
            // on the CONV unit (a pass of channels or fewer) it needs none (the sweep's
            // final MLIR: bm1684x 24 and 32 channels, bm1688 12 and 16: buffer_size 0)
            if out_nch.1 <= conv_pass {
                return Ok(None);
            }
            let taps = p.kernel[0].saturating_mul(p.kernel[1]);
            depthwise_buffer(chip, dtype, in_nch, out_nch, taps).map(Some)
        }
        // a batch-norm that no conv absorbed is a 1×1 conv: a depthwise one has its
        // buffer, a dense one none (`bn_is_dense`)
        OpKind::BatchNorm if !bn_is_dense(in_nch.1, chip.npu_num) => {
            depthwise_buffer(chip, dtype, in_nch, out_nch, 1).map(Some)
        }
        OpKind::Conv(p) if is_3ic_conv(kind, in_nch.1, ic_parallel) => {
            let (ic, kh, kw) = (in_nch.1, p.kernel[0], p.kernel[1]);
            let (n, _, oh, ow) = out_nch;
            // kh and kw folded: one output-sized plane; kh only: output rows × input width
            let w = if kw > 1 && ic.saturating_mul(kh).saturating_mul(kw) <= chip.eu_bytes / 2 {
                ow
            } else {
                in_nch.3
            };
            let plane = lane_size(chip, dtype, n, 1, oh, w)?;
            Ok(Some(plane.saturating_add(3 * chip.eu_bytes)))
        }
        OpKind::Deconv { params, .. } => {
            let (n, c, h, w) = in_nch;
            let eh = (h - 1).saturating_mul(params.stride[0]) + 1;
            let ew = (w - 1).saturating_mul(params.stride[1]) + 1;
            Ok(Some(lane_size(chip, dtype, n, c, eh, ew)?))
        }
        OpKind::GlobalAvgPool if dtype.bits() < 32 => {
            // the backend runs it on an f32 copy of its input made by a cast in front (a
            // tensor of its own there, held with the input by the cast and with the
            // result by the pool; ours: held at the pool's step with both), and
            // accumulates in f32
            let (n, c, h, w) = out_nch;
            let (xn, xc, xh, xw) = in_nch;
            let copy = lane_size(chip, ElementType::F32, xn, xc, xh, xw)?;
            Ok(Some(
                lane_size(chip, ElementType::F32, n, c, h, w)?.saturating_add(copy),
            ))
        }
        OpKind::AvgPool(_) if dtype.bits() < 32 => {
            let (n, c, h, w) = out_nch;
            Ok(Some(lane_size(chip, ElementType::F32, n, c, h, w)?))
        }
        OpKind::Act(Activation::Sigmoid | Activation::Tanh | Activation::Silu) => {
            // twice one image's output and 128 bytes (the compiled graphs of the zoo,
            // bm1684x and bm1688, f32: SE gates of 1, 2, 3 channels a lane on 1×1, 64 →
            // 256, 128 → 384, 192 → 512 bytes; a tanh on 3×27×38² 17,472 → 11,776); more
            // than the backend's where it slices finer (a sigmoid on 1×1×128²: 2,176
            // here, 1,152 there)
            let (_, c, h, w) = out_nch;
            let image = lane_size(chip, dtype, 1, c, h, w)?;
            Ok(Some(image.saturating_mul(2).saturating_add(128)))
        }
        OpKind::Act(Activation::HardSigmoid | Activation::HardSwish) => {
            // one output (the compiled graphs: buffer_size = out_size, every case)
            let (n, c, h, w) = out_nch;
            Ok(Some(lane_size(chip, dtype, n, c, h, w)?))
        }
        _ => Ok(None),
    }
}

/// A depthwise conv's buffer per lane: its output slice at 32 bits, one input plane and
/// its `taps` per channel on a lane, and 4 bytes.
fn depthwise_buffer(
    chip: &Chip,
    dtype: ElementType,
    in_nch: (u64, u64, u64, u64),
    out_nch: (u64, u64, u64, u64),
    taps: u64,
) -> Result<u64> {
    let (n, c, h, w) = out_nch;
    let wide = (32 / dtype.bits().clamp(1, 32)) as u64;
    let out32 = lane_size(chip, dtype, n, c, h, w)?.saturating_mul(wide);
    let lane_taps = c.div_ceil(chip.npu_num.max(1)).saturating_mul(taps);
    let (xn, _, xh, xw) = in_nch;
    let plane = lane_size(chip, dtype, xn, 1, xh, xw)?;
    Ok(out32
        .saturating_add(lane_taps)
        .saturating_add(plane)
        .saturating_add(4))
}

/// Build the blocks and the step table of group `gt` sliced as `slicing` (more than one
/// slice: weights resident, or reloaded in every slice when `stream_weights`). Blocks
/// are sized by each tensor's largest slice; `ic_parallel` decides which convs have a
/// 3ic buffer ([`is_3ic_conv`]).
pub fn build(
    graph: &Graph,
    chip: &Chip,
    dtype: ElementType,
    gt: &GroupTensors,
    slicing: &Slicing,
    stream_weights: bool,
    ic_parallel: u64,
) -> Result<(Vec<BlockSpec>, Steps)> {
    let resident = slicing.is_sliced() && !stream_weights;
    let k = (gt.last - gt.first + 1) as u64;
    let nsteps = (k + 2) as usize;
    let step_of = |op: OpId| (op - gt.first) as u64 + 1;
    let mut blocks: Vec<BlockSpec> = Vec::new();
    let ext = slicing.extents();
    let max_ext = |i: usize| ext[i];
    let mut block_of_tensor: std::collections::HashMap<TensorId, usize> = Default::default();
    // a group of element-wise ops alone holds its tensors over every lane
    let held = |d: (u64, u64, u64, u64)| {
        if gt.spread {
            small_c_dims(d.0, d.1, d.2, d.3, chip.npu_num)
        } else {
            d
        }
    };
    // activations
    for (i, &t) in gt.all.iter().enumerate() {
        let tensor = &graph.tensors[t];
        let (n, h) = max_ext(i);
        let ty = tensor_type(graph, t, dtype);
        let (hn, hc, hh, hw) = held((n, tensor.shape.c, h, tensor.shape.w));
        let size = lane_size(chip, ty, hn, hc, hh, hw)?;
        let consumer_steps: Vec<u64> = (gt.first..=gt.last)
            .filter(|&o| graph.ops[o].inputs.contains(&t))
            .map(step_of)
            .collect();
        let last_use = consumer_steps.iter().copied().max();
        let producer = (gt.first..=gt.last).find(|&o| graph.ops[o].outputs.contains(&t));
        let (start, load_step, mut end, store_step) = match producer {
            None => {
                let first_use = consumer_steps.iter().copied().min().unwrap_or(1);
                (
                    first_use - 1,
                    Some(first_use - 1),
                    last_use.unwrap_or(first_use),
                    None,
                )
            }
            Some(p) => {
                let ps = step_of(p);
                let store = gt.escaping.contains(&t).then_some(ps + 1);
                (ps, None, last_use.unwrap_or(ps).max(ps), store)
            }
        };
        if let Some(s) = store_step {
            end = end.max(s);
        }
        let mut compute_steps = consumer_steps.clone();
        if let Some(p) = producer {
            compute_steps.push(step_of(p));
        }
        block_of_tensor.insert(t, blocks.len());
        blocks.push(BlockSpec {
            name: tensor.name.clone(),
            kind: BlockKind::Activation,
            tensor: Some(t),
            op: None,
            size,
            bits: ty.bits(),
            start,
            end: Some(end),
            load_step,
            store_step,
            compute_steps,
            placer_ts: None,
            neighbour_step: None,
        });
    }
    // weights (one block per weight tensor, even if shared by several ops)
    let ic_per_pass = crate::timing::ic_per_pass(ic_parallel, dtype.bits());
    for o in gt.first..=gt.last {
        for (wi, &w) in graph.ops[o].weights.iter().enumerate() {
            let Some(tensor) = graph.tensors.get(w) else {
                continue;
            };
            if tensor.kind != TensorKind::Weight {
                continue;
            }
            let us = step_of(o);
            if let Some(&b) = block_of_tensor.get(&w) {
                let bl = &mut blocks[b];
                bl.compute_steps.push(us);
                if let Some(e) = bl.end.as_mut() {
                    *e = (*e).max(us);
                }
                continue;
            }
            let bias = wide_bias(
                graph,
                &graph.ops[o],
                wi,
                tensor.shape,
                ic_per_pass,
                chip.npu_num,
            );
            let size = weight_block_size(chip, dtype, tensor.shape, bias)?;
            block_of_tensor.insert(w, blocks.len());
            blocks.push(BlockSpec {
                name: tensor.name.clone(),
                kind: BlockKind::Weight,
                tensor: Some(w),
                op: None,
                size,
                bits: weight_type(tensor_type(graph, w, dtype), bias).bits(),
                start: us - 1,
                end: if resident { None } else { Some(us) },
                load_step: Some(us - 1),
                store_step: None,
                compute_steps: vec![us],
                placer_ts: None,
                neighbour_step: None,
            });
        }
    }
    // buffers
    for o in gt.first..=gt.last {
        let op = &graph.ops[o];
        let (Some(&x), Some(&y)) = (op.inputs.first(), op.outputs.first()) else {
            continue;
        };
        let (xi, yi) = (gt.pos[&x], gt.pos[&y]);
        let (xn, xh) = max_ext(xi);
        let (yn, yh) = max_ext(yi);
        let xs = graph.tensors[x].shape;
        let ys = graph.tensors[y].shape;
        if let Some(size) = buffer_size(
            chip,
            tensor_type(graph, y, dtype),
            &op.kind,
            held((xn, xs.c, xh, xs.w)),
            held((yn, ys.c, yh, ys.w)),
            ic_parallel,
        )? {
            let s = step_of(o);
            blocks.push(BlockSpec {
                name: format!("{}.buffer", op.name),
                kind: BlockKind::Buffer,
                tensor: None,
                op: Some(o),
                size,
                bits: dtype.bits(),
                start: s,
                end: Some(s),
                load_step: None,
                store_step: None,
                compute_steps: vec![s],
                placer_ts: None,
                neighbour_step: None,
            });
        }
    }
    let mut steps = Steps {
        k,
        compute: (0..nsteps)
            .map(|j| {
                if j >= 1 && (j as u64) <= k {
                    Some(gt.first + j - 1)
                } else {
                    None
                }
            })
            .collect(),
        loads: vec![Vec::new(); nsteps],
        stores: vec![Vec::new(); nsteps],
    };
    for (i, b) in blocks.iter().enumerate() {
        if let Some(l) = b.load_step {
            steps.loads[l as usize].push(i);
        }
        if let Some(s) = b.store_step {
            steps.stores[s as usize].push(i);
        }
    }
    Ok((blocks, steps))
}

/// Steps a block occupies, as a bit mask over steps `0..=k+1`. Not `pipelined`: its own
/// span. Pipelined (sliced groups, and for allocation every group of two or more ops,
/// as the pipelined placer allocates them): step 0 also stands for step `k` of the previous slice and step
/// `k+1` for step 1 of the next, so they fold onto those; a block loaded at step 0 and
/// still held at step `k` (or produced at step 1 and stored at `k+1`) would meet its
/// next-slice copy, so its transfer is not overlapped ("exposed"). Every block loaded
/// at step 0 or stored at step `k+1` occupies every compute step: the transfer for the
/// neighbouring slice may run in any of them (the compiled code runs the next slice's input load
/// and the previous slice's output store under the longest op, and the compiled graph
/// gives every block of such a group its own address). Resident blocks occupy every
/// step.
pub fn occupancy(start: u64, end: Option<u64>, k: u64, pipelined: bool) -> (u128, bool) {
    let bits = step_mask;
    let Some(end) = end else {
        return (bits(0, k + 1), false);
    };
    if !pipelined {
        return (bits(start, end), false);
    }
    let exposed = (start == 0 && end >= k) || (end == k + 1 && start <= 1);
    if exposed {
        return (bits(1, k), true);
    }
    let mut m = bits(start.max(1), end.min(k));
    if start == 0 || end == k + 1 {
        m |= bits(1, k);
    }
    (m, false)
}

/// Steps `first..=last` as bits of a mask (none when `last < first`; steps past 127
/// are not represented).
pub fn step_mask(first: u64, last: u64) -> u128 {
    if last < first || first > 127 {
        return 0;
    }
    let upto = if last >= 127 {
        u128::MAX
    } else {
        (1u128 << (last + 1)) - 1
    };
    upto & !((1u128 << first) - 1)
}

/// The step a transfer at step `j` really runs in when pipelined (0 → k, k+1 → 1).
pub fn fold_step(j: u64, k: u64, sliced: bool) -> u64 {
    if !sliced {
        j
    } else if j == 0 {
        k
    } else if j == k + 1 {
        1
    } else {
        j
    }
}

#[cfg(test)]
mod tests {
    use super::{small_c_dims, wide_bias};
    use tpusim_graph::{GraphBuilder, OpKind, Shape4};
    use tpusim_layout::ElementType;

    /// One row of `tests/data/tpumlir_dw_bias.jsonl` (`bench/tpumlir_dw_bias.py`): the
    /// element type of a [1, C, 1, 1] weight TPU-MLIR's grouped program loads for a probe.
    #[derive(serde::Deserialize)]
    struct BiasLoad {
        net: String,
        chip: String,
        kind: String,
        channels: u64,
        dtype: String,
    }

    /// The probe's network as ours: a 3×3 conv (depthwise or dense) with a bias, or a
    /// ReLU and a batch-norm.
    fn probe(kind: &str, c: u64) -> tpusim_graph::Graph {
        let mut b = GraphBuilder::new("probe");
        let x = b.input("input", Shape4::new(1, c, 32, 32));
        let y = match kind {
            "bn" => {
                let r = b.act("relu1", x, tpusim_graph::Activation::Relu).unwrap();
                b.batchnorm("bn2", r).unwrap()
            }
            _ => {
                let groups = if kind == "dw" { c } else { 1 };
                b.conv("conv1", x, c, 3, 1, 1, groups, true).unwrap()
            }
        };
        b.output(y);
        b.finish().unwrap()
    }

    #[test]
    fn biases_are_held_in_the_type_tpu_mlirs_programs_load_them_in() {
        let rows = include_str!("../tests/data/tpumlir_dw_bias.jsonl");
        let mut checked = 0;
        for line in rows.lines() {
            let m: BiasLoad = serde_json::from_str(line).unwrap();
            let npu = crate::NpuChip::preset(&m.chip).unwrap();
            let t = npu.timing_at(ElementType::F16).unwrap();
            let g = probe(&m.kind, m.channels);
            let op = g.ops.last().unwrap();
            // the probe's bias: its last weight (a depthwise batch-norm's scale, of the
            // same shape, loads in the plan's type too)
            let wi = op.weights.len() - 1;
            let shape = g.tensors[op.weights[wi]].shape;
            let ours = wide_bias(
                &g,
                op,
                wi,
                shape,
                t.conv_ic_per_pass() as u64,
                npu.geometry.npu_num,
            );
            // (a dense batch-norm's weight is a [C, C] matrix there: its one load of a
            // [1, C] is the bias)
            assert_eq!(ours, m.dtype == "f32", "{} {}", m.net, m.chip);
            assert!(matches!(op.kind, OpKind::Conv(_) | OpKind::BatchNorm));
            checked += 1;
        }
        assert_eq!(checked, 18);
    }

    /// TPU-MLIR's `getNCHW` for a `GROUP_SMALL_C` group: its rows over the lanes when
    /// they divide evenly, else n · c rows of h.
    #[test]
    fn a_small_c_group_holds_its_rows_over_the_lanes() {
        // the zoo's U-Net output on bm1688 (32 lanes): 128 rows of 128, 4 a lane
        assert_eq!(small_c_dims(1, 1, 128, 128, 32), (4, 32, 128, 1));
        // 1×3×16×64 on bm1684x (64 lanes): 48 rows do not divide, so 3 of 16 × 64
        assert_eq!(small_c_dims(1, 3, 16, 64, 64), (3, 16, 64, 1));
        // 2×3×64×64: 384 rows, 6 a lane
        assert_eq!(small_c_dims(2, 3, 64, 64, 64), (6, 64, 64, 1));
    }
}

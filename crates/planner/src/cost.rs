//! The cost model: GDMA time and compute time (MACs or element operations / rate per
//! lane, with channels quantised to whole lane rows) per step, the max of the two per
//! step, summed over slices with pipeline fill and drain. A global op pays all of its
//! global-memory traffic and overlaps it with its compute.
//!
//! One GDMA transfer takes its bytes over the rate of its direction (loads and stores
//! differ), but never less than a fixed number of cycles per (n, c) plane it moves, more
//! for small planes (see [`dma_cycles`]). On bm1684x these figures were measured from
//! the NPU backend's own cycle profiles; they are why slicing a 7×7 map into 1-row slices does
//! not pay, and why a global conv costs more than its bytes over the load rate.

use crate::nd_global::Stages;
use crate::range::Range;
use crate::timing::Timing;
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

/// Direction of a GDMA transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Global → local memory.
    Load,
    /// Local → global memory.
    Store,
}

/// DMA cycles of one transfer of `bytes` bytes made of `planes` (n, c) planes:
/// `setup + max(bytes / rate, p · cycles_per_plane)` with the set-up cost, rate and
/// per-plane floor of the direction. `p = planes` for ordinary planes; for `small` ones
/// (see [`small_plane_units`]) more, as they move in rows.
pub fn dma_cycles(t: &Timing, dir: Dir, bytes: u64, planes: u64, small: bool) -> f64 {
    let rate = match dir {
        Dir::Load => t.used.gdma_bytes_per_cycle,
        Dir::Store => t.used.gdma_store_bytes_per_cycle,
    };
    dma_cycles_at(t, dir, bytes, planes, small, rate)
}

/// [`dma_cycles`] with the bytes at `rate` bytes a cycle.
fn dma_cycles_at(t: &Timing, dir: Dir, bytes: u64, planes: u64, small: bool, rate: f64) -> f64 {
    let units = if small {
        small_plane_units(t, bytes, planes)
    } else {
        planes as f64
    };
    dma_cycles_with_floor(t, dir, bytes, units * plane_floor(t, dir), rate)
}

/// The direction's per-plane floor of a layer group's transfers, cycles.
fn plane_floor(t: &Timing, dir: Dir) -> f64 {
    match dir {
        Dir::Load => t.used.gdma_load_cycles_per_plane,
        Dir::Store => t.used.gdma_store_cycles_per_plane,
    }
}

/// DMA cycles of a transfer of `bytes` at `rate` bytes a cycle that takes at least
/// `floor` cycles, after the direction's set-up.
pub(crate) fn dma_cycles_with_floor(
    t: &Timing,
    dir: Dir,
    bytes: u64,
    floor: f64,
    rate: f64,
) -> f64 {
    let setup = match dir {
        Dir::Load => t.used.gdma_load_setup_cycles,
        Dir::Store => t.used.gdma_store_setup_cycles,
    };
    setup + (bytes as f64 / rate).max(floor)
}

/// Cycles of a global fully connected layer's weight `s` ([K, N]) at `bits`: K
/// coefficient planes of N, each paying the plane floor, its bytes at the chip's global
/// tensor rate where it has one (bm1688: the zoo's VGG [1024, 128] f16 weight in 10,120
/// cycles, the set-up and 262,144 bytes at 26.7, and inception_b4's 25,600 bytes in
/// 1,250, both as profiled; small_cnn's 64×10 in 482, its planes' floor), else at the
/// load rate. MobileNetV2's [1280, 1000] (2.56 MB) moves in 40 slices of 32 rows, each
/// with its slice of the input, each a set-up: its layer's transfers take 120,365 cycles
/// in the profile, where this weight takes 96,290 (the slices are not modelled).
fn gemm_weight_cycles(t: &Timing, s: Shape4, bits: u32) -> f64 {
    match t.used.global_tensor_bytes_per_cycle {
        global if global > 0.0 => weight_load_cycles_at(t, s, bits, global),
        _ => weight_load_cycles(t, s, bits),
    }
}

/// Cycles a bias channel of a global conv's output-channel slice takes after the set-up:
/// bm1688's profiles of ResNet-18/34/50's and MobileNetV2's global convs load each
/// 32-channel f32 bias slice in 674 cycles, (674 − 290) / 32. A layer group's bias
/// vectors pay the chip's small-plane rule instead, 19.2 a channel on bm1688 (the same
/// [1, 32] f32 vector in 904 cycles in every group of the zoo's profiles), so the two are
/// not the same command.
const GLOBAL_BIAS_PLANE_CYCLES: f64 = 12.0;

/// A global conv run one slice of output channels at a time, as the backend runs it on
/// a chip with a global tensor rate (bm1688): NPU_NUM channels a slice, each slice
/// loading its part of the filter flat at that rate and its part of the bias, and
/// storing its part of the output; the input loads once. TPU-MLIR 1.30.2's profiles of
/// the global convs of ResNet-18/34/50 and MobileNetV2 on bm1688: 512 output channels
/// in 16 slices, 2,048 in 64; each 294,912-byte filter slice 11,349 cycles, the set-up
/// and the bytes at 26.7 a cycle exactly (the rate of its global matmuls; a layer
/// group's filter loads move 16.7), each 128-byte bias slice 674.
#[derive(Debug, Clone, Copy)]
struct OcSlices {
    /// Slices of output channels.
    count: u64,
}

impl OcSlices {
    /// The slices of `op` if it is a conv run global on a chip with a global tensor rate.
    fn of(graph: &Graph, op: &Op, npu_num: u64, t: &Timing) -> Option<OcSlices> {
        let conv = matches!(op.kind, OpKind::Conv(_) | OpKind::Deconv { .. });
        if !conv || t.used.global_tensor_bytes_per_cycle <= 0.0 {
            return None;
        }
        let y = graph.tensors.get(*op.outputs.first()?)?.shape;
        Some(OcSlices {
            count: y.c.div_ceil(npu_num.max(1)).max(1),
        })
    }

    /// Whether the conv runs as one piece: one slice of output channels whose input,
    /// output and filter take at most half a lane, as a global matmul's operands do
    /// before it is sliced (`nd_global::matmul`). Then one CONV command computes it, after
    /// its loads and before its store, nothing overlapping: resize4_fpn_192's last conv
    /// on bm1688 (24 → 4 channels, 3×3 on 96×96) loads in 17,592 cycles, computes in
    /// 82,944 and stores in 2,934, 103,470 in all (we said 84,872 with the exposed share).
    /// The zoo's other global convs on bm1688 run in 3 to 16 commands.
    fn runs_whole(self, graph: &Graph, op: &Op, bits: u32, geo: &tpusim_lmem::Chip) -> bool {
        if self.count != 1 {
            return false;
        }
        let lanes = geo.npu_num.max(1);
        let per_lane = |t: &tpusim_graph::Tensor, channels: u64| {
            let per_channel = t
                .shape
                .n
                .saturating_mul(t.shape.h)
                .saturating_mul(t.shape.w);
            bytes_of(
                channels.div_ceil(lanes).saturating_mul(per_channel),
                t.bits.unwrap_or(bits),
            )
        };
        let acts = op.inputs.iter().chain(&op.outputs);
        let act_bytes: u64 = acts
            .filter_map(|&i| graph.tensors.get(i))
            .map(|t| per_lane(t, t.shape.c))
            .fold(0, u64::saturating_add);
        let filter_bytes: u64 = op
            .weights
            .iter()
            .filter_map(|&i| graph.tensors.get(i))
            .map(|t| bytes_of(t.shape.elements().unwrap_or(u64::MAX), bits).div_ceil(lanes))
            .fold(0, u64::saturating_add);
        act_bytes.saturating_add(filter_bytes) <= geo.lane_bytes / 2
    }

    /// Cycles of moving the input (`kind` 0, once), a weight (`kind` 1; `bias` for a
    /// bias) or an output (`kind` 2) of shape `s` at `bits` over the slices.
    fn transfer_cycles(self, t: &Timing, kind: u8, bias: bool, s: Shape4, bits: u32) -> f64 {
        let count = self.count as f64;
        let part = |c: u64| Shape4 {
            c: c.div_ceil(self.count),
            ..s
        };
        match kind {
            1 if bias => {
                let planes = part(s.c).c as f64;
                count * (t.used.gdma_load_setup_cycles + planes * GLOBAL_BIAS_PLANE_CYCLES)
            }
            1 => {
                let bytes = bytes_of(s.elements().unwrap_or(u64::MAX), bits) as f64;
                count * t.used.gdma_load_setup_cycles + bytes / t.used.global_tensor_bytes_per_cycle
            }
            0 => global_tensor_cycles(t, Dir::Load, s, bits),
            _ => count * global_tensor_cycles(t, Dir::Store, part(s.c), bits),
        }
    }
}

/// DMA cycles of a global conv's activation `s` at `bits` on a chip with a global tensor
/// rate: the set-up and its bytes at that rate, as its filters move. bm1688's profiles:
/// ResNet-18's 512 × 7 × 7 f16 input loads in 2,171 cycles and each 3,136-byte output
/// slice stores in 287, the zoo's sigmoid_seg_160 loads 52,800 bytes in 2,270 and stores
/// 207,360 in 7,945, resize4_fpn_192 442,368 bytes in three loads of 17,592 cycles in all:
/// 26.7 bytes a cycle after the set-up, where a layer group's tensors move 16.7.
pub(crate) fn global_tensor_cycles(t: &Timing, dir: Dir, s: Shape4, bits: u32) -> f64 {
    let bytes = bytes_of(s.elements().unwrap_or(u64::MAX), bits);
    dma_cycles_with_floor(t, dir, bytes, 0.0, t.used.global_tensor_bytes_per_cycle)
}

/// DMA cycles of `bytes` moved as one flat byte range (no per-plane floor): the set-up
/// plus the bytes at the direction's rate.
pub fn flat_dma_cycles(t: &Timing, dir: Dir, bytes: u64) -> f64 {
    dma_cycles(t, dir, bytes, 0, false)
}

/// DMA cycles of `elements` in a flat range of `bytes` moved as a matrix (GDMA_MATRIX
/// commands) over `lanes` lanes, at the chip's matrix rates: a global cast's loads and
/// stores in every profile of the zoo, on both chips (bm1688: 40,960 bytes loaded in
/// 1,826 cycles and 81,920 stored in 3,242, the set-up and the bytes at 26.7 a cycle,
/// where its tensor rate, 16.7, says 2,748 and 5,086; bm1684x: 393,216 loaded in 6,779
/// cycles, 196,608 stored in 4,468, at 58 and 44), never under the chip's matrix floor
/// for each lane the elements spread over ([`matrix_planes`]; bm1684x: a [1, 10] cast
/// loads 20 bytes in 44 cycles, a [8, 100] one 1,600 in 271; `bench/tpumlir_matrix_floor.py`:
/// every one of 78 held-out transfers within 2.7 % on bm1684x, 68 within 0.6 % on bm1688).
pub fn matrix_dma_cycles(t: &Timing, dir: Dir, bytes: u64, elements: u64, lanes: u64) -> f64 {
    matrix_rows_dma_cycles(t, dir, bytes, matrix_planes(elements, lanes))
}

/// [`matrix_dma_cycles`] of a matrix of `rows` rows (one a lane).
pub(crate) fn matrix_rows_dma_cycles(t: &Timing, dir: Dir, bytes: u64, rows: u64) -> f64 {
    let u = &t.used;
    let (matrix, plain, floor) = match dir {
        Dir::Load => (
            u.gdma_matrix_bytes_per_cycle,
            u.gdma_bytes_per_cycle,
            u.gdma_matrix_load_cycles_per_plane,
        ),
        Dir::Store => (
            u.gdma_matrix_store_bytes_per_cycle,
            u.gdma_store_bytes_per_cycle,
            u.gdma_matrix_store_cycles_per_plane,
        ),
    };
    // a plan recorded before the matrix rates has them 0: the load and store rates
    let rate = if matrix > 0.0 { matrix } else { plain };
    dma_cycles_with_floor(t, dir, bytes, rows as f64 * floor, rate)
}

/// The lanes `elements` spread over as a matrix: ⌈elements / lanes⌉ a lane, on as many
/// lanes as that fills (80 elements over 64 lanes: 2 a lane on 40).
pub fn matrix_planes(elements: u64, lanes: u64) -> u64 {
    matrix_rows(elements, elements.div_ceil(lanes.max(1)))
}

/// The rows of a matrix of `elements` in rows of `per_row` elements, one a lane.
fn matrix_rows(elements: u64, per_row: u64) -> u64 {
    elements.div_ceil(per_row.max(1))
}

/// DMA cycles of `elements` cast as a global layer: its `from` bytes loaded and its `to`
/// bytes stored as matrices over `lanes` lanes ([`matrix_dma_cycles`]).
fn global_cast_dma_cycles(t: &Timing, elements: u64, from: u64, to: u64, lanes: u64) -> f64 {
    matrix_dma_cycles(t, Dir::Load, from, elements, lanes)
        + matrix_dma_cycles(t, Dir::Store, to, elements, lanes)
}

/// How many planes' floor a transfer of `planes` small planes and `bytes` bytes pays:
/// they move in ⌈bytes / row⌉ rows of at most the chip's `gdma_small_row_bytes` (one
/// row where it has none), each of ⌈planes / rows⌉ planes at the small-plane factor,
/// never less than the plain floor of every plane. bm1684x (the backend's profiles):
/// 1,280 f16 pool outputs (2,560 B, one row) store at 4× the floor, 1,280 f32 ones
/// (two rows) at 2×, 8 × 2,048 f32 ones (eight rows) at 1×.
pub fn small_plane_units(t: &Timing, bytes: u64, planes: u64) -> f64 {
    let rows = if t.used.gdma_small_row_bytes > 0.0 {
        ((bytes as f64 / t.used.gdma_small_row_bytes).ceil() as u64).max(1)
    } else {
        1
    };
    (planes.div_ceil(rows) as f64 * t.used.gdma_small_plane_factor).max(planes as f64)
}

/// Bits at which a group cut into `nsecs` N slices stores a global average pool's output
/// of shape `s` in a plan of `bits`-bit data. The backend runs the pool in f32 under
/// 16-bit types; a group holds the following flatten and its cast back to 16 bits where
/// the 16-bit stores of the output, slice by slice, cost no more than the f32 ones and
/// the cast run global after them (the cache export lists them so), so the group stores
/// 16 bits there and 32 elsewhere. Its 1×1 planes pay the small-plane floor by rows (see
/// [`small_plane_units`]), so the choice matters: MobileNetV2's 1,280 channels store in
/// 15,992 cycles at f32, 31,985 at f16; ResNet-50 batch 8's 8 × 2,048 cost the same
/// either way whole, but cut in 4 N slices its f16 stores take twice the f32 ones; on
/// bm1688 a [2, 128] slice stores in 2,627 cycles at f16 and 1,398 at f32 (the zoo's
/// preact_resnet_b3, cut [2, 1]: TPU-MLIR's own grouping leaves the flatten global
/// there), while mbv3_like's [1, 320] stores in 2,218 at f16 and about 1,733 at f32,
/// and the global cast it then needs takes 655: TPU-MLIR's own grouping keeps it (its
/// program 123 cycles faster than ours leaving it out).
pub fn pool_store_bits(t: &Timing, s: Shape4, bits: u32, nsecs: u64, lanes: u64) -> u32 {
    if bits >= 32 {
        return bits;
    }
    let plane = s.c.saturating_mul(s.h).saturating_mul(s.w);
    let n = s.n.max(1);
    let parts = nsecs.clamp(1, n);
    let store = |b: u32| {
        (0..parts)
            .filter_map(|i| crate::range::split(n, parts, i))
            .map(|[a, z]| {
                let planes = (z - a).saturating_mul(plane);
                act_plane_cycles(t, Dir::Store, bytes_of(planes, b), planes)
            })
            .sum::<f64>()
    };
    // the f32 store leaves the cast to a global layer: its load and store as matrices
    let elements = n.saturating_mul(plane);
    let (from, to) = (bytes_of(elements, 32), bytes_of(elements, bits));
    let cast = global_cast_dma_cycles(t, elements, from, to, lanes);
    if store(bits) <= store(32) + cast {
        bits
    } else {
        32
    }
}

/// Activation planes under this many bytes are small (measured on bm1684x: 4-byte
/// planes cost 4× the floor of 14-byte ones; the threshold lies between).
pub const SMALL_ACT_PLANE_BYTES: u64 = 8;

/// DMA cycles to load or store the (n-range, h-range) part of an activation of shape
/// `s` (one transfer: (n, c) planes of `h · w` elements, each split over `lanes` lanes,
/// a plane per lane for the floor). A group laid over all lanes (`OpPart::spread`) holds
/// TPU-MLIR's `GROUP_SMALL_C` layout (`timestep::small_c_dims`), and is cut along its
/// last dimension, so every slice moves all of its rows. The map's n · c · h rows of w
/// are the planes, each a column of one-element rows (the layout's W is 1), and they
/// move as small planes ([`small_plane_units`]), whether or not the lanes divide them.
/// `bench/tpumlir_small_c.py` measured 16 maps forced whole into such
/// groups, f32 in and out: on bm1684x 26 of their 32 transfers lie within 3.2 % of this
/// (1×1×28×28 in 530 and 699 cycles, 4 × 28 planes at the floors; 1×2×36×36 in 454, its
/// 72 planes in 3 rows at 4×), where the lane rows below, the rule before, were 47 % off
/// at the median; on bm1688 all 32 within 1.4 %. Cut, a slice moves a part of every
/// row, and its planes move in the rows of the whole (the zoo's decoder on bm1684x: a
/// cast and a tanh on 2×3×64², cut 2 × 4, load 1×3×16×64 in 909 cycles, its 192 rows
/// at the floor, as 192 small planes in 6 rows of the whole batch's 24,576 bytes; in
/// rows of its own 6,144 bytes they would take twice that). The zoo's U-Net
/// on bm1688: its output's cast and sigmoid, 1×1×128², held whole in 13,665 cycles, in 4
/// slices in about 16,600; the cut's short rows move slower still, 7.7 bytes a cycle for
/// 128-byte rows, which is not modelled: we say 12,859.
pub fn act_dma_cycles(
    t: &Timing,
    dir: Dir,
    s: Shape4,
    n: Range,
    h: Range,
    bits: u32,
    lanes: u64,
) -> f64 {
    let bytes = part_bytes(s, n, h, bits);
    if lanes <= 1 {
        let planes = (n[1] - n[0]).saturating_mul(s.c);
        return act_plane_cycles(t, dir, bytes, planes);
    }
    // GROUP_SMALL_C: every row of the map a small plane, whatever the slice, since
    // TPU-MLIR cuts such a group along W, its layout's h; the rows they move in are
    // those of the whole rows
    let planes = (n[1] - n[0]).saturating_mul(s.c).saturating_mul(s.h);
    let whole_rows = part_bytes(s, n, [0, s.h], bits);
    if t.used.gdma_act_row_bytes > 0.0 {
        return act_rows_cycles(t, dir, bytes, planes, whole_rows);
    }
    let units = small_plane_units(t, whole_rows, planes);
    let rate = match dir {
        Dir::Load => t.used.gdma_bytes_per_cycle,
        Dir::Store => t.used.gdma_store_bytes_per_cycle,
    };
    dma_cycles_with_floor(t, dir, bytes, units * plane_floor(t, dir), rate)
}

/// DMA cycles of an activation transfer of `planes` (n, c) planes and `bytes` bytes, a
/// plane of P = bytes / planes bytes a lane. On a chip with `gdma_act_row_bytes`, the
/// planes move in ⌈bytes / row⌉ rows and a row's planes each take the small-plane
/// factor times the longer of the floor and P at the rate, never less than the plain
/// transfer ([`dma_cycles`]): c / rows · factor · max(floor, P / rate). bm1684x's f32
/// probes (`bench/tpumlir_act_rows.py`, rows of 4,096 bytes, factor 4): 8 planes of
/// 7×7 store in 199 cycles, 4× the floor each; 32 of 7×7 (6,272 bytes, two rows) in
/// 399, where the plain floor said 200 (ceil_stem_57's pool output in the zoo); 16
/// planes of 10×10 (two rows) in 312, twice their bytes' time. From four rows on (16 KiB)
/// the plain figures are never less. Elsewhere planes under
/// [`SMALL_ACT_PLANE_BYTES`] move as small planes ([`small_plane_units`]), larger ones
/// plainly.
pub fn act_plane_cycles(t: &Timing, dir: Dir, bytes: u64, planes: u64) -> f64 {
    if planes == 0 {
        return 0.0;
    }
    if t.used.gdma_act_row_bytes > 0.0 {
        return act_rows_cycles(t, dir, bytes, planes, bytes);
    }
    let small = bytes / planes < SMALL_ACT_PLANE_BYTES;
    dma_cycles(t, dir, bytes, planes, small)
}

/// [`act_plane_cycles`]'s rule with the rows counted over `rows_over` bytes (a small-C
/// slice's planes move in the rows of the whole map's).
fn act_rows_cycles(t: &Timing, dir: Dir, bytes: u64, planes: u64, rows_over: u64) -> f64 {
    if planes == 0 {
        return 0.0;
    }
    let rate = match dir {
        Dir::Load => t.used.gdma_bytes_per_cycle,
        Dir::Store => t.used.gdma_store_bytes_per_cycle,
    };
    let floor = plane_floor(t, dir);
    let rows = (rows_over as f64 / t.used.gdma_act_row_bytes)
        .ceil()
        .max(1.0);
    let factor = t.used.gdma_small_plane_factor;
    let plane = factor * floor.max(bytes as f64 / planes as f64 / rate);
    let in_rows = planes as f64 / rows * plane;
    dma_cycles_with_floor(t, dir, bytes, (planes as f64 * floor).max(in_rows), rate)
}

/// DMA cycles to load a whole coefficient tensor (conv filter, bias, scale) of shape
/// `s`. Its output channels are spread over the lanes: N when N > 1 (filters), else C
/// (bias vectors), one plane each; chunks under EU_BYTES per channel are small planes.
/// On a chip whose small maps move in rows, coefficients move by that rule
/// ([`coeff_rows_cycles`]).
pub fn weight_load_cycles(t: &Timing, s: Shape4, bits: u32) -> f64 {
    if t.used.gdma_act_row_bytes > 0.0 {
        return coeff_rows_cycles(t, s, bytes_of(s.elements().unwrap_or(u64::MAX), bits));
    }
    weight_load_cycles_at(t, s, bits, t.used.gdma_bytes_per_cycle)
}

/// [`weight_load_cycles`] of a conv's filter `s`, which the backend lays out in whole
/// passes of input channels ([`coeff_laid_out_elements`]) where small maps move in rows.
pub fn filter_load_cycles(t: &Timing, s: Shape4, bits: u32) -> f64 {
    if t.used.gdma_act_row_bytes > 0.0 {
        return coeff_rows_cycles(t, s, bytes_of(coeff_laid_out_elements(t, s), bits));
    }
    weight_load_cycles(t, s, bits)
}

/// [`weight_load_cycles`] by the plane rule, the bytes at `rate` bytes a cycle.
fn weight_load_cycles_at(t: &Timing, s: Shape4, bits: u32, rate: f64) -> f64 {
    let bytes = bytes_of(s.elements().unwrap_or(u64::MAX), bits);
    let (planes, small) = coeff_planes(t, s, bytes);
    dma_cycles_at(t, Dir::Load, bytes, planes, small, rate)
}

/// Elements of a filter `s` ([oc, ic, kh, kw]) as the backend lays it out to load: each
/// output channel's input channels in whole passes of the chip's input channels
/// ([`Timing::conv_ic_per_pass`]), or for a "3ic" conv ([`crate::timestep::is_3ic_conv`])
/// its folded kernel in whole passes; a depthwise filter or a vector as it is. TPU-MLIR
/// 1.30.2's loads on bm1684x (the zoo's hswish_se_90 and bottleneck_b4): [72, 18, 1, 1]
/// as 1×72×1×32, [24, 72, 1, 1] as 1×24×1×96, [16, 3, 3, 3] as 1×16×1×32, [32, 3, 7, 7]
/// as 1×32×1×224 (7 × 32).
pub(crate) fn coeff_laid_out_elements(t: &Timing, s: Shape4) -> u64 {
    let pass = t.conv_ic_per_pass() as u64;
    let whole = |x: u64| x.div_ceil(pass.max(1)).saturating_mul(pass);
    let per_oc = if s.n <= 1 || s.c <= 1 {
        return s.elements().unwrap_or(u64::MAX);
    } else if s.h > 1 && s.c.saturating_mul(s.h) <= pass {
        let folded = s.c.saturating_mul(s.h).saturating_mul(s.w);
        if folded <= pass {
            pass
        } else {
            s.w.saturating_mul(pass)
        }
    } else {
        whole(s.c).saturating_mul(s.h).saturating_mul(s.w)
    };
    s.n.saturating_mul(per_oc)
}

/// Load cycles of a coefficient tensor `s` of `bytes`, one plane an output channel, on a
/// chip whose small maps move in rows (`gdma_act_row_bytes`: bm1684x): the rows rule of
/// an activation map ([`act_plane_cycles`]), each plane at the small-plane factor times
/// the longer of the floor and its bytes at the rate. TPU-MLIR 1.30.2's profiles
/// (`tests/data/tpumlir_gdma.csv`, the zoo's bottleneck_b4): a [64, 32] f16 1×1 filter,
/// 64 bytes a channel, loads in 1,213 cycles (its bytes alone 76, the plain floor 303),
/// [128, 64] in 606, [16, 192] in 227, [32, 288] at its bytes' 341.
pub(crate) fn coeff_rows_cycles(t: &Timing, s: Shape4, bytes: u64) -> f64 {
    act_plane_cycles(t, Dir::Load, bytes, coeff_planes(t, s, bytes).0)
}

/// The planes of a coefficient transfer of shape `s` and `bytes` bytes (one per output
/// channel: N when N > 1, else C), and whether they are small (under EU_BYTES each).
pub fn coeff_planes(t: &Timing, s: Shape4, bytes: u64) -> (u64, bool) {
    let channels = if s.n > 1 { s.n } else { s.c }.max(1);
    (channels, bytes / channels < t.small_coeff_bytes)
}

/// Cycles of a conv on few input channels as the backend lowers it with its "3ic" trick
/// ([`crate::timestep::is_3ic_conv`]), for `row_pos` output positions × lane rows
/// (`out_pos` positions) and `real_area` input positions: kernel rows (or, when
/// `ic·kh·kw` fits one pass of EU_NUM channels, the whole kernel) folded into the
/// channels, so the CONV command runs `kw` taps (or 1) over ⌈ic′ / P⌉ passes of the
/// chip's `P` input channels a pass (`conv_ic_bytes` at the plan's type: bm1684x F16
/// 32 = EU_NUM, bm1688 16 = 2 EU_NUM) at the MAC rate. Before it, the input is
/// broadcast over the lanes (`real_area · (ic + 1) / EU_NUM`, the input positions the
/// slice really reads: no padding rows) and laid out folded on the pooling unit: `kh·kw`
/// passes of the output positions' EU rows with the whole kernel folded, `kh` with its
/// rows, a stride taking 3× and 2× that (a fused ReLU adds its pass as on any conv).
/// The backend's profiles, F16 (`tests/compute.rs`; CONV + broadcast + fold, and the ReLU's AR
/// commands): ResNet's 7×7/2 conv1 on bm1684x 21,952 + 6,272 + 5,488 (+ 804); MobileNetV2's
/// 3×3/2 one, the whole kernel folded, 3,136 + 6,272 + 10,584 (+ 808); the zoo's U-Net's 3×3/1
/// on 128²: bm1684x 4,096 + 2,048 + 4,608 (+ 1,028), bm1688 (rows folded) 24,576 + 8,192 +
/// 6,144 (+ 4,100): these formulas exactly. bm1688's ResNet conv1 in 4 H slices: 180,320 +
/// 27,440 + 22,540 (ours 175,616 + 25,088 + 21,952; 131,712 for the CONV when its passes were
/// of EU_NUM channels). Beyond first layers (the zoo's U-Net's 16 → 16 and 16 → 32 on bm1684x,
/// 24,576 + 8,704 + 1,536 and 6,144 + 2,176 + 384; an inception's 8-channel 5×5, 2,880 + 324 +
/// 180): these formulas exactly. The plain MAC count gives 14,406 and 1,323 cycles on bm1684x
/// for the first two.
fn three_ic_cycles(
    p: &tpusim_graph::ConvParams,
    ic: u64,
    row_pos: f64,
    out_pos: f64,
    real_area: f64,
    t: &Timing,
) -> f64 {
    let eu = t.eltwise_per_cycle_per_lane.max(1.0);
    let (kh, kw) = (p.kernel[0] as f64, p.kernel[1] as f64);
    let ic = ic as f64;
    let strided = p.stride.iter().any(|&s| s > 1);
    let (folded, taps, layout) = if ic * kh * kw <= eu {
        (ic * kh * kw, 1.0, kh * kw * if strided { 3.0 } else { 1.0 })
    } else {
        (ic * kh, kw, kh * if strided { 2.0 } else { 1.0 })
    };
    let unit = t.conv_ic_per_pass();
    let conv = row_pos * taps * (folded / unit).ceil() * unit / t.used.macs_per_cycle_per_lane;
    conv + real_area * (ic + 1.0) / eu + out_pos * layout / eu
}

/// Cycles to compute `op` for output batches `n_len` and output rows `h_len` (whole op:
/// pass the full N and H). Channels map to lanes: an op on C channels takes
/// ⌈C / NPU_NUM⌉ lane rows. Dense convs take their input channels in whole passes of
/// EU_NUM, two-input element-wise ops run at EU_NUM / 2 per cycle, and a fused
/// activation adds a pass over the output at EU_NUM / 2 (a ReLU6 two): the backend's
/// codegen profiles and the compiler's own cycle estimates per op (its layer-group
/// debug log, the same but for two-input ops, estimated at EU_NUM / 4: `OpModel`) on
/// bm1684x F16 show each: a 1×1 conv 144 → 24 channels on 56² 3,920 cycles (144
/// channels as 160), an add of 24 channels on 56² 392 estimated, a ResNet-18 3×3 conv
/// 14,112 without ReLU and 14,308 with. Depthwise convs and
/// pools run on the pooling unit at EU_NUM taps of their type per cycle, the chip's
/// `pool_stride_factor` times that with a stride (bm1684x 3×: a 3×3/2 max pool on 64
/// channels of 56² outputs 2,646 cycles; bm1688 2×), an average pool in f32 at half
/// of EU_NUM with its corrections of windows over padding (`crate::pool_edges`: 80
/// pools of both chips' profiles within 1 %); a depthwise conv on at most one pass of
/// the chip's input channels (bm1684x 32, bm1688 16 at F16) runs on the CONV unit
/// instead, one such pass
/// (MobileNetV2's first, 32 channels on 112²: 28,224 cycles and 784 for the activation,
/// exactly its 29,008), and on fewer still, folded as a "3ic" conv
/// ([`crate::timestep::is_3ic_conv`]). Positions go in whole groups:
/// EU_NUM at a time on the execution units, the chip's `conv_position_group` at a time
/// in a dense conv (a 7×7 map: 64 and 52 positions on bm1684x). With these rules, of the
/// layer-group ops of the compiler's own bm1684x groupings 58 of MobileNetV2's 61, 29 of
/// ResNet-18's 31 and 70 of ResNet-50's 71 are within 2 % of its estimates; the rest
/// are the global pools, MobileNetV2's first conv (0.83×) and a 1×1 conv the compiler
/// merged with the linear 1×1 conv before it (our graph keeps both).
pub fn op_cycles(graph: &Graph, op: &Op, n_len: u64, h_len: u64, npu_num: u64, t: &Timing) -> f64 {
    let part = OpPart {
        n: n_len,
        h: h_len,
        in_h: None,
        spread: false,
    };
    op_cycles_as(graph, op, part, npu_num, t, OpModel::Profiled)
}

/// The part of an op computed at once: output batches `n` and rows `h`, and the rows of
/// its first input behind them where known (a slice's backward range, clipped to the
/// tensor: padding rows are not there); `None` = `h` times the input's rows per output
/// row, which is exact for the whole op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpPart {
    /// Output batches.
    pub n: u64,
    /// Output rows.
    pub h: u64,
    /// Input rows behind them, if known.
    pub in_h: Option<u64>,
    /// The op is in a group of element-wise ops alone (casts and activations), whose
    /// tensors the backend lays over all lanes whatever their channels (TPU-MLIR's
    /// group of a cast and a tanh on 2×3×64²: 6×64×64 over 64 lanes, 384 elements a
    /// lane, 1,422 cycles; the same tanh in a group with the convs on its 3 channels,
    /// 15,105 cycles a batch).
    pub spread: bool,
}

/// Which cycles of an op [`op_cycles_as`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpModel {
    /// What the op takes: the backend's codegen profile ([`op_cycles`]).
    Profiled,
    /// TPU-MLIR's own layer-group estimate, by which it moves transfers between time
    /// steps: the profiled cycles, but for two-input element-wise ops, which it
    /// estimates at twice their profile (4 cycles an EU row: MobileNetV2's 24-channel
    /// add on 56², 392 cycles estimated; `bench/tpumlir_cnn_op_sweep.py`'s 16 adds take
    /// 2 in their profiles).
    Estimate,
    /// The older, plainer model: MACs at the MAC rate (no 3ic lowering, no EU_NUM
    /// passes), element-wise, depthwise and pooling ops at EU_NUM per cycle, no
    /// activation pass.
    Plain,
}

/// [`op_cycles`] under `model`. A placer that reproduces a compiler's time-step moves
/// times them by TPU-MLIR's estimates on chips whose cycles match them, and by the
/// plain model elsewhere (fitted on bm1688 before its estimates were known: 294 of 340
/// logged lifetimes with 0.25 of our DMA cycles; 307 now with the estimates and its DMA
/// estimates).
pub fn op_cycles_as(
    graph: &Graph,
    op: &Op,
    part: OpPart,
    npu_num: u64,
    t: &Timing,
    model: OpModel,
) -> f64 {
    let plain = model == OpModel::Plain;
    let (n_len, h_len) = (part.n, part.h);
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
    let eu = t.eltwise_per_cycle_per_lane.max(1.0);
    // window ops on the pooling unit with a stride take longer (the chip's
    // `pool_stride_factor`: bm1684x 3×, bm1688 2×)
    let strided = |s: [u64; 2]| {
        if !plain && s.iter().any(|&x| x > 1) {
            t.pool_stride_factor
        } else {
            1.0
        }
    };
    let pos = (n_len * h_len * y.w) as f64;
    // each plane's positions in whole groups of `unit` (not in the plain model)
    let grouped = |unit: f64| {
        if plain {
            pos
        } else {
            let unit = unit.max(1.0);
            n_len as f64 * ((h_len * y.w) as f64 / unit).ceil() * unit
        }
    };
    // the execution units take a plane's positions EU_NUM at a time, the last group
    // whole: an add on 7×7 maps costs 64 positions on bm1684x (EU_NUM 32), 56 on bm1688
    // (EU_NUM 8), as the compiler estimates it (add, pool, depthwise and activation passes)
    let eu_pos = grouped(t.eltwise_per_cycle_per_lane);
    // how much wider than the plan's type the op computes (2 for f32 between casts)
    let widen = || graph_bits(graph, op).max(t.dtype_bits) as f64 / t.dtype_bits.max(1) as f64;
    // a lane's positions of an element-wise op in whole rows of `unit`: its channels'
    // planes, or all elements laid over every lane (`OpPart::spread`)
    let lane_positions = |unit: f64| {
        if part.spread && !plain {
            spread_positions(y, n_len, h_len, npu_num, unit)
        } else {
            rows(y.c) * grouped(unit)
        }
    };
    // input channels go through the MAC array in whole passes (the chip's
    // `conv_ic_bytes`)
    let unit = t.conv_ic_per_pass();
    let passes = |c: u64| {
        if plain {
            c as f64
        } else {
            (c as f64 / unit).ceil() * unit
        }
    };
    // a dense conv of `oc` output and `ic` input channels with `taps` taps: each plane's
    // positions in whole groups (the chip's `conv_position_group`: bm1684x 4, a 7×7 map
    // as 52 positions)
    let dense = |oc: u64, ic: u64, taps: f64| {
        rows(oc) * grouped(t.conv_position_group) * passes(ic) * taps
            / t.used.macs_per_cycle_per_lane
    };
    let base = match &op.kind {
        OpKind::Conv(p) if !plain && crate::timestep::is_3ic_conv(&op.kind, x.c, t.ic_parallel) => {
            // input area (all channels) behind the output rows computed: the rows a
            // stride covers (the fold), and the real rows of the slice (the broadcast)
            let area = (n_len * h_len) as f64 * (x.h * x.w) as f64 / y.h.max(1) as f64;
            let real = part.in_h.map_or(area, |r| (n_len * r * x.w) as f64);
            three_ic_cycles(p, x.c, rows(y.c) * pos, pos, real, t)
        }
        OpKind::Conv(p) => {
            let icg = (x.c / p.groups.max(1)).max(1);
            let taps = (p.kernel[0] * p.kernel[1]) as f64;
            if icg == 1 && p.groups > 1 {
                if !plain && (y.c as f64) <= unit {
                    // few channels: on the CONV unit, one pass of the chip's input
                    // channels (bm1688 16 at F16, twice EU_NUM: `bench/
                    // tpumlir_cnn_op_sweep.py`, 12 and 16 channels 3×3 on 32², 4,608
                    // cycles profiled, on the pooling unit 1,152)
                    rows(y.c) * pos * taps * unit / t.used.macs_per_cycle_per_lane
                } else {
                    rows(y.c) * eu_pos * taps / eu * strided(p.stride)
                }
            } else if plain || p.groups <= 1 || (x.c as f64) <= unit {
                // dense, or grouped on at most one pass of input channels, which the
                // backend runs dense (its filter padded with zeros)
                dense(y.c, icg, taps)
            } else {
                let ocg = (y.c / p.groups).max(1);
                let convs = p.groups as f64 * dense(ocg, icg, taps);
                let in_rows = part.in_h.unwrap_or(h_len * x.h / y.h.max(1));
                let input = crate::lane_copy::Plane {
                    npu_num,
                    batches: n_len,
                    positions: in_rows * x.w,
                    eu,
                };
                convs + crate::lane_copy::grouped_conv_copies(p.groups, icg, input)
            }
        }
        OpKind::Deconv { params: p, .. } if plain => {
            let icg = (x.c / p.groups.max(1)).max(1);
            let taps =
                (p.kernel[0] * p.kernel[1]) as f64 / (p.stride[0] * p.stride[1]).max(1) as f64;
            rows(y.c) * pos * icg as f64 * taps.max(1.0) / t.used.macs_per_cycle_per_lane
        }
        OpKind::Deconv { params: p, .. } => {
            // a conv over the input with zeros between its pixels: every tap at every
            // output position, the zeros included, input channels in whole passes
            // (TPU-MLIR's profiles of the zoo's decoder: 2×2/2 on 96, 48 and 24
            // channels, 768, 2,048 and 4,096 cycles a batch on bm1684x)
            let icg = (x.c / p.groups.max(1)).max(1);
            dense(y.c, icg, (p.kernel[0] * p.kernel[1]) as f64)
        }
        OpKind::MaxPool(p) | OpKind::AvgPool(p) => {
            // at the rate of the pool's type, each plane's positions in whole EU rows of
            // it: an average pool under a 16-bit type runs in f32 between casts, half of
            // EU_NUM a cycle (`bench/tpumlir_cnn_op_sweep.py --set pools`: 2×2/2 on 16
            // channels of 56² in f32, 588 cycles on bm1684x, 784 positions in EU rows
            // of 16; the same max pool in f16, 300, 800 positions in rows of 32)
            let eu_w = if plain { eu } else { eu / widen() };
            let taps = (p.kernel[0] * p.kernel[1]) as f64;
            let window = rows(y.c) * grouped(eu_w) * taps / eu_w * strided(p.stride);
            let edges = match &op.kind {
                OpKind::AvgPool(_) if !plain => crate::pool_edges::avg_pool_edge_cycles(
                    p,
                    crate::pool_edges::EdgePart {
                        lane_rows: rows(y.c),
                        batches: n_len,
                        rows: h_len,
                        out_h: y.h,
                        out_w: y.w,
                        in_hw: [x.h, x.w],
                        eu: eu_w,
                    },
                ),
                _ => 0.0,
            };
            window + edges
        }
        OpKind::GlobalAvgPool | OpKind::GlobalMaxPool => {
            rows(x.c) * (n_len * x.h * x.w) as f64 / t.eltwise_per_cycle_per_lane
        }
        // a batch-norm no conv absorbed, lowered to a dense 1×1 conv
        // (`timestep::bn_is_dense`): its channels in whole passes through the MAC array
        // (the zoo's U-Net, 16 channels on 128²: 4,096 cycles on bm1684x, 8,192 on
        // bm1688); a depthwise one is an EU pass, as below
        OpKind::BatchNorm if !plain && crate::timestep::bn_is_dense(x.c, npu_num) => {
            dense(y.c, x.c, 1.0)
        }
        // nearest upsampling is a scatter-gather command: one output element a lane per
        // cycle (TPU-MLIR's profiles of the zoo's FPN, U-Net and YOLO, bm1684x and
        // bm1688: SG commands of exactly N·⌈C/lanes⌉·H·W cycles, 1,024 to 16,384)
        OpKind::Upsample { .. } if !plain => rows(y.c) * pos,
        // two-input element-wise ops at 2 cycles an EU row (`bench/tpumlir_cnn_op_sweep.py`:
        // 16 adds of 8–64 channels on 25² and 50², both chips, exactly; an add of 8
        // channels on 25² 40 cycles on bm1684x, ⌈625 / 32⌉ rows), 4 in TPU-MLIR's estimate
        OpKind::Add | OpKind::Mul if !plain => {
            let per_row = if model == OpModel::Estimate { 4.0 } else { 2.0 };
            rows(y.c) * eu_pos * per_row / t.eltwise_per_cycle_per_lane
        }
        // at the rate of their type: an op run in f32 under a 16-bit type (between casts)
        // at half of EU_NUM per cycle
        OpKind::BatchNorm
        | OpKind::Act(_)
        | OpKind::Add
        | OpKind::Mul
        | OpKind::Concat
        | OpKind::Upsample { .. } => {
            if matches!(op.kind, OpKind::Concat) && !plain && !part.spread {
                crate::lane_copy::concat_cycles(
                    graph,
                    op,
                    crate::lane_copy::Plane {
                        npu_num,
                        batches: n_len,
                        positions: h_len * y.w,
                        eu,
                    },
                )
            } else {
                let passes = match &op.kind {
                    OpKind::Act(a) if !plain => act_passes(*a),
                    _ => 1.0,
                };
                // a plane's positions in whole EU rows of the op's own type
                let widen = widen();
                lane_positions(t.eltwise_per_cycle_per_lane / widen) * passes * widen
                    / t.eltwise_per_cycle_per_lane
            }
        }
        OpKind::Cast => {
            // at the rate of the wider of the two types (EU_NUM halves per doubling)
            lane_positions(t.eltwise_per_cycle_per_lane) * widen() / t.eltwise_per_cycle_per_lane
        }
        OpKind::Gemm => {
            let k = x.c.saturating_mul(x.h).saturating_mul(x.w);
            let n = y.c.saturating_mul(y.h).saturating_mul(y.w);
            // where its rows run across the lanes, a transformer's matmul rule (TPU-MLIR's
            // MM2: the zoo's VGG at batch 8 on bm1684x, its [8, 1024]·[1024, 128] 1,024
            // cycles, where its MACs take 128); vector products run alone, as global
            // layers (`global_cost`)
            let lane_rows = crate::nd_global::matmul::runs_lane_rows(n_len, n, t);
            if !plain && t.matmul_lane_rows_from.is_some() && lane_rows {
                let lanes = npu_num.max(1) as f64;
                crate::nd_global::matmul_compute([1, n_len, k, n], lanes, t)
            } else {
                rows(n) * n_len.saturating_mul(k) as f64 / t.used.macs_per_cycle_per_lane
            }
        }
        OpKind::Flatten | OpKind::Reshape => 0.0,
    };
    // a fused activation is one more pass over the output at half of EU_NUM per cycle
    // (the backend's profiles, bm1684x F16: a ResNet-18 3×3 conv with ReLU 14,308 cycles,
    // the same conv without 14,112, i.e. + 3,136 positions / 16)
    // (a ReLU6 is two passes, a max and a min: `bench/tpumlir_cnn_op_sweep.py --set
    // fused`, every conv of both chips)
    let act = match op.fused_act {
        Some(a) if !plain => {
            let passes = if a == tpusim_graph::Activation::Relu6 {
                2.0
            } else {
                1.0
            };
            rows(y.c) * eu_pos * 2.0 * passes / t.eltwise_per_cycle_per_lane
        }
        _ => 0.0,
    };
    base + act
}

/// Positions a lane of `n_len` batches and `h_len` rows of an `s`-shaped output laid over
/// all `npu_num` lanes, in whole EU rows of `unit` positions (see [`OpPart::spread`]).
fn spread_positions(s: Shape4, n_len: u64, h_len: u64, npu_num: u64, unit: f64) -> f64 {
    let elements = n_len
        .saturating_mul(s.c)
        .saturating_mul(h_len)
        .saturating_mul(s.w);
    let eu = unit.max(1.0);
    ((elements.div_ceil(npu_num.max(1)) as f64) / eu).ceil() * eu
}

/// EU passes over its output an activation takes, as the backend computes it (its
/// compiled profiles of the zoo's tuned networks, `bench/tpumlir_zoo.py`, bm1684x and
/// bm1688 alike): a sigmoid or tanh, run in f32, 56 to 58 cycles an EU row of f32
/// elements (bm1684x 3.5–3.9 cycles an element a lane on 16-element rows, bm1688
/// 14.0–14.3 on 4-element rows: U-Net's, SE gates', a decoder's and odd-channel nets'
/// own groups); hard-sigmoid and hard-swish 5 (a MobileNetV3-like net, every one); a
/// leaky ReLU 3 (a decoder's three, 264 cycles over 84 rows). A SiLU (`x · sigmoid(x)`,
/// which TPU-MLIR fuses) as a sigmoid, as the transformer path times it
/// ([`crate::nd_global::function_ops`]). Others one pass.
fn act_passes(a: tpusim_graph::Activation) -> f64 {
    use tpusim_graph::Activation as A;
    match a {
        A::Sigmoid | A::Tanh | A::Silu => 57.0,
        A::HardSigmoid | A::HardSwish => 5.0,
        A::LeakyRelu => 3.0,
        _ => 1.0,
    }
}

/// Widest element the model fixes among `op`'s inputs and outputs (0 if none).
fn graph_bits(graph: &Graph, op: &Op) -> u32 {
    op.inputs
        .iter()
        .chain(&op.outputs)
        .filter_map(|&i| graph.tensors.get(i).and_then(|x| x.bits))
        .max()
        .unwrap_or(0)
}

/// True for ops that are only views of global memory (no data moves, no compute).
pub fn is_view(op: &Op) -> bool {
    matches!(op.kind, OpKind::Flatten | OpKind::Reshape)
}

/// Global-memory bytes and cycles of `op` run alone: every input and weight loaded,
/// every output stored (each tensor one transfer, the transfers one after another),
/// DMA overlapped with compute but for the chip's `global_exposed_fraction` of the
/// smaller of the two (the backend's global ResNet-50 batch-8 conv on bm1684x: 113,344
/// cycles of compute, 105,725 of DMA, 184,361 in all). Views cost nothing. Matrix and
/// element-wise ops move their tensors as flat byte ranges (the backend's global MatMul and
/// Add do, and its global casts: a network output's 8×100 cast to f32 on bm1684x loads
/// 1,600 bytes in 271 cycles and stores 3,200 in 358, as matrices, at the chip's matrix
/// rates, [`matrix_dma_cycles`]), so only the byte rates apply to them; convolutions and
/// pools pay the per-plane floors too. Biases move at 32 bits under narrower types. A
/// fully connected layer runs as the backend's global matmul kernel (`nd_global::matmul`), and a conv on a chip with a global
/// tensor rate in slices of output channels ([`OcSlices`]). On chip geometry `geo`.
/// The op's compute takes `compute` cycles where given (a caller's compute model), else
/// [`op_cycles`]. A nearest upsample runs as its backend's load, copy passes and store
/// ([`crate::global_upsample`]).
pub fn global_cost(
    graph: &Graph,
    op: &Op,
    bits: u32,
    geo: &tpusim_lmem::Chip,
    t: &Timing,
    compute: Option<f64>,
) -> GlobalOpCost {
    if is_view(op) {
        return GlobalOpCost::default();
    }
    let npu_num = geo.npu_num;
    if let Some(c) =
        crate::global_upsample::global_upsample_cost(graph, op, bits, npu_num, t, compute)
    {
        return c;
    }
    let mut bytes = 0u64;
    let mut dma = 0f64;
    // each kind's (input, weight, output) bytes and cycles, for a fully connected layer
    let mut part_bytes = [0u64; 3];
    let mut part_cycles = [0f64; 3];
    let mut bias_bytes = 0u64;
    let flat = matches!(
        op.kind,
        OpKind::Gemm
            | OpKind::Add
            | OpKind::Mul
            | OpKind::Act(_)
            | OpKind::BatchNorm
            | OpKind::Cast
    );
    // a global average pool in a narrower type runs in f32: the backend casts its input
    // with a global cast first, at the matrix rates as any global cast (ResNet-18 on
    // bm1684x: 3,170 cycles, 3,146 so, then the pool 15,388 reading the f32 map; 15,231
    // in all without this)
    let f32_pool = matches!(op.kind, OpKind::GlobalAvgPool) && bits < 32;
    let mut cast = 0f64;
    if f32_pool {
        // (an input in f32 already, an f32 op's output, is read as it is)
        let narrow = |x: &&tpusim_graph::Tensor| x.bits.unwrap_or(bits) < 32;
        for x in op
            .inputs
            .iter()
            .filter_map(|&i| graph.tensors.get(i))
            .filter(narrow)
        {
            let e = x.shape.elements().unwrap_or(u64::MAX);
            let (from, to) = (bytes_of(e, x.bits.unwrap_or(bits)), bytes_of(e, 32));
            bytes = bytes.saturating_add(from).saturating_add(to);
            cast += global_cast_dma_cycles(t, e, from, to, npu_num);
        }
    }
    let oc_slices = OcSlices::of(graph, op, npu_num, t);
    let mut matrix_transfers = Vec::new();
    // casts, activations and two-input element-wise ops move as matrices (TPU-MLIR's
    // GDMA_MATRIX commands in every profile of the zoo's global casts and sigmoids, and
    // of resnet34_bn's global adds)
    let matrix = matches!(
        op.kind,
        OpKind::Cast | OpKind::Act(_) | OpKind::Add | OpKind::Mul
    );
    // an upsample's index table is read in layer groups (`crate::upsample`)
    let upsample = matches!(op.kind, OpKind::Upsample { .. });
    let ic_per_pass = t.conv_ic_per_pass() as u64;
    for (list, kind) in [(&op.inputs, 0), (&op.weights, 1), (&op.outputs, 2)] {
        if kind == 1 && upsample {
            continue;
        }
        for (wi, &i) in list.iter().enumerate() {
            let Some(x) = graph.tensors.get(i) else {
                continue;
            };
            let s = x.shape;
            // biases move at 32 bits under a narrower type, as the backend keeps them
            // (a depthwise op's in the plan's type: `timestep::wide_bias`)
            let bias = kind == 1
                && crate::timestep::wide_bias(graph, op, wi, s, ic_per_pass, npu_num)
                && !flat;
            let bits = if bias || (f32_pool && kind != 1) {
                bits.max(32)
            } else {
                x.bits.unwrap_or(bits)
            };
            let elements = s.elements().unwrap_or(u64::MAX);
            let b = bytes_of(elements, bits);
            bytes = bytes.saturating_add(b);
            let (n, h) = ([0, s.n], [0, s.h]);
            // a fully connected layer's weight [K, N] loads as K coefficient planes of
            // N, each paying the plane floor (small_cnn's 64×10 f16 weight: 1,212
            // cycles on bm1684x, 482 on bm1688, where its bytes alone take 24)
            let gemm_weight =
                kind == 1 && matches!(op.kind, OpKind::Gemm) && !crate::timestep::is_bias(wi, s);
            // on a chip whose small maps move in rows (bm1684x), a fully connected
            // layer's input and output move as one plane a row of the matrix
            // (`bench/tpumlir_global_fc.py`'s MM2 probes: [6, 512] f16 loads in 227
            // cycles, two rows of 4 KiB at a quarter of the rate; flat, 114)
            let gemm_rows =
                kind != 1 && matches!(op.kind, OpKind::Gemm) && t.used.gdma_act_row_bytes > 0.0;
            let cycles = match (kind, oc_slices) {
                (_, Some(slices)) => slices.transfer_cycles(t, kind, bias, s, bits),
                (1, _) if gemm_weight => gemm_weight_cycles(t, s, bits),
                (0, _) if gemm_rows => act_plane_cycles(t, Dir::Load, b, s.n),
                (2, _) if gemm_rows => act_plane_cycles(t, Dir::Store, b, s.n),
                (0, _) if matrix => matrix_dma_cycles(t, Dir::Load, b, elements, npu_num),
                (2, _) if matrix => matrix_dma_cycles(t, Dir::Store, b, elements, npu_num),
                (0 | 1, _) if flat => flat_dma_cycles(t, Dir::Load, b),
                _ if flat => flat_dma_cycles(t, Dir::Store, b),
                (0, _) => act_dma_cycles(t, Dir::Load, s, n, h, bits, 1),
                (1, _) if wi == 0 && matches!(op.kind, OpKind::Conv(_)) => {
                    filter_load_cycles(t, s, bits)
                }
                (1, _) => weight_load_cycles(t, s, bits),
                _ => act_dma_cycles(t, Dir::Store, s, n, h, bits, 1),
            };
            dma += cycles;
            if matrix && kind != 1 {
                let dir = if kind == 0 { Dir::Load } else { Dir::Store };
                matrix_transfers.push(MatrixTransfer {
                    dir,
                    bits,
                    elements,
                });
            }
            if kind == 1 && crate::timestep::is_bias(wi, s) {
                bias_bytes = bias_bytes.saturating_add(b);
            }
            let part = usize::from(kind.min(2));
            part_bytes[part] = part_bytes[part].saturating_add(b);
            part_cycles[part] += cycles;
        }
    }
    let y = op
        .outputs
        .first()
        .and_then(|&o| graph.tensors.get(o))
        .map(|t| t.shape);
    let products = y.and_then(|y| gemm_vector_products(graph, op, y, bits, bias_bytes, t));
    let comp = match products {
        Some(p) => p.compute_cycles(t),
        None => compute.unwrap_or_else(|| {
            y.map(|s| global_compute(graph, op, s, npu_num, t))
                .unwrap_or(0.0)
        }),
    };
    let cycles = match (&op.kind, y) {
        // a fully connected layer runs as the backend's global matmul kernel: in one
        // piece, its loads, MACs and store one after another, where its operands fit in
        // half the local memory (the zoo's VGG at batch 8 on bm1684x: 5,160 cycles of
        // loads, 1,040 of MM2, 199 of store, 6,398 in all), else in slices
        // (`nd_global::matmul`); few rows as vector products
        _ if products.is_some() => products.map_or(0.0, |p| p.cycles(t, npu_num)),
        (OpKind::Gemm, Some(y)) => {
            let traffic = crate::nd_global::matmul::MatmulTraffic {
                input_bytes: part_bytes[0],
                input_cycles: part_cycles[0],
                weight_bytes: part_bytes[1],
                weight_cycles: part_cycles[1],
                output_bytes: part_bytes[2],
                output_cycles: part_cycles[2],
            };
            let lmem = crate::nd_global::LocalMemory::of(geo);
            crate::nd_global::matmul::cycles(&traffic, y.n, comp, &lmem)
        }
        (_, Some(y)) if matrix => {
            let chunks = Chunks {
                elements: y.elements().unwrap_or(u64::MAX),
                transfers: &matrix_transfers,
                compute: comp,
                lanes: npu_num,
            };
            chunks.pipelined_cycles(t)
        }
        _ if oc_slices.is_some_and(|o| o.runs_whole(graph, op, bits, geo)) => comp + dma,
        _ => comp.max(dma) + t.used.global_exposed_fraction * comp.min(dma),
    };
    // a sliced matmul reads its input again for each chunk of its weight: transfers too
    let dma = match products {
        Some(p) => p.dma_cycles(t, npu_num),
        None => dma.max(cycles - comp),
    };
    // the pool's f32 output is cast back for its readers by a global cast of its own,
    // counted with the transfers as the input's cast is
    let cast_back = crate::pool_cast::pool_output_cast_cycles(graph, op, bits, geo, t);
    GlobalOpCost {
        bytes,
        cycles: ((cast + cycles).ceil() as u64).saturating_add(cast_back),
        compute_cycles: comp.round() as u64,
        dma_cycles: ((cast + dma).round() as u64).saturating_add(cast_back),
    }
}

/// Op `op`, a fully connected layer writing `y`, as TPU-MLIR's vector products, where
/// the chip times them and its rows do not run across the lanes
/// ([`crate::nd_global::matmul::runs_lane_rows`]); its bias `bias_bytes`.
fn gemm_vector_products(
    graph: &Graph,
    op: &Op,
    y: Shape4,
    bits: u32,
    bias_bytes: u64,
    t: &Timing,
) -> Option<crate::nd_global::matmul::VectorProducts> {
    t.matmul_vector_step_bytes?;
    if !matches!(op.kind, OpKind::Gemm) {
        return None;
    }
    let tensor = |list: &[usize]| list.first().and_then(|&i| graph.tensors.get(i));
    let (x, w, out) = (
        tensor(&op.inputs)?,
        tensor(&op.weights)?,
        tensor(&op.outputs)?,
    );
    let n = y.c.saturating_mul(y.h).saturating_mul(y.w);
    let k = x
        .shape
        .c
        .saturating_mul(x.shape.h)
        .saturating_mul(x.shape.w);
    if crate::nd_global::matmul::runs_lane_rows(y.n, n, t) {
        return None;
    }
    let bits_of = |x: &tpusim_graph::Tensor| x.bits.unwrap_or(bits);
    Some(crate::nd_global::vector_products(
        [1, y.n, k, n],
        [bits_of(x), bits_of(w), bits_of(out)],
        bias_bytes,
    ))
}

/// The most elements a global element-wise op (a cast, an activation, an add or a mul)
/// moves in one chunk. TPU-MLIR 1.30.2's profiles: unet_deep_b2's global sigmoid of
/// 18,432 f32 elements in chunks of 16,384 and 2,048, resnet34_bn's adds of 25,088 in
/// 16,384 and 8,192 (bm1688).
const CHUNK_ELEMENTS: u64 = 16_384;

/// One operand's transfer of a global element-wise op, moved as a matrix.
struct MatrixTransfer {
    dir: Dir,
    bits: u32,
    elements: u64,
}

/// A global element-wise op of `elements` output elements run in chunks of
/// [`CHUNK_ELEMENTS`]: each chunk's loads, its share of the `compute` and its stores,
/// each transfer a matrix over `lanes` lanes ([`matrix_dma_cycles`]).
struct Chunks<'a> {
    elements: u64,
    transfers: &'a [MatrixTransfer],
    compute: f64,
    lanes: u64,
}

impl Chunks<'_> {
    /// The chunks double-buffered ([`crate::nd_global::pipelined`]): the next chunk loads
    /// and the one before stores while this one computes, one engine moving the data. One
    /// chunk loads, computes and stores one after another (the probes' global sigmoids and
    /// tanhs of up to 3,072 elements, both chips: bm1688 1×2×36×36 2,416 cycles, our 1,239
    /// of transfers and 1,197 of compute; bm1684x 1×1×28×28 674, 266 + 58 + 350); two
    /// overlap (unet_deep_b2's on bm1684x: 3,701 cycles, 1,129 + 897 + 1,489 + 186 as its
    /// chunks' stages in the profile). Past [`crate::nd_global::double_buffered`]'s limit
    /// of slices, as that many equal ones.
    fn pipelined_cycles(&self, t: &Timing) -> f64 {
        let count = self.elements.div_ceil(CHUNK_ELEMENTS).max(1);
        let last = self.elements - (count - 1).saturating_mul(CHUNK_ELEMENTS);
        let full = self.stages(t, CHUNK_ELEMENTS.min(self.elements));
        let tail = self.stages(t, last);
        if count > crate::nd_global::MAX_PIPELINE_SLICES {
            let n = count as f64;
            return crate::nd_global::double_buffered(
                full.load * n,
                full.compute * n,
                full.store * n,
                count,
            );
        }
        let fulls = std::iter::repeat(full).take((count - 1) as usize);
        crate::nd_global::pipelined(fulls.chain(std::iter::once(tail)))
    }

    /// The load, compute and store cycles of a chunk of `elements`, its matrices in rows
    /// of a full chunk's elements a lane (unet_deep_b2's last 2,048 elements load in 141
    /// cycles, 8 rows of 256, where alone they would spread over 64 lanes, 282).
    fn stages(&self, t: &Timing, elements: u64) -> Stages {
        let share = elements as f64 / self.elements.max(1) as f64;
        let full = CHUNK_ELEMENTS.min(self.elements) as f64 / self.elements.max(1) as f64;
        let moved = |dir: Dir| -> f64 {
            self.transfers
                .iter()
                .filter(|x| x.dir == dir)
                .map(|x| {
                    let e = ((x.elements as f64) * share).ceil() as u64;
                    let chunk = ((x.elements as f64) * full).ceil() as u64;
                    let rows = matrix_rows(e, chunk.div_ceil(self.lanes.max(1)));
                    matrix_rows_dma_cycles(t, dir, bytes_of(e, x.bits), rows)
                })
                .sum()
        };
        Stages {
            load: moved(Dir::Load),
            compute: self.compute * share,
            store: moved(Dir::Store),
        }
    }
}

/// Compute cycles of `op` (output shape `y`) run alone. A cast or an activation runs
/// over its elements laid on every lane as its matrices hold them, whatever its
/// channels ([`OpPart::spread`]): TPU-MLIR 1.30.2's global sigmoid of a 1×1×28×28 f32
/// map computes from cycle 266 to 323 of its 674 on bm1684x, between its load and its
/// store, where its one channel on one lane would take 2,793.
pub(crate) fn global_compute(graph: &Graph, op: &Op, y: Shape4, npu_num: u64, t: &Timing) -> f64 {
    let part = OpPart {
        n: y.n,
        h: y.h,
        in_h: None,
        spread: matches!(op.kind, OpKind::Act(_) | OpKind::Cast),
    };
    op_cycles_as(graph, op, part, npu_num, t, OpModel::Profiled)
}

/// What [`global_cost`] finds for an op run alone from global memory.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GlobalOpCost {
    /// Bytes moved: inputs and weights loaded, outputs stored.
    pub bytes: u64,
    /// Cycles: max(compute, DMA) plus the exposed fraction of the smaller, after any
    /// input cast, and a global average pool's cast back to the network's type
    /// ([`crate::pool_cast`]).
    pub cycles: u64,
    /// Compute cycles.
    pub compute_cycles: u64,
    /// DMA cycles (the cast's included).
    pub dma_cycles: u64,
}

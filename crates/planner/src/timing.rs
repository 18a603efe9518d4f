//! The NPU's timing, in one place: the figures a chip file gives ([`ChipTiming`], per
//! second or in cycles, each optional), the rates the planner times a plan with at its
//! element type ([`Timing`], per cycle), and the part of those a plan records
//! ([`TimingUsed`], which a plan file reads back). A new figure is a field of
//! [`ChipTiming`] (with its check in [`ChipTiming::validate`]), the rate it becomes in
//! [`Timing`] or [`TimingUsed`] (the latter when a plan must carry it), and its line in
//! [`Timing::for_figures`]; the chip file's geometry stays in `tpusim_lmem::Chip`.

use crate::error::Result;
use crate::nd_plan::local_softmax::LocalSoftmaxFigures;
use crate::norm_kernel::{NormFigures, NormKernels};
use serde::{Deserialize, Serialize};
use tpusim_layout::ElementType;
use tpusim_lmem::{Chip, LmemError};

/// The timing figures of an NPU chip file (`data/lmem/*.toml` beside the geometry),
/// each optional. Without `clock_hz`, `gdma_bytes_per_s` and `macs_per_cycle_per_lane`
/// the chip is timed by a structural fallback and the others do not apply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChipTiming {
    /// The NPU's clock, Hz (`None` = unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_hz: Option<f64>,
    /// DMA rate between global memory and local memory, bytes per second
    /// (for the planner's load/store timing; `None` = unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_bytes_per_s: Option<f64>,
    /// DMA rate from local to global memory (stores), bytes per second
    /// (`None` = the same as `gdma_bytes_per_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_store_bytes_per_s: Option<f64>,
    /// Least DMA cycles per (n, c) plane of a load: a load of P planes takes
    /// at least P × this many cycles, however few bytes it moves (`None` = no floor).
    /// Slices of a few rows are bound by this rather than by the byte rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_load_cycles_per_plane: Option<f64>,
    /// The same per-plane floor for stores, cycles (`None` = no floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_store_cycles_per_plane: Option<f64>,
    /// Cycles every load pays on top of its transfer time (descriptor set-up
    /// and first-byte latency; `None` = 0). bm1688: 290, measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_load_setup_cycles: Option<f64>,
    /// The same for stores, cycles (`None` = 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_store_setup_cycles: Option<f64>,
    /// Factor on the per-plane floor for small planes: coefficient chunks of
    /// under `eu_bytes` per output channel (bias, depthwise filters) and activation
    /// planes of under 8 bytes (`None` = 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_small_plane_factor: Option<f64>,
    /// Small planes (bias vectors, depthwise filters, 1×1 activation maps such
    /// as a global pool's output) move in rows of at most this many bytes: a transfer of
    /// c such planes and B bytes counts as max(⌈c / ⌈B / row⌉⌉ · factor, c) planes, i.e.
    /// the small-plane factor shrinks with the row count but never below the plain
    /// per-plane floor (`None` = one row). bm1684x: 4,096 (4,608 before the thirty-sixth
    /// session: the zoo's 3×3 depthwise filters of 240 channels, 4,320 bytes, load in two
    /// rows), measured on TPU-MLIR's
    /// profiles: a 1,280-channel f32 bias loads in half the time of 1,280 small planes,
    /// 384 to 960-channel 3×3 depthwise filters in 192 to 240 small planes' time, a
    /// 1,280-channel f32 pool output stores in half the time of the f16 one, an
    /// 8×2,048-channel one at the plain floor. (Also read under its former name
    /// `gdma_small_coeff_row_bytes`.)
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "gdma_small_coeff_row_bytes"
    )]
    pub gdma_small_row_bytes: Option<f64>,
    /// An activation transfer's planes move in rows of at most this many bytes (`None`:
    /// planes under 8 bytes move as small planes in rows of `gdma_small_row_bytes`,
    /// larger ones at the plain floor): a transfer of c planes of P bytes each, B in all,
    /// takes at least c / ⌈B / row⌉ · factor · max(floor, P / rate) cycles, so the
    /// small-plane factor applies to planes of any size in transfers under factor · row
    /// bytes, shrinking with the rows. bm1684x: 4,096, from 48 probes of
    /// f32 maps of 8 to 96 channels and 5² to 24² positions (`bench/tpumlir_act_rows.py`,
    /// 90 of their 96 transfers within 5 %, 44 with the plain floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_act_row_bytes: Option<f64>,
    /// The share of the smaller of a global layer's DMA and compute time that
    /// its internal pipeline leaves exposed (0 = fully overlapped; `None` = 0). A
    /// global layer runs alone from global memory, cut into a few slices whose loads,
    /// compute and stores overlap, but not during the first load and the last store.
    /// bm1684x 0.33 and bm1688 0.06: medians over the global convs of TPU-MLIR's
    /// profiles (46 and 11; their exposed share follows 1 / the CONV commands, 1 to 8
    /// on bm1684x, 16 to 64 on bm1688).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_exposed_fraction: Option<f64>,
    /// Fixed cycles a global softmax spends on each row a lane holds, over its
    /// [`crate::nd_global::SOFTMAX_OPS_PER_ELEMENT`] EU operations an element (`None` =
    /// 0): bm1684x 81 and bm1688 45, from TPU-MLIR 1.30.2's profiles of the transformer
    /// zoo (the compute of every global softmax, rows of 32 to 256, lies on one line a
    /// chip: bm1688 149 cycles a row a lane at 32 elements, 877 at 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_softmax_row_cycles: Option<f64>,
    /// Elements a lane a Where (its `FUSED_CMP` command) selects a cycle inside a layer
    /// group (`None` = the chip's EU operations a cycle): bm1684x 16 and bm1688 4, from
    /// TPU-MLIR 1.30.2's profiles of the transformer zoo (every grouped Where of its own
    /// and of our groupings; in a cut group it selects over the whole mask it holds,
    /// `nd_plan`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_where_elements_per_cycle: Option<f64>,
    /// Load rate of a global element-wise layer or cast, bytes per second: the backend
    /// moves such a layer's operands as flat matrices (its profiles' `GDMA_MATRIX`
    /// commands), not as the lane-spread tensors of a layer group (`None` =
    /// `gdma_bytes_per_s`). bm1684x 5.8e10 and bm1688 2.4e10: every such command of
    /// TPU-MLIR 1.30.2's transformer-zoo profiles of 8 KiB and more (58.2 and 26.67 bytes a
    /// cycle, where its layer groups' loads move 54.4 and 16.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_matrix_bytes_per_s: Option<f64>,
    /// The same for a global element-wise layer's stores (`None` = the matrix load rate
    /// where given, else `gdma_store_bytes_per_s`). bm1684x 4.4e10 (44.1 bytes a cycle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_matrix_store_bytes_per_s: Option<f64>,
    /// Cycles a global element-wise layer's flat load takes at least for each lane its
    /// elements spread over (`None`: no floor). A small matrix moves at this floor, not at
    /// its bytes: bm1684x 4.4 (a [1, 10] cast loads its 20 bytes in 44 cycles, 10
    /// elements on 10 lanes; a [8, 100] its 1,600 in 271, 13 a lane on 62), bm1688 3.0
    /// after its set-up (`bench/tpumlir_matrix_floor.py`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_matrix_load_cycles_per_plane: Option<f64>,
    /// The same for its stores (`None`: no floor): bm1684x 5.8, bm1688 2.95.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_matrix_store_cycles_per_plane: Option<f64>,
    /// Rate of a global matmul's and softmax's loads and stores, bytes per second, each
    /// operand one flat range (`None`: at the chip's load and store rates, and an
    /// attention matmul's operands a row at a time). bm1688 2.4e10: its backend's matmul
    /// and softmax transfers in TPU-MLIR 1.30.2's profiles move 26.7 bytes a cycle (its
    /// layer groups' 16.7); bm1684x's move at its layer-group rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_tensor_bytes_per_s: Option<f64>,
    /// Rate of a copy from global memory to global memory, bytes per second: a global
    /// Gather's rows (the embedding) and a global Tile's copies (GQA's expanded K and
    /// V), each one `GDMA_GATHER` command after the load's set-up (`None`: half the
    /// global tensor rate where the chip has one, each byte through the engine twice,
    /// else the load rate). bm1684x 6.4e10 (64.0 bytes a cycle: [2, 256, 320] f16
    /// gathered in 5,120 cycles, [5, 2, 3, 96, 48] tiled in 4,320), bm1688 1.2e10 (13.33
    /// after the set-up: [1, 256, 1024] in 39,611) in TPU-MLIR 1.30.2's profiles of the
    /// transformer zoo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_global_copy_bytes_per_s: Option<f64>,
    /// Cycles a permuting copy within global memory takes at least for each row it
    /// moves (a row of the last dim; `None`: no floor). bm1684x 9.82: TPU-MLIR 1.30.2's
    /// global Permutes of the transformer zoo are one such command, [1, 4, 64, 64] f16 in
    /// 2,513 cycles, [2, 8, 64, 64] in 10,052, [3, 6, 96, 96] in 16,963.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_global_copy_cycles_per_row: Option<f64>,
    /// Rows of half this to this many bytes pay that floor (2 · this / their bytes)²
    /// times (`None`: no such rows). bm1684x 32: global Permutes (0, 2, 1, 3) of rows of 16
    /// bytes take 157 cycles a row (llama_tiny's [1, 64, 4, 8] f16 in 40,210), of 32
    /// bytes 39.3, of 48 bytes and more the floor (`bench/tpumlir_global_permute.py`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_global_copy_short_row_bytes: Option<f64>,
    /// Bytes a second a permuting copy within global memory moves at most (`None`: the
    /// copy rate). bm1684x 2.6e10: global Permutes of rows of 384 and 512 bytes,
    /// [1, 96, 6, 96] and [1, 64, 4, 128] f32, move 26.1 bytes a cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_global_permute_bytes_per_s: Option<f64>,
    /// Multiply-accumulates per cycle per lane at the chip's compute dtype
    /// (for the planner's compute timing; `None` = unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub macs_per_cycle_per_lane: Option<f64>,
    /// A dense conv computes each plane's output positions this many at a
    /// time, the last group whole (`None` = 1). bm1684x 4 and bm1688 2: TPU-MLIR
    /// 1.30.2's estimates of every dense conv on 7×7 maps are 52/49 and 50/49 of the
    /// plain count (ResNet-18/50, MobileNetV2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conv_position_group: Option<f64>,
    /// Bytes of input channels a conv takes through the MAC array in one pass, the
    /// channels of each group rounded up to whole passes (`None` = EU_BYTES). bm1684x
    /// 64 and bm1688 32: TPU-MLIR 1.30.2's profiles of convs on 24 channels (bm1688:
    /// 9,216 cycles, 32 channels' worth) and of grouped convs on 4 and 8 channels a
    /// group (bm1684x: 32 channels' worth, bm1688: 16) in f16.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conv_ic_bytes: Option<f64>,
    /// Rows from which a matmul runs its rows across the lanes (TPU-MLIR's `MM2`: one
    /// pass of K steps for each lane's worth of rows, N in whole EU_NUM groups over a
    /// lane's MACs) whatever its width (`matmul_lane_rows_columns` may start it sooner);
    /// fewer rows run as vector products (`MM`: `matmul_vector_step_bytes`) (`None` = 1).
    /// 8 on bm1688 and 16 on bm1684x: `bench/tpumlir_global_fc.py`'s [M, K]·[K, 2048] take
    /// `MM` up to M = 5 and `MM2` at 8 on both, and on bm1684x [M, 640]·[640, N] for N
    /// from 2,304 to 8,192 (`--grid cap`) `MM` at 8 rows and at 12 from N = 4,096, `MM2`
    /// at 16 whatever N; TPU-MLIR 1.30.2's profiles of
    /// [M, 1024]·[1024, 1024] take `MM2` from 4 on bm1684x (by the columns) and 8 on
    /// bm1688, and every `MM2` of the transformer zoo and of those is ⌈M / lanes⌉ ·
    /// K · ⌈N / EU_NUM⌉ · EU_NUM / MACs a lane cycles (bm1684x [288, 192]·[192, 576]:
    /// 4,320, where M·K·N / (lanes · MACs) gives 3,888; [8, 1024]·[1024, 1024]: 8,192
    /// against 1,024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matmul_lane_rows_from: Option<f64>,
    /// Output columns a row at most for which a matmul's rows run across the lanes under
    /// `matmul_lane_rows_from`: `MM2` from ⌈N / this⌉ rows when that is fewer
    /// (`None`: only `matmul_lane_rows_from`). bm1684x 256 and bm1688 64, four times
    /// EU_BYTES: TPU-MLIR 1.30.2's global fully connected layers of 1 to 8 rows
    /// (`bench/tpumlir_global_fc.py`): bm1688 takes `MM2` from 2 rows at N = 128 and 4
    /// at N = 256, bm1684x from 1 at N = 256 and 2 at N = 512.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matmul_lane_rows_columns: Option<f64>,
    /// Bytes of EU rows a matmul run as vector products (`MM`) steps over at most for
    /// each row of K of a chunk: its cycles a row of K are this over EU_BYTES at most
    /// ([`crate::nd_global::matmul::VectorProducts::step`]; `None`: such a matmul is
    /// timed by its MACs). 512 on bm1684x and bm1688: `bench/tpumlir_global_fc.py`'s
    /// profiles, each chunk's `AR` 8 cycles a row of K on bm1684x (64 rows in 512), up
    /// to 32 on bm1688 (32 rows in 1,024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matmul_vector_step_bytes: Option<f64>,
    /// How much longer a window op on the pooling unit (a pool, a depthwise conv on
    /// more than a pass of channels) takes with a stride than its taps at EU_NUM a
    /// cycle (`None` = 3). bm1684x 3 and bm1688 2: TPU-MLIR 1.30.2's profiles of
    /// 3×3/2, 2×2/2 and 3×3/2-padded max pools on 16 to 80 channels
    /// (`bench/tpumlir_cnn_op_sweep.py --set pools`; bm1688's strided depthwise convs
    /// of the zoo's MobileNetV3-like net agree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_stride_factor: Option<f64>,
    /// AR cycles a grouped softmax spends an EU pass over its scores (`None`, or either
    /// of the other two `local_softmax_*` figures missing: such a softmax is timed as
    /// element-wise work of `nd_plan::SOFTMAX_LOCAL_OPS` an element). bm1684x 19 and
    /// bm1688 18.25, with the three below from `bench/tpumlir_softmax.py`'s 15 fitted
    /// attention probes a chip ([`crate::nd_plan::local_softmax`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_softmax_pass_cycles: Option<f64>,
    /// AR cycles an f32 EU pass over a lane's row maxima or sums (bm1684x 33, bm1688 35).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_softmax_row_pass_cycles: Option<f64>,
    /// SFU cycles (the exp) an EU pass over the scores (7 on both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_softmax_exp_cycles: Option<f64>,
    /// Whether a grouped softmax's pools read a piece of up to an EU pass of rows for
    /// each output row (`None` = false: one row). bm1688 true, bm1684x false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_pool_row_pieces: Option<bool>,
    /// Cycles a grouped LayerNorm spends an EU pass over a lane's rows (`None`, or either
    /// other `local_layernorm_*` figure missing: timed as element-wise work of its
    /// FLOPs). 12 on bm1684x and bm1688, with the two below read off the commands of
    /// TPU-MLIR 1.30.2's grouped norms ([`crate::norm_kernel`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_layernorm_pass_cycles: Option<f64>,
    /// Cycles a grouped LayerNorm spends on each row a lane holds (bm1684x 82, bm1688 44).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_layernorm_row_cycles: Option<f64>,
    /// EU passes over one row a grouped LayerNorm's weight and bias broadcasts take, once
    /// a slice (4 on both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_layernorm_broadcast_passes: Option<f64>,
    /// The same three for a grouped RMSNorm: 18 a pass on both chips,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_rmsnorm_pass_cycles: Option<f64>,
    /// bm1684x 49 and bm1688 35 a row,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_rmsnorm_row_cycles: Option<f64>,
    /// and 1 pass of broadcast (its weight alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_rmsnorm_broadcast_passes: Option<f64>,
    /// A global LayerNorm's kernel: cycles an EU pass over a lane's rows (`None`, or any
    /// other `global_layernorm_*` figure missing: timed as element-wise work of its
    /// FLOPs). bm1684x 13, bm1688 11, with the three below read off the commands of
    /// TPU-MLIR 1.30.2's global norms ([`crate::norm_kernel`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_layernorm_pass_cycles: Option<f64>,
    /// Cycles an element of a lane's rows (its two pools, an element a cycle each): 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_layernorm_element_cycles: Option<f64>,
    /// Cycles a row a lane holds: bm1684x 35, bm1688 32.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_layernorm_row_cycles: Option<f64>,
    /// EU passes of broadcast over one row: 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_layernorm_broadcast_passes: Option<f64>,
    /// The same four for a global RMSNorm: 10 a pass on both chips,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_rmsnorm_pass_cycles: Option<f64>,
    /// 1 an element (one pool),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_rmsnorm_element_cycles: Option<f64>,
    /// bm1684x 33 and bm1688 31 a row,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_rmsnorm_row_cycles: Option<f64>,
    /// and 2 passes of broadcast.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_rmsnorm_broadcast_passes: Option<f64>,
}

impl ChipTiming {
    /// The local softmax kernel's figures, where all of them are given.
    fn local_softmax(&self) -> Option<LocalSoftmaxFigures> {
        Some(LocalSoftmaxFigures {
            pass_cycles: self.local_softmax_pass_cycles?,
            row_pass_cycles: self.local_softmax_row_pass_cycles?,
            exp_cycles: self.local_softmax_exp_cycles?,
            pool_row_pieces: self.local_pool_row_pieces.unwrap_or(false),
        })
    }

    /// The local norm kernels' figures, each kernel's where all three are given (a local
    /// kernel pools an element a cycle nowhere).
    fn local_norms(&self) -> NormKernels {
        NormKernels {
            layer_norm: norm_figures([
                self.local_layernorm_pass_cycles,
                Some(0.0),
                self.local_layernorm_row_cycles,
                self.local_layernorm_broadcast_passes,
            ]),
            rms_norm: norm_figures([
                self.local_rmsnorm_pass_cycles,
                Some(0.0),
                self.local_rmsnorm_row_cycles,
                self.local_rmsnorm_broadcast_passes,
            ]),
        }
    }

    /// The global norm kernels' figures, each kernel's where all four are given.
    fn global_norms(&self) -> NormKernels {
        NormKernels {
            layer_norm: norm_figures([
                self.global_layernorm_pass_cycles,
                self.global_layernorm_element_cycles,
                self.global_layernorm_row_cycles,
                self.global_layernorm_broadcast_passes,
            ]),
            rms_norm: norm_figures([
                self.global_rmsnorm_pass_cycles,
                self.global_rmsnorm_element_cycles,
                self.global_rmsnorm_row_cycles,
                self.global_rmsnorm_broadcast_passes,
            ]),
        }
    }

    /// Check every figure given: rates, floors and factors finite and positive, set-ups
    /// finite and not negative, the exposed share between 0 and 1. `chip` names the chip
    /// in the error.
    pub fn validate(&self, chip: &str) -> tpusim_lmem::Result<()> {
        let positive = [
            ("clock_hz", self.clock_hz),
            ("gdma_bytes_per_s", self.gdma_bytes_per_s),
            ("gdma_store_bytes_per_s", self.gdma_store_bytes_per_s),
            (
                "gdma_load_cycles_per_plane",
                self.gdma_load_cycles_per_plane,
            ),
            (
                "gdma_store_cycles_per_plane",
                self.gdma_store_cycles_per_plane,
            ),
            ("gdma_small_plane_factor", self.gdma_small_plane_factor),
            ("gdma_small_row_bytes", self.gdma_small_row_bytes),
            ("gdma_act_row_bytes", self.gdma_act_row_bytes),
            ("macs_per_cycle_per_lane", self.macs_per_cycle_per_lane),
            ("conv_position_group", self.conv_position_group),
            ("conv_ic_bytes", self.conv_ic_bytes),
            ("matmul_lane_rows_from", self.matmul_lane_rows_from),
            ("matmul_lane_rows_columns", self.matmul_lane_rows_columns),
            ("matmul_vector_step_bytes", self.matmul_vector_step_bytes),
            ("pool_stride_factor", self.pool_stride_factor),
            ("local_softmax_pass_cycles", self.local_softmax_pass_cycles),
            (
                "local_softmax_row_pass_cycles",
                self.local_softmax_row_pass_cycles,
            ),
            ("local_softmax_exp_cycles", self.local_softmax_exp_cycles),
            (
                "local_layernorm_pass_cycles",
                self.local_layernorm_pass_cycles,
            ),
            (
                "local_layernorm_row_cycles",
                self.local_layernorm_row_cycles,
            ),
            (
                "local_layernorm_broadcast_passes",
                self.local_layernorm_broadcast_passes,
            ),
            ("local_rmsnorm_pass_cycles", self.local_rmsnorm_pass_cycles),
            ("local_rmsnorm_row_cycles", self.local_rmsnorm_row_cycles),
            (
                "local_rmsnorm_broadcast_passes",
                self.local_rmsnorm_broadcast_passes,
            ),
            (
                "global_layernorm_pass_cycles",
                self.global_layernorm_pass_cycles,
            ),
            (
                "global_layernorm_element_cycles",
                self.global_layernorm_element_cycles,
            ),
            (
                "global_layernorm_row_cycles",
                self.global_layernorm_row_cycles,
            ),
            (
                "global_layernorm_broadcast_passes",
                self.global_layernorm_broadcast_passes,
            ),
            (
                "global_rmsnorm_pass_cycles",
                self.global_rmsnorm_pass_cycles,
            ),
            (
                "global_rmsnorm_element_cycles",
                self.global_rmsnorm_element_cycles,
            ),
            ("global_rmsnorm_row_cycles", self.global_rmsnorm_row_cycles),
            (
                "global_rmsnorm_broadcast_passes",
                self.global_rmsnorm_broadcast_passes,
            ),
            ("gdma_matrix_bytes_per_s", self.gdma_matrix_bytes_per_s),
            (
                "gdma_matrix_store_bytes_per_s",
                self.gdma_matrix_store_bytes_per_s,
            ),
            (
                "gdma_matrix_load_cycles_per_plane",
                self.gdma_matrix_load_cycles_per_plane,
            ),
            (
                "gdma_matrix_store_cycles_per_plane",
                self.gdma_matrix_store_cycles_per_plane,
            ),
            ("global_tensor_bytes_per_s", self.global_tensor_bytes_per_s),
            (
                "gdma_global_copy_bytes_per_s",
                self.gdma_global_copy_bytes_per_s,
            ),
            (
                "gdma_global_copy_cycles_per_row",
                self.gdma_global_copy_cycles_per_row,
            ),
            (
                "gdma_global_copy_short_row_bytes",
                self.gdma_global_copy_short_row_bytes,
            ),
            (
                "gdma_global_permute_bytes_per_s",
                self.gdma_global_permute_bytes_per_s,
            ),
            (
                "local_where_elements_per_cycle",
                self.local_where_elements_per_cycle,
            ),
        ];
        for (field, v) in positive {
            check_figure(chip, field, v, "finite and positive", |x| {
                x.is_finite() && x > 0.0
            })?;
        }
        check_figure(
            chip,
            "global_exposed_fraction",
            self.global_exposed_fraction,
            "between 0 and 1",
            |x| (0.0..=1.0).contains(&x),
        )?;
        for (field, v) in [
            ("gdma_load_setup_cycles", self.gdma_load_setup_cycles),
            ("gdma_store_setup_cycles", self.gdma_store_setup_cycles),
            ("global_softmax_row_cycles", self.global_softmax_row_cycles),
        ] {
            check_figure(chip, field, v, "finite and not negative", |x| {
                x.is_finite() && x >= 0.0
            })?;
        }
        Ok(())
    }
}

/// An error unless figure `field` of `chip`, when given, satisfies `ok` (`rule` says
/// what it must be).
pub(crate) fn check_figure(
    chip: &str,
    field: &str,
    value: Option<f64>,
    rule: &str,
    ok: impl Fn(f64) -> bool,
) -> tpusim_lmem::Result<()> {
    match value {
        Some(x) if !ok(x) => Err(LmemError::BadChipFile(format!(
            "chip '{chip}': {field} = {x} must be {rule}"
        ))),
        _ => Ok(()),
    }
}

/// The three figures without which a chip is timed by the structural fallback.
pub(crate) struct ChipFigures {
    /// Clock, Hz.
    pub clock: f64,
    /// Load bandwidth, bytes/s.
    pub bw: f64,
    /// Dense MACs per cycle per lane at 16 bits.
    pub macs: f64,
}

/// `timing`'s own figures, or `None` when it lacks one of the three (then
/// [`Timing::for_figures`] uses the structural fallback and no other figure applies).
pub(crate) fn chip_figures(timing: &ChipTiming) -> Option<ChipFigures> {
    Some(ChipFigures {
        clock: timing.clock_hz?,
        bw: timing.gdma_bytes_per_s?,
        macs: timing.macs_per_cycle_per_lane?,
    })
}

/// The timing figures a plan's cycle estimates used, per cycle at the plan's element
/// type: the part of [`Timing`] a plan records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimingUsed {
    /// Clock, Hz.
    pub clock_hz: f64,
    /// Global → local memory DMA (load) rate, bytes per cycle.
    pub gdma_bytes_per_cycle: f64,
    /// Local → global memory DMA (store) rate, bytes per cycle.
    #[serde(default)]
    pub gdma_store_bytes_per_cycle: f64,
    /// Least cycles per (n, c) plane of a load (0 = no floor).
    #[serde(default)]
    pub gdma_load_cycles_per_plane: f64,
    /// Least cycles per (n, c) plane of a store (0 = no floor).
    #[serde(default)]
    pub gdma_store_cycles_per_plane: f64,
    /// Factor on the per-plane floor for small planes.
    #[serde(default)]
    pub gdma_small_plane_factor: f64,
    /// Small planes move in rows of at most this many bytes (0 = one row; see
    /// `small_plane_units` in the cost model).
    #[serde(default)]
    pub gdma_small_row_bytes: f64,
    /// An activation transfer's planes move in rows of at most this many bytes (0 =
    /// the small-plane rule for planes under 8 bytes alone; see `act_plane_cycles` in
    /// the cost model).
    #[serde(default)]
    pub gdma_act_row_bytes: f64,
    /// Exposed share of the smaller of a global layer's DMA and compute time.
    #[serde(default)]
    pub global_exposed_fraction: f64,
    /// Fixed cycles of a global softmax for each row a lane holds.
    #[serde(default)]
    pub global_softmax_row_cycles: f64,
    /// Elements a lane a grouped Where selects a cycle (0 = the EU rate).
    #[serde(default)]
    pub local_where_elements_per_cycle: f64,
    /// A global element-wise layer's load rate, bytes per cycle (0 = the load rate).
    #[serde(default)]
    pub gdma_matrix_bytes_per_cycle: f64,
    /// A global element-wise layer's store rate, bytes per cycle (0 = the store rate).
    #[serde(default)]
    pub gdma_matrix_store_bytes_per_cycle: f64,
    /// A global element-wise layer's load floor, cycles a lane its elements use (0: none).
    #[serde(default)]
    pub gdma_matrix_load_cycles_per_plane: f64,
    /// A global element-wise layer's store floor, cycles a lane its elements use (0: none).
    #[serde(default)]
    pub gdma_matrix_store_cycles_per_plane: f64,
    /// A global matmul's and softmax's transfer rate, bytes per cycle, each operand
    /// flat (0 = the load and store rates, attention operands row by row).
    #[serde(default)]
    pub global_tensor_bytes_per_cycle: f64,
    /// A copy within global memory (a global Gather's rows, a Tile's copies), bytes per
    /// cycle (0 = half the global tensor rate where given, else the load rate).
    #[serde(default)]
    pub gdma_global_copy_bytes_per_cycle: f64,
    /// A permuting copy within global memory's floor, cycles a row (0: none).
    #[serde(default)]
    pub gdma_global_copy_cycles_per_row: f64,
    /// Rows of half this to this many bytes pay the floor (2 · this / their bytes)²
    /// times (0: none).
    #[serde(default)]
    pub gdma_global_copy_short_row_bytes: f64,
    /// Bytes a cycle a permuting copy within global memory moves at most (0: the copy
    /// rate).
    #[serde(default)]
    pub gdma_global_permute_bytes_per_cycle: f64,
    /// Cycles every load pays on top of its transfer time.
    #[serde(default)]
    pub gdma_load_setup_cycles: f64,
    /// Cycles every store pays on top of its transfer time.
    #[serde(default)]
    pub gdma_store_setup_cycles: f64,
    /// Multiply-accumulates per cycle per lane for dense conv/gemm at the plan's dtype.
    pub macs_per_cycle_per_lane: f64,
    /// Where the figures come from (the chip preset's source, or the fallback rule).
    pub source: String,
}

impl TimingUsed {
    /// The fastest rate any transfer moves at, bytes per cycle: layer groups' loads and
    /// stores, global element-wise layers' flat matrices, global matmuls' and convs'
    /// tensors (bm1688: 26.7 for the global tensor rate, 16.7 for a layer group's loads).
    /// A roofline's memory bound divides by it.
    pub fn peak_gdma_bytes_per_cycle(&self) -> f64 {
        [
            self.gdma_bytes_per_cycle,
            self.gdma_store_bytes_per_cycle,
            self.gdma_matrix_bytes_per_cycle,
            self.gdma_matrix_store_bytes_per_cycle,
            self.global_tensor_bytes_per_cycle,
        ]
        .into_iter()
        .fold(0.0, f64::max)
    }
}

/// The chip's timing as the cost model uses it, per cycle at the plan's element type:
/// what a plan records ([`Timing::used`]) and the rates derived from the chip's
/// geometry and the element type.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// The figures a plan records.
    pub used: TimingUsed,
    /// Coefficient chunks under this many bytes per output channel are small planes
    /// (the chip's EU_BYTES).
    pub small_coeff_bytes: u64,
    /// A dense conv takes each plane's output positions this many at a time (the
    /// chip's `conv_position_group`, 1 if unset).
    pub conv_position_group: f64,
    /// Element-wise results (pool, add, activation, depthwise MAC) per cycle per lane:
    /// EU_NUM, one per execution unit.
    pub eltwise_per_cycle_per_lane: f64,
    /// TPU-MLIR's IC_PARALLEL as a channel count, whatever the element type: a conv
    /// whose input channels times kernel rows fit it is lowered with its "3ic" fold
    /// ([`crate::timestep::is_3ic_conv`]; the chip's `conv_ic_bytes`, EU_BYTES if unset).
    pub ic_parallel: u64,
    /// Rows from which a matmul runs its rows across the lanes (the chip's
    /// `matmul_lane_rows_from`; a transformer's matmuls take 1 where the chip gives none).
    pub matmul_lane_rows_from: Option<f64>,
    /// Columns under which a matmul's rows run across the lanes from fewer rows (the
    /// chip's `matmul_lane_rows_columns`).
    pub matmul_lane_rows_columns: Option<f64>,
    /// Bytes of EU rows a matmul run as vector products steps over at most for each row
    /// of K (the chip's `matmul_vector_step_bytes`; `None`: timed by its MACs).
    pub matmul_vector_step_bytes: Option<f64>,
    /// The chip's local softmax kernel, where its file gives all of its figures.
    pub local_softmax: Option<LocalSoftmaxFigures>,
    /// The chip's local LayerNorm and RMSNorm kernels, each where its file gives it.
    pub local_norms: NormKernels,
    /// Its global LayerNorm and RMSNorm kernels, each where its file gives it.
    pub global_norms: NormKernels,
    /// A strided window op on the pooling unit takes this many times its taps' cycles
    /// (the chip's `pool_stride_factor`, [`DEFAULT_POOL_STRIDE_FACTOR`] if unset).
    pub pool_stride_factor: f64,
    /// The chip's compiler runs average pools in f32 at this type (its
    /// `tpu_mlir_f32_ops` lists `avgpool`; set by [`crate::NpuChip::timing_at`]): a
    /// global average pool inside a layer group casts its input to f32 first.
    pub avgpool_f32: bool,
    /// Bits per element of the plan's dtype (the rates are at this width).
    pub dtype_bits: u32,
}

/// A strided window op's factor on chips that do not give one: bm1684x's, the first
/// measured (a 3×3/2 max pool on 64 channels of 56² outputs: 2,646 cycles).
pub const DEFAULT_POOL_STRIDE_FACTOR: f64 = 3.0;

impl Timing {
    /// Input channels a conv takes through the MAC array in one pass: [`Timing::ic_parallel`]
    /// bytes at the plan's element type (EU_NUM when the chip gives no `conv_ic_bytes`).
    pub fn conv_ic_per_pass(&self) -> f64 {
        ic_per_pass(self.ic_parallel, self.dtype_bits) as f64
    }

    /// Timing of a chip of geometry `geo` and figures `t` at `dtype`. The preset's `macs_per_cycle_per_lane` is taken as
    /// the 16-bit figure; 8-bit doubles it and 32-bit divides it by 8 (the ratios of
    /// Sophgo's published INT8 / FP16 / FP32 peaks for bm1684x: 32 T, 16 T, 2 T).
    /// Presets without timing use a structural fallback, named as such in `source`:
    /// 1 GHz, one MAC per execution unit per cycle (EU_NUM MACs per lane), and one
    /// EU_BYTES row per lane-group of 4 lanes per cycle for DMA
    /// (`eu_bytes · npu_num / 4` bytes per cycle).
    /// (A chip file's whole chip: `NpuChip::timing_at`.)
    pub fn for_figures(geo: &Chip, t: &ChipTiming, dtype: ElementType) -> Result<Timing> {
        let eu_num = tpusim_lmem::eu_num(geo, dtype)? as f64;
        let scale = match dtype.bits() {
            8 => 2.0,
            16 => 1.0,
            _ => 0.125,
        };
        let (used, conv_position_group) = match chip_figures(t) {
            Some(ChipFigures { clock, bw, macs }) => (
                TimingUsed {
                    clock_hz: clock,
                    gdma_bytes_per_cycle: bw / clock,
                    gdma_store_bytes_per_cycle: t.gdma_store_bytes_per_s.unwrap_or(bw) / clock,
                    gdma_load_cycles_per_plane: t.gdma_load_cycles_per_plane.unwrap_or(0.0),
                    gdma_store_cycles_per_plane: t.gdma_store_cycles_per_plane.unwrap_or(0.0),
                    gdma_small_plane_factor: t.gdma_small_plane_factor.unwrap_or(1.0),
                    gdma_small_row_bytes: t.gdma_small_row_bytes.unwrap_or(0.0),
                    gdma_act_row_bytes: t.gdma_act_row_bytes.unwrap_or(0.0),
                    global_exposed_fraction: t.global_exposed_fraction.unwrap_or(0.0),
                    global_softmax_row_cycles: t.global_softmax_row_cycles.unwrap_or(0.0),
                    local_where_elements_per_cycle: t
                        .local_where_elements_per_cycle
                        .unwrap_or(0.0),
                    gdma_matrix_bytes_per_cycle: t.gdma_matrix_bytes_per_s.unwrap_or(bw) / clock,
                    gdma_matrix_store_bytes_per_cycle: t
                        .gdma_matrix_store_bytes_per_s
                        .or(t.gdma_matrix_bytes_per_s)
                        .or(t.gdma_store_bytes_per_s)
                        .unwrap_or(bw)
                        / clock,
                    gdma_matrix_load_cycles_per_plane: t
                        .gdma_matrix_load_cycles_per_plane
                        .unwrap_or(0.0),
                    gdma_matrix_store_cycles_per_plane: t
                        .gdma_matrix_store_cycles_per_plane
                        .unwrap_or(0.0),
                    global_tensor_bytes_per_cycle: t.global_tensor_bytes_per_s.unwrap_or(0.0)
                        / clock,
                    gdma_global_copy_bytes_per_cycle: t
                        .gdma_global_copy_bytes_per_s
                        .unwrap_or(0.0)
                        / clock,
                    gdma_global_copy_cycles_per_row: t
                        .gdma_global_copy_cycles_per_row
                        .unwrap_or(0.0),
                    gdma_global_copy_short_row_bytes: t
                        .gdma_global_copy_short_row_bytes
                        .unwrap_or(0.0),
                    gdma_global_permute_bytes_per_cycle: t
                        .gdma_global_permute_bytes_per_s
                        .unwrap_or(0.0)
                        / clock,
                    gdma_load_setup_cycles: t.gdma_load_setup_cycles.unwrap_or(0.0),
                    gdma_store_setup_cycles: t.gdma_store_setup_cycles.unwrap_or(0.0),
                    macs_per_cycle_per_lane: (macs * scale).max(1.0),
                    source: geo.source.clone().unwrap_or_else(|| {
                        format!("timing figures of chip '{}' (for presets: data/lmem/{}.toml, with their sources)", geo.name, geo.name)
                    }),
                },
                t.conv_position_group.unwrap_or(1.0),
            ),
            None => (structural_fallback(geo, eu_num), 1.0),
        };
        let ic_bytes = t.conv_ic_bytes.unwrap_or(geo.eu_bytes as f64);
        Ok(Timing {
            used,
            small_coeff_bytes: geo.eu_bytes,
            conv_position_group,
            eltwise_per_cycle_per_lane: eu_num,
            ic_parallel: ic_bytes as u64,
            matmul_lane_rows_from: t.matmul_lane_rows_from,
            matmul_lane_rows_columns: t.matmul_lane_rows_columns,
            matmul_vector_step_bytes: t.matmul_vector_step_bytes,
            pool_stride_factor: t.pool_stride_factor.unwrap_or(DEFAULT_POOL_STRIDE_FACTOR),
            local_softmax: t.local_softmax(),
            local_norms: t.local_norms(),
            global_norms: t.global_norms(),
            avgpool_f32: false,
            dtype_bits: dtype.bits(),
        })
    }

    /// The timing a plan recorded (`used`), for re-costing transfers of that plan: the
    /// compute rates not recorded there are the structural ones (EU_NUM per lane).
    pub fn from_used(used: &TimingUsed, eu_bytes: u64, dtype_bits: u32) -> Timing {
        let eu_num = (eu_bytes * 8 / u64::from(dtype_bits.max(1))).max(1) as f64;
        Timing {
            used: used.clone(),
            small_coeff_bytes: eu_bytes,
            conv_position_group: 1.0,
            eltwise_per_cycle_per_lane: eu_num,
            ic_parallel: eu_bytes,
            matmul_lane_rows_from: None,
            matmul_lane_rows_columns: None,
            matmul_vector_step_bytes: None,
            pool_stride_factor: DEFAULT_POOL_STRIDE_FACTOR,
            local_softmax: None,
            local_norms: NormKernels::default(),
            global_norms: NormKernels::default(),
            avgpool_f32: false,
            dtype_bits,
        }
    }
}

/// A norm kernel's figures: its pass, element and row cycles and its broadcast passes,
/// where all four are given.
fn norm_figures([pass, element, row, broadcast]: [Option<f64>; 4]) -> Option<NormFigures> {
    Some(NormFigures {
        pass_cycles: pass?,
        element_cycles: element?,
        row_cycles: row?,
        broadcast_passes: broadcast?,
    })
}

/// The timing of a chip without figures: 1 GHz, EU_NUM MACs per cycle per lane, one
/// EU_BYTES row per 4 lanes per cycle of DMA, no floors or set-ups.
fn structural_fallback(geo: &Chip, eu_num: f64) -> TimingUsed {
    let dma = (geo.eu_bytes * geo.npu_num) as f64 / 4.0;
    TimingUsed {
        clock_hz: 1e9,
        gdma_bytes_per_cycle: dma,
        gdma_store_bytes_per_cycle: dma,
        gdma_load_cycles_per_plane: 0.0,
        gdma_store_cycles_per_plane: 0.0,
        gdma_small_plane_factor: 1.0,
        gdma_small_row_bytes: 0.0,
        gdma_act_row_bytes: 0.0,
        global_exposed_fraction: 0.0,
        global_softmax_row_cycles: 0.0,
        local_where_elements_per_cycle: 0.0,
        gdma_matrix_bytes_per_cycle: dma,
        gdma_matrix_store_bytes_per_cycle: dma,
        gdma_matrix_load_cycles_per_plane: 0.0,
        gdma_matrix_store_cycles_per_plane: 0.0,
        global_tensor_bytes_per_cycle: 0.0,
        gdma_global_copy_bytes_per_cycle: 0.0,
        gdma_global_copy_cycles_per_row: 0.0,
        gdma_global_copy_short_row_bytes: 0.0,
        gdma_global_permute_bytes_per_cycle: 0.0,
        gdma_load_setup_cycles: 0.0,
        gdma_store_setup_cycles: 0.0,
        macs_per_cycle_per_lane: eu_num,
        source: format!(
            "structural fallback: preset '{}' has no timing figures (1 GHz, EU_NUM MACs/cycle/lane, eu_bytes*npu_num/4 DMA bytes/cycle)",
            geo.name
        ),
    }
}

/// Input channels of `bits` a conv takes through the MAC array in one pass of
/// `ic_parallel` bytes ([`Timing::conv_ic_per_pass`]), at least one.
pub fn ic_per_pass(ic_parallel: u64, bits: u32) -> u64 {
    (ic_parallel.saturating_mul(8) / u64::from(bits.max(1))).max(1)
}

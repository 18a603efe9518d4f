//! The plan as data: what `tpusim plan --json` prints and `tpusim plan verify` reads.
//! Field names are the contract (`chip`, `lane_bytes`, `banks`, `groups` with
//! `ops`, `nsecs`, `hsecs`, `blocks`, `timesteps`, `gmem_bytes`, `cycles`; `global_ops`,
//! `gmem_bytes`, `gmem_bytes_all_global`, `cycles`, `cycles_all_global`); the extra
//! fields (slices, options, the graph) make a plan file self-contained for the verifier.

use serde::{Deserialize, Serialize};
use tpusim_graph::Graph;

pub use crate::timing::TimingUsed;

/// What a local-memory block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// An input, intermediate or output activation slice.
    Activation,
    /// Weights (filter, bias, batch-norm parameters) of one op.
    Weight,
    /// Scratch memory of one op, freed right after it.
    Buffer,
}

impl BlockKind {
    /// The kind's JSON/table name.
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Activation => "activation",
            BlockKind::Weight => "weight",
            BlockKind::Buffer => "buffer",
        }
    }
}

/// One rectangle of the time × address picture: a lane address range held over a span
/// of time steps. The same address is used in every lane (channels spread over lanes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// Block name: the tensor's name (activations, weights) or `<op>.buffer`.
    pub name: String,
    /// What it holds.
    pub kind: BlockKind,
    /// Start address in each lane, bytes (a multiple of EU_BYTES).
    pub addr: u64,
    /// Bytes per lane (from the lmem crate's aligned layout of the largest slice;
    /// weights in the compact layout).
    pub size: u64,
    /// First time step the block is held (taken at the start of this step).
    pub start_ts: u64,
    /// Last time step it is held (freed at its end); `None` = resident (weights kept for
    /// every slice when N or H is sliced).
    pub end_ts: Option<u64>,
    /// When placed by a placer that keeps its own software-pipelined step table (TPU-MLIR's,
    /// for groups of two or more ops): the steps it holds the block over there,
    /// `[start, end]` (step `r` computes the group's op `r`; `start > end` wraps round
    /// the end of the table: a load for the next slice, a store of the previous one).
    /// Recorded as `tpu_mlir_ts`, the one placer that keeps such a table.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "tpu_mlir_ts"
    )]
    pub placer_ts: Option<[u64; 2]>,
}

/// One time step of a group's loop iteration (one slice): the compute op and the DMA
/// transfers that run at the same time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeStep {
    /// The op computed in this step (`None` for the load-only first step and the
    /// store-only last step).
    pub compute: Option<String>,
    /// Blocks loaded from global memory during this step (names of [`Block`]s).
    pub loads: Vec<String>,
    /// Blocks stored to global memory during this step.
    pub stores: Vec<String>,
}

/// The (n, h) range of one tensor in one slice: half-open `[start, end)` in elements.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorRange {
    /// Tensor name.
    pub tensor: String,
    /// Batch range `[n0, n1)`.
    pub n: [u64; 2],
    /// Row range `[h0, h1)`.
    pub h: [u64; 2],
}

/// One slice (loop iteration) of a group: which N part and H part it is, and the range
/// of every activation tensor of the group in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slice {
    /// Index of the N part, `0..nsecs`.
    pub n_idx: u64,
    /// Index of the H part, `0..hsecs`.
    pub h_idx: u64,
    /// Ranges of the group's activation tensors (inputs, intermediates, outputs).
    pub tensors: Vec<TensorRange>,
}

/// A layer group: consecutive ops run slice by slice in local memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupPlan {
    /// Op names, in execution order.
    pub ops: Vec<String>,
    /// Parts the batch is cut into.
    pub nsecs: u64,
    /// Parts the height is cut into.
    pub hsecs: u64,
    /// Local-memory blocks with their addresses and lifetimes.
    pub blocks: Vec<Block>,
    /// The time-step table of one loop iteration.
    pub timesteps: Vec<TimeStep>,
    /// Every slice with every activation tensor's (n, h) range.
    pub slices: Vec<Slice>,
    /// Bytes moved between global and local memory by the whole group (all slices).
    pub gmem_bytes: u64,
    /// Estimated cycles of the whole group (all slices, pipelined, with fill and drain).
    pub cycles: u64,
    /// Of which compute: the ops' cycles over all slices, summed. `cycles` ≥ this; the
    /// rest of `cycles` is DMA that compute does not hide.
    #[serde(default)]
    pub compute_cycles: u64,
    /// DMA cycles of all loads and stores of all slices, summed (most of them overlap
    /// compute): `cycles` ≤ `compute_cycles` + `dma_cycles`, up to rounding.
    #[serde(default)]
    pub dma_cycles: u64,
    /// Highest lane address used, bytes (the group's local-memory peak per lane).
    pub lmem_peak: u64,
    /// Rows computed more than once because neighbouring H slices overlap, summed over
    /// the group's op outputs and N parts.
    pub recomputed_rows: u64,
}

/// An op run alone from global memory (not placed in any group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GlobalCost {
    /// Op name.
    pub op: String,
    /// Bytes it moves: all inputs and weights loaded, all outputs stored.
    pub gmem_bytes: u64,
    /// Estimated cycles (max of DMA and compute: a global layer pipelines internally).
    pub cycles: u64,
    /// Of which compute cycles.
    #[serde(default)]
    pub compute_cycles: u64,
    /// DMA cycles (loads, stores, and the f32 cast of a narrow global pool).
    #[serde(default)]
    pub dma_cycles: u64,
}

/// A whole network's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Chip preset name.
    pub chip: String,
    /// Element type the network is planned in (`f16`, `s8`, …).
    pub dtype: String,
    /// Lanes (NPU_NUM).
    pub npu_num: u64,
    /// EU_BYTES: address alignment of every block.
    pub eu_bytes: u64,
    /// Local memory per lane, bytes.
    pub lane_bytes: u64,
    /// Banks per lane.
    pub banks: u64,
    /// Whether the h/2 overlap rule was applied.
    pub h_half_rule: bool,
    /// Layer groups in execution order.
    pub groups: Vec<GroupPlan>,
    /// Ops run alone from global memory, in execution order.
    pub global_ops: Vec<String>,
    /// Cost of each global op (same order as `global_ops`).
    pub global_costs: Vec<GlobalCost>,
    /// Total bytes moved between global and local memory.
    pub gmem_bytes: u64,
    /// Bytes moved if every op ran alone (the all-global baseline).
    pub gmem_bytes_all_global: u64,
    /// Estimated cycles of the plan.
    pub cycles: u64,
    /// Estimated cycles of the all-global baseline.
    pub cycles_all_global: u64,
    /// Estimated time of the plan, seconds (`cycles / clock_hz`).
    pub seconds: f64,
    /// Estimated time of the all-global baseline, seconds.
    pub seconds_all_global: f64,
    /// The timing figures used.
    pub timing: TimingUsed,
    /// The network planned (so a plan file can be verified on its own).
    pub graph: Graph,
}

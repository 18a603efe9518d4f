//! The report data model: what `tpusim report --json` prints and what the terminal and
//! HTML renderers draw. The field names of [`Report`], [`LayerReport`] and
//! [`GroupReport`] listed in the issue (`model`, `chip`, `total_time_s`,
//! `roofline_lower_bound_s`, `flops`, `bytes_logical`, `bytes_moved`, `layers`, `groups`)
//! are a contract; the other fields are additions documented here. Times are seconds,
//! sizes bytes, rates per second.

use serde::{Deserialize, Serialize};

/// The whole report of one network on one chip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Model name (built-in name or file name).
    pub model: String,
    /// Chip name (a TPU from the chip database or an NPU preset).
    pub chip: String,
    /// Planned time of the whole network, seconds: the sum of `groups[*].time_s`.
    pub total_time_s: f64,
    /// Addition: compute time of all groups, seconds (Σ `groups[*].compute_s`).
    pub compute_s: f64,
    /// Addition: DMA time of all groups, seconds (Σ `groups[*].dma_s`), most of it
    /// overlapped with compute.
    pub dma_s: f64,
    /// Addition: DMA time that compute does not hide, seconds (Σ
    /// `groups[*].exposed_dma_s`): `total_time_s` = `compute_s` + `exposed_dma_s`.
    pub exposed_dma_s: f64,
    /// Pure roofline lower bound, seconds: max(total FLOPs / peak FLOP/s, compulsory
    /// bytes / off-chip bandwidth), where the compulsory bytes are the network's inputs,
    /// outputs and weights read or written once at their logical size.
    pub roofline_lower_bound_s: f64,
    /// Addition: the compute side of the lower bound: all MACs at the best MAC rate,
    /// seconds.
    pub roofline_compute_s: f64,
    /// Addition: the memory side of the lower bound: inputs, outputs and weights once at
    /// their logical size over the off-chip bandwidth, seconds.
    pub roofline_memory_s: f64,
    /// Floating-point operations of the whole network (2 per multiply-accumulate).
    pub flops: u64,
    /// Sum over layers of the logical bytes each layer reads and writes when run alone.
    pub bytes_logical: u64,
    /// Sum over layers of the bytes each layer moves when run alone, with every tensor
    /// stored in the chip's layout (tile or lane padding included).
    pub bytes_moved: u64,
    /// One entry per op, in network order.
    pub layers: Vec<LayerReport>,
    /// The plan's groups in execution order; a global op is a group of one.
    pub groups: Vec<GroupReport>,
    /// Addition: batch size the network was built with.
    pub batch: u64,
    /// Addition: element type of activations and weights (`bf16`, `f16`, `int8`, …).
    pub dtype: String,
    /// Addition: `"tpu"` or `"npu"`.
    pub chip_kind: String,
    /// Addition: peak matrix-unit FLOP/s of the chip at `dtype`.
    pub peak_flops_per_s: f64,
    /// Addition: vector-unit FLOP/s (element-wise, pooling, normalisation ops).
    pub vector_flops_per_s: f64,
    /// Addition: off-chip memory bandwidth (HBM or GMEM), bytes per second.
    pub offchip_bytes_per_s: f64,
    /// Addition: on-chip memory (VMEM or all LMEM lanes together), bytes.
    pub onchip_bytes: u64,
    /// Addition: on-chip bytes per lane, the address range of the memory plans (NPU:
    /// LMEM per lane; TPU: VMEM / 128, the lanes the planner splits VMEM into).
    pub lane_bytes: u64,
    /// Addition: `flops / total_time_s`.
    pub achieved_flops_per_s: f64,
    /// Whether weights and peak live activations fit the chip's HBM
    /// ([`crate::capacity`]); `null` where the chip states no off-chip capacity (the
    /// NPU presets).
    pub fits_hbm: Option<bool>,
    /// Off-chip bytes the run needs: weights plus the activations live at the worst
    /// point, at their stored sizes.
    pub hbm_bytes_needed: u64,
    /// Addition: the parts of `hbm_bytes_needed`, the capacity, and when the network
    /// does not fit, what would.
    pub capacity: CapacityReport,
    /// Addition: every tensor with its logical and stored size, most padding first.
    pub tensors: Vec<TensorReport>,
    /// Addition: a picture of how the worst-padded tensor is stored.
    pub worst_layout: Option<LayoutPicture>,
}

/// Timing of one op when it runs alone (all operands from off-chip memory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerReport {
    /// Op name.
    pub name: String,
    /// Op kind (`conv`, `matmul`, `add`, `max_pool`, …).
    pub op: String,
    /// FLOPs (2 per MAC; 1 per element for vector ops).
    pub flops: u64,
    /// Logical bytes of inputs, weights and outputs.
    pub bytes_logical: u64,
    /// Bytes moved with every tensor in the chip's layout.
    pub bytes_moved: u64,
    /// Compute time: matrix-unit cycles from the systolic model / clock, or vector ops
    /// at the vector rate, seconds.
    pub compute_s: f64,
    /// Memory time: `bytes_moved` / off-chip bandwidth, seconds.
    pub memory_s: f64,
    /// `"compute"` or `"memory"`: whichever of the two times is larger.
    pub bound: String,
    /// Index into [`Report::groups`] of the group the op runs in.
    pub group: usize,
    /// Addition: how well the op used its unit, 0–1: matrix work useful MACs / MAC
    /// slots of the whole chip; vector work the fraction of vector lanes holding real
    /// data; 0 for ops that compute nothing.
    pub utilization: f64,
}

impl LayerReport {
    /// Time of the layer alone on the roofline: max(compute, memory), seconds.
    pub fn time_s(&self) -> f64 {
        self.compute_s.max(self.memory_s)
    }
}

/// One group of the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupReport {
    /// Names of the ops in the group, in order.
    pub ops: Vec<String>,
    /// Time of the group, seconds. On a TPU: Σ over its steps of max(DMA, compute), with
    /// pipeline fill and drain; a global op's max(compute, memory). On an NPU: the
    /// plan's cycles (`tpusim plan`'s estimate) over the clock.
    pub time_s: f64,
    /// Addition: true for a global op (run alone from off-chip memory).
    pub global: bool,
    /// Addition: slices along N.
    pub nsecs: u64,
    /// Addition: slices along H.
    pub hsecs: u64,
    /// Addition: DMA seconds of the whole group (all slices).
    pub dma_s: f64,
    /// Addition: compute seconds of the whole group (all slices).
    pub compute_s: f64,
    /// Addition: DMA seconds compute does not hide: `time_s` − `compute_s` (fill,
    /// drain, and steps whose transfers outlast their compute).
    pub exposed_dma_s: f64,
    /// Addition: on-chip memory blocks of one loop iteration (empty for global ops).
    pub blocks: Vec<BlockReport>,
}

/// One on-chip memory block of a group's plan, for the LMEM pictures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockReport {
    /// Tensor or buffer name.
    pub name: String,
    /// `"activation"`, `"weight"` or `"buffer"`.
    pub kind: String,
    /// Start address, bytes (per lane on an NPU, in VMEM on a TPU).
    pub addr: u64,
    /// Size, bytes (per lane on an NPU).
    pub size: u64,
    /// First time step the block is live.
    pub start_ts: u64,
    /// Last time step the block is live (inclusive).
    pub end_ts: u64,
}

/// Stored versus logical size of one tensor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorReport {
    /// Tensor name.
    pub name: String,
    /// Shape as text (`n×c×h×w`).
    pub shape: String,
    /// How the chip stores it: an XLA shape with layout on a TPU, the LMEM layout on an
    /// NPU.
    pub layout: String,
    /// Logical bytes (elements × element bytes).
    pub bytes_logical: u64,
    /// Bytes the stored layout occupies.
    pub bytes_stored: u64,
}

impl GroupReport {
    /// Set the group's time and its compute and DMA parts; the exposed DMA follows
    /// (`time_s` − `compute_s`, never below 0).
    pub fn set_times(&mut self, time_s: f64, compute_s: f64, dma_s: f64) {
        self.time_s = time_s;
        self.compute_s = compute_s;
        self.dma_s = dma_s;
        self.exposed_dma_s = (time_s - compute_s).max(0.0);
    }
}

impl TensorReport {
    /// Bytes of padding: stored − logical (0 if stored is somehow smaller).
    pub fn waste_bytes(&self) -> u64 {
        self.bytes_stored.saturating_sub(self.bytes_logical)
    }

    /// Expansion factor stored / logical (1 for an empty tensor).
    pub fn expansion(&self) -> f64 {
        if self.bytes_logical == 0 {
            1.0
        } else {
            self.bytes_stored as f64 / self.bytes_logical as f64
        }
    }
}

/// A coarse picture of a stored tensor: a grid of storage cells (tiles on a TPU, channel
/// regions of lanes on an NPU), each with the fraction of it that holds real data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutPicture {
    /// Tensor name.
    pub tensor: String,
    /// What the picture shows, one line.
    pub caption: String,
    /// What a row of cells is (e.g. "tile rows of dim H·W" or "channel rows").
    pub row_label: String,
    /// What a column of cells is (e.g. "128-lane tiles of C" or "lanes").
    pub col_label: String,
    /// Number of cell rows.
    pub rows: usize,
    /// Number of cell columns.
    pub cols: usize,
    /// Row-major fill fractions in [0, 1], `rows × cols` of them.
    pub fill: Vec<f64>,
}

impl Report {
    /// Tensors sorted by padding waste, largest first (ties by name), at most `n`.
    pub fn top_tensors_by_waste(&self, n: usize) -> Vec<&TensorReport> {
        let mut v: Vec<&TensorReport> = self.tensors.iter().collect();
        v.sort_by(|a, b| {
            b.waste_bytes()
                .cmp(&a.waste_bytes())
                .then(a.name.cmp(&b.name))
        });
        v.truncate(n);
        v
    }

    /// Layers sorted by their roofline time alone, largest first, at most `n`.
    pub fn top_layers_by_time(&self, n: usize) -> Vec<&LayerReport> {
        let mut v: Vec<&LayerReport> = self.layers.iter().collect();
        v.sort_by(|a, b| b.time_s().total_cmp(&a.time_s()).then(a.name.cmp(&b.name)));
        v.truncate(n);
        v
    }

    /// Sum of the groups' times, seconds (what `total_time_s` must equal).
    pub fn sum_of_groups_s(&self) -> f64 {
        self.groups.iter().map(|g| g.time_s).sum()
    }

    /// DMA time hidden under compute, seconds: `dma_s` − `exposed_dma_s`.
    pub fn hidden_dma_s(&self) -> f64 {
        (self.dma_s - self.exposed_dma_s).max(0.0)
    }

    /// How many times the roofline lower bound the planned time is (None when the
    /// bound is not positive).
    pub fn plan_over_bound(&self) -> Option<f64> {
        (self.roofline_lower_bound_s > 0.0).then(|| self.total_time_s / self.roofline_lower_bound_s)
    }

    /// Bytes moved per logical byte over all layers alone (None when no logical bytes).
    pub fn moved_over_logical(&self) -> Option<f64> {
        (self.bytes_logical > 0).then(|| self.bytes_moved as f64 / self.bytes_logical as f64)
    }
}

/// Off-chip memory a network needs, and what would fit when it does not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityReport {
    /// The chip's off-chip memory (HBM), bytes; `None` where the chip description does
    /// not state it (the NPU presets give no DRAM size).
    pub hbm_bytes: Option<u64>,
    /// Weights at their stored size, bytes.
    pub weight_bytes: u64,
    /// Activations live at the worst point of the op order, stored size, bytes.
    pub peak_activation_bytes: u64,
    /// Index into the layers of the op at that worst point.
    pub peak_at_layer: usize,
    /// When the network does not fit: the largest batch that does on this chip (`None`
    /// if none does, or it fits).
    pub largest_batch_that_fits: Option<u64>,
    /// When the network does not fit: built-in chips with enough HBM for it at this
    /// batch, smallest HBM first, each with the bytes it would need there.
    pub chips_that_fit: Vec<ChipFit>,
}

/// A chip the network fits on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChipFit {
    /// Chip name.
    pub chip: String,
    /// Its HBM, bytes.
    pub hbm_bytes: u64,
    /// Bytes the network needs there (its layouts differ per generation).
    pub bytes_needed: u64,
}

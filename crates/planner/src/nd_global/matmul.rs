//! A global matmul as TPU-MLIR 1.30.2's backend kernel runs it (its profiles of the
//! transformer zoo, `bench/tpumlir_tx_zoo.py`, both chips):
//! - **Operands that fit in half the local memory** (inputs, weights and output
//!   together under `lanes · lane_bytes / 2`) move in one piece each: every load, then
//!   the MACs, then the store, one after another (bm1688 BERT 192×256·256×1024: loads
//!   24,369, MACs 49,152, store 14,915 cycles, 88,436 in all).
//! - **Larger ones** are cut into slices of one row per lane (and a weight into chunks
//!   of at most [`WEIGHT_BUFFER_BANKS`] of each lane's banks): the activation slices
//!   load and store under the MACs, all but each chunk's first input slice (every chunk
//!   reads the input again) and the last store, while each weight chunk loads with the
//!   array idle but for the last slice of the chunk before (bm1688 LLaMA
//!   256×1024·1024×1024: first input slice and first weight chunk 69,392, MACs 262,144,
//!   last store 554; 332,089 in all).
//!   An attention matmul (no weight) is cut over its batch into slices of a quarter of
//!   the local memory.
//!
//! This module is the boundary of that reproduction: [`cycles`] takes the bytes each
//! operand moves, their transfer times and the MACs' time, and answers the layer's.

/// Banks of a lane (of bm1688's 16) a global matmul's weight chunk takes at most: the four
/// weights over half of bm1688's local memory in TPU-MLIR's profiles load in chunks of
/// 49,152 to 55,296 bytes a lane (of its 57,344-byte seven banks), 2 and 4 of them
/// (the held-out llama_d1024_s256's and gpt2_d512_s32_b4's).
pub const WEIGHT_BUFFER_BANKS: u64 = 7;

/// A global matmul's traffic: each part's bytes and its transfer cycles (set-ups
/// included) at the rate it moves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatmulTraffic {
    /// Activation bytes loaded.
    pub input_bytes: u64,
    /// Their load cycles.
    pub input_cycles: f64,
    /// Weight bytes loaded (0 for an attention matmul).
    pub weight_bytes: u64,
    /// Their load cycles.
    pub weight_cycles: f64,
    /// Output bytes stored.
    pub output_bytes: u64,
    /// Their store cycles.
    pub output_cycles: f64,
}

impl MatmulTraffic {
    /// Every transfer's cycles.
    pub fn dma_cycles(&self) -> f64 {
        self.input_cycles + self.weight_cycles + self.output_cycles
    }

    fn bytes(&self) -> u64 {
        self.input_bytes
            .saturating_add(self.weight_bytes)
            .saturating_add(self.output_bytes)
    }
}

/// The local memory a global matmul runs in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LocalMemory {
    /// Lanes.
    pub lanes: u64,
    /// Bytes of each lane.
    pub lane_bytes: u64,
    /// Banks of each lane.
    pub banks: u64,
}

impl LocalMemory {
    /// The local memory of chip geometry `geo`.
    pub fn of(geo: &tpusim_lmem::Chip) -> LocalMemory {
        LocalMemory {
            lanes: geo.npu_num,
            lane_bytes: geo.lane_bytes,
            banks: geo.banks,
        }
    }

    /// Bytes of all lanes.
    pub fn bytes(&self) -> u64 {
        self.lanes.saturating_mul(self.lane_bytes)
    }
}

/// Cycles of a global matmul of `rows` output rows (its batch times its M), traffic
/// `traffic` and MACs taking `compute` cycles, in local memory `lmem`.
pub fn cycles(traffic: &MatmulTraffic, rows: u64, compute: f64, lmem: &LocalMemory) -> f64 {
    let half = lmem.bytes() / 2;
    if traffic.bytes() < half {
        return traffic.dma_cycles() + compute;
    }
    let slices = if traffic.weight_bytes > 0 {
        rows.div_ceil(lmem.lanes.max(1))
    } else {
        (traffic.input_bytes.saturating_add(traffic.output_bytes)).div_ceil((half / 2).max(1))
    }
    .max(1) as f64;
    let buffer = lmem.bytes().saturating_mul(WEIGHT_BUFFER_BANKS) / lmem.banks.max(1);
    let chunks = traffic.weight_bytes.div_ceil(buffer.max(1)).max(1) as f64;
    // each chunk reads the input again, its first slice's load ahead of the MACs
    let lead = traffic.input_cycles / slices;
    let tail = traffic.output_cycles / slices;
    let hidden = chunks * traffic.input_cycles + traffic.output_cycles - chunks * lead - tail;
    chunks * lead + weight_exposed(traffic, slices, chunks, compute) + compute.max(hidden) + tail
}

/// The weight's load cycles left exposed, in `chunks` chunks: all of them but, for each
/// chunk after the first, what runs under one slice of the chunk before.
fn weight_exposed(traffic: &MatmulTraffic, slices: f64, chunks: f64, compute: f64) -> f64 {
    let per_chunk = traffic.weight_cycles / chunks;
    let under_one_slice = compute / (slices * chunks);
    traffic.weight_cycles - (chunks - 1.0) * per_chunk.min(under_one_slice)
}

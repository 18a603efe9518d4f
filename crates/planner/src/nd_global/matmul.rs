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
//!   the local memory. Rows that fit the lanes once (one row slice) pipeline smaller
//!   weight chunks instead ([`PIPELINED_WEIGHT_BANKS`]): each loads under the chunk
//!   before's MACs.
//!
//! - **Few rows** (under the chip's `matmul_lane_rows_from`, and over its
//!   `matmul_lane_rows_columns` output columns a row) run as vector products, K cut in
//!   chunks ([`VectorProducts`], on chips with a `matmul_vector_step_bytes`).
//!
//! This module is the boundary of that reproduction: [`cycles`] takes the bytes each
//! operand moves, their transfer times and the MACs' time, and answers the layer's;
//! [`runs_lane_rows`] says which command a matmul's rows take, and [`VectorProducts`]
//! times the few-row form from its shape.

use crate::cost::Dir;
use crate::nd_global::Stages;
use crate::timing::Timing;

/// Banks of a lane (of bm1688's 16) a global matmul's weight chunk takes at most: the four
/// weights over half of bm1688's local memory in TPU-MLIR's profiles load in chunks of
/// 49,152 to 55,296 bytes a lane (of its 57,344-byte seven banks), 2 and 4 of them
/// (the held-out llama_d1024_s256's and gpt2_d512_s32_b4's).
pub const WEIGHT_BUFFER_BANKS: u64 = 7;

/// Banks of a lane a weight chunk takes at most where the chunks are pipelined (one row
/// slice: two chunks in local memory at once): bm1688's probes of
/// `bench/tpumlir_global_fc.py --grid cap` cut [·, 640]·[640, N] into 2, 3, 4 and 7
/// chunks for N = 2,304, 2,560, 4,096 and 8,192, every chunk within 49,152 bytes a lane
/// (six of its 8,192-byte banks) and one fewer over it.
pub const PIPELINED_WEIGHT_BANKS: u64 = 6;

/// A global matmul's traffic: each part's bytes and its transfer cycles (set-ups
/// included) at the rate it moves.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
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
    let banks = if slices <= 1.0 {
        PIPELINED_WEIGHT_BANKS
    } else {
        WEIGHT_BUFFER_BANKS
    };
    let buffer = lmem.bytes().saturating_mul(banks) / lmem.banks.max(1);
    let chunks = traffic.weight_bytes.div_ceil(buffer.max(1)).max(1) as f64;
    if slices <= 1.0 {
        let full = (buffer as f64 / traffic.weight_bytes.max(1) as f64).min(1.0);
        return one_slice_pipeline(traffic, chunks, full, compute);
    }
    // each chunk reads the input again, its first slice's load ahead of the MACs
    let lead = traffic.input_cycles / slices;
    let tail = traffic.output_cycles / slices;
    let hidden = chunks * traffic.input_cycles + traffic.output_cycles - chunks * lead - tail;
    chunks * lead + weight_exposed(traffic, slices, chunks, compute) + compute.max(hidden) + tail
}

/// A matmul of one row slice (its rows fit the lanes once) in `chunks` weight chunks,
/// each `full` of the weight (a buffer's worth) but the last, which takes what is left:
/// each chunk's weight loads under the chunk before's MACs, so only the first chunk's
/// load and the last chunk's MACs and store are exposed (bm1688 [32, 640]·[640, 4,096],
/// `bench/tpumlir_global_fc.py --grid cap`: chunks of 1,248, 1,248, 1,248 and 352
/// columns, their loads 199,594 cycles, then one 20,480-cycle MM2 of four, in a
/// 220,018-cycle span; bm1684x [32, 1024]·[1024, 4096], `--grid chunks`: 3,264 columns
/// and then 832, 123,751 cycles of the first load exposed). Cut in even chunks, the
/// `cap` grid's probes were priced up to 7.6 % over on bm1688 and 3.1 % on bm1684x, and
/// that [32, 1024]·[1024, 4096] 8.0 % over; so cut, within 5.1 %, 1.7 % and 3.6 %
/// (`tpumlir::tests::compute`, `bench/RESULTS-plan.md`).
fn one_slice_pipeline(traffic: &MatmulTraffic, chunks: f64, full: f64, compute: f64) -> f64 {
    // each chunk a buffer's share of the weight (`full`), the last what is left
    let last = (1.0 - full * (chunks - 1.0)).clamp(0.0, 1.0);
    let weight = traffic.weight_cycles;
    let [store, macs] = [traffic.output_cycles, compute];
    // the input loads once ahead; each chunk after the first waits for the longer of its
    // weight's load (and the chunk before's store) and the chunk before's MACs
    let first = traffic.input_cycles + weight * if chunks > 1.0 { full } else { last };
    if chunks <= 1.0 {
        return first + (macs + store) * last;
    }
    let middle = (chunks - 2.0) * ((weight + store) * full).max(macs * full);
    let into_last = (weight * last + store * full).max(macs * full);
    first + middle + into_last + (macs + store) * last
}

/// The weight's load cycles left exposed, in `chunks` chunks: all of them but, for each
/// chunk after the first, what runs under one slice of the chunk before.
fn weight_exposed(traffic: &MatmulTraffic, slices: f64, chunks: f64, compute: f64) -> f64 {
    let per_chunk = traffic.weight_cycles / chunks;
    let under_one_slice = compute / (slices * chunks);
    traffic.weight_cycles - (chunks - 1.0) * per_chunk.min(under_one_slice)
}

/// Whether a matmul of `rows` rows (one batch's) and `n` output columns runs its rows
/// across the lanes (TPU-MLIR's `MM2`): from the chip's `matmul_lane_rows_from` rows,
/// or from ⌈N / `matmul_lane_rows_columns`⌉ where that is fewer. Fewer rows run as
/// vector products ([`VectorProducts`]).
pub fn runs_lane_rows(rows: u64, n: u64, t: &Timing) -> bool {
    let from = t.matmul_lane_rows_from.unwrap_or(1.0);
    let by_columns = t
        .matmul_lane_rows_columns
        .map_or(from, |c| (n as f64 / c.max(1.0)).ceil());
    rows as f64 >= from.min(by_columns)
}

/// A global matmul of few rows as TPU-MLIR 1.30.2's vector products (`MM`), as
/// `bench/tpumlir_global_fc.py`'s profiles show it on both chips:
/// - K is cut into chunks of [`VectorProducts::chunk_rows`] rows. Each chunk loads its
///   slice of the input, [rows, kc], and of the weight, [kc, N], as matrices, the next
///   chunk's while this one computes (two buffers).
/// - A chunk prepares its part of the weight (`AR`) in kc · [`VectorProducts::step`]
///   cycles, and multiplies each row by it (`MM`) in [`MM_PER_AR`] times as many; the
///   last, shorter chunk in proportion to its rows.
/// - The bias loads with the last chunk, and the output stores after it.
///
/// bm1688 [1, 256]·[256, 256]: 7 chunks of 40 rows, the last of 16, each `AR` 960 and
/// `MM` 984 under 1,363 cycles of loads; 14,070 cycles in all (this: 13,995).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorProducts {
    /// Rows of the input (batch times M).
    pub rows: u64,
    /// The shared dimension.
    pub k: u64,
    /// Output columns.
    pub n: u64,
    /// Bits of an input element.
    pub input_bits: u32,
    /// Bits of a weight element.
    pub weight_bits: u32,
    /// Bits of an output element.
    pub output_bits: u32,
    /// Bytes of the bias (0: none).
    pub bias_bytes: u64,
}

/// Rows of K a chunk takes: `CHUNK_SCALE` lanes · √(rows / N), down to a multiple of 8,
/// between a lane each and [`MAX_CHUNK_ROWS`]. bm1688's profiles: 56 rows at N / rows
/// = 128, 48 at 150 to 171, 40 at 214 to 256, 32 from 320 on; bm1684x's 64 rows from
/// N / rows = 320 on (where it runs vector products at all).
const CHUNK_SCALE: f64 = 21.0;

/// The most rows of K a chunk takes (bm1688: 64 at N / rows = 75 to 107; bm1684x 64 at
/// 320, where √ gives 72).
pub const MAX_CHUNK_ROWS: u64 = 64;

/// How much longer a row's `MM` takes than its chunk's `AR`: bm1688 1.018 to 1.031,
/// bm1684x 1.016.
pub const MM_PER_AR: f64 = 1.025;

impl VectorProducts {
    /// Rows of K in each chunk but the last, on `lanes` lanes.
    pub fn chunk_rows(&self, lanes: u64) -> u64 {
        let ratio = self.rows as f64 / self.n.max(1) as f64;
        let scaled =
            ((CHUNK_SCALE * lanes as f64 * ratio.sqrt() / 8.0).floor() as u64).saturating_mul(8);
        scaled.clamp(lanes.min(MAX_CHUNK_ROWS), MAX_CHUNK_ROWS)
    }

    /// Cycles a chunk's `AR` takes for each of its rows of K: 2 · ⌈0.75 · √(N / rows)⌉,
    /// at most the chip's `matmul_vector_step_bytes` over EU_BYTES (bm1688 32, bm1684x
    /// 8). bm1688's profiles: 16 at N / rows = 102, 18 at 128, 20 at 167 and 171, 22 at
    /// 214, 24 at 250 and 256, 28 at 320, 32 from 500 on; bm1684x 8 from 320 on.
    pub fn step(&self, t: &Timing) -> f64 {
        let cap =
            t.matmul_vector_step_bytes.unwrap_or(f64::MAX) / t.small_coeff_bytes.max(1) as f64;
        let ratio = self.n as f64 / self.rows.max(1) as f64;
        (2.0 * (0.75 * ratio.sqrt()).ceil()).min(cap).max(1.0)
    }

    /// Compute cycles of all the chunks.
    pub fn compute_cycles(&self, t: &Timing) -> f64 {
        self.chunk_compute(t, self.k)
    }

    /// Cycles of the whole matmul on `lanes` lanes, its transfers at `t`'s matrix rates.
    pub fn cycles(&self, t: &Timing, lanes: u64) -> f64 {
        let c = self.chunks(t, lanes);
        if c.count > crate::nd_global::MAX_PIPELINE_SLICES {
            let n = (c.count - 1) as f64;
            let fulls = crate::nd_global::double_buffered(
                c.full.load * n,
                c.full.compute * n,
                0.0,
                c.count - 1,
            );
            return fulls + c.last.compute + c.last.store;
        }
        let fulls = std::iter::repeat(c.full).take((c.count - 1) as usize);
        crate::nd_global::pipelined(fulls.chain(std::iter::once(c.last)))
    }

    /// Cycles of all its transfers on `lanes` lanes, one after another.
    pub fn dma_cycles(&self, t: &Timing, lanes: u64) -> f64 {
        let c = self.chunks(t, lanes);
        (c.count - 1) as f64 * c.full.load + c.last.load + c.last.store
    }

    /// Its chunks on `lanes` lanes: all but the last alike, the last loading the bias
    /// too and storing the output.
    fn chunks(&self, t: &Timing, lanes: u64) -> Chunks {
        let kc = self.chunk_rows(lanes).min(self.k.max(1));
        let count = self.k.max(1).div_ceil(kc);
        let mut last = self.stages(t, self.k.max(1) - (count - 1) * kc);
        if self.bias_bytes > 0 {
            last.load += crate::cost::matrix_rows_dma_cycles(t, Dir::Load, self.bias_bytes, 1);
        }
        let out = bytes(self.rows.saturating_mul(self.n), self.output_bits);
        last.store = crate::cost::matrix_rows_dma_cycles(t, Dir::Store, out, self.rows);
        Chunks {
            full: self.stages(t, kc),
            last,
            count,
        }
    }

    /// `AR` and every row's `MM` over `rows_of_k` rows of K.
    fn chunk_compute(&self, t: &Timing, rows_of_k: u64) -> f64 {
        (1.0 + MM_PER_AR * self.rows as f64) * rows_of_k as f64 * self.step(t)
    }

    /// One chunk of `kc` rows of K: its input slice in rows of EU_BYTES, its weight slice
    /// a row of K a lane's row, and its compute.
    fn stages(&self, t: &Timing, kc: u64) -> Stages {
        let input = bytes(self.rows.saturating_mul(kc), self.input_bits);
        let weight = bytes(kc.saturating_mul(self.n), self.weight_bits);
        let eu_rows = input.div_ceil(t.small_coeff_bytes.max(1));
        Stages {
            load: crate::cost::matrix_rows_dma_cycles(t, Dir::Load, input, eu_rows)
                + crate::cost::matrix_rows_dma_cycles(t, Dir::Load, weight, kc),
            compute: self.chunk_compute(t, kc),
            store: 0.0,
        }
    }
}

/// A vector products' chunks: `count` in all, every one but the last as `full`.
struct Chunks {
    full: Stages,
    last: Stages,
    count: u64,
}

/// Bytes of `elements` elements of `bits` bits, rounded up.
fn bytes(elements: u64, bits: u32) -> u64 {
    elements.saturating_mul(u64::from(bits)).div_ceil(8)
}

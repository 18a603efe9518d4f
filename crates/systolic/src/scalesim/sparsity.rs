//! SCALE-Sim 3.0.0's sparsity (`[sparsity] SparsitySupport: true`): the operand
//! matrices it builds for a sparse layer (`compute/operand_matrix.py`).
//!
//! The FILTER operand is K × N (K = FH·FW·C window positions, N filters), word
//! `n·K + k`. A 0/1 pattern marks the weights kept:
//!
//! * **`OptimizedMapping: false`** — the topology's N:M for every filter: in each block
//!   of M window positions the first N are kept. The FILTER is condensed column by
//!   column to the kept rows (each block's N, the last block's `min(N, rest)`), and the
//!   IFMAP keeps only the matching window columns, so both operands have
//!   K' = ⌊K/M⌋·N + min(K mod M, N) instead of K and the layer runs as an M × K' × N GEMM
//!   with the dense addresses of the kept positions. In ws, SCALE-Sim counts the IFMAP's
//!   SRAM reads as each fold's demand size × M/N, summed as Python floats.
//! * **`OptimizedMapping: true`** — blocks of B = `BlockSize` (topology N:M ignored, M
//!   still used for the ELLPACK metadata): filter n keeps the first `N_n` of every B
//!   rows, `N_n` drawn per filter by `np.random.randint(1, B//2 + 1)` after
//!   `np.random.seed(RandomNumberGeneratorSeed)` (numpy's legacy MT19937: seeded by
//!   `init_genrand`, each draw the first 32-bit output, masked to the next power of two
//!   above B/2 − 1 and redrawn while above it; no draw when B/2 = 1), reseeded for every
//!   layer. Rows are padded with zeros to a multiple of 2B, and each 2B-row chunk is
//!   compressed to B rows: the first ⌊B/2⌋ kept weights of its first block, then of its
//!   second, each padded with −1 (absent) to ⌊B/2⌋. The IFMAP stays M × K; ws streams it
//!   two array tiles (2R columns) per fold through `skew_matrix_row_sparsity` (see
//!   `demand.rs`). os and is run only when the compressed FILTER keeps K rows (K = B):
//!   otherwise SCALE-Sim asserts `Dimension mismatch between operands`.
//!
//! SCALE-Sim also writes `SPARSE_REPORT.csv` (see [`sparse_report`]) and an
//! `Avg FILTER Metadata SRAM BW` column in `BANDWIDTH_REPORT.csv`: the metadata
//! storage over Total Cycles.
//!
//! Not reproduced (refused): `FilterOffset ≤ 0` or `IfmapOffset < 0`, where SCALE-Sim's
//! zero test (`block != 0`) mistakes a FILTER word at address 0 for a pruned weight and
//! shifts its column, or a negative address reads as −1 (absent).

use super::config::{ScaleConfig, SparsityConfig};
use super::report::{PyNumber, SparseReport};
use super::topology::{SparsityRatio, TopoLayer};
use rand_mt::Mt;

/// Most filters whose random ratio is drawn (one u64 each).
const MAX_DRAWN_FILTERS: u64 = 1 << 24;

/// The shape of SCALE-Sim's IFMAP and FILTER operand matrices for one layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Operands {
    /// IFMAP M × K, FILTER K × N.
    Dense,
    /// `OptimizedMapping: false`: both condensed to the N:M-kept window positions.
    Condensed(SparsityRatio),
    /// `OptimizedMapping: true`: FILTER compressed in 2B-row chunks, `kept[n]` weights
    /// of every B in filter n.
    RowWise {
        /// `BlockSize` B.
        block: u64,
        /// N per filter, as numpy drew it.
        kept: Vec<u64>,
    },
}

/// Kept positions among `k` under `ratio`: ⌊k/M⌋·N + min(k mod M, N).
fn kept_count(k: u64, ratio: SparsityRatio) -> u64 {
    (k / ratio.m) * ratio.n + (k % ratio.m).min(ratio.n)
}

impl Operands {
    /// Columns of the IFMAP operand of a layer with window size `k`.
    pub(crate) fn ifmap_cols(&self, k: u64) -> u64 {
        match self {
            Operands::Condensed(r) => kept_count(k, *r),
            _ => k,
        }
    }

    /// Rows of the FILTER operand of a layer with window size `k`.
    pub(crate) fn filter_rows(&self, k: u64) -> u64 {
        match self {
            Operands::Dense => k,
            Operands::Condensed(r) => kept_count(k, *r),
            Operands::RowWise { block, .. } => k.div_ceil(2 * block) * block,
        }
    }

    /// The window position of IFMAP operand column `j`.
    pub(crate) fn ifmap_window(&self, j: u64) -> u64 {
        match self {
            Operands::Condensed(r) => (j / r.n) * r.m + j % r.n,
            _ => j,
        }
    }

    /// The window position held by FILTER operand row `q` of filter `n` (`None`: −1),
    /// for a window of `k` positions.
    pub(crate) fn filter_window(&self, q: u64, n: u64, k: u64) -> Option<u64> {
        match self {
            Operands::Dense => Some(q),
            Operands::Condensed(r) => Some((q / r.n) * r.m + q % r.n),
            Operands::RowWise { block, kept } => {
                let half = block / 2;
                let chunk = q / (2 * half);
                let within = q % (2 * half);
                let (side, pos) = (within / half, within % half);
                let row = chunk * 2 * block + side * block + pos;
                let chunks = k.div_ceil(2 * block);
                (chunk < chunks && pos < kept[n as usize] && row < k).then_some(row)
            }
        }
    }
}

/// numpy's legacy `randint(1, half + 1)` on a seeded MT19937 (masked rejection).
fn draw_ratio(mt: &mut Mt, half: u64) -> u64 {
    let range = half - 1;
    if range == 0 {
        return 1;
    }
    let mask = u64::MAX >> range.leading_zeros();
    loop {
        let v = u64::from(mt.next_u32()) & mask;
        if v <= range {
            return 1 + v;
        }
    }
}

/// The N per filter SCALE-Sim draws for `filters` filters (`OptimizedMapping`).
pub(crate) fn drawn_ratios(seed: u32, block: u64, filters: u64) -> Vec<u64> {
    let mut mt = Mt::new(seed);
    (0..filters)
        .map(|_| draw_ratio(&mut mt, block / 2))
        .collect()
}

/// Why SCALE-Sim 3.0.0 cannot build the operands of a sparse layer, or `None`.
fn refusal(cfg: &ScaleConfig, sp: &SparsityConfig, l: &TopoLayer) -> Option<String> {
    if cfg.offsets.filter <= 0 || cfg.offsets.ifmap < 0 {
        return Some(format!(
            "sparsity with IfmapOffset {} and FilterOffset {}: SCALE-Sim takes a FILTER word at address 0 for a pruned weight (FilterOffset must be positive, IfmapOffset not negative)",
            cfg.offsets.ifmap, cfg.offsets.filter
        ));
    }
    if !sp.optimized_mapping {
        return None;
    }
    if sp.block_size > cfg.array.rows {
        return Some("SCALE-Sim 3.0.0 fails: AssertionError: ERROR: Invalid block size (BlockSize above ArrayHeight)".into());
    }
    if sp.block_size < 2 {
        let why = if sp.block_size == 0 {
            "ZeroDivisionError: integer division or modulo by zero"
        } else {
            "ValueError: low >= high"
        };
        return Some(format!(
            "SCALE-Sim 3.0.0 fails on BlockSize {}: {why}",
            sp.block_size
        ));
    }
    if !(0..=i64::from(u32::MAX)).contains(&sp.seed) {
        return Some(format!(
            "SCALE-Sim 3.0.0 fails on RandomNumberGeneratorSeed {}: ValueError: Seed must be between 0 and 2**32 - 1",
            sp.seed
        ));
    }
    if l.num_filt > MAX_DRAWN_FILTERS {
        return Some(format!(
            "{} filters to draw ratios for (limit {MAX_DRAWN_FILTERS})",
            l.num_filt
        ));
    }
    None
}

/// SCALE-Sim's operand matrices for `l` under `cfg`; `Err(why)` where SCALE-Sim fails or
/// the case is not reproduced.
pub(crate) fn operands(cfg: &ScaleConfig, l: &TopoLayer) -> Result<Operands, String> {
    let Some(sp) = &cfg.sparsity else {
        return Ok(Operands::Dense);
    };
    if let Some(why) = refusal(cfg, sp, l) {
        return Err(why);
    }
    if !sp.optimized_mapping {
        return Ok(Operands::Condensed(l.sparsity));
    }
    Ok(Operands::RowWise {
        block: sp.block_size,
        kept: drawn_ratios(sp.seed as u32, sp.block_size, l.num_filt),
    })
}

/// Weights kept of a K × N pattern (its non-zeros, which CSR and CSC store).
fn pattern_nonzeros(ops: &Operands, k: u64, n: u64) -> u64 {
    match ops {
        Operands::Dense => k.saturating_mul(n),
        Operands::Condensed(r) => kept_count(k, *r).saturating_mul(n),
        Operands::RowWise { block, kept } => kept
            .iter()
            .map(|&kn| kept_count(k, SparsityRatio { n: kn, m: *block }))
            .fold(0u64, |a, x| a.saturating_add(x)),
    }
}

/// ⌈log2 m⌉ (0 for m ≤ 1), as `math.ceil(math.log2(m))`.
fn ceil_log2(m: u64) -> u64 {
    if m <= 1 {
        0
    } else {
        u64::from(64 - (m - 1).leading_zeros())
    }
}

/// The SPARSE_REPORT.csv figures of a layer (`compute/compression.py`): with K × N
/// the pattern and nnz its kept weights, `csr` stores 2·nnz + K + 1 words (metadata
/// nnz + K + 1), `csc` 2·nnz + N + 1 (nnz + N + 1), `ellpack_block` the FILTER operand's
/// rows × N words plus their metadata, rows × N × ⌈log2 M⌉ / 32 (a float; M from the
/// topology); any other `SparseRep` stores 0. Original storage is K·N.
pub(crate) fn sparse_report(
    sp: &SparsityConfig,
    ops: &Operands,
    l: &TopoLayer,
    k: u64,
    filter_rows: u64,
) -> SparseReport {
    let n = l.num_filt;
    let nnz = pattern_nonzeros(ops, k, n);
    let int = PyNumber::Int;
    let (original, new, metadata) = match sp.representation.as_str() {
        "csr" => (k * n, int(2 * nnz + k + 1), int(nnz + k + 1)),
        "csc" => (k * n, int(2 * nnz + n + 1), int(nnz + n + 1)),
        "ellpack_block" => {
            let words = filter_rows * n;
            let meta = (words * ceil_log2(l.sparsity.m)) as f64 / 32.0;
            (
                k * n,
                PyNumber::Float(words as f64 + meta),
                PyNumber::Float(meta),
            )
        }
        _ => (0, int(0), int(0)),
    };
    SparseReport {
        representation: sp.representation.clone(),
        original_storage: original,
        new_storage: new,
        metadata_storage: metadata,
        ifmap_sram_reads: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numpy 2.3: `np.random.seed(s); [np.random.randint(1, B//2 + 1) for _ in range(n)]`.
    #[test]
    fn draws_equal_numpy_legacy_randint() {
        let cases: [(u32, u64, &[u64]); 6] = [
            (40, 4, &[1, 2, 2, 2, 1, 1, 1, 2, 1, 2]),
            (7, 8, &[4, 1, 2, 3, 4, 4, 4, 4, 1, 2, 3, 4]),
            (123, 12, &[6, 3, 5, 3, 2, 4, 3, 4, 2, 2, 1, 2, 2, 1, 1, 2]),
            (2024, 16, &[1, 3, 1, 1, 4, 5, 7, 8]),
            (0, 6, &[1, 2, 1, 2, 2, 3, 1, 3, 1, 1]),
            (4294967295, 10, &[4, 3, 5, 5, 1, 3]),
        ];
        for (seed, block, want) in cases {
            assert_eq!(
                drawn_ratios(seed, block, want.len() as u64),
                want,
                "seed {seed}"
            );
        }
        assert_eq!(drawn_ratios(9, 2, 3), [1, 1, 1]);
    }

    #[test]
    fn condensed_operands_keep_the_first_n_of_every_m() {
        let ops = Operands::Condensed(SparsityRatio { n: 3, m: 4 });
        // K = 13: blocks 0..4, 4..8, 8..12 keep 3 each, the last (12) keeps 1
        assert_eq!((ops.ifmap_cols(13), ops.filter_rows(13)), (10, 10));
        let rows: Vec<u64> = (0..10).map(|j| ops.ifmap_window(j)).collect();
        assert_eq!(rows, [0, 1, 2, 4, 5, 6, 8, 9, 10, 12]);
        assert_eq!(ceil_log2(4), 2);
        assert_eq!(ceil_log2(5), 3);
        assert_eq!(ceil_log2(1), 0);
    }

    #[test]
    fn row_wise_filter_compresses_chunks_of_two_blocks() {
        // B = 4, K = 10 (padded to 16: two chunks of 8 rows → 4 rows each), filter 0
        // keeps 1 of every 4, filter 1 keeps 2
        let ops = Operands::RowWise {
            block: 4,
            kept: vec![1, 2],
        };
        assert_eq!(ops.filter_rows(10), 8);
        let col = |n| {
            (0..8)
                .map(|q| ops.filter_window(q, n, 10))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            col(0),
            [Some(0), None, Some(4), None, Some(8), None, None, None]
        );
        assert_eq!(
            col(1),
            [
                Some(0),
                Some(1),
                Some(4),
                Some(5),
                Some(8),
                Some(9),
                None,
                None
            ]
        );
    }
}

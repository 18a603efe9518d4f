//! SCALE-Sim's operand demand streams: which IFMAP / FILTER address the array asks its
//! SRAM for on which demand row, in SCALE-Sim's order (folds column-fold-major, rows in
//! time, columns ascending within a row). Padding (`−1` in SCALE-Sim) is skipped.
//!
//! Per fold of `Lf` rows (see `compat.rs`) each operand is one of two shapes:
//!
//! * **stationary block** (ws FILTER, is IFMAP): rows `0..R` read the fold's R×w tile
//!   bottom row first (SCALE-Sim flips it so the top row is pushed last);
//! * **skewed stream** (ws/os IFMAP, os/is FILTER): row `s`, column `j` reads pre-skew
//!   row `p = s − j − prefix` for `0 ≤ p < T` (prefix R for ws IFMAP and is FILTER, 0
//!   for os).
//!
//! Addresses are SCALE-Sim's without the configured offsets (each SRAM only ever sees
//! its own operand, so offsets never change which accesses repeat): FILTER `(k, n)` is
//! `n·K + k`; IFMAP `(m, k)` is the im2col pixel
//! `((orow·S + crow)·W + ocol·S + ccol)·C + ch`, absent where the window overhangs the
//! input.

use super::sparsity::Operands;
use super::topology::TopoLayer;
use crate::error::Result;
use crate::shape::{ceil_div, Dataflow};

/// Which read operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operand {
    /// The IFMAP (A, M×K im2col matrix).
    Ifmap,
    /// The FILTER (W, K×N).
    Filter,
}

impl Operand {
    /// "IFMAP" or "FILTER".
    pub(crate) fn name(self) -> &'static str {
        match self {
            Operand::Ifmap => "IFMAP",
            Operand::Filter => "FILTER",
        }
    }
}

/// A layer mapped on an array the way SCALE-Sim maps it.
pub(crate) struct Mapping<'a> {
    l: &'a TopoLayer,
    pub(crate) df: Dataflow,
    ow: u64,
    pub(crate) r: u64,
    pub(crate) c: u64,
    pub(crate) m: u64,
    pub(crate) n: u64,
    /// The dense window size FH·FW·C (FILTER words are `n·k + window position`).
    k: u64,
    /// Columns of the IFMAP operand (K, or the kept positions of a sparse layer).
    pub(crate) k_if: u64,
    /// Rows of the FILTER operand.
    pub(crate) k_f: u64,
    /// Operand rows mapped on the array's rows (Sr) and columns (Sc).
    pub(crate) sr: u64,
    pub(crate) sc: u64,
    /// Row folds of the demand streams (ws: over the FILTER's rows).
    pub(crate) rf: u64,
    /// ws: row folds of the IFMAP prefetch matrix (over the IFMAP's columns).
    rf_pre: u64,
    pub(crate) cf: u64,
    pub(crate) t: u64,
    pub(crate) lf: u64,
    pub(crate) ops: Operands,
}

/// SCALE-Sim's operand matrix on the array for dataflow `df` on an `r`×`c` array:
/// (rows mapped to the array's rows, columns mapped to its columns, the streamed
/// dimension T, rows per fold Lf = `T + R + C − 2` for os, `2R + C + T − 2` otherwise).
pub(crate) fn fold_geometry(
    df: Dataflow,
    r: u64,
    c: u64,
    g: crate::shape::Gemm,
) -> (u64, u64, u64, u64) {
    let (sr, sc, t) = match df {
        Dataflow::Ws => (g.k, g.n, g.m),
        Dataflow::Os => (g.m, g.n, g.k),
        Dataflow::Is => (g.k, g.m, g.n),
    };
    let lf = match df {
        Dataflow::Os => t + r + c - 2,
        _ => 2 * r + c + t - 2,
    };
    (sr, sc, t, lf)
}

impl<'a> Mapping<'a> {
    /// The mapping of `l` on an `r`×`c` array in dataflow `df`.
    #[cfg(test)]
    pub(crate) fn new(l: &'a TopoLayer, df: Dataflow, r: u64, c: u64) -> Result<Self> {
        Self::with_operands(l, df, r, c, Operands::Dense)
    }

    /// The mapping of `l` whose operand matrices are shaped by `ops` (sparsity). os and
    /// is need the IFMAP's columns to equal the FILTER's rows (checked by the caller).
    pub(crate) fn with_operands(
        l: &'a TopoLayer,
        df: Dataflow,
        r: u64,
        c: u64,
        ops: Operands,
    ) -> Result<Self> {
        let g = l.scalesim_gemm()?;
        let (_, ow) = l.scalesim_ofmap();
        let (k_if, k_f) = (ops.ifmap_cols(g.k), ops.filter_rows(g.k));
        let (sr, sc, t) = match df {
            Dataflow::Ws => (k_f, g.n, g.m),
            Dataflow::Os => (g.m, g.n, k_if),
            Dataflow::Is => (k_if, g.m, g.n),
        };
        let lf = match df {
            Dataflow::Os => t + r + c - 2,
            _ => 2 * r + c + t - 2,
        };
        let rf = ceil_div(sr, r);
        let rf_pre = match df {
            Dataflow::Ws => ceil_div(k_if, r),
            _ => rf,
        };
        Ok(Mapping {
            l,
            df,
            ow,
            r,
            c,
            m: g.m,
            n: g.n,
            k: g.k,
            k_if,
            k_f,
            sr,
            sc,
            rf,
            rf_pre,
            cf: ceil_div(sc, c),
            t,
            lf,
            ops,
        })
    }

    /// Number of distinct addresses an operand may use (its address space).
    pub(crate) fn space(&self, op: Operand) -> u64 {
        match op {
            Operand::Ifmap => self
                .l
                .ifmap_h
                .saturating_mul(self.l.ifmap_w)
                .saturating_mul(self.l.channels),
            Operand::Filter => self.k.saturating_mul(self.n),
        }
    }

    /// Folds (row folds × column folds).
    pub(crate) fn folds(&self) -> u64 {
        self.rf * self.cf
    }

    /// Demand rows in the whole layer (without stalls the last is `Total Cycles`).
    pub(crate) fn rows(&self) -> u64 {
        self.rf * self.cf * self.lf
    }

    /// ws with `OptimizedMapping`: the IFMAP demand row's width (`skew_matrix_row_sparsity`:
    /// 2R columns in blocks of B, each block repeated ⌊B/2⌋ times).
    pub(crate) fn row_wise_width(&self) -> Option<u64> {
        match (&self.ops, self.df) {
            (Operands::RowWise { block, .. }, Dataflow::Ws) => {
                let tiles = self.r.saturating_mul(2) / block;
                Some(tiles.saturating_mul(block / 2).saturating_mul(*block))
            }
            _ => None,
        }
    }

    /// The IFMAP word of operand element (ofmap pixel `m`, operand column `j`).
    fn ifmap_addr(&self, m: u64, j: u64) -> Option<u64> {
        let l = self.l;
        if m >= self.m || j >= self.k_if {
            return None;
        }
        let k = self.ops.ifmap_window(j);
        let (orow, ocol) = (m / self.ow, m % self.ow);
        let fwc = l.filt_w * l.channels;
        let (crow, rem) = (k / fwc, k % fwc);
        let (ccol, ch) = (rem / l.channels, rem % l.channels);
        let (y, x) = (orow * l.stride + crow, ocol * l.stride + ccol);
        (y < l.ifmap_h && x < l.ifmap_w).then(|| (y * l.ifmap_w + x) * l.channels + ch)
    }

    /// Whether FILTER operand element (row `q`, filter `n`) holds a word (is not −1).
    pub(crate) fn filter_valid(&self, q: u64, n: u64) -> bool {
        self.filter_addr(q, n).is_some()
    }

    /// The FILTER word of operand element (row `q`, filter `n`).
    fn filter_addr(&self, q: u64, n: u64) -> Option<u64> {
        if q >= self.k_f || n >= self.n {
            return None;
        }
        let k = self.ops.filter_window(q, n, self.k)?;
        Some(n * self.k + k)
    }

    /// Calls `f(addr)` for every valid address of `op`'s demand matrix on demand row
    /// `row`, in SCALE-Sim's order (columns ascending); stops at the first error.
    pub(crate) fn for_row<E>(
        &self,
        op: Operand,
        row: u64,
        mut f: impl FnMut(u64) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let (r, c, t) = (self.r, self.c, self.t);
        let fold = row / self.lf;
        let s = row % self.lf;
        let (fc, fr) = (fold / self.rf, fold % self.rf);
        match (self.df, op) {
            // stationary blocks: row s < R reads tile row R−1−s
            (Dataflow::Ws, Operand::Filter) | (Dataflow::Is, Operand::Ifmap) => {
                if s >= r {
                    return Ok(());
                }
                let kk = fr * r + (r - 1 - s);
                let rows = if op == Operand::Filter {
                    self.k_f
                } else {
                    self.k_if
                };
                if kk >= rows {
                    return Ok(());
                }
                for j in 0..c {
                    let a = if op == Operand::Filter {
                        self.filter_addr(kk, fc * c + j)
                    } else {
                        self.ifmap_addr(fc * c + j, kk)
                    };
                    if let Some(a) = a {
                        f(a)?;
                    }
                }
            }
            (Dataflow::Ws, Operand::Ifmap) if self.row_wise_width().is_some() => {
                self.row_wise_ifmap_row(fr, s, &mut f)?;
            }
            _ => {
                let (prefix, w) = match (self.df, op) {
                    (Dataflow::Os, Operand::Filter) => (0, c),
                    (Dataflow::Os, _) => (0, r),
                    _ => (r, r),
                };
                if s < prefix {
                    return Ok(());
                }
                let q = s - prefix;
                let j_lo = (q + 1).saturating_sub(t);
                let j_hi = q.min(w - 1);
                for j in j_lo..=j_hi {
                    let p = q - j;
                    let a = match (self.df, op) {
                        (Dataflow::Ws, _) => self.ifmap_addr(p, fr * r + j),
                        (Dataflow::Os, Operand::Ifmap) => self.ifmap_addr(fr * r + j, p),
                        (Dataflow::Os, Operand::Filter) => self.filter_addr(p, fc * c + j),
                        _ => self.filter_addr(fr * r + j, p),
                    };
                    if let Some(a) = a {
                        f(a)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// ws with `OptimizedMapping`, IFMAP demand row `s` of row fold `fr`: after R rows
    /// of weight load, row `R + q` holds, for each repeated block `jj`, block `jj / ⌊B/2⌋`
    /// (B columns of the fold's 2R) of IFMAP row `q − jj`.
    fn row_wise_ifmap_row<E>(
        &self,
        fr: u64,
        s: u64,
        f: &mut impl FnMut(u64) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let Operands::RowWise { block, .. } = &self.ops else {
            return Ok(());
        };
        let (r, t, block) = (self.r, self.t, *block);
        if s < r || s - r >= t + r - 1 {
            return Ok(());
        }
        let q = s - r;
        let half = block / 2;
        let repeats = (r.saturating_mul(2) / block).saturating_mul(half);
        let base = fr.saturating_mul(2).saturating_mul(r);
        let end = base.saturating_add(r.saturating_mul(2)).min(self.k_if);
        for jj in (q + 1).saturating_sub(t)..repeats.min(q + 1) {
            let first = base.saturating_add((jj / half).saturating_mul(block));
            for col in first..first.saturating_add(block).min(end) {
                if let Some(a) = self.ifmap_addr(q - jj, col) {
                    f(a)?;
                }
            }
        }
        Ok(())
    }

    /// The prefetch matrix of `op`: (rows, columns, read in anti-diagonal order).
    fn prefetch_dims(&self, op: Operand) -> (u64, u64, bool) {
        let (r, c) = (self.r, self.c);
        match (self.df, op) {
            (Dataflow::Ws, Operand::Ifmap) => (self.rf_pre.saturating_mul(self.t), r, true),
            (Dataflow::Ws, Operand::Filter) => (self.cf.saturating_mul(self.k_f), c, false),
            (Dataflow::Os, Operand::Ifmap) => (self.rf.saturating_mul(self.k_if), r, true),
            (Dataflow::Os, Operand::Filter) => (self.cf.saturating_mul(self.k_if), c, true),
            (Dataflow::Is, Operand::Ifmap) => (self.cf.saturating_mul(self.k_if), c, false),
            (Dataflow::Is, Operand::Filter) => (self.rf.saturating_mul(self.n), r, true),
        }
    }

    /// Elements of `op`'s prefetch matrix, padding included (what
    /// [`Mapping::for_prefetch`] steps through), saturating at `u64::MAX`.
    pub(crate) fn prefetch_elems(&self, op: Operand) -> u64 {
        let (rows, cols, _) = self.prefetch_dims(op);
        rows.saturating_mul(cols)
    }

    /// USER mode's prefetch matrix of `op`, flattened in the order SCALE-Sim fetches
    /// it: `f(Some(addr))` for an element, `f(None)` for padding. Returns the element
    /// count, padding included.
    pub(crate) fn for_prefetch(&self, op: Operand, mut f: impl FnMut(Option<u64>)) -> u64 {
        let (r, c) = (self.r, self.c);
        let (rows, cols, diag) = self.prefetch_dims(op);
        let elem = |i: u64, j: u64| -> Option<u64> {
            match (self.df, op) {
                (Dataflow::Ws, Operand::Ifmap) => self.ifmap_addr(i % self.t, (i / self.t) * r + j),
                (Dataflow::Ws, Operand::Filter) => {
                    self.filter_addr(i % self.k_f, (i / self.k_f) * c + j)
                }
                (Dataflow::Os, Operand::Filter) => {
                    self.filter_addr(i % self.k_if, (i / self.k_if) * c + j)
                }
                (Dataflow::Os, Operand::Ifmap) => {
                    self.ifmap_addr((i / self.k_if) * r + j, i % self.k_if)
                }
                (Dataflow::Is, Operand::Ifmap) => {
                    self.ifmap_addr((i / self.k_if) * c + j, i % self.k_if)
                }
                (Dataflow::Is, Operand::Filter) => {
                    self.filter_addr((i / self.n) * r + j, i % self.n)
                }
            }
        };
        if diag {
            // anti-diagonals, each from its bottom row up
            for d in 0..rows + cols - 1 {
                let hi = d.min(rows - 1);
                let lo = (d + 1).saturating_sub(cols);
                for i in (lo..=hi).rev() {
                    f(elem(i, d - i));
                }
            }
        } else {
            for i in 0..rows {
                for j in 0..cols {
                    f(elem(i, j));
                }
            }
        }
        rows * cols
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalesim::calc_refetch::CalcReadBuffer;
    use crate::scalesim::compat;
    use crate::scalesim::config::ScaleConfig;
    use crate::scalesim::topology::SparsityRatio;
    use proptest::prelude::*;

    fn cfg(r: u64, c: u64, df: &str) -> ScaleConfig {
        let text = format!(
            "[general]\nrun_name = x\n[architecture_presets]\nArrayHeight: {r}\nArrayWidth: {c}\nIfmapSramSzkB: 64\nFilterSramSzkB: 64\nOfmapSramSzkB: 64\nDataflow: {df}\nBandwidth: 10\n[run_presets]\nInterfaceBandwidth: CALC\n"
        );
        ScaleConfig::parse(&text, "c.cfg").unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// The demand streams agree with the closed form (itself checked against
        /// SCALE-Sim): as many reads as SCALE-Sim counts for a GEMM (no padding inside
        /// the operand), no more for a conv, and their first/last rows are the SRAM
        /// start/stop cycles. An operand's CALC replay without a refetch equals the
        /// closed-form prefetch (same distinct count).
        #[test]
        fn streams_agree_with_closed_form(
            h in 1u64..14, w in 1u64..14, f in 1u64..4, ch in 1u64..5, nf in 1u64..20,
            s in 1u64..3, r in 1u64..9, c in 1u64..9, df in 0usize..3, gemm in any::<bool>()
        ) {
            prop_assume!(f <= h && f <= w);
            let l = if gemm {
                TopoLayer { name: "g".into(), ifmap_h: h, ifmap_w: w, filt_h: 1, filt_w: w,
                    channels: 1, num_filt: nf, stride: 1, sparsity: SparsityRatio::DENSE }
            } else {
                TopoLayer { name: "c".into(), ifmap_h: h, ifmap_w: w, filt_h: f, filt_w: f,
                    channels: ch, num_filt: nf, stride: s, sparsity: SparsityRatio::DENSE }
            };
            let dfs = ["ws", "os", "is"][df];
            let cfg = cfg(r, c, dfs);
            let rep = compat::compute_report(&cfg, &l).unwrap();
            let map = Mapping::new(&l, cfg.dataflow, r, c).unwrap();
            for (i, op) in [Operand::Ifmap, Operand::Filter].into_iter().enumerate() {
                let (mut n, mut first, mut last) = (0u64, None, 0u64);
                let mut buf = CalcReadBuffer::new(1 << 20, map.space(op));
                for row in 0..map.rows() {
                    map.for_row(op, row, |a| {
                        prop_assert!(a < map.space(op));
                        n += 1;
                        first.get_or_insert(row);
                        last = row;
                        buf.read(a, row).unwrap();
                        Ok(())
                    })?;
                }
                let want = rep.sram[i];
                if gemm || op == Operand::Filter {
                    prop_assert_eq!(n, want.count, "{:?} reads", op);
                } else {
                    prop_assert!(n <= want.count);
                }
                prop_assert_eq!(first.unwrap() as i64 + 1, want.start, "{:?} start", op);
                prop_assert_eq!(last as i64 + 1, want.stop, "{:?} stop", op);
                // no refetch with 2^20-word sets: one prefetch of every distinct word
                let full = compat::layer_report(&cfg, &l).unwrap();
                prop_assert_eq!(buf.finish().count, full.dram[i].count);
                // the USER prefetch matrix holds every operand element, padded to folds
                let mut some = 0u64;
                let total = map.for_prefetch(op, |a| some += a.is_some() as u64);
                prop_assert!(some <= total);
                if gemm || op == Operand::Filter {
                    prop_assert_eq!(some, if op == Operand::Filter { map.k * map.n } else { map.m * map.k });
                }
            }
        }
    }
}

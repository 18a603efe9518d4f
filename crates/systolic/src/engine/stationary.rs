//! The cycle-accurate kernel shared by weight-stationary and input-stationary folds:
//! the seed's array. A `kf × nf` tile sits in the top-left PEs; a stream of `s` vectors
//! enters from the left, row i delayed i cycles (skewed); every cycle (1) features shift
//! one PE right, (2) every PE does psum += weight · feature, (3) psums shift one PE down,
//! row 0 takes zeros and the bottom row (R−1) leaves the array as results.
//!
//! Register files are kept in layouts that make each cycle a few contiguous loops:
//! row i's feature registers are a sliding window over its reversed input stream (a
//! shift register *is* a window moving over the stream), and the psum rows are a ring
//! indexed by (row − cycle) mod R (shifting down renames rows). Only PEs holding a valid
//! feature are visited: the others would add weight·0.

use crate::element::Acc;
use crate::fold::{FoldShape, FoldTiming};

/// One cycle's register contents, recorded for pictures and the seed test (physical
/// PE order, row-major R×C; values as f64).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Cycle index within the fold, from its first streaming cycle (0-based).
    pub cycle: u64,
    /// Feature register of every PE after this cycle's shift.
    pub feature: Vec<f64>,
    /// Psum register of every PE after this cycle's MAC (before the shift down).
    pub psum: Vec<f64>,
    /// Whether the PE did a MAC on valid operands this cycle.
    pub busy: Vec<bool>,
}

/// Inputs of one stationary fold.
pub(crate) struct StationaryFold<'a, A> {
    /// Array rows R and columns C.
    pub r: usize,
    pub c: usize,
    /// The stationary tile, `kf × nf` row-major (kf ≤ R, nf ≤ C).
    pub tile: &'a [A],
    pub kf: usize,
    pub nf: usize,
    /// The streamed operand, reversed per array row: `rev[i * s + u]` is the value row i
    /// takes at stream position s − 1 − u. Rows `0..kf`.
    pub rev: &'a [A],
    pub rev_stride: usize,
    pub s: usize,
}

/// Run one fold: R cycles of weight load, then cycles until every result has left the
/// array. Results are added into `out` (`s × nf`, row-major). Returns the measured
/// timing; when `trace` is given, a snapshot of every compute cycle is pushed.
pub(crate) fn run_fold<A: Acc>(
    f: &StationaryFold<'_, A>,
    shape: FoldShape,
    out: &mut [A],
    mut trace: Option<&mut Vec<Snapshot>>,
) -> FoldTiming {
    let (r, kf, nf, s) = (f.r, f.kf, f.nf, f.s);
    // --- weight load: the tile enters at the top one row per cycle and shifts down;
    // after R cycles the row inserted first sits in the bottom row.
    let mut wring = vec![A::default(); r * nf];
    let mut reads_stationary = 0u64;
    let mut pre = 0u64;
    for l in 0..r {
        // ring slot for the new top row; physical row i lives at (top + i) % r
        let top = (r - 1 - l) % r;
        let dest_row = r - 1 - l; // the physical row this value ends in
        let row = &mut wring[top * nf..(top + 1) * nf];
        if dest_row < kf {
            row.copy_from_slice(&f.tile[dest_row * nf..(dest_row + 1) * nf]);
            reads_stationary += nf as u64;
        } else {
            row.fill(A::default());
        }
        pre += 1;
    }
    // after the load, top = 0: physical row i is ring row i
    let w = &wring[..kf * nf];

    // --- streaming
    let mac = super::simd::pick::<A>();
    let mut ring = vec![A::default(); r * nf];
    let mut remaining = (s * nf) as u64; // results still to leave the array
    let mut t = 0usize;
    let (mut busy, mut reads, mut writes, mut last_mac_end) = (0u64, 0u64, 0u64, 0u64);
    while remaining > 0 {
        let tm = t % r;
        // rows with a valid feature somewhere: t − i − j ∈ [0, s), j < nf
        let i_lo = (t + 2).saturating_sub(s + nf);
        let i_hi = t.min(kf.saturating_sub(1));
        let mut any = false;
        if kf > 0 && i_lo <= i_hi {
            for i in i_lo..=i_hi {
                let d = t - i; // = stream position at column 0
                let j_lo = (d + 1).saturating_sub(s);
                let j_hi = d.min(nf - 1);
                if j_lo > j_hi {
                    continue;
                }
                if j_lo == 0 {
                    reads += 1; // a valid feature entered row i at column 0
                }
                any = true;
                let slot = (i + r - tm) % r;
                let p = &mut ring[slot * nf + j_lo..slot * nf + j_hi + 1];
                let wr = &w[i * nf + j_lo..i * nf + j_hi + 1];
                let start = i * f.rev_stride + s - 1 + j_lo - d;
                let x = &f.rev[start..start + (j_hi - j_lo) + 1];
                mac(p, wr, x);
                busy += (j_hi - j_lo + 1) as u64;
            }
        }
        if any {
            last_mac_end = t as u64 + 1;
        }
        if let Some(tr) = trace.as_deref_mut() {
            tr.push(snapshot(f, &ring, t));
        }
        // bottom row leaves: column j carries stream position m = t − (R−1) − j
        let bslot = (r - 1 + r - tm) % r;
        if t + 1 >= r {
            let d = t + 1 - r;
            let j_lo = (d + 1).saturating_sub(s);
            let j_hi = d.min(nf - 1);
            if j_lo <= j_hi {
                for j in j_lo..=j_hi {
                    let m = d - j;
                    let o = &mut out[m * nf + j];
                    *o = o.plus(ring[bslot * nf + j]);
                }
                let n = (j_hi - j_lo + 1) as u64;
                writes += n;
                remaining -= n;
            }
        }
        ring[bslot * nf..(bslot + 1) * nf].fill(A::default());
        t += 1;
    }
    FoldTiming {
        shape,
        pre,
        span: t as u64,
        last_mac_end,
        post: 0,
        busy,
        reads_stationary,
        reads_streamed: reads,
        writes,
    }
}

fn snapshot<A: Acc>(f: &StationaryFold<'_, A>, ring: &[A], t: usize) -> Snapshot {
    let (r, c, nf, s) = (f.r, f.c, f.nf, f.s);
    let mut feature = vec![0.0; r * c];
    let mut psum = vec![0.0; r * c];
    let mut busy = vec![false; r * c];
    for i in 0..r {
        let slot = (i + r - t % r) % r;
        for j in 0..c {
            if j < nf {
                psum[i * c + j] = ring[slot * nf + j].to_f64();
            }
            if i < f.kf && t >= i + j && t - i - j < s {
                let d = t - i;
                feature[i * c + j] = f.rev[i * f.rev_stride + s - 1 + j - d].to_f64();
                busy[i * c + j] = j < nf;
            }
        }
    }
    Snapshot {
        cycle: t as u64,
        feature,
        psum,
        busy,
    }
}

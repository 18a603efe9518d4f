//! The cycle-accurate output-stationary kernel. PE(i,j) owns result C[m0+i][n0+j].
//! Row i of A enters from the left (skewed by i cycles) and shifts right; column j of W
//! enters from the top (skewed by j cycles) and shifts down; every cycle each PE does
//! acc += a · w on the operands it holds. When the reduction is over, the accumulators
//! shift down one row per cycle and leave through the bottom edge (R cycles).
//!
//! As in the stationary kernel, the A registers of row i are a window over its reversed
//! row, and the W registers of row i are row t − i of the skewed top-edge stream
//! (`skew[τ][j] = W[τ − j][n0 + j]`), so each cycle is contiguous loops over j.

use crate::element::Acc;
use crate::fold::{FoldShape, FoldTiming};

/// Inputs of one output-stationary fold.
pub(crate) struct OutputFold<'a, A> {
    /// Array rows R.
    pub r: usize,
    /// Used rows (M slice) and columns (N slice).
    pub mf: usize,
    pub nf: usize,
    /// Reduction length K.
    pub k: usize,
    /// A rows m0.., each reversed: `arev[i * k + u] = A[m0 + i][k − 1 − u]`.
    pub arev: &'a [A],
    /// The top-edge stream, `(k + nf − 1) × nf`: `skew[τ * nf + j] = W[τ − j][n0 + j]`.
    pub skew: &'a [A],
}

/// Run one fold; results are written into `out` (`mf × nf`, row-major).
pub(crate) fn run_fold<A: Acc>(
    f: &OutputFold<'_, A>,
    shape: FoldShape,
    out: &mut [A],
) -> FoldTiming {
    let (r, mf, nf, k) = (f.r, f.mf, f.nf, f.k);
    let mut acc = vec![A::default(); mf * nf];
    let mac = super::simd::pick::<A>();
    let (mut busy, mut reads, mut last_mac_end) = (0u64, 0u64, 0u64);
    let mut t = 0usize;
    let mut done = false;
    while !done {
        // A enters row i at column 0 when t − i ∈ [0, k); W enters column j at the top
        // when t − j ∈ [0, k)
        for i in 0..mf.min(t + 1) {
            if t - i < k {
                reads += 1;
            }
        }
        for j in 0..nf.min(t + 1) {
            if t - j < k {
                reads += 1;
            }
        }
        let mut any = false;
        let i_lo = (t + 2).saturating_sub(k + nf);
        let i_hi = t.min(mf - 1);
        if i_lo <= i_hi {
            for i in i_lo..=i_hi {
                let d = t - i;
                let j_lo = (d + 1).saturating_sub(k);
                let j_hi = d.min(nf - 1);
                if j_lo > j_hi {
                    continue;
                }
                any = true;
                let p = &mut acc[i * nf + j_lo..i * nf + j_hi + 1];
                let start = i * k + k - 1 + j_lo - d;
                let a = &f.arev[start..start + (j_hi - j_lo) + 1];
                let w = &f.skew[d * nf + j_lo..d * nf + j_hi + 1];
                mac(p, a, w);
                busy += (j_hi - j_lo + 1) as u64;
            }
        }
        if any {
            last_mac_end = t as u64 + 1;
        } else if t > 0 {
            // the wavefront has passed every PE
            done = true;
            continue;
        }
        t += 1;
    }
    // drain: accumulators shift down; the bottom row leaves each cycle
    let mut writes = 0u64;
    let mut post = 0u64;
    for d in 0..r {
        let i = r - 1 - d; // original row now at the bottom
        if i < mf {
            out[i * nf..(i + 1) * nf].copy_from_slice(&acc[i * nf..(i + 1) * nf]);
            writes += nf as u64;
        }
        post += 1;
    }
    FoldTiming {
        shape,
        pre: 0,
        span: last_mac_end,
        last_mac_end,
        post,
        busy,
        reads_stationary: 0,
        reads_streamed: reads,
        writes,
    }
}

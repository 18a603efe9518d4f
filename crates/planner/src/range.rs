//! Backward ranges: which input rows an op needs for a range of its output rows, and
//! how a dimension is cut into parts. Half-open ranges `[start, end)` of u64 rows.
//!
//! Rules, per op kind (the spec's "Backward H"):
//! - conv: `[h0·s − p, (h1−1)·s − p + (k−1)·d + 1)` clipped to `[0, H_in)`;
//! - max/avg pool: the same with dilation 1;
//! - deconv (transposed conv): the inverse — input rows `i` with some tap `t` giving
//!   output row `i·s − p + t·d` inside `[h0, h1)`;
//! - upsample by `s`: `[⌊h0/s⌋, ⌈h1/s⌉)`;
//! - global pooling (and anything whose output row depends on every input row, such as
//!   gemm, flatten and reshape): the whole input;
//! - element-wise ops, batch-norm, activations, concat: identity; an input of height 1
//!   (a per-channel broadcast) needs row 0 only.

use tpusim_graph::OpKind;

/// A half-open range of rows (or batches).
pub type Range = [u64; 2];

/// The smallest (n-range, h-range) covering both `a` (if any) and `b`: the part of a
/// tensor that several consumers' backward ranges need together.
pub fn hull(a: Option<(Range, Range)>, b: (Range, Range)) -> (Range, Range) {
    match a {
        None => b,
        Some((n, h)) => (
            [n[0].min(b.0[0]), n[1].max(b.0[1])],
            [h[0].min(b.1[0]), h[1].max(b.1[1])],
        ),
    }
}

/// Cut `[0, size)` into `parts` near-equal consecutive ranges as TPU-MLIR cuts a
/// group's N and H: each part has `⌊size/parts⌋`, and the first `size mod parts` one
/// more (its compiled programs: N 3 in 2 is `n_slice = [2, 1]`, H 64 in 3 is
/// `h_slice = [22, 21, 21]`). `None` if `parts` is 0 or exceeds `size` (a part would
/// be empty).
pub fn split(size: u64, parts: u64, i: u64) -> Option<Range> {
    if parts == 0 || parts > size || i >= parts {
        return None;
    }
    let (q, r) = (size / parts, size % parts);
    // k · q + min(k, r) ≤ size: no overflow
    let at = |k: u64| k * q + k.min(r);
    Some([at(i), at(i + 1)])
}

/// Input rows a conv-like window (kernel `k`, stride `s`, top padding `p`, dilation
/// `d`) needs to produce output rows `out`, clipped to `[0, h_in)`.
pub fn window_backward(out: Range, k: u64, s: u64, p: u64, d: u64, h_in: u64) -> Range {
    if out[1] <= out[0] {
        return [0, 0];
    }
    let lo = (out[0] as i128) * s as i128 - p as i128;
    let hi = (out[1] as i128 - 1) * s as i128 - p as i128
        + (k.max(1) as i128 - 1) * d.max(1) as i128
        + 1;
    clip(lo, hi, h_in)
}

/// Input rows a transposed conv needs for output rows `out`: input row `i` feeds output
/// rows `i·s − p + t·d` for taps `t` in `0..k`. Exact hull: for each tap, the input rows
/// whose output lands in `[h0, h1)`, then the hull over taps (with dilation or stride
/// some taps skip rows, so the plain interval formula would over-fetch).
pub fn deconv_backward(out: Range, k: u64, s: u64, p: u64, d: u64, h_in: u64) -> Range {
    if out[1] <= out[0] || h_in == 0 {
        return [0, 0];
    }
    let (s, p, d) = (s.max(1) as i128, p as i128, d.max(1) as i128);
    let (mut lo, mut hi) = (i128::MAX, i128::MIN);
    for t in 0..k.max(1) as i128 {
        // h0 <= i·s − p + t·d <= h1 − 1
        let a = div_ceil_i(out[0] as i128 + p - t * d, s).max(0);
        let b = div_floor_i(out[1] as i128 - 1 + p - t * d, s).min(h_in as i128 - 1);
        if a <= b {
            lo = lo.min(a);
            hi = hi.max(b + 1);
        }
    }
    if lo > hi {
        return [0, 0];
    }
    clip(lo, hi, h_in)
}

fn div_floor_i(a: i128, b: i128) -> i128 {
    a.div_euclid(b)
}

fn div_ceil_i(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

fn clip(lo: i128, hi: i128, h_in: u64) -> Range {
    let lo = lo.clamp(0, h_in as i128) as u64;
    let hi = hi.clamp(0, h_in as i128) as u64;
    if hi <= lo {
        [lo, lo]
    } else {
        [lo, hi]
    }
}

/// Rows of an input of height `h_in` that op `kind` needs to produce output rows `out`
/// of an output of height `h_out`.
pub fn backward_h(kind: &OpKind, out: Range, h_in: u64, h_out: u64) -> Range {
    match kind {
        OpKind::Conv(c) => {
            window_backward(out, c.kernel[0], c.stride[0], c.pad[0], c.dilation[0], h_in)
        }
        OpKind::MaxPool(p) | OpKind::AvgPool(p) => {
            window_backward(out, p.kernel[0], p.stride[0], p.pad[0], 1, h_in)
        }
        OpKind::Deconv { params: c, .. } => {
            deconv_backward(out, c.kernel[0], c.stride[0], c.pad[0], c.dilation[0], h_in)
        }
        OpKind::Upsample { scale_h, .. } => {
            let s = (*scale_h).max(1);
            clip((out[0] / s) as i128, out[1].div_ceil(s) as i128, h_in)
        }
        OpKind::GlobalAvgPool
        | OpKind::GlobalMaxPool
        | OpKind::Gemm
        | OpKind::Flatten
        | OpKind::Reshape => [0, h_in],
        OpKind::BatchNorm
        | OpKind::Act(_)
        | OpKind::Cast
        | OpKind::Add
        | OpKind::Mul
        | OpKind::Concat => {
            if h_in == 1 && h_out != 1 {
                [0, 1]
            } else if h_in == h_out {
                out
            } else {
                [0, h_in]
            }
        }
    }
}

/// Batches of an input with `n_in` batches needed for output batches `out` of an output
/// with `n_out` batches: identity, except a single-batch input (broadcast) needs batch 0
/// and ops that mix batches (reshape/flatten to another batch) need everything.
pub fn backward_n(out: Range, n_in: u64, n_out: u64) -> Range {
    if n_in == n_out {
        out
    } else if n_in == 1 {
        [0, 1]
    } else {
        [0, n_in]
    }
}

/// Rows repeated between the H slices of one tensor: Σ slice lengths − |union|.
/// (Slices are given for one N part.)
pub fn repeated_rows(slices: &[Range]) -> u64 {
    let total: u64 = slices.iter().map(|r| r[1].saturating_sub(r[0])).sum();
    let mut v: Vec<Range> = slices.iter().copied().filter(|r| r[1] > r[0]).collect();
    v.sort();
    let mut union = 0;
    let mut cur: Option<Range> = None;
    for r in v {
        match cur {
            Some(c) if r[0] <= c[1] => cur = Some([c[0], c[1].max(r[1])]),
            Some(c) => {
                union += c[1] - c[0];
                cur = Some(r);
            }
            None => cur = Some(r),
        }
    }
    if let Some(c) = cur {
        union += c[1] - c[0];
    }
    total - union
}

/// The spec's h/2 rule: the slicing of a tensor of height `h` fails when the rows its
/// H slices repeat exceed `h/2`.
pub fn h_half_rule_ok(slices: &[Range], h: u64) -> bool {
    repeated_rows(slices).saturating_mul(2) <= h
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpusim_graph::{ConvParams, PoolParams};

    #[test]
    fn spec_h100_example() {
        // input h = 100 cut into [0,80) and [20,100): 60 rows repeated -> fails
        assert_eq!(repeated_rows(&[[0, 80], [20, 100]]), 60);
        assert!(!h_half_rule_ok(&[[0, 80], [20, 100]], 100));
        // [0,60) and [20,100): 40 repeated -> succeeds
        assert_eq!(repeated_rows(&[[0, 60], [20, 100]]), 40);
        assert!(h_half_rule_ok(&[[0, 60], [20, 100]], 100));
        assert_eq!(repeated_rows(&[[0, 50], [50, 100]]), 0);
    }

    #[test]
    fn conv_formula() {
        // 3x3 stride 1 pad 1: out [0,28) -> in [0,29); out [28,56) -> [27,56)
        let c = OpKind::Conv(ConvParams {
            kernel: [3, 3],
            stride: [1, 1],
            pad: [1, 1, 1, 1],
            dilation: [1, 1],
            groups: 1,
        });
        assert_eq!(backward_h(&c, [0, 28], 56, 56), [0, 29]);
        assert_eq!(backward_h(&c, [28, 56], 56, 56), [27, 56]);
        // 7x7 s2 p3 (ResNet stem), out [0,56) of 112 -> in [0, 55*2-3+7) = [0,114) clipped 224
        let c = OpKind::Conv(ConvParams {
            kernel: [7, 7],
            stride: [2, 2],
            pad: [3, 3, 3, 3],
            dilation: [1, 1],
            groups: 1,
        });
        assert_eq!(backward_h(&c, [0, 56], 224, 112), [0, 114]);
        assert_eq!(backward_h(&c, [56, 112], 224, 112), [109, 224]);
        // dilation 2, k 3, s 1, p 2: out [10, 20) -> [8, 19+... ) = [8, 19-2+4+1) = [8, 22)
        let c = OpKind::Conv(ConvParams {
            kernel: [3, 3],
            stride: [1, 1],
            pad: [2, 2, 2, 2],
            dilation: [2, 2],
            groups: 1,
        });
        assert_eq!(backward_h(&c, [10, 20], 32, 32), [8, 22]);
        let p = OpKind::MaxPool(PoolParams {
            kernel: [3, 3],
            stride: [2, 2],
            pad: [1, 1, 1, 1],
            ceil_mode: false,
            count_include_pad: false,
        });
        assert_eq!(backward_h(&p, [0, 28], 112, 56), [0, 56]);
        assert_eq!(backward_h(&p, [28, 56], 112, 56), [55, 112]);
    }

    /// Naive reference: the hull of every tap position (padding included) an output
    /// row range reads, clipped to the input — what the spec's formula states.
    fn naive_conv(out: Range, k: u64, s: u64, p: u64, d: u64, h_in: u64) -> Range {
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        for o in out[0]..out[1] {
            for t in 0..k {
                let i = (o * s + t * d) as i64 - p as i64;
                lo = lo.min(i);
                hi = hi.max(i + 1);
            }
        }
        let lo = lo.clamp(0, h_in as i64) as u64;
        let hi = hi.clamp(0, h_in as i64) as u64;
        if hi <= lo {
            [lo, lo]
        } else {
            [lo, hi]
        }
    }

    fn naive_deconv(out: Range, k: u64, s: u64, p: u64, d: u64, h_in: u64) -> Range {
        let mut lo = u64::MAX;
        let mut hi = 0;
        for i in 0..h_in {
            for t in 0..k {
                let o = (i * s + t * d) as i64 - p as i64;
                if o >= out[0] as i64 && o < out[1] as i64 {
                    lo = lo.min(i);
                    hi = hi.max(i + 1);
                }
            }
        }
        if lo == u64::MAX {
            [0, 0]
        } else {
            [lo, hi]
        }
    }

    #[test]
    fn against_naive_enumeration() {
        for k in 1..=5 {
            for s in 1..=3 {
                for d in 1..=2 {
                    for p in 0..k {
                        let h_in = 17;
                        let h_out = (h_in + 2 * p - (k - 1) * d - 1) / s + 1;
                        for a in 0..h_out {
                            for b in a + 1..=h_out {
                                let got = window_backward([a, b], k, s, p, d, h_in);
                                let want = naive_conv([a, b], k, s, p, d, h_in);
                                // the formula's range is the hull; clipped rows that are
                                // all padding give an empty naive set
                                if want[1] > want[0] {
                                    assert_eq!(got, want, "conv k{k} s{s} d{d} p{p} out [{a},{b})");
                                }
                            }
                        }
                        let hd_out =
                            (h_in - 1) * s + (k - 1) * d + 1 - 2 * p.min((h_in - 1) * s / 2);
                        let pp = p.min((h_in - 1) * s / 2);
                        for a in 0..hd_out.min(12) {
                            for b in a + 1..=hd_out.min(14) {
                                let got = deconv_backward([a, b], k, s, pp, d, h_in);
                                let want = naive_deconv([a, b], k, s, pp, d, h_in);
                                if want[1] > want[0] {
                                    assert_eq!(
                                        got, want,
                                        "deconv k{k} s{s} d{d} p{pp} out [{a},{b})"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn upsample_identity_global() {
        let u = OpKind::Upsample {
            scale_h: 2,
            scale_w: 2,
        };
        assert_eq!(backward_h(&u, [3, 9], 8, 16), [1, 5]);
        assert_eq!(backward_h(&OpKind::Add, [3, 9], 16, 16), [3, 9]);
        assert_eq!(backward_h(&OpKind::Mul, [3, 9], 1, 16), [0, 1]);
        assert_eq!(backward_h(&OpKind::GlobalAvgPool, [0, 1], 7, 1), [0, 7]);
        assert_eq!(split(100, 3, 0), Some([0, 34]));
        assert_eq!(split(100, 3, 2), Some([67, 100]));
        assert_eq!(split(3, 2, 0), Some([0, 2]));
        assert_eq!(split(64, 3, 1), Some([22, 43]));
        assert_eq!(split(2, 3, 0), None);
        // the parts tile the size, the larger first, at any size
        let big = u64::MAX - 6;
        for parts in [7u64, 3, 1 << 40] {
            let last = split(big, parts, parts - 1).unwrap();
            assert_eq!(last[1], big, "the parts end at the size");
            let (a, b) = (split(big, parts, 0).unwrap(), last);
            assert!(a[1] - a[0] >= b[1] - b[0] && a[1] - a[0] - (b[1] - b[0]) <= 1);
        }
        assert_eq!(backward_n([1, 2], 4, 4), [1, 2]);
        assert_eq!(backward_n([1, 2], 1, 4), [0, 1]);
    }
}

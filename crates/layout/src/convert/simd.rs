//! Copy primitives of the relayout kernels: a byte copy that can use non-temporal
//! (streaming) stores, and the 2-byte `(2,1)` interleave / de-interleave. On x86_64 they
//! use SSE2 (part of the x86_64 baseline) and, when the CPU has them (runtime detection,
//! [`Isa::detect`]), AVX2 or AVX-512BW; elsewhere they fall back to scalar code that
//! computes the same bytes.
//!
//! With AVX-512 every streaming store covers a whole 64-byte cache line, so its
//! write-combining buffer is flushed as one full-line write at once. With 16-byte stores
//! a line needs four stores, and when a kernel writes several destination rows in turn
//! (the de-interleave writes 8 rows of 256 bytes per tile) lines may be flushed partly
//! written: measured on the 2-core Xeon VM, the bf16 `(2,1)` de-interleave ran at
//! 0.58 of memcpy with SSE2 streaming stores, 0.77 with AVX2 and 1.00 with AVX-512.
//!
//! Streaming stores skip the read-for-ownership of destination cache lines, so a copy of
//! a buffer much larger than the caches moves 2 bytes of memory traffic per byte instead
//! of 3 (as glibc's `memcpy` does for large copies). Callers that used them must call
//! [`store_fence`] before their writes are handed to another thread.

/// The widest vector instruction set the kernels may use on this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) enum Isa {
    /// SSE2 on x86_64 (always there), scalar code elsewhere.
    Base,
    /// AVX2 (32-byte vectors).
    Avx2,
    /// AVX-512F + AVX-512BW (64-byte vectors, 16-bit permutes); only when the compiler
    /// has the intrinsics (`cfg(tpusim_avx512)`, see build.rs).
    #[cfg_attr(not(tpusim_avx512), allow(dead_code))]
    Avx512,
}

impl Isa {
    /// The best level this CPU supports (runtime detection; std caches the answer).
    pub(super) fn detect() -> Isa {
        #[cfg(all(target_arch = "x86_64", tpusim_avx512))]
        #[allow(clippy::incompatible_msrv)] // compiled only on Rust ≥ 1.89 (build.rs)
        if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") {
            return Isa::Avx512;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Base
    }

    /// Every level this CPU supports, lowest first (for tests).
    #[cfg(test)]
    pub(super) fn all_supported() -> Vec<Isa> {
        [Isa::Base, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .filter(|&i| i <= Isa::detect())
            .collect()
    }
}

/// Copy `len` bytes from `src` to `dst`; with `stream`, use non-temporal stores for the
/// aligned body of the destination (64-byte stores with [`Isa::Avx512`]).
///
/// # Safety
/// Both ranges must be valid for `len` bytes and must not overlap; `isa` must be
/// supported by this CPU (from [`Isa::detect`]).
#[inline]
pub(super) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize, stream: bool, isa: Isa) {
    #[cfg(target_arch = "x86_64")]
    if stream && len >= 64 {
        #[cfg(tpusim_avx512)]
        if isa == Isa::Avx512 {
            return stream_copy_avx512(src, dst, len);
        }
        return stream_copy(src, dst, len);
    }
    let _ = (stream, isa);
    std::ptr::copy_nonoverlapping(src, dst, len);
}

#[cfg(all(target_arch = "x86_64", tpusim_avx512))]
#[allow(clippy::incompatible_msrv)] // compiled only on Rust ≥ 1.89 (build.rs)
#[target_feature(enable = "avx512f")]
unsafe fn stream_copy_avx512(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{_mm512_loadu_si512, _mm512_stream_si512};
    let head = dst.align_offset(64).min(len);
    std::ptr::copy_nonoverlapping(src, dst, head);
    let mut i = head;
    while i + 64 <= len {
        let v = _mm512_loadu_si512(src.add(i) as *const _);
        _mm512_stream_si512(dst.add(i) as *mut _, v);
        i += 64;
    }
    std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
}

#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn stream_copy(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    let head = dst.align_offset(16).min(len);
    std::ptr::copy_nonoverlapping(src, dst, head);
    let mut i = head;
    while i + 64 <= len {
        let s = src.add(i) as *const __m128i;
        let d = dst.add(i) as *mut __m128i;
        let (a, b, c, e) = (
            _mm_loadu_si128(s),
            _mm_loadu_si128(s.add(1)),
            _mm_loadu_si128(s.add(2)),
            _mm_loadu_si128(s.add(3)),
        );
        _mm_stream_si128(d, a);
        _mm_stream_si128(d.add(1), b);
        _mm_stream_si128(d.add(2), c);
        _mm_stream_si128(d.add(3), e);
        i += 64;
    }
    while i + 16 <= len {
        _mm_stream_si128(
            dst.add(i) as *mut __m128i,
            _mm_loadu_si128(src.add(i) as *const __m128i),
        );
        i += 16;
    }
    std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
}

/// Order this thread's earlier streaming stores before its later stores (`sfence`).
#[inline]
pub(super) fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no preconditions (SSE is part of the x86_64 baseline).
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// 2-byte elements: `out[2j] = a[j]`, `out[2j+1] = b[j]` for `j < n` (the `(2,1)`
/// packing of two rows into 4-byte pairs).
///
/// # Safety
/// `a` and `b` valid for `2n` bytes, `out` for `4n` bytes, no overlap with the inputs;
/// `isa` supported by this CPU.
#[inline]
pub(super) unsafe fn interleave2_u16(
    a: *const u8,
    b: *const u8,
    out: *mut u8,
    n: usize,
    stream: bool,
    isa: Isa,
) {
    let mut j = 0;
    #[cfg(all(target_arch = "x86_64", tpusim_avx512))]
    if isa == Isa::Avx512 {
        j = interleave2_u16_avx512(a, b, out, n, stream);
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let nt = stream && (out as usize) % 16 == 0;
        while j + 8 <= n {
            let va = _mm_loadu_si128(a.add(2 * j) as *const __m128i);
            let vb = _mm_loadu_si128(b.add(2 * j) as *const __m128i);
            let lo = _mm_unpacklo_epi16(va, vb);
            let hi = _mm_unpackhi_epi16(va, vb);
            let d = out.add(4 * j) as *mut __m128i;
            if nt {
                _mm_stream_si128(d, lo);
                _mm_stream_si128(d.add(1), hi);
            } else {
                _mm_storeu_si128(d, lo);
                _mm_storeu_si128(d.add(1), hi);
            }
            j += 8;
        }
    }
    let _ = (stream, isa);
    while j < n {
        std::ptr::copy_nonoverlapping(a.add(2 * j), out.add(4 * j), 2);
        std::ptr::copy_nonoverlapping(b.add(2 * j), out.add(4 * j + 2), 2);
        j += 1;
    }
}

/// The inverse of [`interleave2_u16`]: `a[j] = inp[2j]`, `b[j] = inp[2j+1]` for `j < n`.
///
/// # Safety
/// `inp` valid for `4n` bytes, `a` and `b` for `2n` bytes, no overlaps; `isa` supported
/// by this CPU.
#[inline]
pub(super) unsafe fn deinterleave2_u16(
    inp: *const u8,
    a: *mut u8,
    b: *mut u8,
    n: usize,
    stream: bool,
    isa: Isa,
) {
    let mut j = 0;
    #[cfg(target_arch = "x86_64")]
    match isa {
        #[cfg(tpusim_avx512)]
        Isa::Avx512 => j = deinterleave2_u16_avx512(inp, a, b, n, stream),
        Isa::Avx2 => j = deinterleave2_u16_avx2(inp, a, b, n, stream),
        _ => {}
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let nt = stream && (a as usize) % 16 == 0 && (b as usize) % 16 == 0;
        while j + 8 <= n {
            let x0 = _mm_loadu_si128(inp.add(4 * j) as *const __m128i);
            let x1 = _mm_loadu_si128(inp.add(4 * j + 16) as *const __m128i);
            // Sign-extend each 16-bit half into 32 bits, then the signed saturating pack
            // is exact: even halves → `a`, odd halves → `b`.
            let e0 = _mm_srai_epi32::<16>(_mm_slli_epi32::<16>(x0));
            let e1 = _mm_srai_epi32::<16>(_mm_slli_epi32::<16>(x1));
            let o0 = _mm_srai_epi32::<16>(x0);
            let o1 = _mm_srai_epi32::<16>(x1);
            let va = _mm_packs_epi32(e0, e1);
            let vb = _mm_packs_epi32(o0, o1);
            let (da, db) = (a.add(2 * j) as *mut __m128i, b.add(2 * j) as *mut __m128i);
            if nt {
                _mm_stream_si128(da, va);
                _mm_stream_si128(db, vb);
            } else {
                _mm_storeu_si128(da, va);
                _mm_storeu_si128(db, vb);
            }
            j += 8;
        }
    }
    let _ = (stream, isa);
    while j < n {
        std::ptr::copy_nonoverlapping(inp.add(4 * j), a.add(2 * j), 2);
        std::ptr::copy_nonoverlapping(inp.add(4 * j + 2), b.add(2 * j), 2);
        j += 1;
    }
}

/// AVX-512BW body of [`interleave2_u16`]: 32 pairs per step with `vpermt2w`; returns
/// how many elements it did (a multiple of 32). Streams only into a 64-byte-aligned
/// `out`, so that every store is one whole cache line.
///
/// # Safety
/// As [`interleave2_u16`]; the CPU must have AVX-512F and AVX-512BW.
#[cfg(all(target_arch = "x86_64", tpusim_avx512))]
#[allow(clippy::incompatible_msrv)] // compiled only on Rust ≥ 1.89 (build.rs)
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn interleave2_u16_avx512(
    a: *const u8,
    b: *const u8,
    out: *mut u8,
    n: usize,
    stream: bool,
) -> usize {
    use std::arch::x86_64::*;
    // Output word k of the low half takes a[k/2] (k even) or b[k/2] (k odd, index + 32
    // selects the second table); the high half the same from element 16 on.
    let lo = _mm512_set_epi16(
        47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6, 37, 5, 36, 4,
        35, 3, 34, 2, 33, 1, 32, 0,
    );
    let hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
    let nt = stream && (out as usize) % 64 == 0;
    let mut j = 0;
    while j + 32 <= n {
        let va = _mm512_loadu_si512(a.add(2 * j) as *const _);
        let vb = _mm512_loadu_si512(b.add(2 * j) as *const _);
        let x = _mm512_permutex2var_epi16(va, lo, vb);
        let y = _mm512_permutex2var_epi16(va, hi, vb);
        let d = out.add(4 * j);
        if nt {
            _mm512_stream_si512(d as *mut _, x);
            _mm512_stream_si512(d.add(64) as *mut _, y);
        } else {
            _mm512_storeu_si512(d as *mut _, x);
            _mm512_storeu_si512(d.add(64) as *mut _, y);
        }
        j += 32;
    }
    j
}

/// AVX-512BW body of [`deinterleave2_u16`]: 32 pairs per step with `vpermt2w`; returns
/// how many elements it did (a multiple of 32). Streams only when both outputs are
/// 64-byte aligned.
///
/// # Safety
/// As [`deinterleave2_u16`]; the CPU must have AVX-512F and AVX-512BW.
#[cfg(all(target_arch = "x86_64", tpusim_avx512))]
#[allow(clippy::incompatible_msrv)] // compiled only on Rust ≥ 1.89 (build.rs)
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn deinterleave2_u16_avx512(
    inp: *const u8,
    a: *mut u8,
    b: *mut u8,
    n: usize,
    stream: bool,
) -> usize {
    use std::arch::x86_64::*;
    let even = _mm512_set_epi16(
        62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28, 26, 24, 22, 20, 18,
        16, 14, 12, 10, 8, 6, 4, 2, 0,
    );
    let odd = _mm512_add_epi16(even, _mm512_set1_epi16(1));
    let nt = stream && (a as usize) % 64 == 0 && (b as usize) % 64 == 0;
    let mut j = 0;
    while j + 32 <= n {
        let x0 = _mm512_loadu_si512(inp.add(4 * j) as *const _);
        let x1 = _mm512_loadu_si512(inp.add(4 * j + 64) as *const _);
        let va = _mm512_permutex2var_epi16(x0, even, x1);
        let vb = _mm512_permutex2var_epi16(x0, odd, x1);
        let (da, db) = (a.add(2 * j), b.add(2 * j));
        if nt {
            _mm512_stream_si512(da as *mut _, va);
            _mm512_stream_si512(db as *mut _, vb);
        } else {
            _mm512_storeu_si512(da as *mut _, va);
            _mm512_storeu_si512(db as *mut _, vb);
        }
        j += 32;
    }
    j
}

/// AVX2 body of [`deinterleave2_u16`]: 16 pairs per step (mask / shift, `vpackusdw`,
/// then `vpermq` to undo the per-lane packing); returns how many elements it did.
/// Streams only when both outputs are 32-byte aligned.
///
/// # Safety
/// As [`deinterleave2_u16`]; the CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn deinterleave2_u16_avx2(
    inp: *const u8,
    a: *mut u8,
    b: *mut u8,
    n: usize,
    stream: bool,
) -> usize {
    use std::arch::x86_64::*;
    let mask = _mm256_set1_epi32(0xFFFF);
    let nt = stream && (a as usize) % 32 == 0 && (b as usize) % 32 == 0;
    let mut j = 0;
    while j + 16 <= n {
        let x0 = _mm256_loadu_si256(inp.add(4 * j) as *const __m256i);
        let x1 = _mm256_loadu_si256(inp.add(4 * j + 32) as *const __m256i);
        let e = _mm256_packus_epi32(_mm256_and_si256(x0, mask), _mm256_and_si256(x1, mask));
        let o = _mm256_packus_epi32(_mm256_srli_epi32::<16>(x0), _mm256_srli_epi32::<16>(x1));
        let va = _mm256_permute4x64_epi64::<0xD8>(e);
        let vb = _mm256_permute4x64_epi64::<0xD8>(o);
        let (da, db) = (a.add(2 * j) as *mut __m256i, b.add(2 * j) as *mut __m256i);
        if nt {
            _mm256_stream_si256(da, va);
            _mm256_stream_si256(db, vb);
        } else {
            _mm256_storeu_si256(da, va);
            _mm256_storeu_si256(db, vb);
        }
        j += 16;
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zeroed buffer of `len + 64` bytes and the offset of its first 64-byte-aligned
    /// byte, so that tests reach the aligned streaming paths.
    fn aligned(len: usize) -> (Vec<u8>, usize) {
        let v = vec![0u8; len + 64];
        let o = v.as_ptr().align_offset(64);
        (v, o)
    }

    #[test]
    fn interleave_roundtrip_matches_scalar_all_lengths_and_offsets() {
        for n in 0..100usize {
            for off in [0usize, 1, 2, 32, 64] {
                let a: Vec<u8> = (0..2 * n).map(|i| (i * 7 + 1) as u8).collect();
                let b: Vec<u8> = (0..2 * n).map(|i| (i * 13 + 200) as u8).collect();
                for (stream, isa) in [false, true]
                    .into_iter()
                    .flat_map(|s| Isa::all_supported().into_iter().map(move |i| (s, i)))
                {
                    let (mut out, base) = aligned(4 * n + off);
                    let out = &mut out[base..base + 4 * n + off];
                    unsafe {
                        interleave2_u16(
                            a.as_ptr(),
                            b.as_ptr(),
                            out.as_mut_ptr().add(off),
                            n,
                            stream,
                            isa,
                        )
                    };
                    store_fence();
                    for j in 0..n {
                        assert_eq!(out[off + 4 * j..off + 4 * j + 2], a[2 * j..2 * j + 2]);
                        assert_eq!(out[off + 4 * j + 2..off + 4 * j + 4], b[2 * j..2 * j + 2]);
                    }
                    let ((mut ra, ba), (mut rb, bb)) = (aligned(2 * n + off), aligned(2 * n));
                    let (ra, rb) = (&mut ra[ba..ba + 2 * n + off], &mut rb[bb..bb + 2 * n]);
                    unsafe {
                        deinterleave2_u16(
                            out.as_ptr().add(off),
                            ra.as_mut_ptr().add(off),
                            rb.as_mut_ptr(),
                            n,
                            stream,
                            isa,
                        )
                    };
                    store_fence();
                    assert_eq!(ra[off..], a[..]);
                    assert_eq!(rb[..], b[..]);
                }
            }
        }
    }

    #[test]
    fn stream_copy_matches_source_for_all_lengths_and_offsets() {
        let src: Vec<u8> = (0..300).map(|i| (i * 31 % 251) as u8).collect();
        for len in [0, 1, 15, 16, 63, 64, 65, 100, 255, 256, 299] {
            for off in 0..70 {
                for isa in Isa::all_supported() {
                    let (mut dst, base) = aligned(len + off);
                    let dst = &mut dst[base..base + len + off];
                    unsafe { copy_bytes(src.as_ptr(), dst.as_mut_ptr().add(off), len, true, isa) };
                    store_fence();
                    assert_eq!(dst[off..], src[..len]);
                }
            }
        }
    }
}

//! Copy primitives of the relayout kernels: a byte copy that can use non-temporal
//! (streaming) stores, and the 2-byte `(2,1)` interleave / de-interleave. On x86_64 they
//! use SSE2 (part of the x86_64 baseline, so no runtime detection is needed); elsewhere
//! they fall back to scalar code that computes the same bytes.
//!
//! Streaming stores skip the read-for-ownership of destination cache lines, so a copy of
//! a buffer much larger than the caches moves 2 bytes of memory traffic per byte instead
//! of 3 (as glibc's `memcpy` does for large copies). Callers that used them must call
//! [`store_fence`] before their writes are handed to another thread.

/// Copy `len` bytes from `src` to `dst`; with `stream`, use non-temporal stores for the
/// 16-byte-aligned body of the destination.
///
/// # Safety
/// Both ranges must be valid for `len` bytes and must not overlap.
#[inline]
pub(super) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize, stream: bool) {
    #[cfg(target_arch = "x86_64")]
    if stream && len >= 64 {
        return stream_copy(src, dst, len);
    }
    let _ = stream;
    std::ptr::copy_nonoverlapping(src, dst, len);
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
/// `a` and `b` valid for `2n` bytes, `out` for `4n` bytes, no overlap with the inputs.
#[inline]
pub(super) unsafe fn interleave2_u16(
    a: *const u8,
    b: *const u8,
    out: *mut u8,
    n: usize,
    stream: bool,
) {
    let mut j = 0;
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
    let _ = stream;
    while j < n {
        std::ptr::copy_nonoverlapping(a.add(2 * j), out.add(4 * j), 2);
        std::ptr::copy_nonoverlapping(b.add(2 * j), out.add(4 * j + 2), 2);
        j += 1;
    }
}

/// The inverse of [`interleave2_u16`]: `a[j] = inp[2j]`, `b[j] = inp[2j+1]` for `j < n`.
///
/// # Safety
/// `inp` valid for `4n` bytes, `a` and `b` for `2n` bytes, no overlaps.
#[inline]
pub(super) unsafe fn deinterleave2_u16(
    inp: *const u8,
    a: *mut u8,
    b: *mut u8,
    n: usize,
    stream: bool,
) {
    let mut j = 0;
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
    let _ = stream;
    while j < n {
        std::ptr::copy_nonoverlapping(inp.add(4 * j), a.add(2 * j), 2);
        std::ptr::copy_nonoverlapping(inp.add(4 * j + 2), b.add(2 * j), 2);
        j += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleave_roundtrip_matches_scalar_all_lengths_and_offsets() {
        for n in 0..40usize {
            for off in 0..3usize {
                let a: Vec<u8> = (0..2 * n).map(|i| (i * 7 + 1) as u8).collect();
                let b: Vec<u8> = (0..2 * n).map(|i| (i * 13 + 200) as u8).collect();
                for stream in [false, true] {
                    let mut out = vec![0u8; 4 * n + off];
                    unsafe {
                        interleave2_u16(
                            a.as_ptr(),
                            b.as_ptr(),
                            out.as_mut_ptr().add(off),
                            n,
                            stream,
                        )
                    };
                    store_fence();
                    for j in 0..n {
                        assert_eq!(out[off + 4 * j..off + 4 * j + 2], a[2 * j..2 * j + 2]);
                        assert_eq!(out[off + 4 * j + 2..off + 4 * j + 4], b[2 * j..2 * j + 2]);
                    }
                    let (mut ra, mut rb) = (vec![0u8; 2 * n + off], vec![0u8; 2 * n]);
                    unsafe {
                        deinterleave2_u16(
                            out.as_ptr().add(off),
                            ra.as_mut_ptr().add(off),
                            rb.as_mut_ptr(),
                            n,
                            stream,
                        )
                    };
                    store_fence();
                    assert_eq!(ra[off..], a[..]);
                    assert_eq!(rb, b);
                }
            }
        }
    }

    #[test]
    fn stream_copy_matches_source_for_all_lengths_and_offsets() {
        let src: Vec<u8> = (0..300).map(|i| (i * 31 % 251) as u8).collect();
        for len in [0, 1, 15, 16, 63, 64, 65, 100, 255, 256, 299] {
            for off in 0..17 {
                let mut dst = vec![0u8; len + off];
                unsafe { copy_bytes(src.as_ptr(), dst.as_mut_ptr().add(off), len, true) };
                store_fence();
                assert_eq!(dst[off..], src[..len]);
            }
        }
    }
}

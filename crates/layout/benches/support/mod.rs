//! Buffers shared by the layout benchmarks (`benches/convert.rs`, `benches/ratio.rs`)
//! and the in-memory timer `examples/relayout_time.rs`: 64-byte-aligned pre-faulted
//! vectors and fresh anonymous mappings (the kind numpy's new arrays get).
// Each including target uses part of this module.
#![allow(dead_code)]

/// A buffer of `n + 64` bytes, every byte written (so every page is faulted in), and
/// the offset at which its 64-byte-aligned `n` bytes start.
pub fn aligned(n: usize) -> (Vec<u8>, usize) {
    let v = vec![1u8; n + 64];
    let off = v.as_ptr().align_offset(64);
    (v, off)
}

/// Fill a source buffer with a byte pattern that repeats every 253 bytes (prime, so no
/// tile or row size lines up with it and a misplaced element shows).
pub fn fill_pattern(buf: &mut [u8]) {
    buf.iter_mut()
        .enumerate()
        .for_each(|(i, x)| *x = (i % 253) as u8);
}

/// A fresh anonymous private mapping of `len` bytes (zero pages until first written),
/// optionally advised MADV_HUGEPAGE (what numpy does for every allocation of 4 MiB or
/// more on Linux); unmapped on drop.
pub struct Anon {
    ptr: *mut u8,
    len: usize,
}

impl Anon {
    pub fn new(len: usize, thp: bool) -> Anon {
        // SAFETY: a new anonymous mapping; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert!(p != libc::MAP_FAILED, "mmap of {len} bytes failed");
        if thp {
            // SAFETY: advising our own fresh mapping.
            unsafe { libc::madvise(p, len, libc::MADV_HUGEPAGE) };
        }
        Anon {
            ptr: p as *mut u8,
            len,
        }
    }

    pub fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes, readable and writable, and ours alone.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Anon {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping created in `new`, exactly once.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

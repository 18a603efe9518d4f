//! `tpusim layout convert`: move real data between two layouts. Untiled row-major sides
//! are `.npy` files, other sides raw physical bytes. Both files are memory-mapped; the
//! output is written to a temporary file in the same folder and renamed at the end.
//!
//! Large conversions (input + output ≥ [`PIECEWISE_MIN_BYTES`]) go piece by piece when the
//! layouts split along dim 0 ([`split_major`]; the TPU tilings do): bands of about
//! [`PIECE_BYTES`], the next band's input read ahead (`MADV_WILLNEED`), each finished
//! band's output written back at once (`sync_file_range`) and, one band later, waited
//! for and dropped from this process and the page cache together with its input
//! (`MADV_DONTNEED`, `POSIX_FADV_DONTNEED`). Memory use stays at a few bands whatever the
//! array size, and the conversion does not push other programs' data out of the page
//! cache. Other layouts convert in one piece (the OS pages data in and out). The output
//! pages of a piece (or of a whole output under 1 GiB) are faulted in with one
//! `MADV_POPULATE_WRITE` call before the kernel writes them.

use super::array;
use crate::output;
use crate::util::print_json;
use anyhow::{anyhow, bail, Context, Result};
use std::fs::File;
use std::path::Path;
use std::time::Instant;
use tpusim_layout::npy::{self, is_npy, npy_header};
use tpusim_layout::{split_major, ArrayShape, Piece, Relayout};

/// Input + output bytes from which a conversion goes piece by piece (1 GiB).
const PIECEWISE_MIN_BYTES: u64 = 1 << 30;

/// Bytes per piece of the larger side (256 MiB): large enough that the rayon tasks and
/// the disk both see long runs, small enough that a few pieces fit in any machine's RAM.
const PIECE_BYTES: u64 = 256 << 20;

/// A file named `.npy` must be one: refuse a side whose layout is not row-major.
fn check_npy_name(path: &Path, side: &ArrayShape, flag: &str) -> Result<()> {
    let named_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if named_npy && !is_npy(side) {
        bail!(
            "'{}' is named .npy but {flag} '{side}' is not an untiled row-major layout, so \
             its bytes are not an array numpy can load; name the file .bin for raw \
             physical bytes, or use a row-major layout",
            path.display()
        );
    }
    Ok(())
}

/// Bytes available to this user on the file system holding `f` (None when unknown).
fn free_bytes(f: &File) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
        // SAFETY: a plain system call on our own open file filling a zeroed struct.
        if unsafe { libc::fstatvfs(f.as_raw_fd(), st.as_mut_ptr()) } == 0 {
            // SAFETY: fstatvfs succeeded, so it initialised the struct.
            let st = unsafe { st.assume_init() };
            // fsblkcnt_t and c_ulong are u64 here but 32 bits on some targets.
            #[allow(clippy::unnecessary_cast)]
            return Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64));
        }
    }
    let _ = f;
    None
}

/// Run the conversion; `piece_bytes` overrides the automatic piecewise mode (see
/// [`PIECEWISE_MIN_BYTES`]).
pub fn run(
    from: &str,
    to: &str,
    input: &Path,
    output: &Path,
    piece_bytes: Option<u64>,
    reinterpret: bool,
    json: bool,
) -> Result<()> {
    if piece_bytes == Some(0) {
        bail!("--piece-bytes must be at least 1");
    }
    let a = array(from).context("--from")?;
    let b = array(to).context("--to")?;
    check_npy_name(input, &a, "--from")?;
    check_npy_name(output, &b, "--to")?;
    let plan = Relayout::new(&a, &b)?;
    let file = File::open(input).with_context(|| format!("cannot open '{}'", input.display()))?;
    // SAFETY: the file is mapped read-only; concurrent modification by another process
    // would only garble the output, never memory safety of this process's own data.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .with_context(|| format!("cannot map '{}'", input.display()))?;
    let src: &[u8] = if is_npy(&a) {
        let off = npy::data_offset(&map, &a, reinterpret)
            .map_err(|e| anyhow!("'{}' {e}", input.display()))?;
        let end = off
            .checked_add(plan.src_bytes() as usize)
            .filter(|&e| e <= map.len())
            .ok_or_else(|| anyhow!("'{}' is shorter than its header says", input.display()))?;
        &map[off..end]
    } else {
        if map.len() as u64 != plan.src_bytes() {
            bail!(
                "'{}' has {} bytes but {a} occupies {} bytes (array_size_bytes)",
                input.display(),
                map.len(),
                plan.src_bytes()
            );
        }
        &map[..]
    };
    let header = if is_npy(&b) {
        let dims: Vec<u64> = b.dims.iter().filter_map(|d| d.allocated()).collect();
        npy_header(b.element_type, &dims)
    } else {
        Vec::new()
    };
    let total = header.len() as u64 + plan.dst_bytes();
    let target = output::resolve(output)?;
    if let output::Target::Special(_) = target {
        bail!(
            "'{}' is not a regular file: layout convert writes a regular file it can memory-map",
            output.display()
        );
    }
    let dir = output::folder_of(target.path()).to_path_buf();
    let tmp = output::Staged::create(output, target)?;
    // A tiny input can ask for an enormous padded output (f32[1,1] → T(1048576,1048576)
    // is 4 TiB): refuse before writing what cannot fit instead of filling the disk.
    if let Some(free) = free_bytes(tmp.file()) {
        if total > free {
            bail!(
                "the output needs {total} bytes but '{}' has only {free} bytes free",
                dir.display()
            );
        }
    }
    tmp.file()
        .set_len(total)
        .with_context(|| format!("cannot size '{}' to {total} bytes", output.display()))?;
    let pieces = match piece_bytes {
        Some(n) => split_major(&a, &b, n)?,
        None if plan.src_bytes().saturating_add(plan.dst_bytes()) >= PIECEWISE_MIN_BYTES => {
            split_major(&a, &b, PIECE_BYTES)?
        }
        None => None,
    };
    let n_pieces = pieces.as_ref().map_or(1, Vec::len);
    let start = Instant::now();
    let mut relayout_seconds = 0.0;
    if total > 0 {
        // SAFETY: the temporary file is ours alone until it is persisted.
        let mut out = unsafe { memmap2::MmapMut::map_mut(tmp.file()) }
            .with_context(|| format!("cannot map '{}'", output.display()))?;
        out[..header.len()].copy_from_slice(&header);
        match &pieces {
            None => {
                let kernel = Instant::now();
                let dst = &mut out[header.len()..];
                // Prefault in one call, unless the output is so large that pages
                // faulted early might be written back and evicted before the kernel
                // reaches them (a layout that does not split along dim 0).
                if (dst.len() as u64) < PIECEWISE_MIN_BYTES {
                    page_advice::populate_write(dst);
                }
                plan.run(src, dst)?;
                relayout_seconds = kernel.elapsed().as_secs_f64();
            }
            Some(pieces) => {
                let io = PieceIo {
                    input: &file,
                    output: tmp.file(),
                    src_file_offset: (src.as_ptr() as usize - map.as_ptr() as usize) as u64,
                    dst_file_offset: header.len() as u64,
                };
                relayout_seconds = io.run(pieces, src, &mut out[header.len()..])?;
            }
        }
        out.flush()
            .with_context(|| format!("cannot write '{}'", output.display()))?;
    }
    let seconds = start.elapsed().as_secs_f64();
    tmp.publish()?;
    if json {
        return print_json(&serde_json::json!({
            "from": a.to_string(), "to": b.to_string(),
            "input_bytes": plan.src_bytes(), "output_bytes": total,
            "seconds": seconds,
            // 1, or the number of dim-0 bands a large conversion went through.
            "pieces": n_pieces,
            // The kernel alone, including the first-touch faults of the mapped output
            // (prefaulted with MADV_POPULATE_WRITE just before it), not the flush to
            // disk that `seconds` also counts.
            "relayout_seconds": relayout_seconds,
        }));
    }
    println!(
        "{} ({} B) -> {} ({} B) in {:.3} s",
        a,
        plan.src_bytes(),
        b,
        total,
        seconds
    );
    Ok(())
}

/// The two files of a piecewise conversion and where the converted bytes start in them.
struct PieceIo<'a> {
    input: &'a File,
    output: &'a File,
    src_file_offset: u64,
    dst_file_offset: u64,
}

impl PieceIo<'_> {
    /// Convert piece by piece (see the module doc); returns the seconds spent in the
    /// kernel (not waiting for the disk).
    fn run(&self, pieces: &[Piece], src: &[u8], dst: &mut [u8]) -> Result<f64> {
        let mut kernel = 0.0;
        if let Some(p) = pieces.first() {
            page_advice::will_need(src, &p.src);
        }
        for (k, p) in pieces.iter().enumerate() {
            if let Some(next) = pieces.get(k + 1) {
                page_advice::will_need(src, &next.src);
            }
            let (s, d) = (
                &src[p.src.start as usize..p.src.end as usize],
                &mut dst[p.dst.start as usize..p.dst.end as usize],
            );
            let t = Instant::now();
            page_advice::populate_write(d);
            p.relayout.run(s, d)?;
            kernel += t.elapsed().as_secs_f64();
            page_advice::start_writeback(self.output, self.dst_file_offset, &p.dst);
            if k > 0 {
                self.retire(&pieces[k - 1], src, dst)?;
            }
        }
        if let Some(p) = pieces.last() {
            self.retire(p, src, dst)?;
        }
        Ok(kernel)
    }

    /// Wait until a finished piece's output is on disk, then drop both of its ranges
    /// from this process and from the page cache.
    fn retire(&self, p: &Piece, src: &[u8], dst: &mut [u8]) -> Result<()> {
        page_advice::wait_writeback(self.output, self.dst_file_offset, &p.dst)
            .context("cannot write the output")?;
        page_advice::drop_pages(dst.as_ptr(), self.output, self.dst_file_offset, &p.dst);
        page_advice::drop_pages(src.as_ptr(), self.input, self.src_file_offset, &p.src);
        Ok(())
    }
}

/// Page-cache hints for piecewise conversion. They change only performance and memory
/// use, never the bytes written; on non-Linux systems they do nothing.
mod page_advice {
    use std::fs::File;
    use std::ops::Range;

    #[cfg(target_os = "linux")]
    fn page() -> usize {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            p as usize
        } else {
            4096
        }
    }

    /// Ask the kernel to read `range` of the mapped buffer `buf` ahead (asynchronously).
    pub(super) fn will_need(buf: &[u8], range: &Range<u64>) {
        #[cfg(target_os = "linux")]
        {
            let pg = page();
            let base = buf.as_ptr() as usize;
            let lo = (base + range.start as usize) / pg * pg;
            let hi = base + range.end as usize;
            if hi > lo {
                // SAFETY: advisory only; the range lies within (or, rounded down to a page,
                // at the start of) the mapping that backs `buf`.
                unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_WILLNEED) };
            }
        }
        let _ = (buf, range);
    }

    /// Fault in every page of the freshly mapped output `buf` for writing, in one system
    /// call (`MADV_POPULATE_WRITE`, Linux ≥ 5.14; older kernels refuse it and the kernel
    /// faults pages in as it writes). Measured on f32[8192,8192] → T(8,128) into a new
    /// 256 MiB file: populate + relayout 0.13–0.29 s against 0.17–0.54 s of page faults
    /// taken inside the relayout (4 runs each, load average ~3.3).
    pub(super) fn populate_write(buf: &mut [u8]) {
        #[cfg(target_os = "linux")]
        {
            let pg = page();
            let base = buf.as_mut_ptr() as usize;
            let lo = base / pg * pg;
            let hi = base + buf.len();
            if hi > lo {
                // SAFETY: advisory; [lo, hi) is the writable shared mapping behind `buf`
                // (rounded down to its page); populating only faults pages in, it never
                // changes their contents.
                unsafe {
                    libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_POPULATE_WRITE)
                };
            }
        }
        let _ = buf;
    }

    /// `sync_file_range` of `range` (file offset `off + range`) with `flags`; 0 on
    /// success (and off Linux, where there is nothing to do).
    fn sync_range(f: &File, off: u64, range: &Range<u64>, flags: u32) -> i32 {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a plain system call on our own open file.
            unsafe {
                libc::sync_file_range(
                    f.as_raw_fd(),
                    (off + range.start) as libc::off64_t,
                    (range.end - range.start) as libc::off64_t,
                    flags,
                )
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (f, off, range, flags);
            0
        }
    }

    /// Start writing back the dirty pages of `range` (file offset `off + range`);
    /// errors are reported by `wait_writeback` or the final msync.
    pub(super) fn start_writeback(f: &File, off: u64, range: &Range<u64>) {
        #[cfg(target_os = "linux")]
        sync_range(f, off, range, libc::SYNC_FILE_RANGE_WRITE);
        #[cfg(not(target_os = "linux"))]
        sync_range(f, off, range, 0);
    }

    /// Wait until `range` (file offset `off + range`) is written back.
    pub(super) fn wait_writeback(f: &File, off: u64, range: &Range<u64>) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE
            | libc::SYNC_FILE_RANGE_WRITE
            | libc::SYNC_FILE_RANGE_WAIT_AFTER;
        #[cfg(not(target_os = "linux"))]
        let flags = 0;
        if sync_range(f, off, range, flags) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Drop the whole pages of `range` of the mapping starting at `base` from this
    /// process (`MADV_DONTNEED`: shared file pages stay in the file) and from the page
    /// cache (`POSIX_FADV_DONTNEED`: clean pages only, so call after write-back).
    pub(super) fn drop_pages(base: *const u8, f: &File, off: u64, range: &Range<u64>) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let pg = page();
            let b = base as usize;
            let lo = (b + range.start as usize).div_ceil(pg) * pg;
            let hi = (b + range.end as usize) / pg * pg;
            if hi > lo {
                // SAFETY: [lo, hi) lies inside the shared file mapping that starts at
                // `base`; MADV_DONTNEED on a shared file mapping only unmaps pages (their
                // data stays in the file / page cache), and no reference into this range
                // is held across the call.
                unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_DONTNEED) };
            }
            // SAFETY: advisory system call on our own open file.
            unsafe {
                libc::posix_fadvise(
                    f.as_raw_fd(),
                    (off + range.start) as libc::off_t,
                    (range.end - range.start) as libc::off_t,
                    libc::POSIX_FADV_DONTNEED,
                )
            };
        }
        let _ = (base, f, off, range);
    }
}

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
use std::io::Cursor;
use std::path::Path;
use std::time::Instant;
use tpusim_layout::{split_major, ArrayShape, ElementType, Piece, Relayout};

/// Input + output bytes from which a conversion goes piece by piece (1 GiB).
const PIECEWISE_MIN_BYTES: u64 = 1 << 30;

/// Bytes per piece of the larger side (256 MiB): large enough that the rayon tasks and
/// the disk both see long runs, small enough that a few pieces fit in any machine's RAM.
const PIECE_BYTES: u64 = 256 << 20;

/// True when this side is stored as a `.npy` file: untiled, row-major, no attributes.
fn is_npy(a: &ArrayShape) -> bool {
    let l = a.layout_or_default();
    l.is_plain() && l.minor_to_major == (0..a.rank() as u64).rev().collect::<Vec<_>>()
}

/// numpy dtype written for an element type (bf16 and f8 types as unsigned ints).
fn npy_descr(t: ElementType) -> String {
    let n = t.storage_bytes();
    let kind = if t == ElementType::Pred {
        'b'
    } else if t.name() == "c64" || t.name() == "c128" {
        'c'
    } else if matches!(t.name(), "f16" | "f32" | "f64") {
        'f'
    } else if t.name().starts_with('s') {
        'i'
    } else {
        'u'
    };
    let endian = if n == 1 { '|' } else { '<' };
    format!("{endian}{kind}{n}")
}

fn npy_header(t: ElementType, dims: &[u64]) -> Vec<u8> {
    let shape = match dims.len() {
        0 => "()".to_string(),
        1 => format!("({},)", dims[0]),
        _ => format!(
            "({})",
            dims.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        npy_descr(t)
    );
    let total = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    dict.push('\n');
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    h.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h
}

/// True when the header's `'shape': (…)` tuple multiplies past u64 (npyz multiplies it
/// unchecked: a panic in builds with overflow checks). Unparsable headers are left to
/// npyz to report.
fn npy_shape_overflows(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1 << 16)]);
    let Some(rest) = head.split_once("'shape'").map(|(_, r)| r) else {
        return false;
    };
    let Some(tuple) = rest
        .split_once('(')
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(t, _)| t)
    else {
        return false;
    };
    let mut elements = 1u64;
    for t in tuple.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let Ok(d) = t.parse::<u64>() else {
            return false;
        };
        match elements.checked_mul(d) {
            Some(e) => elements = e,
            None => return true,
        }
    }
    false
}

/// Refuse a .npy dtype that only matches the element type in size (float16 for bf16,
/// uint32 for s32, …) unless the user asked to reinterpret the bytes. bf16 and the f8
/// types have no numpy dtype: their bits come as unsigned ints (as we write them) or
/// raw void (`V`, as ml_dtypes saves them).
fn check_npy_kind(descr: &str, t: ElementType, path: &Path, reinterpret: bool) -> Result<()> {
    let want = npy_descr(t);
    let kind = |d: &str| d.chars().nth(1).unwrap_or('?');
    let no_numpy_dtype = t.name() == "bf16" || t.name().starts_with("f8");
    let ok = kind(descr) == kind(&want) || (no_numpy_dtype && kind(descr) == 'V');
    if ok || reinterpret {
        return Ok(());
    }
    bail!(
        "'{}' holds dtype '{descr}' but {t} is stored as '{want}': the sizes match, the \
         meaning does not; pass --reinterpret to take the bytes as they are",
        path.display()
    )
}

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

/// Check an .npy header against the array; return the data offset in bytes.
fn npy_data_offset(bytes: &[u8], a: &ArrayShape, path: &Path, reinterpret: bool) -> Result<usize> {
    if npy_shape_overflows(bytes) {
        bail!(
            "'{}' has a .npy shape whose element count overflows 64 bits",
            path.display()
        );
    }
    // npyz's header errors draw the parse position over several lines: keep the first.
    let npy = npyz::NpyFile::new(Cursor::new(bytes)).map_err(|e| {
        let e = e.to_string();
        let first = e.lines().next().unwrap_or_default().trim_end();
        anyhow!("'{}' is not a .npy file: {first}", path.display())
    })?;
    let dims: Vec<u64> = a.dims.iter().filter_map(|d| d.allocated()).collect();
    if npy.shape() != dims.as_slice() {
        bail!(
            "'{}' has shape {:?} but {a} has dims {:?}",
            path.display(),
            npy.shape(),
            dims
        );
    }
    if npy.order() == npyz::Order::Fortran && dims.iter().filter(|&&d| d > 1).count() > 1 {
        bail!(
            "'{}' is in Fortran order; save it C-contiguous (np.ascontiguousarray)",
            path.display()
        );
    }
    let npyz::DType::Plain(ts) = npy.dtype() else {
        bail!(
            "'{}' has a structured dtype; a plain numeric dtype is needed",
            path.display()
        );
    };
    let size = ts.size_field();
    if size != a.element_type.storage_bytes() {
        bail!(
            "'{}' has {}-byte elements ({ts}) but {} needs {} bytes per element",
            path.display(),
            size,
            a.element_type,
            a.element_type.storage_bytes()
        );
    }
    check_npy_kind(&ts.to_string(), a.element_type, path, reinterpret)?;
    if size > 1 && ts.to_string().starts_with('>') {
        bail!(
            "'{}' is big-endian ({ts}); convert it to little-endian first",
            path.display()
        );
    }
    // Data starts after the header: v1 has a u16 header length at byte 8, v2/v3 a u32.
    let offset = match bytes.get(6) {
        Some(1) if bytes.len() >= 10 => 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize,
        Some(2 | 3) if bytes.len() >= 12 => {
            12 + u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize
        }
        _ => bail!("'{}': unknown .npy format version", path.display()),
    };
    Ok(offset)
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
        let off = npy_data_offset(&map, &a, input, reinterpret)?;
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

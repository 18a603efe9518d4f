//! Relayout kernels: move real array data between two layouts of the same array
//! (logical row-major ↔ tiled, tiled ↔ tiled directly), for elements of 1, 2, 4, 8 or
//! 16 bytes. Padding in the destination is written as zero.
//!
//! When no tile uses `*`, the physical index is a sum of one term per logical dim
//! ([`Geometry::dim_offsets`]); the kernel walks the logical array row by row (rows =
//! all dims but the most minor), splits the minor dim into runs of constant stride on
//! both sides, and copies runs with `memcpy` when both strides are 1. When the minor
//! dim is interleaved with the rows below it (the `(2,1)`, `(4,1)` packing tiles) it
//! copies a group of rows at once so that writes stay sequential. Row groups run in
//! parallel (rayon), in tasks of about [`TASK_BYTES`] of rows. Layouts with `*` use a
//! per-element path.
//!
//! Destinations of at least [`STREAM_MIN_BYTES`] are written with non-temporal stores
//! (see [`simd`]: full 64-byte lines with AVX-512, detected at run time, else SSE2); the
//! 2-byte `(2,1)` packing uses a vector interleave / de-interleave kernel (AVX-512BW
//! `vpermt2w`, AVX2 or SSE2). [`split_major`] cuts a conversion into contiguous bands of
//! dim 0 for callers that stream huge files.

use crate::error::{LayoutError, Result};
use crate::geometry::Geometry;
use crate::shape::ArrayShape;
use crate::size::sizes;
use rayon::prelude::*;

mod pieces;
mod simd;

pub use pieces::{split_major, Piece};

/// Rows handed to one rayon task: about this many source bytes (4 MiB), so that the two
/// cores balance even when other processes take one of them for a while.
const TASK_BYTES: u64 = 4 << 20;

/// Destination size (bytes) from which the kernels use streaming stores: well above the
/// per-core L2 (so the written data would not stay in cache anyway).
const STREAM_MIN_BYTES: usize = 16 << 20;

/// One side of a conversion: the mapping and the buffer size.
#[derive(Debug, Clone)]
struct Side {
    geom: Geometry,
    bytes: u64,
    /// Per logical dim: physical element offset of each coordinate (separable only).
    tables: Option<Vec<Vec<u64>>>,
}

/// A compiled conversion between two layouts of one array.
#[derive(Debug, Clone)]
pub struct Relayout {
    src: Side,
    dst: Side,
    elem_bytes: usize,
    dst_has_padding: bool,
}

/// A maximal run of the minor dim with constant strides on both sides.
#[derive(Debug, Clone, Copy)]
struct Run {
    /// Minor-dim contribution to the source offset at the run's start.
    s0: u64,
    /// Minor-dim contribution to the destination offset at the run's start.
    d0: u64,
    len: usize,
    src_step: u64,
    dst_step: u64,
}

fn side(a: &ArrayShape, role: &str) -> Result<Side> {
    let s = sizes(a)?;
    let l = a.layout_or_default();
    let eb = u64::from(a.element_type.storage_bits()) / 8;
    if s.element_bits != eb * 8 {
        return Err(LayoutError::Unsupported(format!(
            "{role} '{a}': packed elements (E({})) are not supported; only whole-byte elements convert",
            s.element_bits
        )));
    }
    if !l.split_configs.is_empty() {
        return Err(LayoutError::Unsupported(format!(
            "{role} '{a}': split configs (SC) describe separate allocations; convert each piece on its own"
        )));
    }
    if l.dynamic_shape_metadata_prefix_bytes != 0 {
        return Err(LayoutError::Unsupported(format!(
            "{role} '{a}': M(..) dynamic-shape metadata is not supported"
        )));
    }
    if s.exact_size_bytes != s.array_size_bytes {
        return Err(LayoutError::Unsupported(format!(
            "{role} '{a}': a later tile pads ({} bytes fully expanded vs {} allocated by XLA), so XLA's buffer cannot hold the expanded tiling",
            s.exact_size_bytes, s.array_size_bytes
        )));
    }
    let geom = Geometry::new(a)?;
    let tables = if geom.is_separable() {
        let t: Vec<Vec<u64>> = (0..a.rank()).filter_map(|k| geom.dim_offsets(k)).collect();
        Some(t)
    } else {
        None
    };
    Ok(Side {
        geom,
        bytes: s.array_size_bytes,
        tables,
    })
}

impl Relayout {
    /// Compile a conversion from `from` to `to`: same element type and dims required.
    pub fn new(from: &ArrayShape, to: &ArrayShape) -> Result<Relayout> {
        if from.element_type != to.element_type || from.dims != to.dims {
            return Err(LayoutError::Data(format!(
                "'{from}' and '{to}' are not the same array (type and dims must match)"
            )));
        }
        let eb = from.element_type.storage_bytes() as usize;
        if ![1, 2, 4, 8, 16].contains(&eb) {
            return Err(LayoutError::Unsupported(format!("element size {eb} bytes")));
        }
        let src = side(from, "source")?;
        let dst = side(to, "destination")?;
        let logical_bytes = src.geom.logical_elements() * eb as u64;
        Ok(Relayout {
            dst_has_padding: dst.bytes != logical_bytes,
            src,
            dst,
            elem_bytes: eb,
        })
    }

    /// Bytes the source buffer must have.
    pub fn src_bytes(&self) -> u64 {
        self.src.bytes
    }

    /// Bytes the destination buffer must have.
    pub fn dst_bytes(&self) -> u64 {
        self.dst.bytes
    }

    /// Convert `src` into `dst` (lengths must be [`Relayout::src_bytes`] and
    /// [`Relayout::dst_bytes`]).
    pub fn run(&self, src: &[u8], dst: &mut [u8]) -> Result<()> {
        if src.len() as u64 != self.src.bytes || dst.len() as u64 != self.dst.bytes {
            return Err(LayoutError::Data(format!(
                "buffer sizes {} → {} bytes, expected {} → {}",
                src.len(),
                dst.len(),
                self.src.bytes,
                self.dst.bytes
            )));
        }
        if self.dst_has_padding {
            dst.par_chunks_mut(1 << 20).for_each(|c| c.fill(0));
        }
        if self.src.geom.logical_elements() == 0 {
            return Ok(());
        }
        let stream = Stream {
            on: dst.len() >= STREAM_MIN_BYTES,
            aligned: (dst.as_ptr() as usize) % 64 == 0,
            isa: simd::Isa::detect(),
        };
        match self.elem_bytes {
            1 => self.dispatch::<1>(src, dst, stream),
            2 => self.dispatch::<2>(src, dst, stream),
            4 => self.dispatch::<4>(src, dst, stream),
            8 => self.dispatch::<8>(src, dst, stream),
            _ => self.dispatch::<16>(src, dst, stream),
        }
        Ok(())
    }

    fn dispatch<const N: usize>(&self, src: &[u8], dst: &mut [u8], stream: Stream) {
        match (&self.src.tables, &self.dst.tables) {
            (Some(st), Some(dt)) if !st.is_empty() => self.separable::<N>(st, dt, src, dst, stream),
            _ => self.per_element::<N>(src, dst),
        }
    }

    /// Per-element path (any mapping, including `*`).
    fn per_element<const N: usize>(&self, src: &[u8], dst: &mut [u8]) {
        let s = self.src.geom.all_linear_indices();
        let d = self.dst.geom.all_linear_indices();
        for (a, b) in s.iter().zip(&d) {
            let (a, b) = (*a as usize * N, *b as usize * N);
            dst[b..b + N].copy_from_slice(&src[a..a + N]);
        }
    }

    fn separable<const N: usize>(
        &self,
        st: &[Vec<u64>],
        dt: &[Vec<u64>],
        src: &[u8],
        dst: &mut [u8],
        stream: Stream,
    ) {
        let rank = st.len();
        let minor_s = &st[rank - 1];
        let minor_d = &dt[rank - 1];
        let runs = runs(minor_s, minor_d);
        // Row bases in logical row-major order over the outer dims.
        let outer: Vec<u64> = self.src.geom.logical_dims()[..rank - 1].to_vec();
        let rows: u64 = outer.iter().product();
        // Group size: rows interleaved with the minor dim on one side.
        let group = runs
            .iter()
            .map(|r| r.dst_step.max(r.src_step))
            .max()
            .unwrap_or(1)
            .clamp(8, 64) as usize;
        let n_groups = rows.div_ceil(group as u64);
        let dst_ptr = SendPtr(dst.as_mut_ptr());
        let row_base = |r: u64| -> (u64, u64) {
            let mut rest = r;
            let (mut sb, mut db) = (0u64, 0u64);
            for k in (0..rank - 1).rev() {
                let x = (rest % outer[k]) as usize;
                rest /= outer[k];
                sb += st[k][x];
                db += dt[k][x];
            }
            (sb, db)
        };
        let row_bytes = (minor_s.len() * N) as u64;
        let groups_per_task = (TASK_BYTES / (row_bytes * group as u64).max(1)).max(1);
        let tasks = n_groups.div_ceil(groups_per_task);
        (0..tasks).into_par_iter().for_each(|t| {
            let dp = dst_ptr;
            let mut bases = Vec::with_capacity(group);
            for gi in t * groups_per_task..((t + 1) * groups_per_task).min(n_groups) {
                let r0 = gi * group as u64;
                let r1 = (r0 + group as u64).min(rows);
                bases.clear();
                bases.extend((r0..r1).map(row_base));
                // SAFETY: every (src, dst) offset is < the physical element count of its
                // side, which `run` checked against the buffer lengths; the mapping is
                // injective, so no two tasks write the same destination element.
                unsafe { copy_group::<N>(src.as_ptr(), dp.0, &bases, &runs, stream) };
            }
            simd::store_fence();
        });
    }
}

/// When to use streaming stores: `on` for destinations far larger than the caches;
/// `aligned` when the destination starts on a 64-byte cache line, so that every tile row
/// written covers whole lines. A misaligned destination streams only where the kernel
/// writes it sequentially (a partly written line left in a write-combining buffer would be
/// flushed as a slow partial write).
#[derive(Clone, Copy)]
struct Stream {
    on: bool,
    aligned: bool,
    /// Vector instructions the copy primitives may use (detected once per run).
    isa: simd::Isa,
}

impl Stream {
    /// Stream a piece whose destination pieces are written back to back (`sequential`)?
    fn ok(self, sequential: bool) -> bool {
        self.on && (self.aligned || sequential)
    }
}

#[derive(Clone, Copy)]
struct SendPtr(*mut u8);
// SAFETY: used only for disjoint writes (see `separable`).
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

fn runs(s: &[u64], d: &[u64]) -> Vec<Run> {
    let mut out = Vec::new();
    let n = s.len();
    let mut x = 0;
    while x < n {
        if x + 1 == n {
            out.push(Run {
                s0: s[x],
                d0: d[x],
                len: 1,
                src_step: 1,
                dst_step: 1,
            });
            break;
        }
        let ss = s[x + 1].wrapping_sub(s[x]);
        let ds = d[x + 1].wrapping_sub(d[x]);
        let mut len = 2;
        while x + len < n
            && s[x + len].wrapping_sub(s[x + len - 1]) == ss
            && d[x + len].wrapping_sub(d[x + len - 1]) == ds
        {
            len += 1;
        }
        out.push(Run {
            s0: s[x],
            d0: d[x],
            len,
            src_step: ss,
            dst_step: ds,
        });
        x += len;
    }
    out
}

/// Destination bytes of one row written back to back before the kernel moves on to the
/// next row of the group, when rows are not contiguous in the destination (untiling):
/// 2 KiB (four 512-byte f32 tile rows). For f32[8192,8192] `T(8,128)` → row-major it
/// was 1.08× and 1.20× as fast as one tile row at a time (per-pair medians of two A/B
/// runs, `bench/layout_kernel_ab.py`) and faster than whole rows (BENCHMARKS.md).
const ROW_CHUNK_BYTES: usize = 2048;

/// When every run is unit-stride on both sides but the rows of the group are not
/// contiguous in the destination, the runs cut into chunks of destination-adjacent runs
/// of up to [`ROW_CHUNK_BYTES`] per row: copied chunk by chunk, row by row within a
/// chunk. `None` keeps the run-by-run order (which writes a tile row sequentially when
/// the rows interleave in the destination, as in tiling).
fn row_chunks<'a, const N: usize>(bases: &[(u64, u64)], runs: &'a [Run]) -> Option<Vec<&'a [Run]>> {
    let first = runs.first()?;
    if bases.len() < 2
        || runs.iter().any(|r| r.src_step != 1 || r.dst_step != 1)
        || bases
            .windows(2)
            .all(|w| w[1].1 == w[0].1 + first.len as u64)
    {
        return None;
    }
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (k, r) in runs.iter().enumerate() {
        let adjacent = k > start && runs[k - 1].d0 + runs[k - 1].len as u64 == r.d0;
        if k > start && (!adjacent || bytes >= ROW_CHUNK_BYTES) {
            out.push(&runs[start..k]);
            (start, bytes) = (k, 0);
        }
        bytes += r.len * N;
    }
    out.push(&runs[start..]);
    Some(out)
}

/// Copy one group of rows: `bases` are the (src, dst) element offsets of each row.
/// Unit-stride runs are copied with `memcpy`, run by run across the rows of the group
/// (so a tile row is written sequentially), or, when the rows are apart in the
/// destination, in row chunks of a few runs (see [`row_chunks`]); runs that interleave
/// P rows on one side (the `(P,1)` packing tiles) use an interleave/de-interleave
/// kernel; anything else copies element by element.
///
/// # Safety
/// Every offset reached must be inside its buffer (offsets are element indices, times
/// N bytes) and destination offsets must not be written by another thread.
unsafe fn copy_group<const N: usize>(
    src: *const u8,
    dst: *mut u8,
    bases: &[(u64, u64)],
    runs: &[Run],
    stream: Stream,
) {
    if let Some(chunks) = row_chunks::<N>(bases, runs) {
        let st = stream.ok(false);
        for ch in chunks {
            for &(sb, db) in bases {
                for r in ch {
                    let so = (sb + r.s0) as usize * N;
                    let d_o = (db + r.d0) as usize * N;
                    simd::copy_bytes(src.add(so), dst.add(d_o), r.len * N, st, stream.isa);
                }
            }
        }
        return;
    }
    for r in runs {
        if r.src_step == 1 && r.dst_step == 1 {
            let seq = bases.windows(2).all(|w| w[1].1 == w[0].1 + r.len as u64);
            let st = stream.ok(seq);
            for &(sb, db) in bases {
                let so = (sb + r.s0) as usize * N;
                let d_o = (db + r.d0) as usize * N;
                simd::copy_bytes(src.add(so), dst.add(d_o), r.len * N, st, stream.isa);
            }
            continue;
        }
        let consecutive = |p: usize, pick: fn(&(u64, u64)) -> u64| {
            bases.len() % p == 0
                && bases.chunks_exact(p).all(|c| {
                    c.iter()
                        .enumerate()
                        .all(|(i, b)| pick(b) == pick(&c[0]) + i as u64)
                })
        };
        let done = match (r.src_step, r.dst_step) {
            (1, 2) if N == 2 && consecutive(2, |b| b.1) => {
                let seq = bases
                    .chunks_exact(2)
                    .zip(bases.chunks_exact(2).skip(1))
                    .all(|(a, b)| b[0].1 == a[0].1 + 2 * r.len as u64);
                let st = stream.ok(seq);
                for c in bases.chunks_exact(2) {
                    simd::interleave2_u16(
                        src.add((c[0].0 + r.s0) as usize * 2),
                        src.add((c[1].0 + r.s0) as usize * 2),
                        dst.add((c[0].1 + r.d0) as usize * 2),
                        r.len,
                        st,
                        stream.isa,
                    );
                }
                true
            }
            (2, 1) if N == 2 && consecutive(2, |b| b.0) => {
                let st = stream.ok(false);
                for c in bases.chunks_exact(2) {
                    simd::deinterleave2_u16(
                        src.add((c[0].0 + r.s0) as usize * 2),
                        dst.add((c[0].1 + r.d0) as usize * 2),
                        dst.add((c[1].1 + r.d0) as usize * 2),
                        r.len,
                        st,
                        stream.isa,
                    );
                }
                true
            }
            (1, 2) if consecutive(2, |b| b.1) => {
                bases
                    .chunks_exact(2)
                    .for_each(|c| interleave::<N, 2>(src, dst, c, r));
                true
            }
            (1, 4) if consecutive(4, |b| b.1) => {
                bases
                    .chunks_exact(4)
                    .for_each(|c| interleave::<N, 4>(src, dst, c, r));
                true
            }
            (1, 8) if consecutive(8, |b| b.1) => {
                bases
                    .chunks_exact(8)
                    .for_each(|c| interleave::<N, 8>(src, dst, c, r));
                true
            }
            (2, 1) if consecutive(2, |b| b.0) => {
                bases
                    .chunks_exact(2)
                    .for_each(|c| deinterleave::<N, 2>(src, dst, c, r));
                true
            }
            (4, 1) if consecutive(4, |b| b.0) => {
                bases
                    .chunks_exact(4)
                    .for_each(|c| deinterleave::<N, 4>(src, dst, c, r));
                true
            }
            (8, 1) if consecutive(8, |b| b.0) => {
                bases
                    .chunks_exact(8)
                    .for_each(|c| deinterleave::<N, 8>(src, dst, c, r));
                true
            }
            _ => false,
        };
        if done {
            continue;
        }
        let (ss, ds) = (r.src_step as usize, r.dst_step as usize);
        for j in 0..r.len {
            for &(sb, db) in bases {
                // Steps may be "negative" (wrapped); offsets wrap back into range.
                let so = ((sb + r.s0) as usize).wrapping_add(j.wrapping_mul(ss)) * N;
                let d_o = ((db + r.d0) as usize).wrapping_add(j.wrapping_mul(ds)) * N;
                let v = std::ptr::read_unaligned(src.add(so) as *const [u8; N]);
                std::ptr::write_unaligned(dst.add(d_o) as *mut [u8; N], v);
            }
        }
    }
}

/// P source rows (unit stride) → one destination run where element j of row i lands
/// at position j·P + i (rows' destination bases are consecutive).
///
/// # Safety
/// As [`copy_group`].
unsafe fn interleave<const N: usize, const P: usize>(
    src: *const u8,
    dst: *mut u8,
    rows: &[(u64, u64)],
    r: &Run,
) {
    let out = std::slice::from_raw_parts_mut(
        dst.add((rows[0].1 + r.d0) as usize * N) as *mut [[u8; N]; P],
        r.len,
    );
    let ins: [&[[u8; N]]; P] = std::array::from_fn(|i| {
        std::slice::from_raw_parts(
            src.add((rows[i].0 + r.s0) as usize * N) as *const [u8; N],
            r.len,
        )
    });
    for (j, o) in out.iter_mut().enumerate() {
        for i in 0..P {
            o[i] = ins[i][j];
        }
    }
}

/// The inverse of [`interleave`]: one source run holding P rows interleaved → P
/// destination rows (unit stride).
///
/// # Safety
/// As [`copy_group`].
unsafe fn deinterleave<const N: usize, const P: usize>(
    src: *const u8,
    dst: *mut u8,
    rows: &[(u64, u64)],
    r: &Run,
) {
    let inp = std::slice::from_raw_parts(
        src.add((rows[0].0 + r.s0) as usize * N) as *const [[u8; N]; P],
        r.len,
    );
    let outs: [&mut [[u8; N]]; P] = std::array::from_fn(|i| {
        std::slice::from_raw_parts_mut(
            dst.add((rows[i].1 + r.d0) as usize * N) as *mut [u8; N],
            r.len,
        )
    });
    for (j, x) in inp.iter().enumerate() {
        for i in 0..P {
            outs[i][j] = x[i];
        }
    }
}

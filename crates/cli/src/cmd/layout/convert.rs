//! `tpusim layout convert`: move real data between two layouts. Untiled row-major sides
//! are `.npy` files, other sides raw physical bytes. Both files are memory-mapped, so
//! arrays larger than RAM convert (the OS pages data in and out); the output is written
//! to a temporary file in the same folder and renamed at the end.

use super::array;
use crate::util::print_json;
use anyhow::{anyhow, bail, Context, Result};
use std::fs::File;
use std::io::Cursor;
use std::path::Path;
use std::time::Instant;
use tpusim_layout::{ArrayShape, ElementType, Relayout};

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

/// Check an .npy header against the array; return the data offset in bytes.
fn npy_data_offset(bytes: &[u8], a: &ArrayShape, path: &Path) -> Result<usize> {
    let npy = npyz::NpyFile::new(Cursor::new(bytes))
        .with_context(|| format!("'{}' is not a .npy file", path.display()))?;
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

/// Run the conversion.
pub fn run(from: &str, to: &str, input: &Path, output: &Path, json: bool) -> Result<()> {
    let a = array(from).context("--from")?;
    let b = array(to).context("--to")?;
    let plan = Relayout::new(&a, &b)?;
    let file = File::open(input).with_context(|| format!("cannot open '{}'", input.display()))?;
    // SAFETY: the file is mapped read-only; concurrent modification by another process
    // would only garble the output, never memory safety of this process's own data.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .with_context(|| format!("cannot map '{}'", input.display()))?;
    let src: &[u8] = if is_npy(&a) {
        let off = npy_data_offset(&map, &a, input)?;
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
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot create a file in '{}'", dir.display()))?;
    tmp.as_file()
        .set_len(total)
        .with_context(|| format!("cannot size '{}' to {total} bytes", output.display()))?;
    let start = Instant::now();
    let mut relayout_seconds = 0.0;
    if total > 0 {
        // SAFETY: the temporary file is ours alone until it is persisted.
        let mut out = unsafe { memmap2::MmapMut::map_mut(tmp.as_file()) }
            .with_context(|| format!("cannot map '{}'", output.display()))?;
        out[..header.len()].copy_from_slice(&header);
        let kernel = Instant::now();
        plan.run(src, &mut out[header.len()..])?;
        relayout_seconds = kernel.elapsed().as_secs_f64();
        out.flush()
            .with_context(|| format!("cannot write '{}'", output.display()))?;
    }
    let seconds = start.elapsed().as_secs_f64();
    tmp.persist(output)
        .map_err(|e| anyhow!("cannot write '{}': {}", output.display(), e.error))?;
    if json {
        return print_json(&serde_json::json!({
            "from": a.to_string(), "to": b.to_string(),
            "input_bytes": plan.src_bytes(), "output_bytes": total,
            "seconds": seconds,
            // The kernel alone (includes first-touch faults of the mapped output, not
            // the flush to disk that `seconds` also counts).
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

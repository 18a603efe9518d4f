//! `.npy` files as `tpusim layout convert` reads and writes them: the untiled
//! row-major side of a conversion. Headers are parsed by npyz and checked against the
//! array (shape, C order, element size and kind, endianness) before any data is used.

use crate::{ArrayShape, ElementType};
use std::io::Cursor;

/// What is wrong with a .npy file, in words that follow its file name
/// (`'x.npy' has shape …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NpyError(pub String);

/// True when this side is stored as a `.npy` file: untiled, row-major, no attributes.
pub fn is_npy(a: &ArrayShape) -> bool {
    let l = a.layout_or_default();
    l.is_plain() && l.minor_to_major == (0..a.rank() as u64).rev().collect::<Vec<_>>()
}

/// numpy dtype written for an element type (bf16 and f8 types as unsigned ints).
pub fn npy_descr(t: ElementType) -> String {
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

/// The .npy (version 1.0) header of a C-order array of `t` with `dims`.
pub fn npy_header(t: ElementType, dims: &[u64]) -> Vec<u8> {
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
fn check_npy_kind(descr: &str, t: ElementType, reinterpret: bool) -> Result<(), NpyError> {
    let want = npy_descr(t);
    let kind = |d: &str| d.chars().nth(1).unwrap_or('?');
    let no_numpy_dtype = t.name() == "bf16" || t.name().starts_with("f8");
    let ok = kind(descr) == kind(&want) || (no_numpy_dtype && kind(descr) == 'V');
    if ok || reinterpret {
        return Ok(());
    }
    Err(NpyError(format!(
        "holds dtype '{descr}' but {t} is stored as '{want}': the sizes match, the \
         meaning does not; pass --reinterpret to take the bytes as they are"
    )))
}

/// Largest header accepted (numpy's own `np.load` refuses headers over 10,000 bytes
/// unless told otherwise).
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// Where the header of the .npy file `bytes` ends (the data's offset), checked to lie
/// within the bytes and under [`MAX_HEADER_BYTES`] before anything reads the header: a
/// version-2 header length is a u32, and npyz allocates it whole.
fn header_end(bytes: &[u8]) -> Result<usize, NpyError> {
    if !bytes.starts_with(b"\x93NUMPY") {
        return Err(NpyError(
            "is not a .npy file: it does not start with \\x93NUMPY".into(),
        ));
    }
    // v1 has a u16 header length at byte 8, v2/v3 a u32
    let (prefix, len) = match bytes.get(6) {
        Some(1) if bytes.len() >= 10 => (10, u16::from_le_bytes([bytes[8], bytes[9]]) as usize),
        Some(2 | 3) if bytes.len() >= 12 => (
            12,
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
        ),
        _ => return Err(NpyError("has an unknown .npy format version".into())),
    };
    if len > MAX_HEADER_BYTES {
        return Err(NpyError(format!(
            "has a {len}-byte .npy header (limit {MAX_HEADER_BYTES})"
        )));
    }
    let end = prefix + len;
    if end > bytes.len() {
        return Err(NpyError(format!(
            "is shorter ({} bytes) than its {len}-byte .npy header",
            bytes.len()
        )));
    }
    let depth = nesting_depth(&bytes[prefix..end]);
    if depth > MAX_HEADER_NESTING {
        return Err(NpyError(format!(
            "has a .npy header nested {depth} brackets deep (limit {MAX_HEADER_NESTING})"
        )));
    }
    Ok(end)
}

/// Deepest bracket nesting a header may have: a plain array's header has two levels (`{`
/// and the shape's `(`), a structured dtype with sub-array fields four (`{` `[` `(` `(`;
/// refused later for its dtype). npyz's header parser takes time exponential in the
/// depth, about 3× a level: 18 levels took 9 s in a release build, and 8 levels of `{`
/// 1.5 s in the fuzzer's sanitized build (`fuzz/regressions/npy/
/// eight_braces_three_times_a_level`), so deeper headers are refused unread.
pub const MAX_HEADER_NESTING: usize = 4;

/// How deep `(`, `[` and `{` nest in `header` (quotes not considered: a deeper count
/// only refuses more).
fn nesting_depth(header: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for &b in header {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Check the .npy file `bytes` (at least its header) against array `a`; return the
/// offset of its data. A dtype that only matches `a`'s element type in size is refused
/// unless `reinterpret`.
pub fn data_offset(bytes: &[u8], a: &ArrayShape, reinterpret: bool) -> Result<usize, NpyError> {
    let offset = header_end(bytes)?;
    let bytes = &bytes[..offset];
    if npy_shape_overflows(bytes) {
        return Err(NpyError(
            "has a .npy shape whose element count overflows 64 bits".into(),
        ));
    }
    // npyz's header errors draw the parse position over several lines: keep the first.
    let npy = npyz::NpyFile::new(Cursor::new(bytes)).map_err(|e| {
        let e = e.to_string();
        let first = e.lines().next().unwrap_or_default().trim_end();
        NpyError(format!("is not a .npy file: {first}"))
    })?;
    let dims: Vec<u64> = a.dims.iter().filter_map(|d| d.allocated()).collect();
    if npy.shape() != dims.as_slice() {
        return Err(NpyError(format!(
            "has shape {:?} but {a} has dims {:?}",
            npy.shape(),
            dims
        )));
    }
    if npy.order() == npyz::Order::Fortran && dims.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(NpyError(
            "is in Fortran order; save it C-contiguous (np.ascontiguousarray)".into(),
        ));
    }
    let npyz::DType::Plain(ts) = npy.dtype() else {
        return Err(NpyError(
            "has a structured dtype; a plain numeric dtype is needed".into(),
        ));
    };
    let size = ts.size_field();
    if size != a.element_type.storage_bytes() {
        return Err(NpyError(format!(
            "has {}-byte elements ({ts}) but {} needs {} bytes per element",
            size,
            a.element_type,
            a.element_type.storage_bytes()
        )));
    }
    check_npy_kind(&ts.to_string(), a.element_type, reinterpret)?;
    if size > 1 && ts.to_string().starts_with('>') {
        return Err(NpyError(format!(
            "is big-endian ({ts}); convert it to little-endian first"
        )));
    }
    Ok(offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_array;

    #[test]
    fn a_huge_v2_header_length_is_refused_before_reading() {
        // fuzz/regressions/npy/v2_header_length_3_5_GB: npyz allocated the header whole
        let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
        bytes.extend_from_slice(&0xd8df_d3d9u32.to_le_bytes());
        bytes.extend_from_slice(b"{'descr': '<f4', }");
        let a = parse_array("f32[3,5]").unwrap();
        let e = data_offset(&bytes, &a, false).unwrap_err().to_string();
        assert!(e.contains("limit"), "{e}");
        bytes[8..12].copy_from_slice(&1000u32.to_le_bytes());
        let e = data_offset(&bytes, &a, false).unwrap_err().to_string();
        assert!(e.contains("shorter"), "{e}");
    }

    #[test]
    fn deeply_nested_headers_are_refused_before_parsing() {
        // fuzz/regressions/npy/nested_brackets_exponential_parse: npyz's parser took
        // time exponential in the depth (18 levels: 9 s, 22: over a minute)
        let header = |depth: usize| {
            let mut d = format!("{{'descr':{} '<f1', ", "[".repeat(depth));
            d.push_str(&" ".repeat(63 - (10 + d.len()) % 64));
            d.push('\n');
            let mut v = b"\x93NUMPY\x01\x00".to_vec();
            v.extend_from_slice(&(d.len() as u16).to_le_bytes());
            v.extend_from_slice(d.as_bytes());
            v
        };
        let a = parse_array("bf16[3,2]").unwrap();
        let t0 = std::time::Instant::now();
        let e = data_offset(&header(100), &a, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nested 101 brackets deep (limit 4)"), "{e}");
        assert!(t0.elapsed() < std::time::Duration::from_millis(100));
        // a real structured header stays within the limit (and is refused for its dtype)
        let e = data_offset(&header(2), &a, false).unwrap_err().to_string();
        assert!(!e.contains("nested"), "{e}");
        // fuzz/regressions/npy/eight_braces_three_times_a_level: 8 levels of `{` with
        // spaces between, within the former limit of 8, took 1.5 s in the fuzzer's build
        let braces = b"{       {   {       {        {   {       {   {       0";
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        v.extend_from_slice(&(braces.len() as u16).to_le_bytes());
        v.extend_from_slice(braces);
        let e = data_offset(&v, &a, false).unwrap_err().to_string();
        assert!(e.contains("nested 8 brackets deep (limit 4)"), "{e}");
    }
}

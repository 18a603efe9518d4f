//! Sizes of an array with a layout: logical bytes, XLA's allocation size
//! (`ShapeUtil::ArraySize` semantics), the exact size of the fully expanded nested
//! tiling, and the waste between them.
//!
//! ArraySize: each physical dim (split dims at their largest piece) is rounded up to
//! the **first** tile only; then `L` rounds the element count up; then bytes =
//! ⌈elements·bits/8⌉ with bits = `E(n)` or the type's storage width. Without tiles, `L`
//! and `SC` are ignored. For a first tile with `*`, the combined dims are merged before
//! rounding (XLA's own ArraySize does not handle `*`; this is the natural reading).

use crate::error::{LayoutError, Result};
use crate::geometry::{static_dims, Geometry};
use crate::shape::{ArrayShape, Layout, TileDim};

/// Every size figure of one array shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Sizes {
    /// Logical elements (product of the dims; bounded dims at their bound).
    pub logical_elements: u64,
    /// Bits per element in memory: `E(n)` if set, else the type's storage width.
    pub element_bits: u64,
    /// Bytes of the logical data: ⌈logical_elements·element_bits/8⌉.
    pub logical_bytes: u64,
    /// Elements XLA allocates (first tile only, SC, L).
    pub array_size_elements: u64,
    /// Bytes XLA allocates (`ShapeUtil::ArraySize`).
    pub array_size_bytes: u64,
    /// Elements of the fully expanded nested tiling (then L).
    pub exact_elements: u64,
    /// Bytes of the fully expanded nested tiling.
    pub exact_size_bytes: u64,
    /// `array_size_bytes / logical_bytes` (1.0 for an empty array).
    pub expansion: f64,
    /// Human-readable warnings (a later tile pads beyond what XLA allocates, …).
    pub warnings: Vec<String>,
}

fn ovf(a: &ArrayShape) -> LayoutError {
    LayoutError::Overflow(format!("the size of '{a}'"))
}

fn bytes_of(elements: u64, bits: u64, a: &ArrayShape) -> Result<u64> {
    let b = u128::from(elements) * u128::from(bits);
    u64::try_from(b.div_ceil(8)).map_err(|_| ovf(a))
}

fn round_up(x: u64, m: u64, a: &ArrayShape) -> Result<u64> {
    x.div_ceil(m).checked_mul(m).ok_or_else(|| ovf(a))
}

/// The dims with split dims replaced by their largest piece (XLA's `MaxSplitSize`: the
/// first split config naming a physical dimension is the one that counts).
fn max_split_dims(dims: &[u64], layout: &Layout) -> Vec<u64> {
    let mut out = dims.to_vec();
    let mut done = vec![false; dims.len()];
    for sc in &layout.split_configs {
        let Some(logical) = sc.logical_dimension(&layout.minor_to_major) else {
            continue;
        };
        let (Some(d), Some(seen)) = (out.get_mut(logical), done.get_mut(logical)) else {
            continue;
        };
        if std::mem::replace(seen, true) {
            continue;
        }
        let mut prev = 0;
        let mut best = 0;
        for &ix in sc.indices.iter().chain(std::iter::once(&*d)) {
            best = best.max(ix.saturating_sub(prev));
            prev = ix;
        }
        *d = best;
    }
    out
}

/// Bits per element in memory for this array.
pub fn element_bits(a: &ArrayShape) -> u64 {
    match &a.layout {
        Some(l) if l.element_size_bits != 0 => l.element_size_bits,
        _ => u64::from(a.element_type.storage_bits()),
    }
}

/// Compute all sizes of a validated array shape.
pub fn sizes(a: &ArrayShape) -> Result<Sizes> {
    let dims = static_dims(a)?;
    let layout = a.layout_or_default();
    let bits = element_bits(a);
    let mut logical_elements = 1u64;
    for &d in &dims {
        logical_elements = logical_elements.checked_mul(d).ok_or_else(|| ovf(a))?;
    }
    let logical_bytes = bytes_of(logical_elements, bits, a)?;
    let mut warnings = Vec::new();

    let (array_size_elements, exact_elements) = if layout.tiles.is_empty() {
        (logical_elements, logical_elements)
    } else {
        if layout.tiles.len() > 1 && layout.tiles[0].dims.contains(&TileDim::Match) {
            return Err(LayoutError::Unsupported(format!(
                "{a}: a 'd' tile dimension followed by a second tile; XLA rounds the whole dimension to the second tile by a rule tpusim does not reproduce"
            )));
        }
        let split = max_split_dims(&dims, &layout);
        // First tile only.
        let mut cur: Vec<u64> = layout
            .minor_to_major
            .iter()
            .rev()
            .map(|&d| split.get(d as usize).copied().unwrap_or(1))
            .collect();
        let tile = &layout.tiles[0];
        let k = tile.dims.len();
        while cur.len() < k {
            cur.insert(0, 1);
        }
        let mut pos = cur.len() - k;
        let mut n = 1u64;
        for &d in &cur[..pos] {
            n = n.checked_mul(d).ok_or_else(|| ovf(a))?;
        }
        for td in &tile.dims {
            match *td {
                TileDim::Combine => {
                    if pos + 1 < cur.len() {
                        cur[pos + 1] = cur[pos + 1].checked_mul(cur[pos]).ok_or_else(|| ovf(a))?;
                    }
                    pos += 1;
                }
                TileDim::Size(t) => {
                    n = n
                        .checked_mul(round_up(cur[pos], t.max(1), a)?)
                        .ok_or_else(|| ovf(a))?;
                    pos += 1;
                }
                TileDim::Match => {
                    n = n.checked_mul(cur[pos]).ok_or_else(|| ovf(a))?;
                    pos += 1;
                }
            }
        }
        let mut split_shape = a.clone();
        for (d, s) in split_shape.dims.iter_mut().zip(&split) {
            *d = crate::shape::Dim::Static(*s);
        }
        let exact = Geometry::new(&split_shape)?.physical_elements();
        let l = layout.tail_padding_alignment.max(1);
        let (n, exact) = (round_up(n, l, a)?, round_up(exact, l, a)?);
        if exact > n {
            warnings.push(format!(
                "a later tile pads: the fully expanded tiling needs {exact} elements but XLA allocates {n} (first tile only)"
            ));
        }
        (n, exact)
    };
    if a.element_type.is_sub_byte() && layout.element_size_bits == 0 && !layout.tiles.is_empty() {
        warnings.push(format!(
            "{} without E({}) occupies a whole byte per element",
            a.element_type,
            a.element_type.bits()
        ));
    }
    let array_size_bytes = bytes_of(array_size_elements, bits, a)?;
    let exact_size_bytes = bytes_of(exact_elements, bits, a)?;
    let expansion = if logical_bytes == 0 {
        1.0
    } else {
        array_size_bytes as f64 / logical_bytes as f64
    };
    Ok(Sizes {
        logical_elements,
        element_bits: bits,
        logical_bytes,
        array_size_elements,
        array_size_bytes,
        exact_elements,
        exact_size_bytes,
        expansion,
        warnings,
    })
}

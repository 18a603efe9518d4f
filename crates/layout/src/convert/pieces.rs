//! Splitting a conversion into pieces along the most major dimension, so that a caller
//! can convert an array far larger than RAM piece by piece (memory-mapped files: read
//! ahead the next piece, write back and drop the finished ones).
//!
//! A piece is a band of whole rows of logical dim 0 that is a contiguous byte range on
//! both sides. That holds when dim 0 is the most major physical dim of both layouts and
//! the band is a multiple of the first tile's extent along dim 0 (tiles never straddle
//! two pieces); the pieces are then the same layout applied to a shorter array.
//! [`split_major`] checks the structure, then verifies every piece numerically (its byte
//! ranges tile both buffers exactly, and its first and last elements land where the full
//! mapping puts them) and returns `None` when a layout does not split this way (e.g.
//! `L(n)` tail padding or dim 0 not major): the caller then converts in one piece.

use super::Relayout;
use crate::error::{LayoutError, Result};
use crate::geometry::{static_dims, Geometry};
use crate::shape::{ArrayShape, Dim, TileDim};
use std::ops::Range;

/// One piece of a conversion: rows `rows` of logical dim 0, read from bytes `src` of the
/// source buffer and written to bytes `dst` of the destination buffer by `relayout`.
#[derive(Debug, Clone)]
pub struct Piece {
    /// Logical rows (indices along dim 0) this piece covers.
    pub rows: Range<u64>,
    /// Byte range of the source buffer this piece reads (all of it is read).
    pub src: Range<u64>,
    /// Byte range of the destination buffer this piece writes (all of it, padding as
    /// zero).
    pub dst: Range<u64>,
    /// The conversion of this band alone (`relayout.src_bytes() == src.len()`).
    pub relayout: Relayout,
}

/// First-tile extent along dim 0 for a layout whose most major dim is dim 0 (1 when the
/// tile does not reach dim 0); `None` when dim 0 is not the most major dim or the
/// extent is not a plain size.
fn major_step(a: &ArrayShape) -> Option<u64> {
    let l = a.layout_or_default();
    let rank = a.rank();
    if l.minor_to_major.last() != Some(&0) {
        return None;
    }
    let Some(first) = l.tiles.first() else {
        return Some(1);
    };
    let k = first.dims.len();
    if k < rank {
        return Some(1);
    }
    match first.dims[k - rank] {
        TileDim::Size(n) if n > 0 => Some(n),
        _ => None,
    }
}

fn with_rows(a: &ArrayShape, rows: u64) -> ArrayShape {
    let mut s = a.clone();
    s.dims[0] = Dim::Static(rows);
    s
}

/// Split the conversion `from` → `to` into pieces of at most about `max_piece_bytes`
/// (the larger of the two sides' bytes; at least one step of rows per piece).
/// `Ok(None)` when the layouts cannot be split along dim 0 (see the module doc) or a
/// band would be a conversion [`Relayout::new`] refuses; errors as [`Relayout::new`]
/// for the whole.
pub fn split_major(
    from: &ArrayShape,
    to: &ArrayShape,
    max_piece_bytes: u64,
) -> Result<Option<Vec<Piece>>> {
    let whole = Relayout::new(from, to)?;
    if from.rank() == 0 {
        return Ok(None);
    }
    let (Some(s1), Some(s2)) = (major_step(from), major_step(to)) else {
        return Ok(None);
    };
    let dims = static_dims(from)?;
    let rows = dims[0];
    if rows == 0 {
        return Ok(None);
    }
    let step = lcm(s1, s2);
    let bytes = whole.src_bytes().max(whole.dst_bytes());
    // Bytes per step of rows (rounded up), then steps per piece.
    let per_step = bytes
        .checked_mul(step)
        .map(|b| b.div_ceil(rows))
        .ok_or_else(|| LayoutError::Data(format!("'{from}': size overflows")))?
        .max(1);
    let steps = (max_piece_bytes / per_step).max(1);
    let band = steps.saturating_mul(step);
    let (gf, gt) = (Geometry::new(from)?, Geometry::new(to)?);
    let eb = from.element_type.storage_bytes();
    let mut pieces = Vec::new();
    let (mut so, mut d_o) = (0u64, 0u64);
    let mut r0 = 0u64;
    while r0 < rows {
        let r1 = r0.saturating_add(band).min(rows);
        // a band can be a layout the whole is not (a later tile that pads only in a
        // partial band): then the conversion does not split
        let Ok(relayout) = Relayout::new(&with_rows(from, r1 - r0), &with_rows(to, r1 - r0)) else {
            return Ok(None);
        };
        let (sl, dl) = (relayout.src_bytes(), relayout.dst_bytes());
        // Numeric checks: first and last element of the band map to the same bytes in
        // the piece (shifted by its start) as in the whole array.
        let sub_f = Geometry::new(&with_rows(from, r1 - r0))?;
        let sub_t = Geometry::new(&with_rows(to, r1 - r0))?;
        let first: Vec<u64> = std::iter::once(r0)
            .chain(dims[1..].iter().map(|_| 0))
            .collect();
        let mut last: Vec<u64> = dims.iter().map(|&d| d.saturating_sub(1)).collect();
        last[0] = r1 - 1;
        let local = |v: &[u64]| -> Vec<u64> {
            let mut w = v.to_vec();
            w[0] -= r0;
            w
        };
        let ok = dims.iter().all(|&d| d > 0)
            && gf.linear_index(&first)? * eb == so
            && gt.linear_index(&first)? * eb == d_o
            && gf.linear_index(&last)? * eb == so + sub_f.linear_index(&local(&last))? * eb
            && gt.linear_index(&last)? * eb == d_o + sub_t.linear_index(&local(&last))? * eb;
        if !ok {
            return Ok(None);
        }
        pieces.push(Piece {
            rows: r0..r1,
            src: so..so + sl,
            dst: d_o..d_o + dl,
            relayout,
        });
        so += sl;
        d_o += dl;
        r0 = r1;
    }
    if so != whole.src_bytes() || d_o != whole.dst_bytes() {
        return Ok(None);
    }
    Ok(Some(pieces))
}

fn lcm(a: u64, b: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

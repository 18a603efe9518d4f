//! Index mapping under XLA's (repeated) tiling: logical index → physical linear index
//! and back.
//!
//! The logical dims are first put in physical order (most major first, from
//! `minor_to_major`). Each tile then applies to the most minor dims of the current
//! shape: leading dims of size 1 are prepended when the tile has more dims than the
//! shape; a `*` merges its dim into the next more minor one
//! (`e' = e_i·d_{i+1} + e_{i+1}`, `d' = d_i·d_{i+1}`); `d` takes the dim's own size;
//! then dims `(…, d_k)` become `(…, ⌈d_k/t_k⌉, …, t_k)` with the tile dims moved to the
//! minor end. The linear index is the row-major index in the final shape.

use crate::error::{LayoutError, Result};
use crate::shape::{ArrayShape, TileDim};

/// One step from the physical-order logical shape to the final physical shape.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    /// Prepend this many dims of size 1 (a tile with more dims than the shape).
    Prepend(usize),
    /// Merge dim `pos` into dim `pos + 1`, whose size before merging is `minor`.
    Combine { pos: usize, minor: u64 },
    /// Tile the last `sizes.len()` dims (sizes before tiling `before`) by `sizes`.
    Tile { sizes: Vec<u64>, before: Vec<u64> },
}

/// The compiled index mapping of one array shape with its layout's tiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    logical_dims: Vec<u64>,
    minor_to_major: Vec<usize>,
    ops: Vec<Op>,
    physical_dims: Vec<u64>,
    physical_elements: u64,
}

fn overflow(what: &str) -> LayoutError {
    LayoutError::Overflow(what.to_string())
}

/// Allocated logical dims of an array (bounded dims at their bound); `?` is an error.
pub fn static_dims(a: &ArrayShape) -> Result<Vec<u64>> {
    a.dims
        .iter()
        .map(|d| {
            d.allocated().ok_or_else(|| {
                LayoutError::Unsupported(format!(
                    "'{a}' has an unbounded '?' dimension: no size or index mapping exists"
                ))
            })
        })
        .collect()
}

impl Geometry {
    /// Compile the mapping of a (validated) array shape. Split configs, `L`, `E`, `S`,
    /// `M` do not move elements and are ignored here.
    pub fn new(a: &ArrayShape) -> Result<Geometry> {
        let dims = static_dims(a)?;
        let layout = a.layout_or_default();
        let m2m: Vec<usize> = layout.minor_to_major.iter().map(|&d| d as usize).collect();
        if m2m.len() != dims.len() || m2m.iter().any(|&d| d >= dims.len()) {
            return Err(LayoutError::Unsupported(format!(
                "'{a}': minor_to_major is not a permutation of the dims (validate first)"
            )));
        }
        let mut cur: Vec<u64> = m2m.iter().rev().map(|&d| dims[d]).collect();
        let mut ops = Vec::new();
        for tile in &layout.tiles {
            let k = tile.dims.len();
            if k > cur.len() {
                let n = k - cur.len();
                ops.push(Op::Prepend(n));
                let mut v = vec![1; n];
                v.extend_from_slice(&cur);
                cur = v;
            }
            let mut pos = cur.len() - k;
            let mut sizes = Vec::with_capacity(k);
            for td in &tile.dims {
                match *td {
                    TileDim::Combine => {
                        if pos + 1 >= cur.len() {
                            return Err(LayoutError::Unsupported(format!(
                                "'{a}': '*' needs a more minor dim to combine into"
                            )));
                        }
                        ops.push(Op::Combine {
                            pos,
                            minor: cur[pos + 1],
                        });
                        cur[pos + 1] = cur[pos + 1]
                            .checked_mul(cur[pos])
                            .ok_or_else(|| overflow("combined dimension"))?;
                        cur.remove(pos);
                    }
                    TileDim::Size(t) => {
                        if t == 0 {
                            return Err(LayoutError::Unsupported(format!("'{a}': tile size 0")));
                        }
                        sizes.push(t);
                        pos += 1;
                    }
                    TileDim::Match => {
                        sizes.push(cur[pos].max(1));
                        pos += 1;
                    }
                }
            }
            let start = cur.len() - sizes.len();
            let before = cur[start..].to_vec();
            cur.truncate(start);
            for (d, t) in before.iter().zip(&sizes) {
                cur.push(d.div_ceil(*t));
            }
            cur.extend_from_slice(&sizes);
            ops.push(Op::Tile { sizes, before });
        }
        let mut physical_elements = 1u64;
        for &d in &cur {
            physical_elements = physical_elements
                .checked_mul(d)
                .ok_or_else(|| overflow(&format!("physical element count of '{a}'")))?;
        }
        Ok(Geometry {
            logical_dims: dims,
            minor_to_major: m2m,
            ops,
            physical_dims: cur,
            physical_elements,
        })
    }

    /// Logical dims (allocated sizes), most major first.
    pub fn logical_dims(&self) -> &[u64] {
        &self.logical_dims
    }

    /// The final physical shape after all tiles, most major first.
    pub fn physical_dims(&self) -> &[u64] {
        &self.physical_dims
    }

    /// Elements of the fully expanded physical buffer (product of the physical dims).
    pub fn physical_elements(&self) -> u64 {
        self.physical_elements
    }

    /// Number of logical elements (product of the logical dims; cannot overflow since
    /// it is at most the physical count).
    pub fn logical_elements(&self) -> u64 {
        self.logical_dims.iter().product()
    }

    /// The logical → physical permutation: `minor_to_major` as dim numbers.
    pub fn minor_to_major(&self) -> &[usize] {
        &self.minor_to_major
    }

    /// True when no tile uses `*`: then the linear index is a sum of one term per
    /// logical dim ([`Geometry::dim_offsets`]).
    pub fn is_separable(&self) -> bool {
        !self.ops.iter().any(|o| matches!(o, Op::Combine { .. }))
    }

    /// Check a logical index against the dims.
    fn check_index(&self, index: &[u64]) -> Result<()> {
        if index.len() != self.logical_dims.len() {
            return Err(LayoutError::OutOfRange(format!(
                "index has {} coordinates but the shape has rank {}",
                index.len(),
                self.logical_dims.len()
            )));
        }
        for (i, (&e, &d)) in index.iter().zip(&self.logical_dims).enumerate() {
            if e >= d {
                return Err(LayoutError::OutOfRange(format!(
                    "coordinate {e} of dimension {i} is out of range (size {d})"
                )));
            }
        }
        Ok(())
    }

    /// Physical linear index (in elements) of a logical index.
    pub fn linear_index(&self, index: &[u64]) -> Result<u64> {
        self.check_index(index)?;
        Ok(self.linear_index_unchecked(index))
    }

    /// [`Geometry::linear_index`] without the range check (index must be in range).
    pub fn linear_index_unchecked(&self, index: &[u64]) -> u64 {
        let mut cur: Vec<u64> = self
            .minor_to_major
            .iter()
            .rev()
            .map(|&d| index[d])
            .collect();
        for op in &self.ops {
            match op {
                Op::Prepend(n) => {
                    let mut v = vec![0; *n];
                    v.extend_from_slice(&cur);
                    cur = v;
                }
                Op::Combine { pos, minor } => {
                    let major = cur.remove(*pos);
                    cur[*pos] += major * minor;
                }
                Op::Tile { sizes, .. } => {
                    let start = cur.len() - sizes.len();
                    let inner: Vec<u64> =
                        cur[start..].iter().zip(sizes).map(|(e, t)| e % t).collect();
                    for (e, t) in cur[start..].iter_mut().zip(sizes) {
                        *e /= t;
                    }
                    cur.extend_from_slice(&inner);
                }
            }
        }
        cur.iter()
            .zip(&self.physical_dims)
            .fold(0u64, |acc, (&e, &d)| acc * d + e)
    }

    /// The logical index stored at a physical linear index, or `None` when that
    /// position is padding. Errors when `linear` is beyond the physical buffer.
    pub fn logical_index(&self, linear: u64) -> Result<Option<Vec<u64>>> {
        if linear >= self.physical_elements {
            return Err(LayoutError::OutOfRange(format!(
                "linear index {linear} is beyond the physical buffer of {} elements",
                self.physical_elements
            )));
        }
        let mut cur = vec![0u64; self.physical_dims.len()];
        let mut rest = linear;
        for (c, &d) in cur.iter_mut().zip(&self.physical_dims).rev() {
            *c = rest % d;
            rest /= d;
        }
        for op in self.ops.iter().rev() {
            match op {
                Op::Tile { sizes, before } => {
                    let k = sizes.len();
                    let inner = cur.split_off(cur.len() - k);
                    let start = cur.len() - k;
                    for (j, e) in cur[start..].iter_mut().enumerate() {
                        let x = *e * sizes[j] + inner[j];
                        if x >= before[j] {
                            return Ok(None);
                        }
                        *e = x;
                    }
                }
                Op::Combine { pos, minor } => {
                    let v = cur[*pos];
                    cur[*pos] = v % minor;
                    cur.insert(*pos, v / minor);
                }
                Op::Prepend(n) => {
                    if cur[..*n].iter().any(|&e| e != 0) {
                        return Ok(None);
                    }
                    cur.drain(..*n);
                }
            }
        }
        let mut out = vec![0u64; cur.len()];
        for (p, &d) in self.minor_to_major.iter().rev().enumerate() {
            out[d] = cur[p];
        }
        Ok(Some(out))
    }

    /// For a separable mapping: the linear-index term of each coordinate of logical dim
    /// `k`, so that `linear_index(e) = Σ_k dim_offsets(k)[e_k]`. `None` when a `*`
    /// makes the mapping non-separable or `k` is out of range.
    pub fn dim_offsets(&self, k: usize) -> Option<Vec<u64>> {
        if !self.is_separable() || k >= self.logical_dims.len() {
            return None;
        }
        let mut idx = vec![0u64; self.logical_dims.len()];
        Some(
            (0..self.logical_dims[k])
                .map(|x| {
                    idx[k] = x;
                    self.linear_index_unchecked(&idx)
                })
                .collect(),
        )
    }

    /// Linear indices of every logical element in logical row-major order.
    pub fn all_linear_indices(&self) -> Vec<u64> {
        let n = self.logical_elements() as usize;
        let mut out = Vec::with_capacity(n);
        let rank = self.logical_dims.len();
        let mut idx = vec![0u64; rank];
        if self.logical_dims.contains(&0) {
            return out;
        }
        for _ in 0..n {
            out.push(self.linear_index_unchecked(&idx));
            for k in (0..rank).rev() {
                idx[k] += 1;
                if idx[k] < self.logical_dims[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        out
    }
}

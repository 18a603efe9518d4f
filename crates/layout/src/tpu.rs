//! The layouts XLA:TPU picks by default for an array passed to a TPU program, per TPU
//! generation; and the simpler table of the seed document (`doc_default`).
//!
//! Rules (checked against libtpu's compile-only devices, see
//! `tests/data/tpu_defaults_golden.jsonl` and `tpu_defaults_subbyte_golden.jsonl`: 8,260
//! layouts, 27 types, 7 generations):
//! - packing p = 32 / bits for sub-32-bit types (pred and the 6-bit floats count as
//!   8-bit); p = 1 otherwise. Sub-32-bit tiles get a second tile `(p,1)`; sub-byte types
//!   get `E(bits)` on v4 and later, while v2/v3 store them as 8-bit.
//! - the minimum second-minor tile is p rows (2p on v2/v3, and on v2/v3 a sub-byte type
//!   keeps its own 32/bits: s2 16); the second-minor tile is the smallest power of two ≥
//!   the second-minor size, between that minimum and 8; on v4+ a packed type of 8 bits
//!   or fewer uses 8p rows (8-bit 32, 4-bit 64, 2-bit 128) when the second-minor size is
//!   a multiple of that.
//! - rank 1: `T(k·128)` with k = the smallest power of two ≥ ⌈n/128⌉, between 2p (p on
//!   v4+) and the larger of 8 and the minimum above, then `(128)(p,1)` for packed types;
//!   rank 0: `T(128·p)` (`2p` on v2/v3).
//! - rank ≥ 2: every choice of (minor dim, second-minor dim) is tried, the other dims
//!   stay major in their logical order; the smallest allocation wins (counted with a
//!   second-minor minimum of at most 8 rows), ties going to the candidate closest to
//!   row-major (higher dim numbers more minor).

use crate::element_type::ElementType;
use crate::error::{LayoutError, Result};
use crate::shape::{ArrayShape, Dim, Layout, Tile, TileDim};
use crate::size::sizes;
use std::fmt;
use std::str::FromStr;

/// A TPU generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TpuGen {
    /// TPU v2.
    V2,
    /// TPU v3.
    V3,
    /// TPU v4.
    V4,
    /// TPU v5e (v5 lite).
    V5e,
    /// TPU v5p.
    V5p,
    /// TPU v6e (Trillium).
    V6e,
    /// TPU7x (Ironwood).
    Tpu7x,
}

const GENS: &[(TpuGen, &str)] = &[
    (TpuGen::V2, "v2"),
    (TpuGen::V3, "v3"),
    (TpuGen::V4, "v4"),
    (TpuGen::V5e, "v5e"),
    (TpuGen::V5p, "v5p"),
    (TpuGen::V6e, "v6e"),
    (TpuGen::Tpu7x, "tpu7x"),
];

impl TpuGen {
    /// Lower-case name as used on the command line (`v5e`, `tpu7x`).
    pub fn name(self) -> &'static str {
        GENS.iter()
            .find(|g| g.0 == self)
            .map(|g| g.1)
            .unwrap_or("?")
    }

    /// All generations, oldest first.
    pub fn all() -> impl Iterator<Item = TpuGen> {
        GENS.iter().map(|g| g.0)
    }

    /// v2 and v3: double minimum tiles, no sub-byte packing.
    fn is_old(self) -> bool {
        matches!(self, TpuGen::V2 | TpuGen::V3)
    }
}

impl fmt::Display for TpuGen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TpuGen {
    type Err = LayoutError;
    /// Parse `v2`, `v3`, `v4`, `v5e` (also `v5lite`), `v5p`, `v6e` (also `trillium`),
    /// `tpu7x` (also `v7`, `ironwood`), any case.
    fn from_str(s: &str) -> Result<TpuGen> {
        let l = s.to_ascii_lowercase();
        let l = match l.as_str() {
            "v5lite" | "v5litepod" => "v5e",
            "trillium" => "v6e",
            "v7" | "v7x" | "ironwood" => "tpu7x",
            x => x,
        };
        GENS.iter().find(|g| g.1 == l).map(|g| g.0).ok_or_else(|| {
            LayoutError::Unsupported(format!(
                "unknown TPU generation '{s}' (known: v2, v3, v4, v5e, v5p, v6e, tpu7x)"
            ))
        })
    }
}

impl TpuGen {
    /// The generation of a chip as the chip database names it (`v4p`, `v5e`,
    /// `tpu-v5p`, …); `None` for a chip that is not a TPU generation.
    pub fn of_chip(name: &str) -> Option<TpuGen> {
        let n = name.to_ascii_lowercase();
        let n = n.strip_prefix("tpu-").unwrap_or(&n);
        Some(match n {
            "v2" => TpuGen::V2,
            "v3" => TpuGen::V3,
            "v4" | "v4p" => TpuGen::V4,
            "v5e" => TpuGen::V5e,
            "v5p" => TpuGen::V5p,
            "v6e" => TpuGen::V6e,
            "tpu7x" => TpuGen::Tpu7x,
            _ => return None,
        })
    }
}

/// Bits an element counts as for TPU tiling on `gen`: pred and sub-byte types count as
/// 8 on v2/v3, pred and the 6-bit floats (one byte each, unpacked) as 8 everywhere.
fn tiling_bits(t: ElementType, gen: TpuGen) -> u32 {
    let b = t.bits();
    if t == ElementType::Pred || b == 6 || (b < 8 && gen.is_old()) {
        8
    } else {
        b
    }
}

fn sized(dims: &[u64]) -> Tile {
    Tile {
        dims: dims.iter().map(|&d| TileDim::Size(d)).collect(),
    }
}

/// Smallest power of two ≥ n (1 for n ≤ 1), saturating.
fn pow2_at_least(n: u64) -> u64 {
    n.max(1).checked_next_power_of_two().unwrap_or(1 << 63)
}

struct Rule {
    bits: u32,
    packing: u64,
    /// Fewest rows of a rank ≥ 2 tile (the second-minor tile).
    min_rows: u64,
    /// Fewest 128-element rows of a rank 0 or 1 tile.
    vector_min_rows: u64,
    old: bool,
}

impl Rule {
    fn new(t: ElementType, gen: TpuGen) -> Rule {
        let bits = tiling_bits(t, gen);
        let packing = if bits < 32 { u64::from(32 / bits) } else { 1 };
        let vector_min_rows = if gen.is_old() { 2 * packing } else { packing };
        // v2/v3 store a sub-byte type one byte an element, yet tile its rows as if packed
        // (s2: 16 rows, as 32/2).
        let min_rows = if gen.is_old() && t.bits() < 8 {
            vector_min_rows.max(u64::from(32 / t.bits()))
        } else {
            vector_min_rows
        };
        Rule {
            bits,
            packing,
            min_rows,
            vector_min_rows,
            old: gen.is_old(),
        }
    }

    /// The second-minor tile for a second-minor dimension of `n`: on v4 and later a
    /// packed type (8 bits or fewer) takes 8 packed rows (`8·p`: 32 for 8-bit, 64 for
    /// 4-bit, 128 for 2-bit) when `n` is a multiple of that; otherwise the smallest power
    /// of two ≥ `n`, at most 8 and at least the type's minimum.
    fn rows(&self, n: u64) -> u64 {
        self.rows_at_least(n, self.min_rows)
    }

    /// The rows by which the two minor dimensions are chosen: [`Rule::rows`] with a
    /// minimum of at most 8 (libtpu picks s2's dimensions as if its tiles had 8 rows,
    /// then tiles them with 16).
    fn choice_rows(&self, n: u64) -> u64 {
        self.rows_at_least(n, self.min_rows.min(8))
    }

    fn rows_at_least(&self, n: u64, min_rows: u64) -> u64 {
        let full = 8 * self.packing;
        if !self.old && self.bits <= 8 && n > 0 && n % full == 0 {
            return full;
        }
        pow2_at_least(n).min(8).max(min_rows)
    }

    /// 128-element rows of a rank-1 tile for `n` elements.
    fn vector_rows(&self, n: u64) -> u64 {
        pow2_at_least(n.div_ceil(128))
            .min(self.min_rows.max(8))
            .max(self.vector_min_rows)
    }

    fn finish(&self, mut tiles: Vec<Tile>, minor_to_major: Vec<u64>) -> Layout {
        if self.packing > 1 && tiles.len() == 1 && !minor_to_major.is_empty() {
            if minor_to_major.len() == 1 {
                tiles.push(sized(&[128]));
            }
            tiles.push(sized(&[self.packing, 1]));
        }
        let mut l = Layout::new(minor_to_major).with_tiles(tiles);
        if self.bits < 8 {
            l.element_size_bits = u64::from(self.bits);
        }
        l
    }
}

/// Largest rank [`tpu_default`] accepts: its choice of the two minor dimensions tries
/// every ordered pair, each costing a product over the other dims (cubic in the rank:
/// 0.02 s at 256, minutes at 4000).
pub const MAX_DEFAULT_RANK: usize = 256;

/// The layout XLA:TPU gives an array argument of type `t` and logical `dims` on `gen`.
pub fn tpu_default(t: ElementType, dims: &[u64], gen: TpuGen) -> Result<ArrayShape> {
    let rule = Rule::new(t, gen);
    let rank = dims.len();
    if rank > MAX_DEFAULT_RANK {
        return Err(LayoutError::Unsupported(format!(
            "rank {rank} is above the {MAX_DEFAULT_RANK} dimensions the TPU default layout handles"
        )));
    }
    let mk = |layout: Layout| ArrayShape {
        element_type: t,
        dims: dims.iter().map(|&d| Dim::Static(d)).collect(),
        layout: Some(layout),
    };
    match rank {
        0 => Ok(mk(
            rule.finish(vec![sized(&[128 * rule.vector_min_rows])], vec![])
        )),
        1 => {
            let k = rule.vector_rows(dims[0]);
            Ok(mk(rule.finish(vec![sized(&[k * 128])], vec![0])))
        }
        _ => {
            // Allocation of each candidate, computed directly (ArraySize of a `(r,128)`
            // first tile on the two most minor physical dims); ties keep the first.
            let bits = if rule.bits < 8 {
                u128::from(rule.bits)
            } else {
                u128::from(t.storage_bits())
            };
            let mut best: Option<(u128, usize, usize)> = None;
            for m in (0..rank).rev() {
                for s in (0..rank).rev().filter(|&s| s != m) {
                    let mut el: u128 = u128::from(dims[m].div_ceil(128)) * 128;
                    let r = rule.choice_rows(dims[s]);
                    el *= u128::from(dims[s].div_ceil(r)) * u128::from(r);
                    for (d, &n) in dims.iter().enumerate() {
                        if d != m && d != s {
                            el = el.saturating_mul(u128::from(n));
                        }
                    }
                    let bytes = (el.saturating_mul(bits)).div_ceil(8);
                    if best.map_or(true, |(b, _, _)| bytes < b) {
                        best = Some((bytes, m, s));
                    }
                }
            }
            let (_, m, s) =
                best.ok_or_else(|| LayoutError::Unsupported("no candidate layout".into()))?;
            let mut m2m = vec![m as u64, s as u64];
            m2m.extend(
                (0..rank)
                    .rev()
                    .filter(|&d| d != m && d != s)
                    .map(|d| d as u64),
            );
            let out = mk(rule.finish(vec![sized(&[rule.rows(dims[s]), 128])], m2m));
            // Overflow of the chosen allocation is an error, as everywhere.
            sizes(&out)?;
            Ok(out)
        }
    }
}

/// The seed document's table: row-major, `(8,128)` for 32-bit (and wider) types with
/// `(2,128)`/`(4,128)` when the second-minor dim is 1–2 / 3–4, `(8,128)(2,1)` for
/// 16-bit, `(8,128)(4,1)` for 8-bit, pred and sub-byte types (one byte per element).
/// A rank-1 array is treated as one row; a scalar gets the rank-2 tile too.
pub fn doc_default(t: ElementType, dims: &[u64]) -> ArrayShape {
    let bits = t.storage_bits();
    let second = if dims.len() >= 2 {
        dims[dims.len() - 2]
    } else {
        1
    };
    let tiles = match bits {
        16 => vec![sized(&[8, 128]), sized(&[2, 1])],
        8 => vec![sized(&[8, 128]), sized(&[4, 1])],
        _ => match second {
            0..=2 => vec![sized(&[2, 128])],
            3..=4 => vec![sized(&[4, 128])],
            _ => vec![sized(&[8, 128])],
        },
    };
    ArrayShape {
        element_type: t,
        dims: dims.iter().map(|&d| Dim::Static(d)).collect(),
        layout: Some(Layout::row_major(dims.len()).with_tiles(tiles)),
    }
}

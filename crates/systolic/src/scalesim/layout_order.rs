//! The order SCALE-Sim 3.0.0 fetches an operand in under a custom layout
//! (`operand_matrix.get_ifmap_prefetch_matrix_custom_layout` and its FILTER twin).
//!
//! The operand's words are numbered in their natural order — IFMAP `(y, x, c)` over
//! H × W × C, FILTER `(k, c, r, s)` over filters × channels × filter height × width
//! (word `i` of the FILTER is address `FilterOffset + i`; the IFMAP's take no offset) —
//! and each dimension `d` is cut into `⌈d / f⌉` tiles of its intraline factor `f`
//! (padding with −1 where `f` does not divide `d`). The axes are arranged as (tile
//! indices…, offsets in the tile…) and permuted by the layout's interline order followed
//! by its intraline order (numpy `transpose`, negative axes counted from the end); the
//! result, read row-major, is the prefetch matrix, which SCALE-Sim folds into SRAM
//! lines of `…SRAMBankBandwidth` words. It asserts that the IFMAP's factors multiply to
//! at most the IFMAP bank bandwidth and the FILTER's to exactly the FILTER's.

use super::layout::LayoutRow;
use super::topology::TopoLayer;

/// Most elements, padding included, of a custom-layout prefetch matrix.
pub(crate) const MAX_LAYOUT_ELEMS: u64 = 1 << 28;

/// One operand's words in custom-layout fetch order.
#[derive(Debug, Clone)]
pub(crate) struct LayoutOrder {
    /// The operand's dimensions, outermost first.
    dims: Vec<u64>,
    /// Intraline factor per dimension.
    factors: Vec<u64>,
    /// For each axis of the fetched array, the tiled axis it is (`< dims.len()`: a tile
    /// index, else an offset in the tile).
    axes: Vec<usize>,
}

/// The IFMAP's (dims, factor values, intraline order, interline order) value indices.
const IFMAP_FACTORS: [usize; 3] = [0, 1, 4];
/// The FILTER's factor value indices: filters, channels, height, width.
const FILTER_FACTORS: [usize; 4] = [5, 4, 2, 3];

fn value(row: &LayoutRow, i: usize) -> Result<i64, String> {
    row.values.get(i).copied().ok_or_else(|| {
        format!(
            "row '{}' has {} values, needs {}",
            row.name,
            row.values.len(),
            i + 1
        )
    })
}

fn factors(row: &LayoutRow, idx: &[usize]) -> Result<Vec<u64>, String> {
    idx.iter()
        .map(|&i| {
            let v = value(row, i)?;
            u64::try_from(v)
                .ok()
                .filter(|f| *f >= 1)
                .ok_or_else(|| format!("intraline factor (value {}) {v} must be at least 1", i + 1))
        })
        .collect()
}

/// Part of numpy's `transpose(axes)` check on an array of `n` axes: each axis in range
/// (negatives counted from the end) and named once.
fn permutation(
    row: &LayoutRow,
    idx: std::ops::Range<usize>,
    n: usize,
) -> Result<Vec<usize>, String> {
    let mut out = Vec::with_capacity(n);
    for i in idx {
        let a = value(row, i)?;
        let norm = if a < 0 { a + n as i64 } else { a };
        if !(0..n as i64).contains(&norm) {
            return Err(format!(
                "axis {a} (value {}) is out of bounds for the {n} axes of the tiled operand",
                i + 1
            ));
        }
        if out.contains(&(norm as usize)) {
            return Err(format!(
                "axis {a} (value {}) is repeated in the axis order",
                i + 1
            ));
        }
        out.push(norm as usize);
    }
    Ok(out)
}

impl LayoutOrder {
    /// The IFMAP of `l` laid out by `row`, checked as SCALE-Sim asserts it against the
    /// IFMAP bank bandwidth `bw`.
    pub(crate) fn ifmap(row: &LayoutRow, l: &TopoLayer, bw: u64) -> Result<Self, String> {
        let factors = factors(row, &IFMAP_FACTORS)?;
        let product = factors.iter().try_fold(1u64, |a, f| a.checked_mul(*f));
        if product.map_or(true, |p| p > bw) {
            return Err(format!(
                "AssertionError: the IFMAP intraline factors {factors:?} multiply to more than IfmapSRAMBankBandwidth {bw}"
            ));
        }
        if row.values.len() < 12 {
            return Err(format!(
                "row '{}' has {} values, needs 12 for an IFMAP layout",
                row.name,
                row.values.len()
            ));
        }
        let mut order = permutation(row, 9..12, 6)?;
        order.extend(permutation(row, 6..9, 6)?);
        Self::checked(vec![l.ifmap_h, l.ifmap_w, l.channels], factors, order, 6)
    }

    /// The FILTER of `l` laid out by `row`, checked as SCALE-Sim asserts it against the
    /// FILTER bank bandwidth `bw`.
    pub(crate) fn filter(row: &LayoutRow, l: &TopoLayer, bw: u64) -> Result<Self, String> {
        let factors = factors(row, &FILTER_FACTORS)?;
        let product = factors.iter().try_fold(1u64, |a, f| a.checked_mul(*f));
        if product != Some(bw) {
            return Err(format!(
                "AssertionError: the FILTER intraline factors {factors:?} do not multiply to FilterSRAMBankBandwidth {bw}"
            ));
        }
        if row.values.len() != 20 {
            return Err(format!(
                "row '{}' has {} values, a FILTER layout needs 20",
                row.name,
                row.values.len()
            ));
        }
        let mut order = permutation(row, 16..20, 8)?;
        order.extend(permutation(row, 12..16, 8)?);
        Self::checked(
            vec![l.num_filt, l.channels, l.filt_h, l.filt_w],
            factors,
            order,
            8,
        )
    }

    /// The two permutations (interline, intraline) each name `n` distinct axes: together
    /// they must be one permutation of all `n`.
    fn checked(
        dims: Vec<u64>,
        factors: Vec<u64>,
        order: Vec<usize>,
        n: usize,
    ) -> Result<Self, String> {
        let mut seen = vec![false; n];
        for &a in &order {
            if std::mem::replace(&mut seen[a], true) {
                return Err(format!(
                    "axis {a} appears in both the interline and the intraline order"
                ));
            }
        }
        let me = LayoutOrder {
            dims,
            factors,
            axes: order,
        };
        match me.len() {
            Some(len) if len <= MAX_LAYOUT_ELEMS => Ok(me),
            _ => Err(format!(
                "its prefetch matrix (padded to whole intraline tiles) exceeds {MAX_LAYOUT_ELEMS} elements"
            )),
        }
    }

    /// Sizes of the tiled axes: tile counts, then the factors.
    fn tiled_shape(&self) -> Vec<u64> {
        let tiles = self
            .dims
            .iter()
            .zip(&self.factors)
            .map(|(d, f)| d.div_ceil(*f));
        tiles.chain(self.factors.iter().copied()).collect()
    }

    /// Elements of the prefetch matrix, padding included (`None` on overflow).
    pub(crate) fn len(&self) -> Option<u64> {
        self.tiled_shape()
            .iter()
            .try_fold(1u64, |a, s| a.checked_mul(*s))
    }

    /// Words of the operand in its natural numbering (`dims` row-major).
    pub(crate) fn words(&self) -> u64 {
        self.dims.iter().product()
    }

    /// Calls `f` for each element in fetch order: `Some(word)`, or `None` for padding.
    pub(crate) fn for_each(&self, mut f: impl FnMut(Option<u64>)) {
        let nd = self.dims.len();
        let tiled = self.tiled_shape();
        let shape: Vec<u64> = self.axes.iter().map(|&a| tiled[a]).collect();
        let mut idx = vec![0u64; shape.len()];
        let mut at = vec![0u64; 2 * nd]; // index on each tiled axis
        loop {
            for (i, &a) in self.axes.iter().enumerate() {
                at[a] = idx[i];
            }
            let mut word = 0u64;
            let mut inside = true;
            for d in 0..nd {
                let coord = at[d] * self.factors[d] + at[nd + d];
                inside &= coord < self.dims[d];
                word = word * self.dims[d] + coord;
            }
            f(inside.then_some(word));
            // row-major odometer over the permuted shape
            let mut i = shape.len();
            loop {
                if i == 0 {
                    return;
                }
                i -= 1;
                idx[i] += 1;
                if idx[i] < shape[i] {
                    break;
                }
                idx[i] = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalesim::topology::TopoLayer;

    fn row(values: &[i64]) -> LayoutRow {
        LayoutRow {
            name: "L0".into(),
            values: values.to_vec(),
            line: 2,
        }
    }

    /// numpy: `np.arange(3*2*5).reshape(3,2,5)`, padded to (4,2,6) with −1, reshaped to
    /// (2,2,1,2,3,2), transposed (0,2,4,1,3,5) then (5,4,3,2,1,0), flattened (numpy 2.3).
    #[test]
    fn ifmap_order_equals_numpy() {
        let l = TopoLayer::gemm("g".into(), 3, 1, 2);
        let l = TopoLayer { channels: 5, ..l };
        let r = row(&[2, 2, 1, 1, 2, 1, 2, 1, 0, 5, 4, 3]);
        let o = LayoutOrder::ifmap(&r, &l, 8).unwrap();
        let mut got = Vec::new();
        o.for_each(|w| got.push(w.map_or(-1, |w| w as i64)));
        let want = [
            0, 20, 2, 22, 4, 24, 10, -1, 12, -1, 14, -1, 5, 25, 7, 27, 9, 29, 15, -1, 17, -1, 19,
            -1, 1, 21, 3, 23, -1, -1, 11, -1, 13, -1, -1, -1, 6, 26, 8, 28, -1, -1, 16, -1, 18, -1,
            -1, -1,
        ];
        assert_eq!(got, want);
        assert_eq!(o.len(), Some(48));
        assert!(LayoutOrder::ifmap(&r, &l, 7)
            .unwrap_err()
            .starts_with("AssertionError"));
        let repeated = row(&[2, 2, 1, 1, 2, 1, 2, 1, 0, 5, 5, 3]);
        assert!(LayoutOrder::ifmap(&repeated, &l, 8)
            .unwrap_err()
            .contains("repeated"));
    }
}

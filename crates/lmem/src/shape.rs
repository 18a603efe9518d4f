//! Tensor shapes (N,C,H,W or N,C,D,H,W), element indices and the memory layouts a
//! tensor can have, with their text forms (`2,3,4,5`, `aligned`).

use crate::error::{LmemError, Result};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A 4-D (N,C,H,W) or 5-D (N,C,D,H,W) tensor shape, in elements. `d: None` is a 4-D
/// tensor (it behaves like D = 1). Every dimension must be at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TensorShape {
    /// Batch.
    pub n: u64,
    /// Channels (spread across the NPU lanes).
    pub c: u64,
    /// Height.
    pub h: u64,
    /// Width.
    pub w: u64,
    /// Depth of a 5-D tensor (between C and H); `None` for 4-D.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d: Option<u64>,
}

impl TensorShape {
    /// A 4-D shape.
    pub fn nchw(n: u64, c: u64, h: u64, w: u64) -> TensorShape {
        TensorShape {
            n,
            c,
            h,
            w,
            d: None,
        }
    }

    /// A 5-D shape (N,C,D,H,W).
    pub fn ncdhw(n: u64, c: u64, d: u64, h: u64, w: u64) -> TensorShape {
        TensorShape {
            n,
            c,
            h,
            w,
            d: Some(d),
        }
    }

    /// Depth, 1 for a 4-D shape.
    pub fn depth(&self) -> u64 {
        self.d.unwrap_or(1)
    }

    /// Error if any dimension is zero.
    pub fn validate(&self) -> Result<()> {
        for (dim, v) in [
            ("n", self.n),
            ("c", self.c),
            ("d", self.depth()),
            ("h", self.h),
            ("w", self.w),
        ] {
            if v == 0 {
                return Err(LmemError::ZeroDim { dim });
            }
        }
        Ok(())
    }

    /// Number of elements (checked).
    pub fn elements(&self) -> Result<u64> {
        [self.c, self.depth(), self.h, self.w]
            .iter()
            .try_fold(self.n, |a, &b| a.checked_mul(b))
            .ok_or(LmemError::Overflow {
                what: "element count",
            })
    }
}

/// Parse `N,C,H,W` or `N,C,D,H,W` (commas or `x`, spaces ignored).
fn parse_dims(s: &str) -> Result<Vec<u64>> {
    let bad = |why| LmemError::BadShape {
        given: s.to_string(),
        why,
    };
    let parts: Vec<&str> = s.split([',', 'x']).map(str::trim).collect();
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        out.push(
            p.parse::<u64>()
                .map_err(|_| bad("each dimension must be a whole number"))?,
        );
    }
    Ok(out)
}

impl FromStr for TensorShape {
    type Err = LmemError;

    /// Parse `2,3,4,5` (N,C,H,W) or `1,8,2,4,4` (N,C,D,H,W); `1x64x56x56` also works.
    fn from_str(s: &str) -> Result<TensorShape> {
        let v = parse_dims(s)?;
        let shape = match *v.as_slice() {
            [n, c, h, w] => TensorShape::nchw(n, c, h, w),
            [n, c, d, h, w] => TensorShape::ncdhw(n, c, d, h, w),
            _ => {
                return Err(LmemError::BadShape {
                    given: s.to_string(),
                    why: "expected 4 (N,C,H,W) or 5 (N,C,D,H,W) dimensions",
                })
            }
        };
        shape.validate()?;
        Ok(shape)
    }
}

impl fmt::Display for TensorShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.d {
            Some(d) => write!(f, "{},{},{},{},{}", self.n, self.c, d, self.h, self.w),
            None => write!(f, "{},{},{},{}", self.n, self.c, self.h, self.w),
        }
    }
}

/// The position of one element: (n, c, d, h, w), zero-based; `d` is 0 for 4-D tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ElementIndex {
    /// Batch index.
    pub n: u64,
    /// Channel index.
    pub c: u64,
    /// Depth index (0 for 4-D tensors).
    pub d: u64,
    /// Row index.
    pub h: u64,
    /// Column index.
    pub w: u64,
}

impl ElementIndex {
    /// Parse `n,c,h,w` or `n,c,d,h,w`.
    pub fn parse(s: &str) -> Result<ElementIndex> {
        match *parse_dims(s)?.as_slice() {
            [n, c, h, w] => Ok(ElementIndex { n, c, d: 0, h, w }),
            [n, c, d, h, w] => Ok(ElementIndex { n, c, d, h, w }),
            _ => Err(LmemError::BadShape {
                given: s.to_string(),
                why: "an index has 4 (n,c,h,w) or 5 (n,c,d,h,w) numbers",
            }),
        }
    }

    /// Error unless every coordinate is inside `shape`.
    pub fn check(&self, shape: &TensorShape) -> Result<()> {
        for (dim, index, size) in [
            ("n", self.n, shape.n),
            ("c", self.c, shape.c),
            ("d", self.d, shape.depth()),
            ("h", self.h, shape.h),
            ("w", self.w, shape.w),
        ] {
            if index >= size {
                return Err(LmemError::IndexOutOfRange { dim, index, size });
            }
        }
        Ok(())
    }
}

impl fmt::Display for ElementIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{},{},{}", self.n, self.c, self.d, self.h, self.w)
    }
}

/// How a tensor is laid out.
///
/// The three local layouts spread channels over the NPU lanes; `Global` is plain
/// contiguous DDR memory (W fastest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalLayout {
    /// Local, the common case: C_stride = align_up(D·H·W, EU_NUM); start address a
    /// multiple of EU_BYTES.
    Aligned,
    /// Local, no rounding: C_stride = D·H·W.
    Compact,
    /// Local, each row aligned: H_stride = align_up(W, EU_NUM), C_stride = D·H·H_stride;
    /// start address a multiple of EU_BYTES.
    Line,
    /// Global memory: contiguous, W_stride 1, H_stride W, D_stride H·W, C_stride D·H·W,
    /// N_stride C·D·H·W.
    Global,
}

impl LocalLayout {
    /// Every layout, in display order.
    pub const ALL: [LocalLayout; 4] = [
        LocalLayout::Aligned,
        LocalLayout::Compact,
        LocalLayout::Line,
        LocalLayout::Global,
    ];

    /// The layout's name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            LocalLayout::Aligned => "aligned",
            LocalLayout::Compact => "compact",
            LocalLayout::Line => "line",
            LocalLayout::Global => "global",
        }
    }

    /// True for the three local-memory layouts.
    pub fn is_local(self) -> bool {
        self != LocalLayout::Global
    }
}

impl FromStr for LocalLayout {
    type Err = LmemError;

    /// `aligned`, `compact`, `line` (also `line-aligned`), `global` (any case).
    fn from_str(s: &str) -> Result<LocalLayout> {
        match s.to_ascii_lowercase().as_str() {
            "aligned" | "align" | "eu-aligned" => Ok(LocalLayout::Aligned),
            "compact" => Ok(LocalLayout::Compact),
            "line" | "line-aligned" | "line_aligned" => Ok(LocalLayout::Line),
            "global" | "gmem" | "ddr" => Ok(LocalLayout::Global),
            _ => Err(LmemError::BadLayout(s.to_string())),
        }
    }
}

impl fmt::Display for LocalLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_shapes_and_indices() {
        assert_eq!(
            "2,3,4,5".parse::<TensorShape>().unwrap(),
            TensorShape::nchw(2, 3, 4, 5)
        );
        assert_eq!(
            "1x8x2x4x4".parse::<TensorShape>().unwrap(),
            TensorShape::ncdhw(1, 8, 2, 4, 4)
        );
        assert_eq!(
            " 2, 3 ,4,5".parse::<TensorShape>().unwrap().to_string(),
            "2,3,4,5"
        );
        let e = "2,3,4".parse::<TensorShape>().unwrap_err().to_string();
        assert!(e.contains("'2,3,4'"), "{e}");
        assert!("2,3,a,5".parse::<TensorShape>().is_err());
        let e = "2,0,4,5".parse::<TensorShape>().unwrap_err().to_string();
        assert!(e.contains("dimension c"), "{e}");
        let i = ElementIndex::parse("1,2,3,4").unwrap();
        assert_eq!((i.n, i.c, i.d, i.h, i.w), (1, 2, 0, 3, 4));
        let e = i
            .check(&TensorShape::nchw(2, 2, 4, 5))
            .unwrap_err()
            .to_string();
        assert!(e.contains("c = 2"), "{e}");
        assert!(TensorShape::nchw(u64::MAX, 2, 1, 1).elements().is_err());
    }

    #[test]
    fn layouts() {
        for l in LocalLayout::ALL {
            assert_eq!(l.name().parse::<LocalLayout>().unwrap(), l);
        }
        assert!("tiled"
            .parse::<LocalLayout>()
            .unwrap_err()
            .to_string()
            .contains("'tiled'"));
    }
}

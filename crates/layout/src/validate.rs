//! XLA's layout rules, checked separately from parsing: `minor_to_major` is a
//! permutation of the dimensions, tile dims are > 0 (or `*`/`d`), a `*` has a more
//! minor dim to combine into, `L` ≥ 1, split configs name a dimension of the shape
//! with strictly increasing indices inside it, `#`/`*` types are integers, dims of a
//! layout-bearing shape are known.

use crate::error::{LayoutError, Result};
use crate::parse::{parse_shape_with_spans, Loc, Spans};
use crate::shape::{ArrayShape, Shape, TileDim};

/// One broken rule: where (path of tuple elements + item) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Path of tuple element numbers to the array (`usize::MAX` = its `P(..)` shape).
    pub path: Vec<usize>,
    /// The offending item.
    pub loc: Loc,
    /// The broken rule, naming the offending value.
    pub message: String,
}

/// Check every array of `shape` against XLA's layout rules; the first broken rule is
/// returned.
pub fn check(shape: &Shape) -> std::result::Result<(), Violation> {
    check_at(shape, &mut Vec::new())
}

fn check_at(shape: &Shape, path: &mut Vec<usize>) -> std::result::Result<(), Violation> {
    match shape {
        Shape::Array(a) | Shape::Buffer(a) => check_array(a, path),
        Shape::Tuple(v) => {
            for (i, s) in v.iter().enumerate() {
                path.push(i);
                let r = check_at(s, path);
                path.pop();
                r?;
            }
            Ok(())
        }
        Shape::Token | Shape::Opaque => Ok(()),
    }
}

fn check_array(a: &ArrayShape, path: &[usize]) -> std::result::Result<(), Violation> {
    let v = |loc: Loc, message: String| Violation {
        path: path.to_vec(),
        loc,
        message,
    };
    let Some(l) = &a.layout else { return Ok(()) };
    let rank = a.rank();
    if l.minor_to_major.len() != rank {
        return Err(v(
            Loc::Layout,
            format!(
                "minor_to_major has {} entries but the shape has rank {rank}",
                l.minor_to_major.len()
            ),
        ));
    }
    let mut seen = vec![false; rank];
    for (i, &d) in l.minor_to_major.iter().enumerate() {
        let Some(slot) = usize::try_from(d).ok().and_then(|d| seen.get_mut(d)) else {
            return Err(v(
                Loc::MinorToMajor(i),
                format!("dimension {d} in minor_to_major is out of range for rank {rank}"),
            ));
        };
        if *slot {
            return Err(v(
                Loc::MinorToMajor(i),
                format!("dimension {d} appears twice in minor_to_major (must be a permutation)"),
            ));
        }
        *slot = true;
    }
    for (t, tile) in l.tiles.iter().enumerate() {
        if tile.dims.is_empty() {
            return Err(v(
                Loc::Tile(t),
                "a tile needs at least one dimension".into(),
            ));
        }
        for (j, d) in tile.dims.iter().enumerate() {
            if *d == TileDim::Size(0) {
                return Err(v(
                    Loc::TileDim(t, j),
                    "tile size 0 (a tile dim is > 0, '*' or 'd')".into(),
                ));
            }
        }
        if tile.dims.last() == Some(&TileDim::Combine) {
            return Err(v(
                Loc::TileDim(t, tile.dims.len() - 1),
                "'*' as the most minor tile dim has no more minor dim to combine into".into(),
            ));
        }
    }
    if l.tail_padding_alignment == 0 {
        return Err(v(
            Loc::Attr('L'),
            "L(0): tail padding alignment must be >= 1".into(),
        ));
    }
    for (ch, t) in [('#', l.index_type), ('*', l.pointer_type)] {
        if let Some(t) = t {
            if t.is_float() || matches!(t.name(), "pred" | "c64" | "c128") {
                return Err(v(
                    Loc::Attr(ch),
                    format!("{ch}({t}): must be an integer type"),
                ));
            }
        }
    }
    if l.element_size_bits > 128 {
        return Err(v(
            Loc::Attr('E'),
            format!("E({}): element size above 128 bits", l.element_size_bits),
        ));
    }
    for (i, sc) in l.split_configs.iter().enumerate() {
        let logical = sc.logical_dimension(&l.minor_to_major);
        let Some((ld, dim)) = logical.and_then(|ld| a.dims.get(ld).map(|dim| (ld, dim))) else {
            return Err(v(
                Loc::Split(i),
                format!(
                    "split dimension {} is out of range for rank {rank} (a physical dimension, 0 the majormost)",
                    sc.dimension
                ),
            ));
        };
        if l.split_configs[..i]
            .iter()
            .any(|o| o.dimension == sc.dimension)
        {
            return Err(v(
                Loc::Split(i),
                format!("split dimension {} is split twice", sc.dimension),
            ));
        }
        let size = dim.allocated();
        let mut prev = 0u64;
        for (j, &ix) in sc.indices.iter().enumerate() {
            if ix <= prev {
                return Err(v(
                    Loc::SplitIndex(i, j),
                    format!("split index {ix} must be > 0 and greater than the previous one"),
                ));
            }
            if let Some(size) = size {
                if ix >= size {
                    return Err(v(
                        Loc::SplitIndex(i, j),
                        format!(
                            "split index {ix} is not inside dimension {ld} of size {size} (SC({}:…) names physical dimension {} from the major end)",
                            sc.dimension, sc.dimension
                        ),
                    ));
                }
            }
            prev = ix;
        }
    }
    if l.physical_shape.is_some() {
        return Err(v(
            Loc::Attr('P'),
            "P(..) (a physical shape) is only allowed on sparse arrays (XLA's parser rejects it on dense ones)".into(),
        ));
    }
    Ok(())
}

/// Parse `text` and check XLA's rules; a broken rule is reported with the column and
/// text of the offending token.
pub fn parse_valid(text: &str) -> Result<Shape> {
    let (shape, spans) = parse_shape_with_spans(text)?;
    check(&shape).map_err(|viol| to_error(viol, &spans, text))?;
    Ok(shape)
}

fn to_error(viol: Violation, spans: &Spans, text: &str) -> LayoutError {
    let (column, token) = spans
        .get(&(viol.path.clone(), viol.loc.clone()))
        .or_else(|| spans.get(&(viol.path.clone(), Loc::Layout)))
        .cloned()
        .unwrap_or((0, text.to_string()));
    LayoutError::Invalid {
        column,
        token,
        message: viol.message,
        text: text.to_string(),
    }
}

/// Check a shape built in code (no text): errors carry column 0 and the printed shape.
pub fn validate(shape: &Shape) -> Result<()> {
    check(shape).map_err(|viol| {
        let text = shape.to_string();
        LayoutError::Invalid {
            column: 0,
            token: format!("{:?}", viol.loc),
            message: viol.message,
            text,
        }
    })
}

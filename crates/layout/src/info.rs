//! What `tpusim layout info SHAPE --json` prints of one array, as a value: its type,
//! dims, layout, physical shape and sizes as XLA allocates them. The CLI and the Python
//! package both print this one struct.

use crate::{element_bits, sizes, ArrayShape, Dim, Geometry, Result, TileDim};
use serde::Serialize;

/// A dim or tile dim: a number, or its text when it is not a plain size (`?`, `<=8`,
/// `*`, `+`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum DimValue {
    /// A static size.
    Size(u64),
    /// Anything else, as written.
    Text(String),
}

/// One array's facts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeInfo {
    /// The shape as XLA prints it.
    pub shape: String,
    /// Element type name.
    pub element_type: String,
    /// Bits per element in memory.
    pub element_bits: u64,
    /// Logical dims.
    pub dims: Vec<DimValue>,
    /// The layout's minor-to-major order (the default when none is written).
    pub minor_to_major: Vec<u64>,
    /// Tiles, outermost first.
    pub tiles: Vec<Vec<DimValue>>,
    /// Physical dims after tiling; `None` (as every size below) for a shape with an
    /// unbounded `?` dim: XLA allocates no size for it and it has no index mapping.
    pub physical_shape: Option<Vec<u64>>,
    /// Elements × element bits, in bytes.
    pub logical_bytes: Option<u64>,
    /// XLA's ArraySize.
    pub array_size_bytes: Option<u64>,
    /// The fully expanded tiling's size.
    pub exact_size_bytes: Option<u64>,
    /// array_size / logical.
    pub expansion: Option<f64>,
    /// What XLA would warn about.
    pub warnings: Vec<String>,
}

fn dim_value(d: &Dim) -> DimValue {
    match d {
        Dim::Static(n) => DimValue::Size(*n),
        other => DimValue::Text(other.to_string()),
    }
}

fn tile_value(d: &TileDim) -> DimValue {
    match d {
        TileDim::Size(n) => DimValue::Size(*n),
        other => DimValue::Text(other.to_string()),
    }
}

/// The facts of `a`.
pub fn shape_info(a: &ArrayShape) -> Result<ShapeInfo> {
    let l = a.layout_or_default();
    let unbounded = a.dims.iter().any(|d| d.allocated().is_none());
    let (s, g) = if unbounded {
        (None, None)
    } else {
        (Some(sizes(a)?), Some(Geometry::new(a)?))
    };
    let mut warnings = s.as_ref().map_or_else(Vec::new, |s| s.warnings.clone());
    if unbounded {
        warnings.push("an unbounded '?' dim: no allocation size or index mapping exists".into());
    }
    Ok(ShapeInfo {
        shape: a.to_string(),
        element_type: a.element_type.name().to_string(),
        element_bits: element_bits(a),
        dims: a.dims.iter().map(dim_value).collect(),
        minor_to_major: l.minor_to_major.clone(),
        tiles: l
            .tiles
            .iter()
            .map(|t| t.dims.iter().map(tile_value).collect())
            .collect(),
        physical_shape: g.map(|g| g.physical_dims().to_vec()),
        logical_bytes: s.as_ref().map(|s| s.logical_bytes),
        array_size_bytes: s.as_ref().map(|s| s.array_size_bytes),
        exact_size_bytes: s.as_ref().map(|s| s.exact_size_bytes),
        expansion: s.map(|s| s.expansion),
        warnings,
    })
}

impl std::fmt::Display for DimValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DimValue::Size(n) => write!(f, "{n}"),
            DimValue::Text(t) => f.write_str(t),
        }
    }
}

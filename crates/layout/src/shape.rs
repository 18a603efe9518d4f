//! Shapes with layouts as XLA's text format describes them: element type, dimension
//! sizes (static, `<=N` bounded dynamic, `?` unbounded), and the layout
//! (`minor_to_major` plus the attributes `T`, `L`, `#`, `*`, `E`, `S`, `SC`, `P`, `M`).
//!
//! `Display` prints XLA's canonical text (lower-case type names, attributes in XLA's
//! printer order, no whitespace), so printed shapes paste into XLA tools.

use crate::element_type::ElementType;
use std::fmt;

/// One logical dimension size of an array shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A static size in elements, printed as `N`.
    Static(u64),
    /// A bounded dynamic size: at most `N` elements, printed as `<=N`. Memory is
    /// allocated for the bound.
    Bounded(u64),
    /// An unbounded dynamic size, printed as `?`: no allocation size is known.
    Unbounded,
}

impl Dim {
    /// The number of elements memory is allocated for: the size or the bound; `None`
    /// for `?`.
    pub fn allocated(self) -> Option<u64> {
        match self {
            Dim::Static(n) | Dim::Bounded(n) => Some(n),
            Dim::Unbounded => None,
        }
    }
}

/// One dimension of a tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TileDim {
    /// A tile size in elements (validation requires > 0).
    Size(u64),
    /// `*`: combine this dimension into the next more minor one before tiling (XLA
    /// stores it as INT64_MIN and prints `*`).
    Combine,
    /// `d`: the tile size equals the size of the dimension it covers (no padding).
    Match,
}

/// One tile of a (possibly repeated) tiling, e.g. `(8,128)`; the last entry covers the
/// most minor dimension.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Tile {
    /// Tile dimensions, most major first.
    pub dims: Vec<TileDim>,
}

/// A split config `(d:i,j,…)`: physical dimension `d`, counted from the major end
/// (`d = 0` is the majormost, logical dimension `minor_to_major[rank - 1 - d]`), is split
/// into separate pieces at the element indices `i, j, …` (XLA allocates the largest
/// piece). XLA's `layout.h` and `LayoutUtil::MaxSplitSize`; checked against XLA's
/// ArraySize in `tests/data/xla_sc_golden.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SplitConfig {
    /// The physical dimension that is split, from the major end.
    pub dimension: u64,
    /// Split points in elements, strictly increasing, each inside the dimension.
    pub indices: Vec<u64>,
}

impl SplitConfig {
    /// The logical dimension this config splits under `minor_to_major`, or `None` when
    /// `dimension` is not below the rank.
    pub fn logical_dimension(&self, minor_to_major: &[u64]) -> Option<usize> {
        let rank = minor_to_major.len();
        let d = usize::try_from(self.dimension).ok().filter(|&d| d < rank)?;
        usize::try_from(minor_to_major[rank - 1 - d]).ok()
    }
}

/// An XLA layout: the physical order of dimensions and its attributes. Unset attributes
/// have XLA's defaults (L = 1, E = 0 meaning "the type's width", S = 0 meaning HBM,
/// M = 0).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Logical dimension numbers, most minor first (`{1,0}` = row-major for rank 2).
    pub minor_to_major: Vec<u64>,
    /// Tiles applied one after another (`T(8,128)(2,1)`); empty = untiled.
    pub tiles: Vec<Tile>,
    /// `L(n)`: after tiling, the element count is padded to a multiple of n (1 = none).
    pub tail_padding_alignment: u64,
    /// `#(type)`: the index type of a sparse array, if given.
    pub index_type: Option<ElementType>,
    /// `*(type)`: the pointer type of a sparse array, if given.
    pub pointer_type: Option<ElementType>,
    /// `E(n)`: bits per element in memory (0 = the element type's storage width).
    pub element_size_bits: u64,
    /// `S(n)`: memory space (0 = default device memory, 1 = VMEM on TPU, 5 = host).
    pub memory_space: u64,
    /// `SC(..)(..)`: split configs.
    pub split_configs: Vec<SplitConfig>,
    /// `P(shape)`: an explicit physical shape.
    pub physical_shape: Option<Box<Shape>>,
    /// `M(n)`: bytes of dynamic-shape metadata before the data.
    pub dynamic_shape_metadata_prefix_bytes: u64,
}

impl Layout {
    /// A plain layout with the given `minor_to_major` and every attribute at its
    /// default.
    pub fn new(minor_to_major: Vec<u64>) -> Layout {
        Layout {
            minor_to_major,
            tiles: Vec::new(),
            tail_padding_alignment: 1,
            index_type: None,
            pointer_type: None,
            element_size_bits: 0,
            memory_space: 0,
            split_configs: Vec::new(),
            physical_shape: None,
            dynamic_shape_metadata_prefix_bytes: 0,
        }
    }

    /// The default row-major layout `{rank-1,…,0}` of a rank.
    pub fn row_major(rank: usize) -> Layout {
        Layout::new((0..rank as u64).rev().collect())
    }

    /// The same layout with `tiles` replaced.
    pub fn with_tiles(mut self, tiles: Vec<Tile>) -> Layout {
        self.tiles = tiles;
        self
    }

    /// True when the layout has no attributes that change the memory image other than
    /// `minor_to_major` (no tiles, no `E`, `L` of 1, no splits, no metadata prefix).
    pub fn is_plain(&self) -> bool {
        self.tiles.is_empty()
            && self.element_size_bits == 0
            && self.tail_padding_alignment == 1
            && self.split_configs.is_empty()
            && self.dynamic_shape_metadata_prefix_bytes == 0
    }
}

/// An array shape: element type, dimension sizes and an optional layout.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    /// The element type.
    pub element_type: ElementType,
    /// Logical dimension sizes, most major (index 0) first.
    pub dims: Vec<Dim>,
    /// The layout, if the text gave one (`None` means the default `{rank-1,…,0}`).
    pub layout: Option<Layout>,
}

impl ArrayShape {
    /// A static array shape without a layout.
    pub fn new(element_type: ElementType, dims: &[u64]) -> ArrayShape {
        ArrayShape {
            element_type,
            dims: dims.iter().map(|&d| Dim::Static(d)).collect(),
            layout: None,
        }
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The layout, or the default row-major one when none is given.
    pub fn layout_or_default(&self) -> Layout {
        self.layout
            .clone()
            .unwrap_or_else(|| Layout::row_major(self.dims.len()))
    }
}

/// Any shape of XLA's text format.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A dense array.
    Array(ArrayShape),
    /// A tuple `(a, b, …)`.
    Tuple(Vec<Shape>),
    /// `token[]`: an ordering token (no data).
    Token,
    /// `opaque[]`: an opaque handle (no data).
    Opaque,
    /// `b(f32[8]{0})`: a buffer holding an array (XLA's buffer shape).
    Buffer(ArrayShape),
}

impl Shape {
    /// The array shape, if this is an array.
    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Every array inside this shape (itself, or the leaves of a tuple), in order.
    pub fn arrays(&self) -> Vec<&ArrayShape> {
        let mut out = Vec::new();
        fn walk<'a>(s: &'a Shape, out: &mut Vec<&'a ArrayShape>) {
            match s {
                Shape::Array(a) | Shape::Buffer(a) => out.push(a),
                Shape::Tuple(v) => v.iter().for_each(|x| walk(x, out)),
                Shape::Token | Shape::Opaque => {}
            }
        }
        walk(self, &mut out);
        out
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(n) => write!(f, "{n}"),
            Dim::Bounded(n) => write!(f, "<={n}"),
            Dim::Unbounded => f.write_str("?"),
        }
    }
}

impl fmt::Display for TileDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TileDim::Size(n) => write!(f, "{n}"),
            TileDim::Combine => f.write_str("*"),
            TileDim::Match => f.write_str("d"),
        }
    }
}

fn join<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T], sep: &str) -> fmt::Result {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{x}")?;
    }
    Ok(())
}

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        join(f, &self.dims, ",")?;
        f.write_str(")")
    }
}

impl fmt::Display for SplitConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}:", self.dimension)?;
        join(f, &self.indices, ",")?;
        f.write_str(")")
    }
}

impl fmt::Display for Layout {
    /// XLA's `Layout::ToString`: `{m2m:attrs}` with attributes in printer order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        join(f, &self.minor_to_major, ",")?;
        let mut attrs = String::new();
        if !self.tiles.is_empty() {
            attrs.push('T');
            for t in &self.tiles {
                attrs.push_str(&t.to_string());
            }
        }
        if self.tail_padding_alignment != 1 {
            attrs.push_str(&format!("L({})", self.tail_padding_alignment));
        }
        if let Some(t) = self.index_type {
            attrs.push_str(&format!("#({t})"));
        }
        if let Some(t) = self.pointer_type {
            attrs.push_str(&format!("*({t})"));
        }
        if self.element_size_bits != 0 {
            attrs.push_str(&format!("E({})", self.element_size_bits));
        }
        if self.memory_space != 0 {
            attrs.push_str(&format!("S({})", self.memory_space));
        }
        if !self.split_configs.is_empty() {
            attrs.push_str("SC");
            for s in &self.split_configs {
                attrs.push_str(&s.to_string());
            }
        }
        if let Some(p) = &self.physical_shape {
            attrs.push_str(&format!("P({p})"));
        }
        if self.dynamic_shape_metadata_prefix_bytes != 0 {
            attrs.push_str(&format!("M({})", self.dynamic_shape_metadata_prefix_bytes));
        }
        if !attrs.is_empty() {
            f.write_str(":")?;
            f.write_str(&attrs)?;
        }
        f.write_str("}")
    }
}

impl fmt::Display for ArrayShape {
    /// XLA's `ShapeUtil::HumanStringWithLayout` of the parsed shape: a shape given
    /// without a layout prints its default `{rank-1,…,0}` (XLA's parser assigns it);
    /// a scalar's empty layout `{}` is not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.element_type)?;
        join(f, &self.dims, ",")?;
        f.write_str("]")?;
        let text = match &self.layout {
            Some(l) => l.to_string(),
            None => Layout::row_major(self.dims.len()).to_string(),
        };
        if !(self.dims.is_empty() && text == "{}") {
            f.write_str(&text)?;
        }
        Ok(())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array(a) => write!(f, "{a}"),
            Shape::Tuple(v) => {
                // XLA marks every fifth element with its index.
                f.write_str("(")?;
                for (i, x) in v.iter().enumerate() {
                    match i {
                        0 => {}
                        _ if i % 5 == 0 => write!(f, ", /*index={i}*/")?,
                        _ => f.write_str(", ")?,
                    }
                    write!(f, "{x}")?;
                }
                f.write_str(")")
            }
            Shape::Buffer(a) => write!(f, "b({a})"),
            Shape::Token => f.write_str("token[]"),
            Shape::Opaque => f.write_str("opaque[]"),
        }
    }
}

//! Parser for XLA's shape text: `f32[3,5]{1,0:T(2,2)}`, `bf16[<=8,?]`, tuples
//! `(f32[2], s8[4]{0})`, `token[]`. Type names in any case; whitespace between tokens;
//! layout attributes only in XLA's printer order (`D` first, accepted and dropped).
//!
//! Parsing checks syntax only; [`crate::validate`] checks XLA's rules. The parser also
//! records where each item sits in the text ([`Spans`]) so that validation errors can
//! name the token and its column.

use crate::element_type::ElementType;
use crate::error::{LayoutError, Result};
use crate::shape::{ArrayShape, Dim, Layout, Shape, SplitConfig, Tile, TileDim};
use std::collections::HashMap;

/// Which item of a shape a validation message is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Loc {
    /// The whole array shape (its type name).
    Shape,
    /// Logical dimension `i`.
    Dim(usize),
    /// The layout's opening `{`.
    Layout,
    /// Entry `i` of `minor_to_major`.
    MinorToMajor(usize),
    /// Tile `t` as a whole.
    Tile(usize),
    /// Dimension `j` of tile `t`.
    TileDim(usize, usize),
    /// A one-letter attribute: `L`, `#`, `*`, `E`, `S`, `M`, `P`.
    Attr(char),
    /// Split config `i` as a whole (its dimension number).
    Split(usize),
    /// Split index `j` of split config `i`.
    SplitIndex(usize, usize),
}

/// Where parsed items sit in the text: (path of tuple element numbers, item) →
/// (1-based column, token text). A `P(..)` physical shape adds `usize::MAX` to the path.
pub type Spans = HashMap<(Vec<usize>, Loc), (usize, String)>;

/// Parse a shape from XLA text (syntax only; see [`crate::validate::parse_valid`] for
/// parse + validate).
pub fn parse_shape(text: &str) -> Result<Shape> {
    parse_shape_with_spans(text).map(|(s, _)| s)
}

/// Parse a shape and also return where each item sits in the text.
pub fn parse_shape_with_spans(text: &str) -> Result<(Shape, Spans)> {
    let mut p = Parser::new(text);
    let shape = p.shape()?;
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(p.err("unexpected text after the shape"));
    }
    Ok((shape, p.spans))
}

/// Parse a shape at the start of `text` (leading whitespace allowed) and return it
/// with the number of bytes consumed; the rest of the text is left alone. Used to pick
/// shapes out of HLO instruction lines.
pub fn parse_shape_prefix(text: &str) -> Result<(Shape, usize)> {
    let mut p = Parser::new(text);
    let shape = p.shape()?;
    let bytes = p.chars[..p.pos].iter().map(|c| c.len_utf8()).sum();
    Ok((shape, bytes))
}

/// Parse an array shape given as text; a tuple or token is an error.
pub fn parse_array(text: &str) -> Result<ArrayShape> {
    match parse_shape(text)? {
        Shape::Array(a) => Ok(a),
        other => Err(LayoutError::Unsupported(format!(
            "'{text}' is a {}, an array shape is needed here",
            match other {
                Shape::Tuple(_) => "tuple",
                Shape::Token => "token",
                Shape::Buffer(_) => "buffer",
                _ => "opaque handle",
            }
        ))),
    }
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    text: &'a str,
    spans: Spans,
    path: Vec<usize>,
    depth: usize,
}

const MAX_DEPTH: usize = 64;

impl<'a> Parser<'a> {
    /// A parser at the start of `text`.
    fn new(text: &'a str) -> Self {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            text,
            spans: HashMap::new(),
            path: Vec::new(),
            depth: 0,
        }
    }
}

impl Parser<'_> {
    /// Skip whitespace and `/* … */` comments (XLA's lexer skips both; its printer
    /// writes `/*index=5*/` into long tuples).
    fn skip_ws(&mut self) {
        loop {
            while self.pos < self.chars.len() && self.chars[self.pos].is_whitespace() {
                self.pos += 1;
            }
            if self.chars.get(self.pos..self.pos + 2) != Some(&['/', '*'][..]) {
                return;
            }
            let rest = &self.chars[self.pos + 2..];
            match rest.windows(2).position(|w| w == ['*', '/']) {
                Some(end) => self.pos += 2 + end + 2,
                None => return,
            }
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.pos).copied()
    }

    /// The token starting at the current position, for messages.
    fn token_here(&self) -> String {
        let Some(&c) = self.chars.get(self.pos) else {
            return "end of input".to_string();
        };
        if c.is_ascii_alphanumeric() {
            self.chars[self.pos..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                .collect()
        } else if c == '<' && self.chars.get(self.pos + 1) == Some(&'=') {
            "<=".to_string()
        } else {
            c.to_string()
        }
    }

    fn err(&mut self, message: &str) -> LayoutError {
        self.skip_ws();
        LayoutError::Parse {
            column: self.pos + 1,
            token: self.token_here(),
            message: message.to_string(),
            text: self.text.to_string(),
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<()> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected '{c}' {what}")))
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn record(&mut self, loc: Loc, column: usize, token: String) {
        self.spans.insert((self.path.clone(), loc), (column, token));
    }

    fn word(&mut self) -> String {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.chars.len()
            && (self.chars[self.pos].is_ascii_alphanumeric() || self.chars[self.pos] == '_')
        {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// An unsigned decimal integer; returns (value, column, token).
    fn uint(&mut self, what: &str) -> Result<(u64, usize, String)> {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.chars.len() && self.chars[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.err(&format!("expected {what}")));
        }
        let tok: String = self.chars[start..self.pos].iter().collect();
        match tok.parse::<u64>() {
            Ok(v) => Ok((v, start + 1, tok)),
            Err(_) => {
                self.pos = start;
                Err(self.err(&format!("{what} does not fit in 64 bits")))
            }
        }
    }

    fn shape(&mut self) -> Result<Shape> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("shape nested too deeply"));
        }
        let r = self.shape_inner();
        self.depth -= 1;
        r
    }

    fn shape_inner(&mut self) -> Result<Shape> {
        if self.peek() == Some('(') {
            self.pos += 1;
            let mut elems = Vec::new();
            if self.eat(')') {
                return Ok(Shape::Tuple(elems));
            }
            loop {
                self.path.push(elems.len());
                let s = self.shape();
                self.path.pop();
                elems.push(s?);
                if self.eat(',') {
                    continue;
                }
                self.expect(')', "or ',' in a tuple")?;
                return Ok(Shape::Tuple(elems));
            }
        }
        self.skip_ws();
        let col = self.pos + 1;
        let name = self.word();
        if name.is_empty() {
            return Err(self.err("expected an element type such as f32 or a tuple '('"));
        }
        if name == "b" && self.peek() == Some('(') {
            return self.buffer(col);
        }
        let lower = name.to_ascii_lowercase();
        let element_type = match ElementType::from_xla_name(&name) {
            Some(t) => Some(t),
            None if lower == "token" || lower == "opaque" => None,
            None => {
                self.pos = col - 1;
                return Err(self.err("unknown element type (XLA names: pred, s8, s32, u8, f16, bf16, f32, f64, c64, f8e4m3fn, …)"));
            }
        };
        self.record(Loc::Shape, col, name.clone());
        self.expect('[', "after the element type")?;
        let mut dims = Vec::new();
        if !self.eat(']') {
            loop {
                self.skip_ws();
                let dcol = self.pos + 1;
                let dim = if self.eat('?') {
                    self.record(Loc::Dim(dims.len()), dcol, "?".into());
                    Dim::Unbounded
                } else if self.peek() == Some('<') {
                    self.pos += 1;
                    if self.chars.get(self.pos) != Some(&'=') {
                        self.pos -= 1;
                        return Err(self.err("expected '<=' for a bounded dimension"));
                    }
                    self.pos += 1;
                    let (n, _, tok) = self.uint("a dimension bound after '<='")?;
                    self.record(Loc::Dim(dims.len()), dcol, format!("<={tok}"));
                    Dim::Bounded(n)
                } else {
                    let (n, c, tok) = self.uint("a dimension size, '<=N' or '?'")?;
                    self.record(Loc::Dim(dims.len()), c, tok);
                    Dim::Static(n)
                };
                dims.push(dim);
                if self.eat(',') {
                    continue;
                }
                self.expect(']', "or ',' after a dimension")?;
                break;
            }
        }
        let Some(element_type) = element_type else {
            if !dims.is_empty() {
                self.pos = col - 1;
                return Err(self.err("token and opaque shapes have no dimensions"));
            }
            return Ok(if lower == "token" {
                Shape::Token
            } else {
                Shape::Opaque
            });
        };
        let layout = if self.peek() == Some('{') {
            Some(self.layout()?)
        } else {
            None
        };
        Ok(Shape::Array(ArrayShape {
            element_type,
            dims,
            layout,
        }))
    }

    /// `b(ARRAY)` after its `b`: a buffer holds one array.
    fn buffer(&mut self, col: usize) -> Result<Shape> {
        self.pos += 1;
        match self.shape()? {
            Shape::Array(a) => {
                self.expect(')', "at the end of a buffer shape")?;
                Ok(Shape::Buffer(a))
            }
            _ => {
                self.pos = col - 1;
                Err(self.err("a buffer b(…) holds an array shape"))
            }
        }
    }

    fn layout(&mut self) -> Result<Layout> {
        self.skip_ws();
        self.record(Loc::Layout, self.pos + 1, "{".into());
        self.expect('{', "to open a layout")?;
        let mut m2m = Vec::new();
        if self.peek().is_some_and(|c| c.is_ascii_digit()) {
            loop {
                let (v, c, tok) = self.uint("a dimension number")?;
                self.record(Loc::MinorToMajor(m2m.len()), c, tok);
                m2m.push(v);
                if !self.eat(',') {
                    break;
                }
            }
        }
        if m2m.is_empty() && self.peek() == Some('}') {
            return Err(self.err(
                "an empty layout '{}' (XLA refuses it: leave the layout out, or write '{:…}' for a scalar's attributes)",
            ));
        }
        let mut layout = Layout::new(m2m);
        if self.eat('}') {
            return Ok(layout);
        }
        self.expect(
            ':',
            "or '}' after minor_to_major (or ',' between dimension numbers)",
        )?;
        // Attribute order rank: D T L # * E S SC P M.
        let mut last_rank = 0usize;
        loop {
            self.skip_ws();
            if self.eat('}') {
                return Ok(layout);
            }
            let col = self.pos + 1;
            let c = self.peek().unwrap_or(' ');
            let (rank, name) = match c {
                'D' => (1, "D"),
                'T' => (2, "T"),
                'L' => (3, "L"),
                '#' => (4, "#"),
                '*' => (5, "*"),
                'E' => (6, "E"),
                'S' if self.chars.get(self.pos + 1) == Some(&'C') => (8, "SC"),
                'S' => (7, "S"),
                'P' => (9, "P"),
                'M' => (10, "M"),
                _ => {
                    return Err(
                        self.err("expected a layout attribute (T, L, #, *, E, S, SC, P, M) or '}'")
                    )
                }
            };
            if rank <= last_rank {
                return Err(self.err(&format!(
                    "attribute '{name}' out of order or repeated (XLA's order: D T L # * E S SC P M)"
                )));
            }
            last_rank = rank;
            self.pos += name.len();
            match name {
                "D" => self.dim_level_types()?,
                "T" => self.tiles(&mut layout)?,
                "SC" => self.split_configs(&mut layout)?,
                "#" | "*" => {
                    // `#(u32)`, `#u32` (XLA's lexer takes both) or `#()` (no type: dropped)
                    let parens = self.eat('(');
                    if parens && self.eat(')') {
                        continue;
                    }
                    self.skip_ws();
                    let tcol = self.pos + 1;
                    let w = self.word();
                    let Some(t) = ElementType::from_xla_name(&w) else {
                        self.pos = tcol - 1;
                        return Err(self.err("expected a primitive type name"));
                    };
                    if parens {
                        self.expect(')', "after the type")?;
                    }
                    let ch = name.chars().next().unwrap_or('#');
                    self.record(Loc::Attr(ch), col, format!("{name}({w})"));
                    if name == "#" {
                        layout.index_type = Some(t);
                    } else {
                        layout.pointer_type = Some(t);
                    }
                }
                "P" => {
                    self.expect('(', "after 'P'")?;
                    self.record(Loc::Attr('P'), col, "P(".into());
                    self.path.push(usize::MAX);
                    let s = self.shape();
                    self.path.pop();
                    layout.physical_shape = Some(Box::new(s?));
                    self.expect(')', "after the physical shape")?;
                }
                _ => {
                    self.expect('(', &format!("after '{name}'"))?;
                    let (v, _, tok) = self.uint(&format!("a number in {name}(..)"))?;
                    self.expect(')', &format!("to close {name}(..)"))?;
                    let ch = name.chars().next().unwrap_or('L');
                    self.record(Loc::Attr(ch), col, format!("{name}({tok})"));
                    match name {
                        "L" => layout.tail_padding_alignment = v,
                        "E" => layout.element_size_bits = v,
                        "S" => layout.memory_space = v,
                        _ => layout.dynamic_shape_metadata_prefix_bytes = v,
                    }
                }
            }
        }
    }

    /// `D(D,C+,S~)` (sparse dim level types), or a bare `D`: parsed and dropped, as XLA
    /// does for dense arrays.
    fn dim_level_types(&mut self) -> Result<()> {
        if !self.eat('(') {
            return Ok(());
        }
        loop {
            match self.peek() {
                Some(')') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('D' | 'C' | 'S' | 'H' | '+' | '~' | ',') => self.pos += 1,
                _ => return Err(self.err("expected a dim level type (D, C, S, H) in D(..)")),
            }
        }
    }

    fn tiles(&mut self, layout: &mut Layout) -> Result<()> {
        if self.peek() != Some('(') {
            // XLA's parser reads a bare `T` as one empty tile `T()`; validation rejects it.
            self.skip_ws();
            self.record(Loc::Tile(0), self.pos, "T".into());
            layout.tiles.push(Tile::default());
            return Ok(());
        }
        while self.peek() == Some('(') {
            let t = layout.tiles.len();
            self.skip_ws();
            let tcol = self.pos + 1;
            let tstart = self.pos;
            self.pos += 1;
            let mut tile = Tile::default();
            if self.peek() != Some(')') {
                loop {
                    self.skip_ws();
                    let c = self.pos + 1;
                    let j = tile.dims.len();
                    match self.peek() {
                        Some('*') => {
                            self.pos += 1;
                            self.record(Loc::TileDim(t, j), c, "*".into());
                            tile.dims.push(TileDim::Combine);
                        }
                        Some('d') => {
                            self.pos += 1;
                            self.record(Loc::TileDim(t, j), c, "d".into());
                            tile.dims.push(TileDim::Match);
                        }
                        Some('-') => {
                            return Err(self.err(
                                "negative tile size (a tile dim is > 0, '*' to combine or 'd' for the whole dim)",
                            ))
                        }
                        _ => {
                            let (v, c, tok) = self.uint("a tile size, '*' or 'd'")?;
                            if i64::try_from(v).is_err() {
                                self.pos = c - 1;
                                return Err(self.err("tile size above 2^63 - 1 (XLA's int64)"));
                            }
                            self.record(Loc::TileDim(t, j), c, tok);
                            tile.dims.push(TileDim::Size(v));
                        }
                    }
                    if !self.eat(',') {
                        break;
                    }
                }
            }
            self.expect(')', "or ',' in a tile")?;
            let tok: String = self.chars[tstart..self.pos].iter().collect();
            self.record(Loc::Tile(t), tcol, tok);
            layout.tiles.push(tile);
        }
        Ok(())
    }

    fn split_configs(&mut self, layout: &mut Layout) -> Result<()> {
        if self.peek() != Some('(') {
            return Err(self.err("expected '(' after 'SC'"));
        }
        while self.eat('(') {
            let i = layout.split_configs.len();
            let (d, c, tok) = self.uint("a dimension number in SC(d:i,…)")?;
            self.record(Loc::Split(i), c, tok);
            self.expect(':', "after the split dimension")?;
            let mut indices = Vec::new();
            // `SC(d:)` (no index) is XLA's too: a split config that splits nothing.
            let mut more = self.peek() != Some(')');
            while more {
                let (v, c, tok) = self.uint("a split index")?;
                self.record(Loc::SplitIndex(i, indices.len()), c, tok);
                indices.push(v);
                more = self.eat(',');
            }
            self.expect(')', "or ',' in a split config")?;
            layout.split_configs.push(SplitConfig {
                dimension: d,
                indices,
            });
        }
        Ok(())
    }
}

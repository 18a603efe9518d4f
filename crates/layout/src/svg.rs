//! The picture of a rank-1 or rank-2 layout (`tpusim layout map --svg`): the logical
//! grid with each cell's physical linear index, first-level tiles outlined, padding
//! cells (of a row-major 2-D layout) drawn in grey.

use crate::error::{LayoutError, Result};
use crate::geometry::Geometry;
use crate::shape::{ArrayShape, Dim, TileDim};
use std::fmt::Write;
use tpusim_svg::{esc, fit, text_width};

const CELL: usize = 34;
const MARGIN: usize = 30;
/// Least picture width, pixels: the caption's.
const MIN_WIDTH: usize = 480;

/// Tile rows/cols of the first tile over the two minor dims, when every entry is a size.
fn first_tile_2d(a: &ArrayShape) -> Option<(u64, u64)> {
    let l = a.layout_or_default();
    let t = l.tiles.first()?;
    let mut sizes = Vec::new();
    for d in &t.dims {
        match d {
            TileDim::Size(n) => sizes.push(*n),
            _ => return None,
        }
    }
    let c = *sizes.last()?;
    let r = if sizes.len() >= 2 {
        sizes[sizes.len() - 2]
    } else {
        1
    };
    Some((r, c))
}

/// The SVG text of `a` (geometry `g`, `idx` the physical linear index of every logical
/// element in row-major order). A grid padded to whole tiles may have at most
/// `max_cells` cells.
pub fn grid(a: &ArrayShape, g: &Geometry, idx: &[u64], max_cells: u64) -> Result<String> {
    let dims = g.logical_dims();
    let (rows, cols) = match dims.len() {
        0 => (1u64, 1u64),
        1 => (1, dims[0]),
        _ => (dims[0], dims[1]),
    };
    let row_major =
        a.layout_or_default().minor_to_major == (0..a.rank() as u64).rev().collect::<Vec<_>>();
    let tile = first_tile_2d(a);
    // Padded extents and a geometry that covers them (same mapping on the real cells).
    let (prow, pcol, padded) = match (tile, row_major && !dims.is_empty()) {
        (Some((tr, tc)), true) => {
            // Tiles can be far larger than the array (f32[3]{0:T(1048576)}): the padded
            // grid is checked and bounded like the logical one before drawing it.
            let round = |n: u64, t: u64| n.div_ceil(t).checked_mul(t);
            let prow = if dims.len() == 1 {
                Some(1)
            } else {
                round(rows, tr)
            };
            let cells = prow
                .zip(round(cols, tc))
                .and_then(|(r, c)| r.checked_mul(c).map(|n| (r, c, n)));
            let (prow, pcol) = match cells {
                Some((r, c, n)) if n <= max_cells => (r, c),
                _ => {
                    return Err(LayoutError::Unsupported(format!(
                    "'{a}' padded to whole {tr}x{tc} tiles has more than {max_cells} cells to draw"
                )))
                }
            };
            let mut b = a.clone();
            let n = b.dims.len();
            b.dims[n - 1] = Dim::Static(pcol);
            if n == 2 {
                b.dims[0] = Dim::Static(prow);
            }
            (prow, pcol, Geometry::new(&b).ok())
        }
        _ => (rows, cols, None),
    };
    let tile_elems: u64 = match tile {
        Some(_) => {
            let l = a.layout_or_default();
            l.tiles[0]
                .dims
                .iter()
                .map(|d| if let TileDim::Size(n) = d { *n } else { 1 })
                .product::<u64>()
                .max(1)
        }
        None => u64::MAX,
    };
    // wide enough for the caption at the bottom
    let w = (MARGIN * 2 + CELL * pcol as usize).max(MIN_WIDTH);
    let h = MARGIN * 2 + CELL * prow as usize + 20;
    let text_px = (w - MARGIN - 4) as f64;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="monospace" font-size="11">"##
    );
    let shape = a.to_string();
    let _ = writeln!(s, r##"<title>{}</title>"##, esc(&shape));
    let _ = writeln!(
        s,
        r##"<text x="{MARGIN}" y="18">{}</text>"##,
        esc(&fit(&shape, text_px, 11.0))
    );
    let cell_index = |r: u64, c: u64| -> Option<(u64, bool)> {
        if r < rows && c < cols {
            Some((idx[(r * cols + c) as usize], false))
        } else {
            let pg = padded.as_ref()?;
            let v = if dims.len() == 1 { vec![c] } else { vec![r, c] };
            pg.linear_index(&v).ok().map(|n| (n, true))
        }
    };
    for r in 0..prow {
        for c in 0..pcol {
            let Some((n, pad)) = cell_index(r, c) else {
                continue;
            };
            let x = MARGIN + c as usize * CELL;
            let y = MARGIN + r as usize * CELL;
            let hue = (n / tile_elems.min(u64::MAX / 2)).wrapping_mul(67) % 360;
            let fill = if pad {
                "#dddddd".to_string()
            } else {
                format!("hsl({hue},60%,85%)")
            };
            let _ = writeln!(
                s,
                r##"<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" stroke="#888" stroke-width="0.5"/>"##
            );
            let color = if pad { "#888" } else { "#000" };
            // a long index gets a smaller font, so it stays inside its cell
            let label = n.to_string();
            let font = (11.0f64).min((CELL as f64 - 4.0) / text_width(&label, 1.0));
            let _ = writeln!(
                s,
                r##"<text x="{}" y="{}" text-anchor="middle" fill="{color}" font-size="{font:.1}">{label}</text>"##,
                x + CELL / 2,
                y + CELL / 2 + 4
            );
        }
    }
    // Tile outlines: a thick edge wherever neighbouring cells sit in different tiles.
    if tile_elems != u64::MAX {
        for r in 0..prow {
            for c in 0..pcol {
                let Some((n, _)) = cell_index(r, c) else {
                    continue;
                };
                let x = MARGIN + c as usize * CELL;
                let y = MARGIN + r as usize * CELL;
                let right = cell_index(r, c + 1).map(|(m, _)| m / tile_elems != n / tile_elems);
                let down = cell_index(r + 1, c).map(|(m, _)| m / tile_elems != n / tile_elems);
                if right.unwrap_or(true) {
                    let _ = writeln!(
                        s,
                        r##"<line x1="{0}" y1="{y}" x2="{0}" y2="{1}" stroke="#000" stroke-width="2.5"/>"##,
                        x + CELL,
                        y + CELL
                    );
                }
                if down.unwrap_or(true) {
                    let _ = writeln!(
                        s,
                        r##"<line x1="{x}" y1="{0}" x2="{1}" y2="{0}" stroke="#000" stroke-width="2.5"/>"##,
                        y + CELL,
                        x + CELL
                    );
                }
                if c == 0 {
                    let _ = writeln!(
                        s,
                        r##"<line x1="{x}" y1="{y}" x2="{x}" y2="{0}" stroke="#000" stroke-width="2.5"/>"##,
                        y + CELL
                    );
                }
                if r == 0 {
                    let _ = writeln!(
                        s,
                        r##"<line x1="{x}" y1="{y}" x2="{0}" y2="{y}" stroke="#000" stroke-width="2.5"/>"##,
                        x + CELL
                    );
                }
            }
        }
    }
    let pad_cells = prow * pcol - rows * cols;
    let caption = format!(
        "{} logical elements, {} physical; grey = padding ({pad_cells} shown)",
        g.logical_elements(),
        g.physical_elements()
    );
    let _ = writeln!(
        s,
        r##"<text x="{MARGIN}" y="{}">{}</text>"##,
        h - 8,
        esc(&fit(&caption, text_px, 11.0))
    );
    s.push_str("</svg>\n");
    Ok(s)
}

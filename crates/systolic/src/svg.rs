//! SVG pictures of a small weight-stationary run: the PE grid with the first fold's
//! weights, and a cycle-by-cycle timeline of which PEs do a MAC.

use crate::engine::Snapshot;
use crate::error::{Result, SystolicError};
use crate::shape::ArraySpec;
use std::fmt::Write;

/// Largest array (PEs) the picture accepts.
pub const SVG_MAX_PES: u64 = 1024;
/// Largest number of drawn cycles.
pub const SVG_MAX_CYCLES: u64 = 4096;

/// Render the grid (`weights`: the first fold's R×C weights, row-major) and the busy
/// timeline of every fold's `traces` (folds drawn one after another, each preceded by
/// its R-cycle weight load, not double-buffered). Plain SVG text.
pub fn render_ws_svg(arr: ArraySpec, weights: &[f64], traces: &[Vec<Snapshot>]) -> Result<String> {
    if arr.pes() > SVG_MAX_PES {
        return Err(SystolicError::TooLarge {
            what: "PEs for --svg".into(),
            given: arr.pes(),
            limit: SVG_MAX_PES,
        });
    }
    let (r, c) = (arr.rows as usize, arr.cols as usize);
    let total: u64 = traces.iter().map(|t| t.len() as u64 + arr.rows).sum();
    if total > SVG_MAX_CYCLES {
        return Err(SystolicError::TooLarge {
            what: "cycles for --svg".into(),
            given: total,
            limit: SVG_MAX_CYCLES,
        });
    }
    let cell = 28.0;
    let grid_w = c as f64 * cell;
    let grid_h = r as f64 * cell;
    let pes = r * c;
    let row_h = (360.0 / pes as f64).clamp(1.0, 10.0);
    let col_w = (900.0 / total.max(1) as f64).clamp(0.5, 12.0);
    let tl_x = 60.0;
    let tl_y = grid_h + 70.0;
    let width = (grid_w + 40.0).max(tl_x + total as f64 * col_w + 20.0);
    let height = tl_y + pes as f64 * row_h + 40.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="monospace" font-size="10">"#
    );
    let _ = writeln!(
        s,
        r#"<text x="10" y="14">{r}x{c} weight-stationary array: first fold's weights (features flow right, psums down)</text>"#
    );
    for i in 0..r {
        for j in 0..c {
            let x = 10.0 + j as f64 * cell;
            let y = 22.0 + i as f64 * cell;
            let w = weights.get(i * c + j).copied().unwrap_or(0.0);
            let _ = writeln!(
                s,
                r##"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="#e8f0fe" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{w}</text>"##,
                cell - 2.0,
                cell - 2.0,
                x + cell / 2.0 - 1.0,
                y + cell / 2.0 + 3.0
            );
        }
    }
    let _ = writeln!(
        s,
        r#"<text x="10" y="{:.1}">timeline: one row per PE (row-major), one column per cycle; grey = weight load, blue = MAC</text>"#,
        tl_y - 8.0
    );
    let mut t0 = 0u64;
    for tr in traces {
        let _ = writeln!(
            s,
            r##"<rect x="{:.2}" y="{tl_y:.1}" width="{:.2}" height="{:.1}" fill="#ccc"/>"##,
            tl_x + t0 as f64 * col_w,
            arr.rows as f64 * col_w,
            pes as f64 * row_h
        );
        t0 += arr.rows;
        for snap in tr {
            let x = tl_x + (t0 + snap.cycle) as f64 * col_w;
            for (p, &b) in snap.busy.iter().enumerate() {
                if b {
                    let _ = writeln!(
                        s,
                        r##"<rect x="{x:.2}" y="{:.2}" width="{col_w:.2}" height="{row_h:.2}" fill="#1a73e8"/>"##,
                        tl_y + p as f64 * row_h
                    );
                }
            }
        }
        t0 += tr.len() as u64;
    }
    let _ = writeln!(
        s,
        r#"<text x="{tl_x}" y="{:.1}">0 .. {total} cycles</text>"#,
        tl_y + pes as f64 * row_h + 14.0
    );
    s.push_str("</svg>\n");
    Ok(s)
}

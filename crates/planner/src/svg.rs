//! The local-memory picture: for each group, a panel with time steps across and lane
//! addresses down, one rectangle per block (activations blue, weights orange, buffers
//! grey; resident blocks run to the right edge), bank boundaries as dashed lines.

use crate::plan::{BlockKind, Plan};
use std::fmt::Write;

use tpusim_svg::{esc, fit, text_width, wrap};

/// Address ticks on a panel's axis: 0, a quarter, half, three quarters and the lane.
const ADDRESS_TICKS: u64 = 4;

/// The SVG text of `plan`'s local-memory allocation, one panel per group. Addresses grow
/// upwards from 0 at the panel's bottom edge, as in the report's memory plans.
pub fn render(plan: &Plan) -> String {
    let (pw, ph, gap, left, right, top) = (640.0f64, 320.0f64, 60.0f64, 70.0f64, 64.0f64, 60.0f64);
    let n = plan.groups.len().max(1) as f64;
    let width = left + pw + right;
    let height = top + n * (ph + gap) + 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="10" role="img" aria-label="local-memory plan">"#
    );
    let title = format!(
        "{} on {} ({}): local memory per lane",
        plan.graph.name, plan.chip, plan.dtype
    );
    let sub = format!(
        "{} bytes per lane, {} banks (dashed red); x = time step, y = address from 0 (bottom) up; blue activation, orange weight, grey buffer",
        plan.lane_bytes, plan.banks
    );
    let text_px = width - 8.0;
    let _ = writeln!(
        s,
        r#"<text x="4" y="16" font-size="13">{}</text>"#,
        esc(&fit(&title, text_px, 13.0))
    );
    for (i, line) in wrap(&sub, text_px, 10.0).iter().take(2).enumerate() {
        let _ = writeln!(s, r#"<text x="4" y="{}">{}</text>"#, 32 + 13 * i, esc(line));
    }
    if plan.groups.is_empty() {
        let _ = writeln!(
            s,
            r#"<text x="{left}" y="{}">no layer groups: every op is global</text>"#,
            top + 20.0
        );
    }
    let lane = plan.lane_bytes.max(1);
    for (gi, g) in plan.groups.iter().enumerate() {
        let y0 = top + gi as f64 * (ph + gap) + 16.0;
        let steps = g.timesteps.len().max(1) as f64;
        let sx = pw / steps;
        // address a at the panel's bottom edge minus its share of the lane
        let ay = |a: u64| y0 + ph - a as f64 / lane as f64 * ph;
        let header = format!(
            "group {gi}: {} ops ({} … {}), nsecs {} hsecs {}, peak {} B/lane",
            g.ops.len(),
            g.ops.first().map_or("", |x| x),
            g.ops.last().map_or("", |x| x),
            g.nsecs,
            g.hsecs,
            g.lmem_peak
        );
        let _ = writeln!(
            s,
            r#"<text x="{left}" y="{}">{}</text>"#,
            y0 - 4.0,
            esc(&fit(&header, pw + right - 4.0, 10.0))
        );
        let _ = writeln!(
            s,
            r##"<rect x="{left}" y="{y0}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#000"/>"##
        );
        let banks = plan.banks.max(1);
        let bank_px = ph / banks as f64;
        for b in 0..banks {
            let lo = ay(b * lane / banks);
            if b > 0 {
                let _ = writeln!(
                    s,
                    r##"<line x1="{left}" y1="{lo:.2}" x2="{}" y2="{lo:.2}" stroke="#c00" stroke-dasharray="4,3" stroke-width="0.6"/>"##,
                    left + pw
                );
            }
            if bank_px >= 11.0 {
                let _ = writeln!(
                    s,
                    r##"<text x="{:.2}" y="{:.2}" fill="#c00">bank {b}</text>"##,
                    left + pw + 4.0,
                    lo - (bank_px - 8.0) / 2.0
                );
            }
        }
        for t in 0..=ADDRESS_TICKS {
            let a = lane * t / ADDRESS_TICKS;
            let y = ay(a);
            let _ = writeln!(
                s,
                r##"<line x1="{:.2}" y1="{y:.2}" x2="{left}" y2="{y:.2}" stroke="#000"/><text x="{:.2}" y="{:.2}" text-anchor="end">{a}</text>"##,
                left - 4.0,
                left - 6.0,
                (y + 3.5).clamp(y0 + 8.0, y0 + ph)
            );
        }
        // time-step labels, thinned so they do not run into each other
        let every = (text_width(&format!("T{}", g.timesteps.len()), 10.0) + 6.0)
            .div_euclid(sx)
            .max(0.0) as usize
            + 1;
        for j in (0..g.timesteps.len()).step_by(every) {
            let _ = writeln!(
                s,
                r#"<text x="{:.2}" y="{}">T{j}</text>"#,
                left + (j as f64 + 0.3) * sx,
                y0 + ph + 12.0
            );
        }
        for blk in &g.blocks {
            let x = left + blk.start_ts as f64 * sx;
            let end = blk.end_ts.map(|e| e as f64 + 1.0).unwrap_or(steps);
            let w = (end - blk.start_ts as f64) * sx;
            let top_y = ay(blk.addr.saturating_add(blk.size));
            let h = (ay(blk.addr) - top_y).max(1.0);
            let fill = match blk.kind {
                BlockKind::Activation => "#6fa8dc",
                BlockKind::Weight => "#f6b26b",
                BlockKind::Buffer => "#b7b7b7",
            };
            let _ = writeln!(
                s,
                r##"<rect x="{x:.2}" y="{top_y:.2}" width="{w:.2}" height="{h:.2}" fill="{fill}" stroke="#333" stroke-width="0.5"><title>{} ({}) addr {} size {} T{}..{}</title></rect>"##,
                esc(&blk.name),
                blk.kind.name(),
                blk.addr,
                blk.size,
                blk.start_ts,
                blk.end_ts.map_or("inf".to_string(), |e| e.to_string())
            );
            // a name only where it fits inside its block
            let label = fit(&blk.name, w - 4.0, 8.0);
            if h >= 11.0 && label.chars().count() >= 4 {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.2}" y="{:.2}" font-size="8">{}</text>"#,
                    x + 2.0,
                    top_y + 9.0,
                    esc(&label)
                );
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

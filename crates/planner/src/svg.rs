//! The local-memory picture: for each group, a panel with time steps across and lane
//! addresses down, one rectangle per block (activations blue, weights orange, buffers
//! grey; resident blocks run to the right edge), bank boundaries as dashed lines.

use crate::plan::{BlockKind, Plan};
use std::fmt::Write;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The SVG text of `plan`'s local-memory allocation, one panel per group.
pub fn render(plan: &Plan) -> String {
    let (pw, ph, gap, left, top) = (640.0f64, 320.0f64, 60.0f64, 70.0f64, 40.0f64);
    let n = plan.groups.len().max(1) as f64;
    let width = left + pw + 30.0;
    let height = top + n * (ph + gap) + 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="10">"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="20" font-size="13">{} on {} ({}): local memory per lane, {} bytes, {} banks; x = time step, y = address</text>"#,
        esc(&plan.graph.name),
        esc(&plan.chip),
        esc(&plan.dtype),
        plan.lane_bytes,
        plan.banks
    );
    if plan.groups.is_empty() {
        let _ = writeln!(
            s,
            r#"<text x="{left}" y="{}">no layer groups: every op is global</text>"#,
            top + 20.0
        );
    }
    let lane = plan.lane_bytes.max(1) as f64;
    for (gi, g) in plan.groups.iter().enumerate() {
        let y0 = top + gi as f64 * (ph + gap) + 16.0;
        let steps = g.timesteps.len().max(1) as f64;
        let sx = pw / steps;
        let sy = ph / lane;
        let _ = writeln!(
            s,
            r#"<text x="{left}" y="{}">group {gi}: {} ops ({} … {}), nsecs {} hsecs {}, peak {} B/lane</text>"#,
            y0 - 4.0,
            g.ops.len(),
            esc(g.ops.first().map_or("", |x| x)),
            esc(g.ops.last().map_or("", |x| x)),
            g.nsecs,
            g.hsecs,
            g.lmem_peak
        );
        let _ = writeln!(
            s,
            r##"<rect x="{left}" y="{y0}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#000"/>"##
        );
        for b in 1..plan.banks {
            let y = y0 + (b * plan.lane_bytes / plan.banks.max(1)) as f64 * sy;
            let _ = writeln!(
                s,
                r##"<line x1="{left}" y1="{y:.2}" x2="{}" y2="{y:.2}" stroke="#c00" stroke-dasharray="4,3" stroke-width="0.6"/>"##,
                left + pw
            );
        }
        for b in 0..plan.banks {
            let y = y0 + (b * plan.lane_bytes / plan.banks.max(1)) as f64 * sy;
            let _ = writeln!(
                s,
                r##"<text x="4" y="{:.2}" fill="#c00">bank {b}</text>"##,
                y + 9.0
            );
        }
        for j in 0..g.timesteps.len() {
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
            let y = y0 + blk.addr as f64 * sy;
            let h = (blk.size as f64 * sy).max(1.0);
            let fill = match blk.kind {
                BlockKind::Activation => "#6fa8dc",
                BlockKind::Weight => "#f6b26b",
                BlockKind::Buffer => "#b7b7b7",
            };
            let _ = writeln!(
                s,
                r##"<rect x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" fill="{fill}" stroke="#333" stroke-width="0.5"><title>{} ({}) addr {} size {} T{}..{}</title></rect>"##,
                esc(&blk.name),
                blk.kind.name(),
                blk.addr,
                blk.size,
                blk.start_ts,
                blk.end_ts.map_or("inf".to_string(), |e| e.to_string())
            );
            if h >= 9.0 && w >= 40.0 {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.2}" y="{:.2}" font-size="8">{}</text>"#,
                    x + 2.0,
                    y + 8.0,
                    esc(&blk.name)
                );
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

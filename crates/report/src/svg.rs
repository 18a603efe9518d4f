//! The report's pictures as inline SVG text: the roofline with every layer placed, the
//! on-chip memory plan of a group (time × address), and the storage of one tensor (cells
//! shaded by how much real data they hold). Pure functions from the report model to text.

use crate::model::{GroupReport, LayoutPicture, Report};
use crate::units::{bytes, seconds, si};
use std::fmt::Write;

pub use tpusim_svg::esc;

/// Colour of a block kind in the memory plans.
fn kind_colour(kind: &str) -> &'static str {
    match kind {
        "weight" => "#e3a33b",
        "buffer" => "#9b8fd1",
        _ => "#4f8fd6",
    }
}

/// Log-log roofline: x = arithmetic intensity (FLOP per byte moved), y = FLOP/s each
/// layer reaches alone (flops / max(compute, memory)). Roofs: the matrix-unit peak, the
/// vector-unit peak and the off-chip bandwidth slope. Layers bound by compute are red,
/// by memory blue; each dot has a `<title>` tooltip.
pub fn roofline(r: &Report) -> String {
    let w = 720.0_f64;
    let (ml, mr, mt) = (70.0, 20.0, 20.0);
    let pw = w - ml - mr;
    let ph = 350.0_f64;
    let (legend_svg, legend_h) = legend(ml, mt + ph + 56.0, pw);
    let h = mt + ph + 56.0 + legend_h;
    let pts: Vec<(f64, f64, &crate::model::LayerReport)> = r
        .layers
        .iter()
        .filter(|l| l.flops > 0 && l.bytes_moved > 0 && l.time_s() > 0.0)
        .map(|l| {
            (
                l.flops as f64 / l.bytes_moved as f64,
                l.flops as f64 / l.time_s(),
                l,
            )
        })
        .collect();
    let peak = r.peak_flops_per_s.max(1.0);
    let bw = r.offchip_bytes_per_s.max(1.0);
    let ridge = peak / bw;
    let mut xmin = ridge / 100.0;
    let mut xmax = ridge * 100.0;
    let mut ymin = peak / 1e4;
    for (x, y, _) in &pts {
        xmin = xmin.min(*x / 2.0);
        xmax = xmax.max(*x * 2.0);
        ymin = ymin.min(*y / 2.0);
    }
    let ymax = peak * 2.0;
    let (lx0, lx1) = (xmin.log10().floor(), xmax.log10().ceil());
    let (ly0, ly1) = (ymin.log10().floor(), ymax.log10().ceil());
    let sx = |x: f64| ml + (x.log10() - lx0) / (lx1 - lx0) * pw;
    let sy = |y: f64| mt + ph - (y.log10() - ly0) / (ly1 - ly0) * ph;
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="fig" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="roofline">"#
    );
    let _ = write!(
        o,
        r##"<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#999"/>"##
    );
    // decade grid and labels
    let mut d = lx0;
    while d <= lx1 + 1e-9 {
        let x = sx(10f64.powf(d));
        let _ = write!(
            o,
            r##"<line x1="{x:.1}" y1="{mt}" x2="{x:.1}" y2="{:.1}" stroke="#e2e2e2"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="{}">1e{d}</text>"##,
            mt + ph,
            mt + ph + 18.0,
            // the first label starts at the axis, clear of the FLOP/s labels
            if d == lx0 { "start" } else { "middle" }
        );
        d += 1.0;
    }
    let mut d = ly0;
    while d <= ly1 + 1e-9 {
        let y = sy(10f64.powf(d));
        let _ = write!(
            o,
            r##"<line x1="{ml}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e2e2e2"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">1e{d}</text>"##,
            ml + pw,
            ml - 5.0,
            y + 4.0
        );
        d += 1.0;
    }
    let _ = write!(
        o,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">arithmetic intensity (FLOP per byte moved)</text>"#,
        ml + pw / 2.0,
        mt + ph + 36.0
    );
    o.push_str(&legend_svg);
    let _ = write!(
        o,
        r#"<text x="14" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {:.1})">FLOP/s</text>"#,
        mt + ph / 2.0,
        mt + ph / 2.0
    );
    // roofs: memory slope up to the ridge, then the compute roof
    let xa = 10f64.powf(lx0);
    let xb = 10f64.powf(lx1);
    let y_at = |x: f64| (x * bw).min(peak);
    let mut path = format!("M{:.1},{:.1}", sx(xa), sy(y_at(xa).max(10f64.powf(ly0))));
    let xs = if ridge > xa && ridge < xb {
        vec![ridge, xb]
    } else {
        vec![xb]
    };
    for x in xs {
        let _ = write!(
            path,
            " L{:.1},{:.1}",
            sx(x),
            sy(y_at(x).max(10f64.powf(ly0)))
        );
    }
    let _ = write!(
        o,
        r##"<path d="{path}" fill="none" stroke="#222" stroke-width="2"/>"##
    );
    let _ = write!(
        o,
        r#"<text x="{:.1}" y="{:.1}" font-size="11">matrix peak {}</text>"#,
        sx(ridge.max(xa)) + 4.0,
        sy(peak) - 5.0,
        esc(&si(peak, "FLOP/s"))
    );
    if r.vector_flops_per_s > 0.0 && r.vector_flops_per_s < peak {
        let v = r.vector_flops_per_s;
        let _ = write!(
            o,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#7a7" stroke-dasharray="5,4"/><text x="{:.1}" y="{:.1}" font-size="11" fill="#474">vector peak {}</text>"##,
            sx((v / bw).max(xa)),
            sy(v),
            sx(xb),
            sy(v),
            sx(xb) - 150.0,
            sy(v) - 4.0,
            esc(&si(v, "FLOP/s"))
        );
    }
    let _ = write!(
        o,
        r#"<text x="{:.1}" y="{:.1}" font-size="11" transform="rotate(-30 {:.1} {:.1})">off-chip {}/s</text>"#,
        sx(xa * 3.0),
        sy(y_at(xa * 3.0)) - 6.0,
        sx(xa * 3.0),
        sy(y_at(xa * 3.0)) - 6.0,
        esc(&bytes(bw as u64))
    );
    for (x, y, l) in &pts {
        let colour = if l.bound == "compute" {
            "#d0453a"
        } else {
            "#3a6fd0"
        };
        let _ = write!(
            o,
            r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{colour}" fill-opacity="0.75"><title>{} ({}): {}, {:.1} FLOP/B, {}-bound</title></circle>"#,
            sx(*x),
            sy(*y),
            esc(&l.name),
            esc(&l.op),
            esc(&si(*y, "FLOP/s")),
            x,
            esc(&l.bound)
        );
    }
    o.push_str("</svg>");
    o
}

/// The roofline's legend: what the lines and the dots mean, and why a compute-bound dot
/// can sit left of the ridge.
fn legend(x: f64, y: f64, width: f64) -> (String, f64) {
    let mut o = String::new();
    let items = [
        ("line", "#222", "roof: off-chip bandwidth × intensity up to the ridge, then the matrix units' peak"),
        ("dash", "#7a7", "vector units' peak (element-wise, pooling, normalisation layers)"),
        ("dot", "#d0453a", "compute-bound layer: its compute takes longer than its memory traffic. Left of the ridge that happens when it computes below the roof: on the vector units, or on MXUs whose tiles it fills only partly (see util); its height is the rate it reaches"),
        ("dot", "#3a6fd0", "memory-bound layer: its traffic (tile padding included) takes longer than its compute"),
    ];
    let mut row = y;
    for (kind, colour, text) in items {
        let mark = match kind {
            "dot" => format!(
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{colour}"/>"#,
                x + 8.0,
                row - 4.0
            ),
            "dash" => format!(
                r#"<line x1="{x:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-dasharray="5,4"/>"#,
                row - 4.0,
                x + 16.0,
                row - 4.0
            ),
            _ => format!(
                r#"<line x1="{x:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="2"/>"#,
                row - 4.0,
                x + 16.0,
                row - 4.0
            ),
        };
        o.push_str(&mark);
        for line in tpusim_svg::wrap(text, width - 24.0, 11.0) {
            let _ = write!(
                o,
                r#"<text x="{:.1}" y="{row:.1}" font-size="11">{}</text>"#,
                x + 24.0,
                esc(&line)
            );
            row += 14.0;
        }
        row += 2.0;
    }
    (o, row - y + 8.0)
}

/// One group's on-chip memory plan: x = time step, y = address; every block a rectangle
/// coloured by kind (activation blue, weight orange, buffer violet) with a tooltip.
/// The address axis runs to the group's peak; `capacity` (the on-chip size the
/// addresses live in, per lane on an NPU, bytes; 0 = do not show) is quoted in the title.
pub fn memory_plan(g: &GroupReport, index: usize, capacity: u64) -> String {
    let (w, h) = (360.0_f64, 212.0_f64);
    let (ml, mr, mt, mb) = (54.0, 8.0, 30.0, 28.0);
    let pw = w - ml - mr;
    let ph = h - mt - mb;
    let steps = g
        .blocks
        .iter()
        .map(|b| b.end_ts + 1)
        .max()
        .unwrap_or(1)
        .max(1);
    let top = g
        .blocks
        .iter()
        .map(|b| b.addr.saturating_add(b.size))
        .max()
        .unwrap_or(0)
        .max(1);
    let sx = |t: u64| ml + t as f64 / steps as f64 * pw;
    let sy = |a: u64| mt + ph - a as f64 / top as f64 * ph;
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="fig" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="memory plan of group {index}">"#
    );
    let _ = write!(
        o,
        r##"<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#999"/><text x="{ml}" y="12" font-size="11">group {index}: {} ops, {}×{} slices, {}</text><text x="{ml}" y="25" font-size="10" fill="#555">{}</text>"##,
        g.ops.len(),
        g.nsecs,
        g.hsecs,
        esc(&seconds(g.time_s)),
        if capacity > 0 {
            format!(
                "peak {} of {} per lane ({:.0}%)",
                esc(&bytes(top)),
                esc(&bytes(capacity)),
                top as f64 / capacity as f64 * 100.0
            )
        } else {
            String::new()
        }
    );
    let _ = write!(
        o,
        r#"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{}</text><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">0</text><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle">time step (0–{})</text>"#,
        ml - 3.0,
        mt + 8.0,
        esc(&bytes(top)),
        ml - 3.0,
        mt + ph,
        ml + pw / 2.0,
        h - 8.0,
        steps - 1
    );
    // the address axis: ticks at the quarters of the peak (0 and the peak are labelled
    // above)
    for q in 1..4u64 {
        let a = top / 4 * q;
        let y = sy(a);
        let _ = write!(
            o,
            r##"<line x1="{:.1}" y1="{y:.1}" x2="{ml}" y2="{y:.1}" stroke="#666"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"##,
            ml - 3.0,
            ml - 4.0,
            y + 3.5,
            esc(&bytes(a))
        );
    }
    for b in &g.blocks {
        let x0 = sx(b.start_ts);
        let x1 = sx(b.end_ts + 1);
        let y1 = sy(b.addr);
        let y0 = sy(b.addr.saturating_add(b.size));
        let _ = write!(
            o,
            r##"<rect x="{x0:.1}" y="{y0:.1}" width="{:.1}" height="{:.1}" fill="{}" fill-opacity="0.8" stroke="#333" stroke-width="0.5"><title>{} ({}): addr {} size {} steps {}–{}</title></rect>"##,
            (x1 - x0).max(0.5),
            (y1 - y0).max(0.5),
            kind_colour(&b.kind),
            esc(&b.name),
            esc(&b.kind),
            b.addr,
            b.size,
            b.start_ts,
            b.end_ts
        );
    }
    o.push_str("</svg>");
    o
}

/// The storage of one tensor: a grid of cells shaded by the fraction of real data they
/// hold (dark = full, white = padding only).
pub fn layout_picture(p: &LayoutPicture) -> String {
    let cell = (560.0 / p.cols.max(1) as f64)
        .clamp(4.0, 40.0)
        .min(360.0 / p.rows.max(1) as f64)
        .max(2.0);
    let (ml, mt) = (20.0, 20.0);
    let w = (ml + cell * p.cols as f64 + 10.0).max(420.0);
    let h = mt + cell * p.rows as f64 + 30.0;
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="fig" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" role="img" aria-label="layout of {}">"#,
        esc(&p.tensor)
    );
    let _ = write!(
        o,
        r#"<text x="{ml}" y="13" font-size="11">down: {} · across: {}</text>"#,
        esc(&p.row_label),
        esc(&p.col_label)
    );
    for r in 0..p.rows {
        for c in 0..p.cols {
            let f = p
                .fill
                .get(r * p.cols + c)
                .copied()
                .unwrap_or(0.0)
                .clamp(0.0, 1.0);
            let shade = (235.0 - 170.0 * f).round() as u8;
            let _ = write!(
                o,
                r##"<rect x="{:.1}" y="{:.1}" width="{cell:.1}" height="{cell:.1}" fill="rgb({shade},{shade},255)" stroke="#888" stroke-width="0.3"><title>cell ({r},{c}): {:.0}% data</title></rect>"##,
                ml + c as f64 * cell,
                mt + r as f64 * cell,
                f * 100.0
            );
        }
    }
    let _ = write!(
        o,
        r#"<text x="{ml}" y="{:.0}" font-size="11">dark = real data, light = padding</text>"#,
        h - 8.0
    );
    o.push_str("</svg>");
    o
}

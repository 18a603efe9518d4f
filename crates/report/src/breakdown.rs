//! The time breakdown picture: one bar per group, in execution order, its length the
//! group's time, split into compute and exposed transfers (the overlap rule of
//! [`crate::glossary`]); a thin bar under it shows all the group's transfers, the part
//! hidden under compute lighter.

use crate::model::{GroupReport, Report};
use crate::svg::esc;
use crate::units::seconds;
use std::fmt::Write;

/// At most this many groups get a bar (the longest, kept in execution order).
pub const MAX_BARS: usize = 40;

const COMPUTE: &str = "#4f8fd6";
const EXPOSED: &str = "#d9534f";
const DMA: &str = "#9a9a9a";

/// Characters of a group's label, at most.
const LABEL_CHARS: usize = 30;

/// The groups drawn: indices of the `MAX_BARS` longest, in execution order.
pub fn shown_groups(groups: &[GroupReport]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..groups.len()).collect();
    idx.sort_by(|&a, &b| {
        groups[b]
            .time_s
            .total_cmp(&groups[a].time_s)
            .then(a.cmp(&b))
    });
    idx.truncate(MAX_BARS);
    idx.sort_unstable();
    idx
}

/// "#i op" or "#i first … (n ops)", cut to [`LABEL_CHARS`].
fn label(i: usize, g: &GroupReport) -> String {
    let first = g.ops.first().map(String::as_str).unwrap_or("");
    let text = if g.ops.len() > 1 {
        format!("#{i} {first} (+{} ops)", g.ops.len() - 1)
    } else {
        format!("#{i} {first}")
    };
    if text.chars().count() <= LABEL_CHARS {
        text
    } else {
        let cut: String = text.chars().take(LABEL_CHARS - 1).collect();
        format!("{cut}…")
    }
}

/// The picture as inline SVG text.
pub fn time_breakdown(r: &Report) -> String {
    let shown = shown_groups(&r.groups);
    let (ml, mr, mt, row) = (200.0_f64, 90.0_f64, 46.0_f64, 18.0_f64);
    let w = 760.0_f64;
    let pw = w - ml - mr;
    let h = mt + row * shown.len().max(1) as f64 + 12.0;
    let scale = shown
        .iter()
        .map(|&i| r.groups[i].time_s.max(r.groups[i].dma_s))
        .fold(0.0_f64, f64::max);
    let sx = |t: f64| if scale > 0.0 { t / scale * pw } else { 0.0 };
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="fig" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="time breakdown per group">"#
    );
    let _ = write!(
        o,
        r##"<text x="4" y="14" font-size="12">{} of {} groups (the longest), in execution order; total {}</text>"##,
        shown.len(),
        r.groups.len(),
        esc(&seconds(r.total_time_s))
    );
    for (k, (colour, name)) in [
        (COMPUTE, "compute"),
        (EXPOSED, "exposed transfers"),
        (DMA, "all transfers (lighter: hidden under compute)"),
    ]
    .iter()
    .enumerate()
    {
        let x = 4.0 + [0.0, 90.0, 230.0][k];
        let _ = write!(
            o,
            r##"<rect x="{x}" y="24" width="10" height="10" fill="{colour}"/><text x="{:.0}" y="33" font-size="11">{name}</text>"##,
            x + 14.0
        );
    }
    for (row_no, &i) in shown.iter().enumerate() {
        let g = &r.groups[i];
        let y = mt + row_no as f64 * row;
        let c = sx(g.compute_s.min(g.time_s));
        let e = sx(g.exposed_dma_s);
        let hidden = (g.dma_s - g.exposed_dma_s).max(0.0);
        let _ = write!(
            o,
            r##"<g><title>{}: {} = compute {} + exposed {}; transfers {}</title><text x="{:.0}" y="{:.1}" font-size="10" text-anchor="end">{}</text><rect x="{ml}" y="{y:.1}" width="{c:.2}" height="10" fill="{COMPUTE}"/><rect x="{:.2}" y="{y:.1}" width="{e:.2}" height="10" fill="{EXPOSED}"/><rect x="{ml}" y="{:.1}" width="{:.2}" height="3" fill="{DMA}" fill-opacity="0.45"/><rect x="{:.2}" y="{:.1}" width="{:.2}" height="3" fill="{DMA}"/><text x="{:.1}" y="{:.1}" font-size="10">{}</text></g>"##,
            esc(&g.ops.join(", ")),
            esc(&seconds(g.time_s)),
            esc(&seconds(g.compute_s)),
            esc(&seconds(g.exposed_dma_s)),
            esc(&seconds(g.dma_s)),
            ml - 6.0,
            y + 9.0,
            esc(&label(i, g)),
            ml + c,
            y + 12.0,
            sx(hidden),
            ml + sx(hidden),
            y + 12.0,
            sx(g.dma_s - hidden),
            ml + sx(g.time_s.max(g.dma_s)) + 4.0,
            y + 9.0,
            esc(&seconds(g.time_s)),
        );
    }
    o.push_str("</svg>");
    o
}

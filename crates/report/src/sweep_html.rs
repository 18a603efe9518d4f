//! The `report --sweep … --html` page: for each model, throughput (samples per second)
//! against batch, one line per chip (and dtype), then every run in a table. One
//! self-contained document, like the single report's page.

use crate::sweep::SweepRow;
use crate::units::seconds;
use std::collections::BTreeMap;
use std::fmt::Write;
use tpusim_svg::{esc, fit};

const COLOURS: [&str; 8] = [
    "#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948", "#9c755f",
];

/// One line of a chart: (batch, samples per second) in batch order.
type Line = Vec<(u64, f64)>;

/// Lines per model: model → (chip, dtype label) → points.
fn lines(rows: &[SweepRow]) -> BTreeMap<String, BTreeMap<String, Line>> {
    let mut m: BTreeMap<String, BTreeMap<String, Line>> = BTreeMap::new();
    for row in rows {
        let f = &row.figures;
        let (Some(time), Some(dtype)) = (f.total_time_s, &f.dtype) else {
            continue;
        };
        if time <= 0.0 {
            continue;
        }
        let p = &row.point;
        let label = format!("{} {dtype}", p.chip);
        m.entry(p.model.clone())
            .or_default()
            .entry(label)
            .or_default()
            .push((p.batch, p.batch as f64 / time));
    }
    for per in m.values_mut() {
        for l in per.values_mut() {
            l.sort_by_key(|q| q.0);
        }
    }
    m
}

fn si(v: f64) -> String {
    crate::units::si(v, "/s")
}

/// One chart: x = batch (log 2), y = samples per second (linear from 0).
fn chart(model: &str, per: &BTreeMap<String, Line>) -> String {
    let (w, ml, mr, mt, ph) = (720.0_f64, 80.0, 20.0, 30.0, 280.0);
    let pw = w - ml - mr;
    let legend_rows = per.len() as f64;
    let h = mt + ph + 44.0 + 16.0 * legend_rows;
    let pts = per.values().flatten();
    let bmin = pts.clone().map(|p| p.0).min().unwrap_or(1).max(1) as f64;
    let bmax = pts.clone().map(|p| p.0).max().unwrap_or(1).max(1) as f64;
    let ymax = pts.map(|p| p.1).fold(0.0_f64, f64::max).max(1e-30) * 1.1;
    let (lx0, lx1) = (
        bmin.log2().floor(),
        bmax.log2().ceil().max(bmin.log2().floor() + 1.0),
    );
    let sx = |b: f64| ml + (b.log2() - lx0) / (lx1 - lx0) * pw;
    let sy = |y: f64| mt + ph - y / ymax * ph;
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="fig" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="throughput of {}">"#,
        esc(model)
    );
    let _ = write!(
        o,
        r##"<text x="4" y="16" font-size="13">{}</text><rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#999"/>"##,
        esc(&fit(
            &format!("{model}: samples per second against batch"),
            w - 8.0,
            13.0
        ))
    );
    let mut e = lx0;
    while e <= lx1 + 1e-9 {
        let b = 2f64.powf(e);
        let _ = write!(
            o,
            r##"<line x1="{x:.1}" y1="{mt}" x2="{x:.1}" y2="{:.1}" stroke="#e2e2e2"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"##,
            mt + ph,
            mt + ph + 16.0,
            b as u64,
            x = sx(b)
        );
        e += 1.0;
    }
    for k in 0..=4 {
        let y = ymax * k as f64 / 4.0;
        let _ = write!(
            o,
            r##"<line x1="{ml}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#e2e2e2"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            ml + pw,
            ml - 5.0,
            (sy(y) + 4.0).max(mt + 8.0),
            esc(&si(y)),
            yy = sy(y)
        );
    }
    let _ = write!(
        o,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">batch</text>"#,
        ml + pw / 2.0,
        mt + ph + 32.0
    );
    for (i, (label, line)) in per.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let path: Vec<String> = line
            .iter()
            .map(|(b, y)| format!("{:.1},{:.1}", sx(*b as f64), sy(*y)))
            .collect();
        let _ = write!(
            o,
            r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for (b, y) in line {
            let _ = write!(
                o,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{}: batch {b}, {}</title></circle>"#,
                sx(*b as f64),
                sy(*y),
                esc(label),
                esc(&si(*y))
            );
        }
        let ly = mt + ph + 50.0 + 16.0 * i as f64;
        let _ = write!(
            o,
            r#"<line x1="{ml}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{c}" stroke-width="2"/><text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
            ly - 4.0,
            ml + 18.0,
            ly - 4.0,
            ml + 24.0,
            ly,
            esc(&fit(label, pw - 30.0, 11.0))
        );
    }
    o.push_str("</svg>");
    o
}

/// The whole page.
pub fn render(rows: &[SweepRow]) -> String {
    let mut o = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tpusim sweep</title><style>body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}table{border-collapse:collapse;font-size:12px}th,td{padding:2px 8px;border-bottom:1px solid #eee;text-align:right}td.l,th.l{text-align:left}.fig{margin:8px 0}</style></head><body><h1>tpusim sweep</h1>",
    );
    let _ = write!(
        o,
        "<p>{} runs; throughput is batch / planned time of the whole network.</p>",
        rows.len()
    );
    for (model, per) in lines(rows) {
        let _ = write!(
            o,
            "<section><h2>{}</h2>{}</section>",
            esc(&model),
            chart(&model, &per)
        );
    }
    o.push_str(r#"<h2>Runs</h2><table id="runs"><thead><tr><th class="l">model</th><th class="l">chip</th><th>batch</th><th class="l">dtype</th><th>time</th><th>samples/s</th><th class="l">error</th></tr></thead><tbody>"#);
    for row in rows {
        let p = &row.point;
        let f = &row.figures;
        let (dtype, time, rate, err) = match (&f.error, f.total_time_s) {
            (None, Some(t)) => (
                f.dtype.clone().unwrap_or_default(),
                seconds(t),
                si(p.batch as f64 / t),
                String::new(),
            ),
            (e, _) => (
                p.dtype.clone().unwrap_or_default(),
                String::new(),
                String::new(),
                e.clone().unwrap_or_default(),
            ),
        };
        let _ = write!(
            o,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td class="l">{}</td></tr>"#,
            esc(&p.model),
            esc(&p.chip),
            p.batch,
            esc(&dtype),
            esc(&time),
            esc(&rate),
            esc(&err)
        );
    }
    o.push_str("</tbody></table></body></html>\n");
    o
}

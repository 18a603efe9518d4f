//! Pictures of `tpusim llm serve` and `train` as SVG text: where a step's time
//! goes, memory per chip by part against the HBM line, the latency–throughput
//! frontier, and the slice with each axis labelled by the strategy on it; and a
//! self-contained HTML page around them.

use crate::axes::place;
use crate::error::Result;
use crate::serve::{FrontierPoint, ServeReport};
use crate::train::TrainReport;
use std::fmt::Write;
use tpusim_chip::Slice;
use tpusim_svg::{esc, fit};

const W: f64 = 720.0;
const FONT: f64 = 12.0;
const LABEL_W: f64 = 150.0;
const COLORS: [&str; 8] = [
    "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d",
];

/// A panel: its SVG body (drawn from y = 0) and its height.
struct Panel {
    body: String,
    height: f64,
}

fn title(out: &mut String, y: f64, text: &str) {
    let _ = writeln!(
        out,
        r#"<text x="10" y="{y}" font-size="14" font-weight="bold">{}</text>"#,
        esc(&fit(text, W - 20.0, 14.0))
    );
}

fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.2} µs", s * 1e6)
    }
}

/// Horizontal bars, one per (label, value), scaled to the largest.
fn bars(heading: &str, items: &[(&str, f64)], unit: fn(f64) -> String) -> Panel {
    let mut b = String::new();
    title(&mut b, 18.0, heading);
    let max = items
        .iter()
        .map(|i| i.1)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let span = W - LABEL_W - 120.0;
    for (i, (label, v)) in items.iter().enumerate() {
        let y = 30.0 + i as f64 * 22.0;
        let w = (v / max * span).max(0.0);
        let _ = writeln!(
            b,
            r#"<text x="10" y="{}" font-size="{FONT}">{}</text><rect x="{LABEL_W}" y="{y}" width="{w:.1}" height="16" fill="{}"/><text x="{:.1}" y="{}" font-size="{FONT}">{}</text>"#,
            y + 12.0,
            esc(&fit(label, LABEL_W - 15.0, FONT)),
            COLORS[i % COLORS.len()],
            LABEL_W + w + 5.0,
            y + 12.0,
            esc(&unit(*v))
        );
    }
    Panel {
        body: b,
        height: 40.0 + items.len() as f64 * 22.0,
    }
}

fn gigabytes(b: f64) -> String {
    format!("{:.2} GB", b / 1e9)
}

/// One stacked bar of bytes per chip by part, with the HBM line.
fn memory(heading: &str, parts: &[(&str, f64)], hbm: f64) -> Panel {
    let mut b = String::new();
    title(&mut b, 18.0, heading);
    let total: f64 = parts.iter().map(|p| p.1).sum();
    let scale = (W - 40.0) / total.max(hbm).max(1.0);
    let mut x = 20.0;
    for (i, (label, v)) in parts.iter().enumerate() {
        let w = v * scale;
        let _ = writeln!(
            b,
            r#"<rect x="{x:.1}" y="30" width="{w:.1}" height="24" fill="{}"><title>{}: {}</title></rect>"#,
            COLORS[i % COLORS.len()],
            esc(label),
            gigabytes(*v)
        );
        let _ = writeln!(
            b,
            r#"<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}" font-size="{FONT}">{}</text>"#,
            20.0 + i as f64 * 170.0,
            66.0,
            COLORS[i % COLORS.len()],
            34.0 + i as f64 * 170.0,
            75.0,
            esc(&fit(&format!("{label} {}", gigabytes(*v)), 150.0, FONT))
        );
        x += w;
    }
    let hx = 20.0 + hbm * scale;
    let _ = writeln!(
        b,
        r#"<line x1="{hx:.1}" y1="24" x2="{hx:.1}" y2="60" stroke="black" stroke-width="2" stroke-dasharray="4 2"/><text x="{:.1}" y="96" font-size="{FONT}" text-anchor="end">HBM {}</text>"#,
        hx.max(120.0),
        gigabytes(hbm)
    );
    Panel {
        body: b,
        height: 106.0,
    }
}

/// Tokens/s against step latency, one point per batch.
fn frontier_panel(points: &[FrontierPoint]) -> Panel {
    let mut b = String::new();
    title(
        &mut b,
        18.0,
        "Latency–throughput frontier over batch (decode)",
    );
    let (h, x0, y0, pw) = (200.0, 70.0, 230.0, W - 110.0);
    let lat_max = points
        .iter()
        .map(|p| p.decode_step_s)
        .fold(0.0, f64::max)
        .max(1e-12);
    let tps_max = points
        .iter()
        .map(|p| p.decode_tokens_per_s)
        .fold(0.0, f64::max)
        .max(1e-12);
    let _ = writeln!(
        b,
        r#"<line x1="{x0}" y1="{y0}" x2="{}" y2="{y0}" stroke="black"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{}" stroke="black"/><text x="{}" y="{}" font-size="{FONT}" text-anchor="middle">decode step (per-token latency), up to {}</text><text x="14" y="{}" font-size="{FONT}" transform="rotate(-90 14 {})" text-anchor="middle">tokens/s, up to {:.0}</text>"#,
        x0 + pw,
        y0 - h,
        x0 + pw / 2.0,
        y0 + 30.0,
        esc(&seconds(lat_max)),
        y0 - h / 2.0,
        y0 - h / 2.0,
        tps_max
    );
    let mut path = String::new();
    for p in points {
        let x = x0 + p.decode_step_s / lat_max * pw;
        let y = y0 - p.decode_tokens_per_s / tps_max * h;
        let _ = write!(
            path,
            "{}{x:.1},{y:.1} ",
            if path.is_empty() { "M" } else { "L" }
        );
        let _ = writeln!(
            b,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{}"><title>batch {}: {}, {:.1} tokens/s</title></circle><text x="{:.1}" y="{:.1}" font-size="10">{}</text>"#,
            if p.fits { COLORS[0] } else { COLORS[3] },
            p.batch,
            esc(&seconds(p.decode_step_s)),
            p.decode_tokens_per_s,
            x + 5.0,
            y - 5.0,
            p.batch
        );
    }
    let _ = writeln!(
        b,
        r#"<path d="{path}" fill="none" stroke="{}"/>"#,
        COLORS[0]
    );
    Panel {
        body: b,
        height: 250.0,
    }
}

/// The slice's first two axes as a grid of chips, each axis labelled with the
/// strategies that hold it; further axes named beside.
fn slice_panel(report: &TrainReport, slice: &Slice) -> Result<Panel> {
    let placed = place(slice, &report.sharding)?;
    let mut names: Vec<Vec<String>> = vec![Vec::new(); slice.dims.len()];
    for p in &placed {
        for (i, &a) in p.axes.iter().enumerate() {
            names[a].push(format!("{} {}", p.strategy, p.slice.dims[i]));
        }
    }
    let label = |a: usize| {
        let wrap = if slice.wraparound[a] { ", wraps" } else { "" };
        let s = if names[a].is_empty() {
            "unused".to_string()
        } else {
            names[a].join(" × ")
        };
        format!("axis {a} ({} chips{wrap}): {s}", slice.dims[a])
    };
    let mut b = String::new();
    title(
        &mut b,
        18.0,
        &format!("Slice {} and its strategies", slice.shape()),
    );
    let cols = slice.dims[0].min(32) as f64;
    let rows = slice.dims.get(1).copied().unwrap_or(1).min(32) as f64;
    let cell = (200.0 / cols.max(rows)).min(20.0);
    for r in 0..rows as u32 {
        for c in 0..cols as u32 {
            let _ = write!(
                b,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="white"/>"#,
                20.0 + f64::from(c) * cell,
                40.0 + f64::from(r) * cell,
                cell,
                cell,
                COLORS[0]
            );
        }
    }
    b.push('\n');
    let tx = 40.0 + cols * cell;
    for a in 0..slice.dims.len() {
        let _ = writeln!(
            b,
            r#"<text x="{tx:.1}" y="{}" font-size="{FONT}">{}</text>"#,
            56.0 + a as f64 * 18.0,
            esc(&fit(&label(a), W - tx - 10.0, FONT))
        );
    }
    if report.slices > 1 {
        let _ = writeln!(
            b,
            r#"<text x="{tx:.1}" y="{}" font-size="{FONT}">{} slices over DCN: dcn_dp {}</text>"#,
            56.0 + slice.dims.len() as f64 * 18.0,
            report.slices,
            report.sharding.dcn_dp
        );
    }
    Ok(Panel {
        body: b,
        height: (50.0 + rows * cell).max(60.0 + slice.dims.len() as f64 * 18.0 + 20.0),
    })
}

fn stack(panels: Vec<Panel>) -> String {
    let height: f64 = panels.iter().map(|p| p.height).sum::<f64>() + 10.0;
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height:.0}" viewBox="0 0 {W} {height:.0}" font-family="sans-serif">"#
    );
    out.push_str("\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    let mut y = 0.0;
    for p in panels {
        let _ = writeln!(out, r#"<g transform="translate(0 {y:.1})">"#);
        out.push_str(&p.body);
        out.push_str("</g>\n");
        y += p.height;
    }
    out.push_str("</svg>\n");
    out
}

/// Serving: decode (and prefill) terms, memory per chip, the frontier.
pub fn serve_pictures(r: &ServeReport, frontier: &[FrontierPoint]) -> String {
    let d = &r.decode;
    let mut terms = vec![
        ("decode: HBM", d.hbm_s),
        ("decode: math", d.math_s),
        ("decode: ICI", d.ici_s),
        ("decode: overhead", d.overhead_s),
        ("decode step", d.time_s),
    ];
    if let Some(p) = &r.prefill {
        terms.push(("prefill", p.time_s));
    }
    let mut panels = vec![
        bars(
            &format!(
                "{} on {} {}: decode step {} ({}-bound)",
                r.model,
                r.chip,
                r.slice,
                seconds(r.decode_step_s),
                r.bound
            ),
            &terms,
            seconds,
        ),
        memory(
            &format!("Memory per chip (batch {}, context {})", r.batch, r.context),
            &[
                ("weights", r.memory_per_chip.weights),
                ("KV cache", r.memory_per_chip.kv),
                ("activations", r.memory_per_chip.activations),
            ],
            r.hbm_bytes_per_chip,
        ),
    ];
    if !frontier.is_empty() {
        panels.push(frontier_panel(frontier));
    }
    stack(panels)
}

/// Training: step terms, memory per chip, the slice.
pub fn train_pictures(r: &TrainReport, slice: &Slice) -> Result<String> {
    let c = &r.comms;
    let terms = [
        ("compute", r.compute_s - r.bubble_s),
        ("pipeline bubbles", r.bubble_s),
        ("ICI: fsdp", c.fsdp_s),
        ("ICI: dp", c.dp_s),
        ("ICI: tp", c.tp_s),
        ("ICI: sp", c.sp_s),
        ("ICI: ep", c.ep_s),
        ("ICI: pp", c.pp_s),
        ("DCN", c.dcn_s),
        ("step", r.step_s),
    ];
    let m = &r.memory_per_chip;
    Ok(stack(vec![
        bars(
            &format!(
                "{} step {} ({}-bound), {}",
                r.model,
                seconds(r.step_s),
                r.bound,
                r.sharding.describe()
            ),
            &terms,
            seconds,
        ),
        memory(
            "Memory per chip",
            &[
                ("weights", m.weights),
                ("gradients", m.gradients),
                ("optimizer", m.optimizer),
                ("checkpoints", m.checkpoints),
            ],
            r.hbm_bytes_per_chip,
        ),
        slice_panel(r, slice)?,
    ]))
}

/// A self-contained page: the pictures and the JSON figures.
pub fn page(heading: &str, svg: &str, json: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\n<style>body{{font-family:sans-serif;margin:2em;max-width:60em}}pre{{background:#f6f6f6;padding:1em;overflow:auto}}</style></head>\n<body><h1>{t}</h1>\n{svg}\n<h2>Figures</h2>\n<pre>{j}</pre>\n</body></html>\n",
        t = esc(heading),
        j = esc(json)
    )
}

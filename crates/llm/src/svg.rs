//! Pictures of `tpusim llm serve` and `train`, and of a transformer's step in
//! `tpusim report`, as SVG text: where a step's time goes (by term, by kind of
//! operation, by unit), memory per chip by part against the HBM line, the
//! latency–throughput frontier, and the slice with each axis labelled by the
//! strategy on it; and a self-contained HTML page around them.

use crate::axes::place;
use crate::error::Result;
use crate::ops::Phase;
use crate::serve::{FrontierPoint, ServeReport};
use crate::tpu::{GraphReport, HbmUse, OpTime, Totals, TransformerReport};
use crate::train::TrainReport;
use std::fmt::Write;
use tpusim_chip::Slice;
use tpusim_svg::{esc, fit, text_width};

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
fn memory_panel(heading: &str, parts: &[(&str, f64)], hbm: f64) -> Panel {
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

/// Where a 10-px label's baseline starts, and its width.
struct LabelBox {
    x: f64,
    y: f64,
    width: f64,
}

impl LabelBox {
    fn overlaps(&self, other: &LabelBox) -> bool {
        self.x < other.x + other.width
            && other.x < self.x + self.width
            && (self.y - other.y).abs() < 11.0
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
    let mut labels: Vec<LabelBox> = Vec::new();
    for p in points {
        let x = x0 + p.decode_step_s / lat_max * pw;
        let y = y0 - p.decode_tokens_per_s / tps_max * h;
        let _ = write!(
            path,
            "{}{x:.1},{y:.1} ",
            if path.is_empty() { "M" } else { "L" }
        );
        let _ = write!(
            b,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{}"><title>batch {}: {}, {:.1} tokens/s</title></circle>"#,
            if p.fits { COLORS[0] } else { COLORS[3] },
            p.batch,
            esc(&seconds(p.decode_step_s)),
            p.decode_tokens_per_s,
        );
        // The batch beside its point, unless it would cover a label already drawn
        // (points close together; the point's tooltip still names its batch).
        let text = p.batch.to_string();
        let label = LabelBox {
            x: x + 5.0,
            y: y - 5.0,
            width: text_width(&text, 10.0),
        };
        if labels.iter().all(|l| !l.overlaps(&label)) {
            let _ = write!(
                b,
                r#"<text x="{:.1}" y="{:.1}" font-size="10">{text}</text>"#,
                label.x, label.y
            );
            labels.push(label);
        }
        b.push('\n');
    }
    let _ = writeln!(
        b,
        r#"<path d="{path}" fill="none" stroke="{}"/>"#,
        COLORS[0]
    );
    Panel {
        body: b,
        // the axis label's baseline is 30 px below the axis; room for its descenders
        height: y0 + 36.0,
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
            r#"<text x="{tx:.1}" y="{}" font-size="{FONT}">{} slices over DCN: dcn_dp {}, dcn_fsdp {}</text>"#,
            56.0 + slice.dims.len() as f64 * 18.0,
            report.slices,
            report.sharding.dcn_dp,
            report.sharding.dcn_fsdp
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
        memory_panel(
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
        ("PCIe: offload", c.host_s),
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
        memory_panel(
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

/// How many operation kinds a step's time picture names; the rest are summed.
const STEP_KINDS: usize = 12;

/// Seconds of a step by kind of operation (every run summed), the largest first; past
/// [`STEP_KINDS`] the rest summed as one.
fn time_by_kind(ops: &[OpTime], kind: fn(&OpTime) -> String) -> Vec<(String, f64)> {
    let mut by_kind: Vec<(String, f64)> = Vec::new();
    for o in ops {
        let k = kind(o);
        let t = o.op.count as f64 * o.time_s;
        match by_kind.iter_mut().find(|(name, _)| *name == k) {
            Some(entry) => entry.1 += t,
            None => by_kind.push((k, t)),
        }
    }
    by_kind.sort_by(|a, b| b.1.total_cmp(&a.1));
    if by_kind.len() > STEP_KINDS {
        let rest: f64 = by_kind[STEP_KINDS - 1..].iter().map(|k| k.1).sum();
        let others = by_kind.len() - (STEP_KINDS - 1);
        by_kind.truncate(STEP_KINDS - 1);
        by_kind.push((format!("{others} other kinds"), rest));
    }
    by_kind
}

/// One step on one TPU: its time by kind of operation (every run summed, the largest
/// first), by unit, and what it holds in HBM against the chip's.
fn step_pictures(
    heading: &str,
    ops: &[OpTime],
    kind: fn(&OpTime) -> String,
    totals: &Totals,
    memory: &HbmUse,
) -> String {
    let by_kind = time_by_kind(ops, kind);
    let kinds: Vec<(&str, f64)> = by_kind.iter().map(|(k, t)| (k.as_str(), *t)).collect();
    let units = [
        ("MXU", totals.mxu_s),
        ("VPU", totals.vpu_s),
        ("roofline bound", totals.roofline_lower_bound_s),
        ("step", totals.total_time_s),
    ];
    stack(vec![
        bars(heading, &kinds, seconds),
        bars(
            &format!("By unit ({}-bound)", totals.bound),
            &units,
            seconds,
        ),
        memory_panel(
            "HBM held",
            &[
                ("weights", memory.weights_bytes),
                ("KV cache", memory.kv_cache_bytes),
                ("activations", memory.activation_bytes),
            ],
            memory.hbm_bytes,
        ),
    ])
}

/// A transformer's step (`tpusim report MODEL` on a TPU), by operation name.
pub fn transformer_pictures(r: &TransformerReport) -> String {
    let w = &r.workload;
    let phase = match w.phase {
        Phase::Prefill => format!("prefill of {} x {} tokens", w.batch, w.seq),
        Phase::Decode => format!("decode of {} at context {}", w.batch, w.context),
    };
    step_pictures(
        &format!(
            "{} on {}, {phase}: {}",
            r.model,
            r.chip,
            seconds(r.totals.total_time_s)
        ),
        &r.ops,
        |o| o.op.name.clone(),
        &r.totals,
        &r.memory,
    )
}

/// An imported graph's step (`tpusim report MODEL.onnx` on a TPU), by op type.
pub fn graph_pictures(r: &GraphReport) -> String {
    step_pictures(
        &format!(
            "{} on {}: {} by op type",
            r.model,
            r.chip,
            seconds(r.totals.total_time_s)
        ),
        &r.ops,
        |o| graph_op_type(&o.op.name),
        &r.totals,
        &r.memory,
    )
}

/// The op type of an imported node's name, `NAME (TYPE)`.
fn graph_op_type(name: &str) -> String {
    name.rsplit_once(" (")
        .and_then(|(_, t)| t.strip_suffix(')'))
        .unwrap_or(name)
        .to_string()
}

/// A self-contained page: the pictures and the JSON figures.
pub fn page(heading: &str, svg: &str, json: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\n<style>body{{font-family:sans-serif;margin:2em;max-width:60em}}pre{{background:#f6f6f6;padding:1em;overflow:auto}}</style></head>\n<body><h1>{t}</h1>\n{svg}\n<h2>Figures</h2>\n<pre>{j}</pre>\n</body></html>\n",
        t = esc(heading),
        j = esc(json)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Workload;
    use crate::{zoo, Precision};

    /// The time picture's kinds add up to the step: every operation counted once,
    /// every run of it, whatever is folded into "other kinds".
    #[test]
    fn kinds_add_up_to_the_step() {
        let chip = tpusim_chip::lookup("v5e").unwrap();
        for (name, phase) in [("gemma-2-9b", Phase::Decode), ("gpt2", Phase::Prefill)] {
            let w = Workload {
                phase,
                batch: 4,
                seq: 512,
                context: 9000,
                weights: Precision::Bf16,
                kv: Precision::Bf16,
            };
            let r = crate::tpu::report(&zoo::lookup(name).unwrap(), &chip, &w).unwrap();
            let kinds = time_by_kind(&r.ops, |o| o.op.name.clone());
            assert!(kinds.len() <= STEP_KINDS);
            let sum: f64 = kinds.iter().map(|k| k.1).sum();
            assert!((sum / r.totals.total_time_s - 1.0).abs() < 1e-12, "{name}");
            assert!(kinds
                .windows(2)
                .all(|p| p[0].1 >= p[1].1 || p[1].0.contains("other")));
            let svg = transformer_pictures(&r);
            assert!(svg.starts_with("<svg") && svg.contains(&esc(&kinds[0].0)));
        }
    }

    #[test]
    fn op_types_of_imported_nodes() {
        assert_eq!(graph_op_type("/layers.0/q_proj/MatMul (MatMul)"), "MatMul");
        assert_eq!(graph_op_type("a (b) (Softmax)"), "Softmax");
        assert_eq!(graph_op_type("plain"), "plain");
    }
}

//! The terminal rendering of a [`Report`]: a summary (total time, achieved vs peak
//! FLOP/s, bytes moved vs logical, top layers by time, top tensors by padding waste) and
//! a per-layer table. Returns text; the CLI prints it.

use crate::glossary::{terms_for, Term, LAYER_COLUMNS, OVERLAP_RULE, TENSOR_COLUMNS};
use crate::model::Report;
use crate::rows::{layer_row, top_layer_row, top_tensor_row};
use crate::units::{bytes, percent, seconds, si};
use std::fmt::Write;

/// How many rows the summary's top lists show.
pub const TOP_N: usize = 10;

/// A plain text table: header, rows, columns right-aligned except the first two.
fn table(header: &[&str], rows: &[Vec<String>], left_cols: usize) -> String {
    let ncol = header.len();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, cell) in r.iter().enumerate().take(ncol) {
            width[i] = width[i].max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: &[String], out: &mut String| {
        let mut parts = Vec::with_capacity(ncol);
        for (i, cell) in cells.iter().enumerate().take(ncol) {
            let pad = width[i].saturating_sub(cell.chars().count());
            if i < left_cols {
                parts.push(format!("{cell}{}", " ".repeat(pad)));
            } else {
                parts.push(format!("{}{cell}", " ".repeat(pad)));
            }
        }
        let _ = writeln!(out, "  {}", parts.join("  ").trim_end());
    };
    let head: Vec<String> = header.iter().map(|s| s.to_string()).collect();
    line(&head, &mut out);
    for r in rows {
        line(r, &mut out);
    }
    out
}

/// The summary block: headline figures and the two top-10 lists.
pub fn summary(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} on {} ({}), batch {}, {}",
        r.model,
        r.chip,
        r.chip_kind.to_uppercase(),
        r.batch,
        r.dtype
    );
    let ratio = r.plan_over_bound().unwrap_or(f64::NAN);
    let _ = writeln!(
        o,
        "  total time        {}  (roofline lower bound {}, plan is {:.2}x the bound)",
        seconds(r.total_time_s),
        seconds(r.roofline_lower_bound_s),
        ratio
    );
    let _ = writeln!(
        o,
        "  composed of       compute {} + exposed transfers {}; transfers take {} in all, {} of them hidden under compute",
        seconds(r.compute_s),
        seconds(r.exposed_dma_s),
        seconds(r.dma_s),
        seconds(r.hidden_dma_s())
    );
    let _ = writeln!(
        o,
        "  why               the bound is {}-side (compute {}, memory {})",
        if r.roofline_compute_s >= r.roofline_memory_s {
            "compute"
        } else {
            "memory"
        },
        seconds(r.roofline_compute_s),
        seconds(r.roofline_memory_s),
    );
    let _ = writeln!(
        o,
        "  compute           {} achieved of {} peak ({} of peak), {} in total",
        si(r.achieved_flops_per_s, "FLOP/s"),
        si(r.peak_flops_per_s, "FLOP/s"),
        percent(r.achieved_flops_per_s / r.peak_flops_per_s),
        si(r.flops as f64, "FLOP")
    );
    let expansion = r.moved_over_logical().unwrap_or(1.0);
    let _ = writeln!(
        o,
        "  bytes (per layer) {} moved for {} logical ({:.2}x, layout padding)",
        bytes(r.bytes_moved),
        bytes(r.bytes_logical),
        expansion
    );
    let global = r.groups.iter().filter(|g| g.global).count();
    let _ = writeln!(
        o,
        "  plan              {} layers in {} groups ({} global ops); off-chip {}/s, on-chip {}",
        r.layers.len(),
        r.groups.len(),
        global,
        bytes(r.offchip_bytes_per_s as u64),
        bytes(r.onchip_bytes)
    );
    let _ = writeln!(o, "  memory            {}", capacity_verdict(r));
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Top {TOP_N} layers by time (each alone, max of compute and memory):"
    );
    let rows: Vec<Vec<String>> = r
        .top_layers_by_time(TOP_N)
        .into_iter()
        .map(|l| top_layer_row(l, false))
        .collect();
    let header = ["layer", "op", "time", "bound", "util", "group"];
    o.push_str(&table(&header, &rows, 2));
    o.push_str(&legend(LAYER_COLUMNS, &header));
    let _ = writeln!(o);
    let _ = writeln!(o, "Top {TOP_N} tensors by padding waste:");
    let rows: Vec<Vec<String>> = r
        .top_tensors_by_waste(TOP_N)
        .into_iter()
        .map(|t| top_tensor_row(t, false))
        .collect();
    let header = [
        "tensor",
        "stored as",
        "logical",
        "stored",
        "waste",
        "expansion",
    ];
    o.push_str(&table(&header, &rows, 2));
    o.push_str(&legend(TENSOR_COLUMNS, &header));
    let _ = writeln!(o);
    let _ = writeln!(o, "How the time adds up:");
    o.push_str(&wrapped(OVERLAP_RULE, "  ", "  ", LEGEND_WIDTH));
    o
}

/// Width the legends wrap at, characters.
const LEGEND_WIDTH: usize = 96;

/// "Columns:" and one wrapped line per term of `header` that `columns` defines.
fn legend(columns: &[Term], header: &[&str]) -> String {
    let mut o = String::from("  Columns:\n");
    for t in terms_for(columns, header) {
        o.push_str(&wrapped(
            &format!("{}: {}.", t.name, t.meaning),
            "    ",
            "      ",
            LEGEND_WIDTH,
        ));
    }
    o
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word
/// stands alone), the first after `first`, the others after `rest`.
fn wrapped(text: &str, first: &str, rest: &str, width: usize) -> String {
    let mut o = String::new();
    let mut line = String::new();
    let mut indent = first;
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            let _ = writeln!(o, "{indent}{line}");
            line.clear();
            indent = rest;
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(o, "{indent}{line}");
    }
    o
}

/// One sentence: the off-chip bytes needed, whether they fit, and what would if not.
pub fn capacity_verdict(r: &Report) -> String {
    let c = &r.capacity;
    let parts = format!(
        "weights {} + activations live at the peak {}, at {}",
        bytes(c.weight_bytes),
        bytes(c.peak_activation_bytes),
        r.layers
            .get(c.peak_at_layer)
            .map_or("-", |l| l.name.as_str())
    );
    let Some(cap) = c.hbm_bytes else {
        return format!(
            "needs {} off-chip ({parts}); the chip states no off-chip capacity to check",
            bytes(r.hbm_bytes_needed)
        );
    };
    if r.fits_hbm != Some(false) {
        return format!(
            "needs {} of {} HBM ({}; {parts})",
            bytes(r.hbm_bytes_needed),
            bytes(cap),
            percent(r.hbm_bytes_needed as f64 / cap as f64)
        );
    }
    let mut o = format!(
        "DOES NOT FIT: needs {} of {} HBM ({parts})",
        bytes(r.hbm_bytes_needed),
        bytes(cap)
    );
    match c.largest_batch_that_fits {
        Some(b) => {
            let _ = write!(o, "; batch {b} fits");
        }
        None => o.push_str("; no batch fits this chip"),
    }
    if c.chips_that_fit.is_empty() {
        o.push_str("; no built-in chip holds it at this batch (shard it over chips)");
    } else {
        let list: Vec<String> = c
            .chips_that_fit
            .iter()
            .take(3)
            .map(|f| format!("{} ({} HBM)", f.chip, bytes(f.hbm_bytes)))
            .collect();
        let _ = write!(o, "; at this batch it fits {}", list.join(", "));
    }
    o
}

/// The per-layer table: every op with FLOPs, bytes, compute and memory time, bound and
/// group.
pub fn layer_table(r: &Report) -> String {
    let rows: Vec<Vec<String>> = r.layers.iter().map(layer_row).collect();
    let mut o = String::from("Layers (each alone, all operands from off-chip memory):\n");
    let header = [
        "layer", "op", "flops", "logical", "moved", "compute", "memory", "bound", "util", "group",
    ];
    o.push_str(&table(&header, &rows, 2));
    o.push_str(&legend(LAYER_COLUMNS, &header));
    o
}

/// Summary, then the per-layer table.
pub fn render(r: &Report) -> String {
    let mut o = summary(r);
    o.push('\n');
    o.push_str(&layer_table(r));
    o
}

//! `tpusim llm report` (and `tpusim report MODEL` when MODEL is a transformer): one
//! step of prefill or decode on one TPU, operation by operation.

use super::args::{count, model, precision};
use crate::cmd::chip::args::ChipFile;
use crate::fmt::{bytes, sci, time};
use crate::util::print_json;
use anyhow::Result;
use clap::Args;
use tpusim_llm::ops::{Phase, Workload};
use tpusim_llm::systolic_map::{self, GemmCycles};
use tpusim_llm::tpu::{OpTime, Totals, TransformerReport};

/// `tpusim llm report`.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// A built-in name or a config.json file.
    pub model: String,
    /// TPU chip (`tpusim chip list`).
    #[arg(long, default_value = "v5e")]
    pub chip: String,
    /// prefill (the prompt of --seq tokens) or decode (one token against --context).
    #[arg(long, default_value = "prefill")]
    pub phase: String,
    /// Sequences.
    #[arg(long, default_value = "1")]
    pub batch: String,
    /// Prompt tokens per sequence (prefill).
    #[arg(long, default_value = "2048")]
    pub seq: String,
    /// KV-cache length per sequence (decode).
    #[arg(long, default_value = "2048")]
    pub context: String,
    /// Weight precision: bf16, int8, int4, fp8, f32.
    #[arg(long, default_value = "bf16")]
    pub weights: String,
    /// KV-cache precision.
    #[arg(long, default_value = "bf16")]
    pub kv_dtype: String,
    #[command(flatten)]
    pub file: ChipFile,
    /// Also time every matmul on the chip's MXU with the systolic model (weight
    /// stationary, double buffered) and run each one of at most 2^28 MACs through the
    /// cycle-accurate engine: the cross-check of the two, per GEMM.
    #[arg(long)]
    pub systolic_cycles: bool,
    /// Write one layer's GEMMs as a SCALE-Sim GEMM topology CSV (attention's batched
    /// GEMMs one row per head and sequence), for `tpusim systolic run`.
    #[arg(long, value_name = "FILE")]
    pub topology: Option<std::path::PathBuf>,
    /// Write the pictures (time by operation, by unit, HBM held against the chip's)
    /// as one SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<std::path::PathBuf>,
    /// Write a page with the pictures and every figure.
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// Only the summary, not the per-operation table.
    #[arg(long)]
    pub summary: bool,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Run it.
pub fn run(a: ReportArgs) -> Result<()> {
    let chip = a.file.resolve(&a.chip)?;
    let m = model(&a.model)?;
    let w = Workload {
        phase: Phase::parse(&a.phase)?,
        batch: count("--batch", &a.batch)?,
        seq: count("--seq", &a.seq)?,
        context: count("--context", &a.context)?,
        weights: precision("--weights", &a.weights)?,
        kv: precision("--kv-dtype", &a.kv_dtype)?,
    };
    if let Some(path) = &a.topology {
        let gemms = systolic_map::gemms(&m, &w)?;
        crate::output::write_atomic(path, systolic_map::topology_csv(&gemms)?.as_bytes())?;
    }
    let checked = systolic_map::report(&m, &chip, &w, a.systolic_cycles)?;
    super::write_pictures(
        a.svg.as_deref(),
        a.html.as_deref(),
        "tpusim report",
        || Ok(tpusim_llm::svg::transformer_pictures(&checked.report)),
        &checked,
    )?;
    if a.json {
        return print_json(&checked);
    }
    print_summary(&checked.report);
    if !a.summary {
        print_ops(&checked.report.ops);
    }
    if let Some(rows) = &checked.systolic {
        print_systolic(&checked.report, rows);
    }
    Ok(())
}

fn print_systolic(r: &TransformerReport, rows: &[GemmCycles]) {
    println!(
        "\nMXU cycles (systolic model, ws, double buffered) against the roofline's compute time"
    );
    let w = column_width(rows.iter().map(|g| g.gemm.name.as_str()), 12);
    println!(
        "{:<w$} {:>6} {:>7} {:>7} {:>7} {:>12} {:>12} {:>6} {:>11} {:>11}",
        "gemm", "batch", "m", "k", "n", "cycles", "engine", "util", "systolic", "roofline"
    );
    for g in rows {
        let roof = r
            .ops
            .iter()
            .find(|o| o.op.name == g.gemm.name)
            .map_or(0.0, |o| o.compute_s * o.op.count as f64);
        println!(
            "{:<w$} {:>6} {:>7} {:>7} {:>7} {:>12} {:>12} {:>5.1}% {:>11} {:>11}",
            g.gemm.name,
            g.gemm.batch,
            g.gemm.m,
            g.gemm.k,
            g.gemm.n,
            g.cycles,
            g.engine_cycles.map_or("-".into(), |c| c.to_string()),
            g.utilization * 100.0,
            time(g.time_s),
            time(roof)
        );
    }
    let sys: f64 = rows.iter().map(|g| g.time_s).sum();
    println!(
        "(per step; engine '-' = over 2^28 MACs, not run; systolic MXU time {} in all)",
        time(sys)
    );
}

fn print_summary(r: &TransformerReport) {
    let w = &r.workload;
    let shape = match w.phase {
        Phase::Prefill => format!("prefill of {} x {} tokens", w.batch, w.seq),
        Phase::Decode => format!(
            "decode of {} tokens against a {}-token KV cache",
            w.batch, w.context
        ),
    };
    println!(
        "{} on {}: {shape}, weights {}, KV {}",
        r.model,
        r.chip,
        w.weights.name(),
        w.kv.name()
    );
    print_totals(&r.totals);
    println!("  throughput        {:.1} tokens/s", r.tokens_per_s);
    print_memory(r.hbm_bytes_needed, r.fits_hbm);
}

/// The HBM line of a one-chip transformer report.
pub(crate) fn print_memory(needed: f64, fits: bool) {
    let verdict = if fits {
        "fits"
    } else {
        "DOES NOT FIT one chip"
    };
    println!(
        "  memory            needs {} of HBM: {verdict}",
        bytes(needed)
    );
}

/// The lines every transformer report shares.
pub(crate) fn print_totals(t: &Totals) {
    println!(
        "  step              {}  ({}-bound; roofline lower bound {})",
        time(t.total_time_s),
        t.bound,
        time(t.roofline_lower_bound_s)
    );
    println!(
        "  units             MXU {}, VPU {}",
        time(t.mxu_s),
        time(t.vpu_s)
    );
    println!(
        "  work              {} ({} executed), {} moved",
        sci(t.flops, "FLOP"),
        sci(t.executed_flops, "FLOP"),
        bytes(t.bytes_moved)
    );
    println!(
        "  traffic           weights {}, KV cache read {}, written {}",
        bytes(t.weight_bytes_read),
        bytes(t.kv_cache_bytes_read),
        bytes(t.kv_cache_bytes_written)
    );
}

/// The width of a name column: its longest name, never under `min`.
fn column_width<'a>(names: impl Iterator<Item = &'a str>, min: usize) -> usize {
    names.map(str::len).max().unwrap_or(0).max(min)
}

pub(crate) fn print_ops(ops: &[OpTime]) {
    let w = column_width(ops.iter().map(|o| o.op.name.as_str()), 16);
    println!(
        "\n{:<w$} {:>5} {:>4} {:>12} {:>14} {:>11} {:>11} {:>8}",
        "op", "count", "unit", "FLOP", "bytes", "compute", "memory", "bound"
    );
    for o in ops {
        println!(
            "{:<w$} {:>5} {:>4} {:>12.4e} {:>14.4e} {:>11} {:>11} {:>8}",
            o.op.name,
            o.op.count,
            format!("{:?}", o.op.unit).to_ascii_lowercase(),
            o.op.flops,
            o.op.bytes(),
            time(o.compute_s),
            time(o.memory_s),
            o.bound
        );
    }
    println!("(times are per run; a step runs each op `count` times; bytes are HBM traffic)");
}

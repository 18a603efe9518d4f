//! `tpusim llm report` (and `tpusim report MODEL` when MODEL is a transformer): one
//! step of prefill or decode on one TPU, operation by operation.

use super::args::{count, model, precision};
use crate::cmd::chip::args::ChipFile;
use crate::cmd::chip::fmt::{bytes, sci, time};
use crate::util::print_json;
use anyhow::Result;
use clap::Args;
use tpusim_llm::ops::{Phase, Workload};
use tpusim_llm::tpu::{report, TransformerReport};

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
    let r = report(&m, &chip, &w)?;
    if a.json {
        return print_json(&r);
    }
    print_summary(&r);
    if !a.summary {
        print_ops(&r);
    }
    Ok(())
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
    println!(
        "  step              {}  ({}-bound; roofline lower bound {})",
        time(r.total_time_s),
        r.bound,
        time(r.roofline_lower_bound_s)
    );
    println!(
        "  units             MXU {}, VPU {}",
        time(r.mxu_s),
        time(r.vpu_s)
    );
    println!(
        "  work              {} ({} executed), {} moved",
        sci(r.flops, "FLOP"),
        sci(r.executed_flops, "FLOP"),
        bytes(r.bytes_moved)
    );
    println!(
        "  traffic           weights {}, KV cache read {}, written {}",
        bytes(r.weight_bytes_read),
        bytes(r.kv_cache_bytes_read),
        bytes(r.kv_cache_bytes_written)
    );
    println!("  throughput        {:.1} tokens/s", r.tokens_per_s);
    println!(
        "  memory            needs {} of HBM: {}",
        bytes(r.hbm_bytes_needed),
        if r.fits_hbm {
            "fits"
        } else {
            "DOES NOT FIT one chip"
        }
    );
}

fn print_ops(r: &TransformerReport) {
    println!(
        "\n{:<16} {:>5} {:>4} {:>12} {:>14} {:>11} {:>11} {:>8}",
        "op", "count", "unit", "FLOP", "bytes", "compute", "memory", "bound"
    );
    for o in &r.ops {
        println!(
            "{:<16} {:>5} {:>4} {:>12.4e} {:>14.4e} {:>11} {:>11} {:>8}",
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

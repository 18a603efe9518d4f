//! `tpusim llm serve`.

use super::args::{count, model, precision, Mode, Where};
use crate::fmt::{bytes, table, time};
use crate::util::print_json;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use tpusim_llm::serve::{answer, ServeInput, ServeOutput};

/// `tpusim llm serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A built-in name or a config.json file.
    pub model: String,
    #[command(flatten)]
    pub place: Where,
    /// Sequences decoded together.
    #[arg(long, default_value = "1")]
    pub batch: String,
    /// KV-cache length per sequence, tokens (`--context 8192`, `8Ki`): what a decode step
    /// reads and what memory holds. For a server with a dense cache (JetStream) its
    /// slot length; for a paged one (vLLM), the tokens a request has on average, its
    /// prompt and half its output (`llm validate` rows say `"kv_cache": "paged"`).
    #[arg(long, default_value = "8192")]
    pub context: String,
    /// Weight precision: bf16, int8, int4, fp8, f32, mxfp4 (4-bit values with an 8-bit
    /// scale per 32: 4.25 bits).
    #[arg(long, default_value = "bf16")]
    pub weights: String,
    /// An MoE model's experts' matrices at another precision than --weights, as
    /// checkpoints ship them: GPT-OSS is `--weights bf16 --expert-weights mxfp4`
    /// (default: as --weights).
    #[arg(long, value_name = "PRECISION")]
    pub expert_weights: Option<String>,
    /// KV-cache precision: bf16, int8, int4, fp8, f32.
    #[arg(long, default_value = "bf16")]
    pub kv_dtype: String,
    /// Also time the prefill of one request of this many prompt tokens.
    #[arg(long, value_name = "TOKENS")]
    pub prefill_tokens: Option<String>,
    /// A fixed MXU fraction for prefill and decode math (the book uses 0.4 for
    /// prefill), instead of the calibrated figure (or 1 with --ideal).
    #[arg(long)]
    pub mfu: Option<f64>,
    /// Tensor-parallel degree inside a replica (default: searched).
    #[arg(long)]
    pub tp: Option<u64>,
    /// Data-parallel replicas (default: searched, or chips / tp).
    #[arg(long)]
    pub dp: Option<u64>,
    /// 2-D tensor parallelism: also shard the weights over the model dimension D this
    /// many ways (the book's 2-D weight-stationary sharding; X = tp_d, YZ = tp),
    /// inside a replica of tp · tp_d chips (default: searched; 1 when --tp or --dp is
    /// given).
    #[arg(long)]
    pub tp_d: Option<u64>,
    /// Slices serving side by side over DCN, each with batch / slices sequences.
    #[arg(long, default_value_t = 1)]
    pub slices: u64,
    #[command(flatten)]
    pub mode: Mode,
    /// Add the latency–throughput frontier over batch (powers of two up to the
    /// largest batch that fits).
    #[arg(long)]
    pub sweep_batch: bool,
    /// Write the pictures (step breakdown, memory per chip, frontier) as one SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Write a page with the pictures and the figures.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Run `tpusim llm serve`.
pub fn run(a: ServeArgs) -> Result<()> {
    let (_, slice) = a.place.resolve()?;
    let mut input = ServeInput::new(model(&a.model)?, slice, a.mode.ideal);
    input.batch = count("--batch", &a.batch)?;
    input.context = count("--context", &a.context)?;
    input.weights = precision("--weights", &a.weights)?;
    input.expert_weights = a
        .expert_weights
        .as_deref()
        .map(|p| precision("--expert-weights", p))
        .transpose()?;
    input.kv = precision("--kv-dtype", &a.kv_dtype)?;
    input.prefill_tokens = a
        .prefill_tokens
        .as_deref()
        .map(|p| count("--prefill-tokens", p))
        .transpose()?;
    input.eff = a.mode.efficiency()?;
    input.mfu = a.mfu;
    input.tp = a.tp;
    input.tp_d = a.tp_d;
    input.dp = a.dp;
    input.slices = a.slices;
    let wants_frontier = a.sweep_batch || a.svg.is_some() || a.html.is_some();
    let out = answer(&input, wants_frontier)?;
    super::write_pictures(
        a.svg.as_deref(),
        a.html.as_deref(),
        "tpusim llm serve",
        || {
            Ok(tpusim_llm::svg::serve_pictures(
                &out.report,
                out.frontier.as_deref().unwrap_or(&[]),
            ))
        },
        &out,
    )?;
    if a.json {
        return print_json(&out);
    }
    print_table(&out);
    Ok(())
}

fn print_table(out: &ServeOutput) {
    let r = &out.report;
    let d = &r.decode;
    let mut rows = vec![
        (
            "model",
            format!(
                "{} on {}{} {} ({} chips), {} answer",
                r.model,
                if r.slices > 1 {
                    format!("{} x ", r.slices)
                } else {
                    String::new()
                },
                r.chip,
                r.slice,
                r.chips,
                out.mode
            ),
        ),
        (
            "sharding",
            format!(
                "tp={} within a replica, dp={} replicas{}",
                r.sharding.tp,
                r.sharding.dp,
                if r.slices > 1 {
                    format!(", on each of {} slices", r.slices)
                } else {
                    String::new()
                }
            ),
        ),
        (
            "batch x context",
            format!(
                "{} x {} tokens, weights {}{}, KV {}",
                r.batch,
                r.context,
                r.weights_dtype.name(),
                r.expert_weights_dtype
                    .map_or(String::new(), |p| format!(" (experts {})", p.name())),
                r.kv_dtype.name()
            ),
        ),
        (
            "memory per chip",
            format!(
                "{} of {}: weights {}, KV {}, activations {} → {}",
                bytes(r.bytes_per_chip),
                bytes(r.hbm_bytes_per_chip),
                bytes(r.memory_per_chip.weights),
                bytes(r.memory_per_chip.kv),
                bytes(r.memory_per_chip.activations),
                if r.fits { "fits" } else { "DOES NOT FIT" }
            ),
        ),
        (
            "min_slice",
            format!("{} ({} chips)", r.min_slice, r.min_slice_chips),
        ),
        (
            "max_batch",
            format!(
                "{} sequences of {} tokens on this slice",
                r.max_batch, r.context
            ),
        ),
        (
            "decode step",
            format!(
                "{} ({}-bound): HBM {}, math {}, ICI {}, host {}",
                time(r.decode_step_s),
                r.bound,
                time(d.hbm_s),
                time(d.math_s),
                time(d.ici_s),
                time(d.overhead_s)
            ),
        ),
        (
            "throughput",
            format!(
                "{:.1} tokens/s ({:.1} per chip); critical batch {:.0}",
                r.decode_tokens_per_s, r.decode_tokens_per_s_per_chip, r.critical_batch
            ),
        ),
    ];
    if let Some(p) = &r.prefill {
        rows.push((
            "prefill",
            format!(
                "{} ({}-bound): math {}, HBM {}, ICI {}",
                time(p.time_s),
                p.bound,
                time(p.math_s),
                time(p.hbm_s),
                time(p.ici_s)
            ),
        ));
    }
    for alt in &r.runners_up {
        rows.push((
            "runner-up",
            format!(
                "{}: {} — {}",
                alt.sharding.describe(),
                time(alt.decode_step_s),
                alt.why
            ),
        ));
    }
    table(&rows);
    if let Some(f) = &out.frontier {
        println!(
            "\n{:>8} {:>12} {:>14} {:>6} bound",
            "batch", "step", "tokens/s", "fits"
        );
        for p in f {
            println!(
                "{:>8} {:>12} {:>14.1} {:>6} {}",
                p.batch,
                time(p.decode_step_s),
                p.decode_tokens_per_s,
                p.fits,
                p.bound
            );
        }
    }
}

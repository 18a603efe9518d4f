//! `tpusim llm models | show | thresholds`.

use super::args::{count, model, precision};
use crate::cmd::chip::args::ChipFile;
use crate::fmt::{bytes, sci, table};
use crate::util::print_json;
use anyhow::Result;
use clap::Args;
use tpusim_llm::model::QkNorm;
use tpusim_llm::{thresholds::thresholds as book_thresholds, zoo, Model, Precision};

/// `tpusim llm models`.
#[derive(Args, Debug)]
pub struct ModelsArgs {
    /// One JSON document: a list of models with their counts.
    #[arg(long)]
    pub json: bool,
}

/// `tpusim llm show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A built-in name or a config.json file.
    pub model: String,
    /// KV-cache precision for the bytes per token: bf16, int8, int4, fp8, f32.
    #[arg(long, default_value = "bf16")]
    pub kv_dtype: String,
    /// Weight precision for the weights' bytes: bf16, int8, int4, fp8, f32, mxfp4.
    #[arg(long, default_value = "bf16")]
    pub weights: String,
    /// An MoE model's experts' matrices at another precision (GPT-OSS's checkpoint:
    /// `--expert-weights mxfp4`, the rest bf16).
    #[arg(long, value_name = "PRECISION")]
    pub expert_weights: Option<String>,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

/// `tpusim llm thresholds`.
#[derive(Args, Debug)]
pub struct ThresholdArgs {
    /// Chip name or alias.
    pub chip: String,
    /// A model, for the TP limit and the mixed FSDP+TP batch (its MLP width F).
    #[arg(long)]
    pub model: Option<String>,
    /// Global batch in tokens, with --chips, for X_opt.
    #[arg(long, requires = "chips")]
    pub batch_tokens: Option<String>,
    /// Chips, with --batch-tokens, for X_opt.
    #[arg(long, requires = "batch_tokens")]
    pub chips: Option<String>,
    #[command(flatten)]
    pub file: ChipFile,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Run `tpusim llm models`.
pub fn models(a: ModelsArgs) -> Result<()> {
    let all: Vec<_> = zoo::builtin()
        .into_iter()
        .map(|m| m.summary(Precision::Bf16))
        .collect();
    if a.json {
        return print_json(&all);
    }
    println!(
        "{:<16} {:<8} {:>17} {:>6} {:>6} {:>7} {:>5} {:>4}",
        "model", "family", "params", "layers", "d", "f", "heads", "kv"
    );
    for s in &all {
        let m = &s.model;
        println!(
            "{:<16} {:<8} {:>17} {:>6} {:>6} {:>7} {:>5} {:>4}",
            m.name, m.family, s.counts.params, m.layers, m.d_model, m.d_ff, m.heads, m.kv_heads
        );
    }
    Ok(())
}

/// Run `tpusim llm show`.
pub fn show(a: ShowArgs) -> Result<()> {
    let m = model(&a.model)?;
    let kv = precision("--kv-dtype", &a.kv_dtype)?;
    let weights = precision("--weights", &a.weights)?;
    let expert = a
        .expert_weights
        .as_deref()
        .map(|p| precision("--expert-weights", p))
        .transpose()?;
    let s = m.summary_with(kv, weights, expert)?;
    if a.json {
        return print_json(&s);
    }
    let c = s.counts;
    let moe = if m.experts > 1 {
        format!(", {} experts, {} active", m.experts, m.experts_active)
    } else {
        String::new()
    };
    table(&[
        ("model", format!("{} ({}{moe})", m.name, m.family)),
        (
            "dimensions",
            format!(
                "L={} D={} F={} N={} K={} H={} V={}, {:?} MLP, {:?} block, {} embedding",
                m.layers,
                m.d_model,
                m.d_ff,
                m.heads,
                m.kv_heads,
                m.head_dim,
                m.vocab,
                m.mlp,
                m.block,
                if m.tied_embedding { "tied" } else { "untied" }
            ),
        ),
        ("layer", layer_variants(&m)),
        ("params", format!("{} ({:.3e})", c.params, c.params as f64)),
        (
            "  attention",
            format!("{} ({:.3e})", c.params_attention, c.params_attention as f64),
        ),
        (
            "  mlp",
            format!("{} ({:.3e})", c.params_mlp, c.params_mlp as f64),
        ),
        (
            "  embedding",
            format!("{} ({:.3e})", c.params_embedding, c.params_embedding as f64),
        ),
        ("  norms", c.params_norms.to_string()),
        ("  other", c.params_other.to_string()),
        ("params active", format!("{} per token", c.params_active)),
        (
            "flops_per_token",
            sci(s.flops_per_token, "FLOP (2·P, forward; training 3x)"),
        ),
        (
            "attention",
            format!(
                "+ {} FLOP per token per token of context{}",
                4 * m.heads * m.head_dim * m.layers,
                window_note(&m, "context")
            ),
        ),
        (
            "kv_bytes_per_token",
            format!(
                "{} at {}{}",
                bytes(s.kv_bytes_per_token),
                kv.name(),
                window_note(&m, "cache")
            ),
        ),
        (
            "weights_bytes",
            format!(
                "{} at {}{}",
                bytes(s.weights_bytes),
                weights.name(),
                expert.map_or(String::new(), |p| format!(
                    ", experts' matrices at {}",
                    p.name()
                ))
            ),
        ),
    ]);
    Ok(())
}

/// How a sliding window caps a per-token figure (empty without one).
fn window_note(m: &Model, what: &str) -> String {
    m.window.map_or(String::new(), |w| {
        format!(
            " ({} of {} layers: {what} capped at {} tokens)",
            m.windowed_layers(),
            m.layers,
            w.tokens
        )
    })
}

/// What a layer has beyond LLaMA's (biases, extra norms, a sliding window).
fn layer_variants(m: &Model) -> String {
    let b = m.biases;
    let biased: Vec<&str> = [
        (b.qkv, "Q, K, V"),
        (b.out, "O"),
        (b.mlp, "MLP"),
        (b.router, "router"),
    ]
    .into_iter()
    .filter_map(|(on, what)| on.then_some(what))
    .collect();
    let mut parts = Vec::new();
    if !biased.is_empty() {
        parts.push(format!("biases on {}", biased.join(", ")));
    }
    if m.fused_qkv {
        parts.push("fused QKV".to_string());
    }
    match m.qk_norm {
        QkNorm::None => {}
        QkNorm::PerHead => parts.push("Q/K norms per head".to_string()),
        QkNorm::Whole => parts.push("Q/K norms over all heads".to_string()),
    }
    if m.sinks {
        parts.push("attention sinks".to_string());
    }
    if m.post_norms {
        parts.push("norms after attention and MLP".to_string());
    }
    let capped: Vec<&str> = [
        (m.softcap.attention, "scores"),
        (m.softcap.logits, "logits"),
    ]
    .into_iter()
    .filter_map(|(on, what)| on.then_some(what))
    .collect();
    if !capped.is_empty() {
        parts.push(format!("soft-capped {}", capped.join(" and ")));
    }
    if let Some(w) = m.window {
        parts.push(format!(
            "sliding window of {} tokens on {} of {} layers",
            w.tokens,
            m.windowed_layers(),
            m.layers
        ));
    }
    if parts.is_empty() {
        "pre-norm, no biases, full attention".to_string()
    } else {
        parts.join("; ")
    }
}

/// Run `tpusim llm thresholds`.
pub fn thresholds(a: ThresholdArgs) -> Result<()> {
    let chip = a.file.resolve(&a.chip)?;
    let m = a.model.as_deref().map(model).transpose()?;
    let bc = match (&a.batch_tokens, &a.chips) {
        (Some(b), Some(n)) => Some((
            count("--batch-tokens", b)? as f64,
            count("--chips", n)?.max(1),
        )),
        _ => None,
    };
    let t = book_thresholds(&chip, m.as_ref().map(|m| m.d_ff), bc);
    if a.json {
        return print_json(&t);
    }
    let opt = |v: Option<f64>, u: &str| v.map_or("- (give --model)".into(), |v| sci(v, u));
    table(&[
        ("chip", t.chip.clone()),
        (
            "dp/fsdp compute bound above",
            format!(
                "{} per chip on 1 axis, {} on 2, {} on 3",
                sci(t.dp_batch_per_chip_1_axis, "tokens"),
                sci(t.dp_batch_per_chip_2_axes, "tokens"),
                sci(t.dp_batch_per_chip_3_axes, "tokens")
            ),
        ),
        (
            "critical decode batch",
            format!(
                "{} bf16, {} int8 weights (bf16 math), {} int8 x int8",
                sci(t.decode_batch_bf16, ""),
                sci(t.decode_batch_int8_weights, ""),
                sci(t.decode_batch_int8_int8, "")
            ),
        ),
        (
            "dcn data parallel",
            format!(
                "compute bound above {} per slice",
                sci(t.dcn_batch_per_slice, "tokens")
            ),
        ),
        (
            "tp limit",
            format!(
                "{} on 1 axis, {} on 2",
                opt(t.tp_limit_1_axis, "way"),
                opt(t.tp_limit_2_axes, "way")
            ),
        ),
        (
            "mixed fsdp+tp",
            format!(
                "compute bound above {} per chip",
                opt(t.mixed_batch_per_chip, "tokens")
            ),
        ),
        (
            "x_opt",
            t.x_opt
                .map_or("- (give --model, --batch-tokens and --chips)".into(), |x| {
                    format!("{x:.0}-way FSDP")
                }),
        ),
    ]);
    Ok(())
}

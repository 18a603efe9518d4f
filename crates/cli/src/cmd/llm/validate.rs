//! `tpusim llm validate`.

use super::args::Mode;
use crate::input::{read_input, InputKind};
use crate::util::print_json;
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use tpusim_llm::validate::{
    summary, validate, validate_rows_with, Case, SHAREGPT_MEAN_OUTPUT, SHAREGPT_MEAN_PROMPT,
};
use tpusim_llm::{hf, zoo, LlmError, Model};

/// `tpusim llm validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub mode: Mode,
    /// Your own measurements instead of the shipped ones (repeatable): JSON lines in the
    /// shipped rows' schema (`data/llm/*.jsonl`). A row with `step_s` is a training
    /// step: id, model (a built-in name, a config.json object, or a `….json` file
    /// beside the measurements), chip, slice, slices,
    /// batch_tokens, seq, remat (MaxText's names; with `custom`, its tensor names as
    /// keys: "query_proj": "offload", …), weights, attention, ici_fsdp, ici_tp (and
    /// ici_dp, ici_pp, ici_ep, ici_sp, dcn_fsdp when used; capacity_factor with
    /// "sparse_matmul": false for MaxText's dropping MoE). Otherwise it is serving: id, model, chip,
    /// chips, precision, batch, cache_length, throughput_tokens_per_s (output tokens),
    /// and optionally tp, dp, mean_prompt_tokens, mean_output_tokens, and kv_cache
    /// ("dense", the default: attention reads all cache_length tokens of every slot;
    /// "paged": each request's own, its prompt and half its output, as vLLM's paged
    /// attention reads them). A row's `split` names its group in the summary (default
    /// `user`).
    #[arg(long, value_name = "FILE")]
    pub data: Vec<PathBuf>,
    /// One JSON document: a list of {case, quantity, measured, predicted, error, split}.
    #[arg(long)]
    pub json: bool,
}

/// Run `tpusim llm validate`.
pub fn run(a: ValidateArgs) -> Result<()> {
    let eff = a.mode.efficiency()?;
    let cases = if a.data.is_empty() {
        validate(&eff)?
    } else {
        let mut cases = Vec::new();
        for path in &a.data {
            let text = read_input(path, InputKind::Measurements)?;
            let beside = path.parent().unwrap_or(Path::new("."));
            let models = |name: &str| model_beside(beside, name);
            let origin = path.display().to_string();
            cases.extend(validate_rows_with(&text, &origin, &eff, &models)?);
        }
        cases
    };
    if a.json {
        return print_json(&cases);
    }
    print_cases(&cases);
    print_summaries(&cases);
    println!(
        "serving assumes ShareGPT requests of {SHAREGPT_MEAN_PROMPT} prompt and {SHAREGPT_MEAN_OUTPUT} output tokens on average unless a row gives its own, attention over the whole cache unless a row's kv_cache is paged"
    );
    Ok(())
}

/// A row's model by name: a `….json` config file, relative to the measurements
/// file's folder, or a built-in name.
fn model_beside(folder: &Path, name: &str) -> tpusim_llm::Result<Model> {
    if !name.ends_with(".json") {
        return zoo::lookup(name);
    }
    let path = folder.join(name);
    let body = read_input(&path, InputKind::ModelJson).map_err(|e| LlmError::BadValue {
        what: "model".into(),
        given: name.into(),
        problem: format!("{e:#}"),
    })?;
    hf::from_json(&body, &path.display().to_string())
}

fn print_cases(cases: &[Case]) {
    let width = cases
        .iter()
        .map(|c| c.case.len())
        .max()
        .unwrap_or(0)
        .max(62);
    println!(
        "{:<width$} {:>12} {:>12} {:>8}  split",
        "case", "measured", "predicted", "error"
    );
    for c in cases {
        println!(
            "{:<width$} {:>12.4} {:>12.4} {:>7.1}%  {}",
            c.case,
            c.measured,
            c.predicted,
            c.error * 100.0,
            c.split
        );
    }
}

/// One line per split (in order of first appearance) and quantity.
fn print_summaries(cases: &[Case]) {
    let mut splits: Vec<&str> = Vec::new();
    for c in cases {
        if !splits.contains(&c.split.as_str()) {
            splits.push(&c.split);
        }
    }
    for split in splits {
        let label = match split {
            "held_out" => "held out",
            other => other.strip_prefix("held_out_").unwrap_or(other),
        };
        for q in ["train_step_s", "serve_tokens_per_s"] {
            let s = summary(cases.iter().filter(|c| c.split == split && c.quantity == q));
            if s.cases == 0 {
                continue;
            }
            println!(
                "{label:>8} {q:<20} {:>2} cases: median |error| {:.1}%, worst {:.1}%",
                s.cases,
                s.median_abs_error * 100.0,
                s.max_abs_error * 100.0
            );
        }
    }
}

//! `tpusim llm validate`: every shipped measurement (`data/llm/*.jsonl`, embedded)
//! beside the model's prediction. MaxText training rows compare step times;
//! JetStream serving rows compare output tokens per second under a stated
//! request mix. Rows of the held-out models are never used to fit `calib`.

use crate::axes::Degrees;
use crate::calib::Efficiency;
use crate::error::{bad, LlmError, Result};
use crate::hf;
use crate::precision::Precision;
use crate::remat::Remat;
use crate::serve::{serve, ServeInput};
use crate::slices;
use crate::train::{evaluate, TrainInput};
use serde::Serialize;
use serde_json::{Map, Value};

/// MaxText's v5e training table.
pub const MAXTEXT_V5E: &str = include_str!("../../../data/llm/llm-validation-v5e.jsonl");
/// JetStream (PyTorch) serving on v5e-8.
pub const JETSTREAM_V5E: &str =
    include_str!("../../../data/llm/llm-validation-jetstream-v5e.jsonl");
/// MaxText's v5p table: another chip, never used in a fit (split `held_out_v5p`).
pub const MAXTEXT_V5P_HELD_OUT: &str = include_str!("../../../data/llm/heldout-maxtext-v5p.jsonl");

/// Mean prompt tokens of a ShareGPT request (the vLLM paper, SOSP 2023, fig. 11:
/// 161 in, 338 out); JetStream's filter (prompt ≤ 1024, total ≤ 2048) trims little.
pub const SHAREGPT_MEAN_PROMPT: u64 = 161;
/// Mean output tokens of a ShareGPT request.
pub const SHAREGPT_MEAN_OUTPUT: f64 = 338.0;

/// Models whose rows are held out of every fit.
pub const HELD_OUT: &[&str] = &["32B", "Llama 2 13B"];

/// One measurement beside its prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Case {
    /// The row's id.
    pub case: String,
    /// `train_step_s` or `serve_tokens_per_s`.
    pub quantity: &'static str,
    /// As measured.
    pub measured: f64,
    /// As predicted.
    pub predicted: f64,
    /// `(predicted − measured) / measured`.
    pub error: f64,
    /// `fit`, `held_out` (models kept out of the fit) or `held_out_v5p` (another chip).
    pub split: &'static str,
}

/// Error summary of a set of cases.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Cases.
    pub cases: usize,
    /// Median |error|.
    pub median_abs_error: f64,
    /// Largest |error|.
    pub max_abs_error: f64,
}

/// Summarise |error| over `cases`.
pub fn summary<'a>(cases: impl Iterator<Item = &'a Case>) -> Summary {
    let mut e: Vec<f64> = cases.map(|c| c.error.abs()).collect();
    e.sort_by(|a, b| a.total_cmp(b));
    let median = match e.len() {
        0 => 0.0,
        n if n % 2 == 1 => e[n / 2],
        n => (e[n / 2 - 1] + e[n / 2]) / 2.0,
    };
    Summary {
        cases: e.len(),
        median_abs_error: median,
        max_abs_error: e.last().copied().unwrap_or(0.0),
    }
}

/// Every shipped row, predicted with `eff`.
pub fn validate(eff: &Efficiency) -> Result<Vec<Case>> {
    let mut out = Vec::new();
    let sets = [
        (MAXTEXT_V5E, "maxtext"),
        (JETSTREAM_V5E, "jetstream"),
        (MAXTEXT_V5P_HELD_OUT, "maxtext-v5p"),
    ];
    for (text, origin) in sets {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let row: Map<String, Value> =
                serde_json::from_str(line).map_err(|e| LlmError::NotJson {
                    origin: origin.into(),
                    message: e.to_string(),
                })?;
            let mut case = predict(&row, eff)?;
            if origin == "maxtext-v5p" {
                case.split = "held_out_v5p";
            }
            out.push(case);
        }
    }
    Ok(out)
}

fn field<'a>(row: &'a Map<String, Value>, name: &str) -> Result<&'a Value> {
    row.get(name)
        .ok_or_else(|| bad("validation row", name, "is missing"))
}

fn num(row: &Map<String, Value>, name: &str) -> Result<f64> {
    field(row, name)?
        .as_f64()
        .ok_or_else(|| bad("validation row", name, "is not a number"))
}

fn text<'a>(row: &'a Map<String, Value>, name: &str) -> Result<&'a str> {
    field(row, name)?
        .as_str()
        .ok_or_else(|| bad("validation row", name, "is not a string"))
}

/// Predict one row.
pub fn predict(row: &Map<String, Value>, eff: &Efficiency) -> Result<Case> {
    let id = text(row, "id")?.to_string();
    let Value::Object(model) = field(row, "model")? else {
        return Err(bad("validation row", "model", "is not an object"));
    };
    let model = hf::from_map(model, &id)?;
    let chip = tpusim_chip::lookup(text(row, "chip")?)?;
    let label = row
        .get("model_label")
        .or(row.get("model_name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let split = if HELD_OUT.contains(&label) {
        "held_out"
    } else {
        "fit"
    };
    let (quantity, measured, predicted) = if row.contains_key("step_s") {
        let slices = num(row, "slices")? as u64;
        let input = TrainInput {
            model,
            slice: slices::parse(&chip, text(row, "slice")?)?,
            slices,
            batch_tokens: num(row, "batch_tokens")? as u64,
            seq: num(row, "seq")? as u64,
            tokens: None,
            degrees: None,
            remat: Remat::parse(text(row, "remat")?)?,
            params: if text(row, "weights")?.starts_with("fp32") {
                Precision::F32
            } else {
                Precision::Bf16
            },
            optimizer_bytes_per_param: 8.0,
            mfu: None,
            eff: *eff,
            attention_flops: true,
            full_attention: text(row, "attention")?.contains("causal=False"),
            microbatches: None,
        };
        let deg = Degrees {
            fsdp: num(row, "ici_fsdp")? as u64,
            tp: num(row, "ici_tp")? as u64,
            dcn_dp: slices,
            ..Degrees::default()
        };
        let r = evaluate(&input, deg)?;
        ("train_step_s", num(row, "step_s")?, r.step_s)
    } else {
        let chips = num(row, "chips")? as u64;
        let precision = Precision::parse("precision", text(row, "precision")?)?;
        let batch = num(row, "batch")? as u64;
        let data_parallel = label.contains("Gemma 2B") && chips > 1;
        let input = ServeInput {
            model,
            slice: slices::parse(&chip, &chips.to_string())?,
            batch,
            context: num(row, "cache_length")? as u64,
            weights: precision,
            kv: precision,
            prefill_tokens: Some(SHAREGPT_MEAN_PROMPT),
            eff: *eff,
            mfu: None,
            attention_flops: true,
            tp: Some(if data_parallel { 1 } else { chips }),
            dp: Some(if data_parallel { chips } else { 1 }),
            tp_d: None,
            slices: 1,
        };
        let r = serve(&input)?;
        let dp = r.sharding.dp as f64;
        let prefill = r.prefill_s.unwrap_or(0.0) * batch as f64 / (dp * SHAREGPT_MEAN_OUTPUT);
        let tokens_per_s = batch as f64 / (r.decode_step_s + prefill);
        (
            "serve_tokens_per_s",
            num(row, "throughput_tokens_per_s")?,
            tokens_per_s,
        )
    };
    Ok(Case {
        case: id,
        quantity,
        measured,
        predicted,
        error: (predicted - measured) / measured,
        split,
    })
}

//! `tpusim llm validate`: every shipped measurement (`data/llm/*.jsonl`, embedded)
//! beside the model's prediction. MaxText training rows compare step times;
//! JetStream serving rows compare output tokens per second under a stated
//! request mix. Rows of the held-out models are never used to fit `calib`.

use crate::axes::Degrees;
use crate::calib::Efficiency;
use crate::error::{bad, LlmError, Result};
use crate::hf;
use crate::model::Model;
use crate::precision::Precision;
use crate::remat::{Remat, Saves, CUSTOM_NAMES};
use crate::serve::{serve, ServeInput};
use crate::slices;
use crate::train::{evaluate, TrainInput};
use crate::zoo;
use serde::Serialize;
use serde_json::{Map, Value};
use tpusim_chip::Chip;

/// MaxText's v5e training table.
pub const MAXTEXT_V5E: &str = include_str!("../../../data/llm/llm-validation-v5e.jsonl");
/// JetStream (PyTorch) serving on v5e-8.
pub const JETSTREAM_V5E: &str =
    include_str!("../../../data/llm/llm-validation-jetstream-v5e.jsonl");
/// MaxText's v5p table: another chip, never used in a fit (split `held_out_v5p`).
pub const MAXTEXT_V5P_HELD_OUT: &str = include_str!("../../../data/llm/heldout-maxtext-v5p.jsonl");
/// MaxText's tiering table (LLaMA-2 70B on v6e and v5p, LLaMA-3.1 8B and 70B on
/// v6e); each row names its split (`held_out_v6e`, `held_out_v5p`; the LLaMA-3.1 8B
/// row `fit_v6e`, as every LLaMA-3.1 8B v6e row is).
pub const MAXTEXT_TIERING_HELD_OUT: &str =
    include_str!("../../../data/llm/heldout-maxtext-tiering.jsonl");

/// MaxText's recipes in AI-Hypercomputer/tpu-recipes (the step-time log line each
/// shows, with the configuration it names): LLaMA-3.1 8B on 8–128 v6e chips (split
/// `fit_v6e`, the rows v6e's training fraction is fitted on); LLaMA-3.1 70B, Mistral 7B,
/// Gemma 3 12B (1, 2 and 4 slices), GPT-3 175B and Mixtral 8x7B (MaxText's dropping
/// MoE) on v6e (`held_out_v6e`); LLaMA-3.1 405B on 512 v5p chips and Mixtral 8x7B
/// (dropless) on 128, the latter from MaxText's tiering table (`held_out_v5p`).
pub const MAXTEXT_TPU_RECIPES: &str = include_str!("../../../data/llm/maxtext-tpu-recipes.jsonl");

/// vLLM serving on v6e (tpu-recipes' LLaMA-3.x recipe, `vllm/vllm-tpu:v0.12.0`):
/// another chip and another server, never used in a fit (split `held_out_v6e_vllm`).
pub const VLLM_V6E_HELD_OUT: &str = include_str!("../../../data/llm/heldout-vllm-v6e.jsonl");

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
    /// `fit`, `held_out` (models kept out of the fit), `held_out_v5p` or
    /// `held_out_v6e` (other chips), `fit_v6e` (the rows v6e's training fraction is
    /// fitted on); a user's rows their own `split`, else `user`.
    pub split: String,
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

/// Where a set's rows take their split from.
enum SplitFrom {
    /// The model: `held_out` for [`HELD_OUT`]'s, else `fit`.
    Model,
    /// One split for the whole set.
    Set(&'static str),
    /// Each row's own `split`.
    Row,
}

/// Every shipped row, predicted with `eff`.
pub fn validate(eff: &Efficiency) -> Result<Vec<Case>> {
    let sets = [
        (MAXTEXT_V5E, "maxtext", SplitFrom::Model),
        (JETSTREAM_V5E, "jetstream", SplitFrom::Model),
        (
            MAXTEXT_V5P_HELD_OUT,
            "maxtext-v5p",
            SplitFrom::Set("held_out_v5p"),
        ),
        (MAXTEXT_TIERING_HELD_OUT, "maxtext-tiering", SplitFrom::Row),
        (MAXTEXT_TPU_RECIPES, "maxtext-tpu-recipes", SplitFrom::Row),
        (VLLM_V6E_HELD_OUT, "vllm-v6e", SplitFrom::Row),
    ];
    let mut out = Vec::new();
    for (text, origin, split) in sets {
        out.extend(cases(text, origin, eff, split, &zoo::lookup)?);
    }
    Ok(out)
}

/// The rows of `text`, predicted, with their splits.
fn cases(
    text: &str,
    origin: &str,
    eff: &Efficiency,
    split: SplitFrom,
    models: Models,
) -> Result<Vec<Case>> {
    let mut out = Vec::new();
    for row in rows(text, origin) {
        let (line, row) = row?;
        let case = predict(&row, eff, models).and_then(|mut case| {
            match split {
                SplitFrom::Model => {}
                SplitFrom::Set(s) => case.split = s.to_string(),
                SplitFrom::Row => case.split = row_split(&row)?,
            }
            Ok(case)
        });
        out.push(case.map_err(|e| in_row(origin, line, e))?);
    }
    Ok(out)
}

/// A user's measurements: JSON lines in the shipped rows' schema (see
/// [`predict`]), each predicted with `eff`. A row's `split` names its group in the
/// summaries (`user` when it has none). `origin` (the file) names every error with
/// the line at fault.
pub fn validate_rows(text: &str, origin: &str, eff: &Efficiency) -> Result<Vec<Case>> {
    validate_rows_with(text, origin, eff, &zoo::lookup)
}

/// Finds the model a row names by a string: [`zoo::lookup`] for built-in names; the
/// CLI's also reads `….json` files beside the measurements.
pub type Models<'a> = &'a dyn Fn(&str) -> Result<Model>;

/// [`validate_rows`] with the rows' model names found by `models`.
pub fn validate_rows_with(
    text: &str,
    origin: &str,
    eff: &Efficiency,
    models: Models,
) -> Result<Vec<Case>> {
    let out = cases(text, origin, eff, SplitFrom::Row, models)?;
    if out.is_empty() {
        return Err(bad(
            "measurements",
            origin,
            "holds no rows (one JSON object a line, in the shipped rows' schema)",
        ));
    }
    Ok(out)
}

/// The split of a user's row that names none.
pub const USER_SPLIT: &str = "user";

/// A row's `split`, [`USER_SPLIT`] when it has none.
fn row_split(row: &Map<String, Value>) -> Result<String> {
    match row.get("split") {
        None | Some(Value::Null) => Ok(USER_SPLIT.to_string()),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(v) => Err(row_err(
            "split",
            format!("is {v}; expected a non-empty string"),
        )),
    }
}

/// The non-blank lines of a JSON-lines text as objects, with their 1-based line numbers.
fn rows<'a>(
    text: &'a str,
    origin: &'a str,
) -> impl Iterator<Item = Result<(usize, Map<String, Value>)>> + 'a {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(move |(i, l)| {
            let start: String = l.chars().take(40).collect();
            match serde_json::from_str::<Value>(l) {
                Ok(Value::Object(row)) => Ok((i + 1, row)),
                Ok(_) => Err(in_row(
                    origin,
                    i + 1,
                    bad("row", start, "is not a JSON object"),
                )),
                Err(e) => Err(in_row(
                    origin,
                    i + 1,
                    bad("row", start, format!("not JSON: {e}")),
                )),
            }
        })
}

fn in_row(origin: &str, line: usize, source: LlmError) -> LlmError {
    LlmError::InMeasurement {
        origin: format!("{origin} line {line}"),
        problem: Box::new(source),
    }
}

fn row_err(field: &str, problem: impl ToString) -> LlmError {
    LlmError::BadRowField {
        field: field.to_string(),
        problem: problem.to_string(),
    }
}

fn field<'a>(row: &'a Map<String, Value>, name: &str) -> Result<&'a Value> {
    row.get(name)
        .filter(|v| !v.is_null())
        .ok_or_else(|| row_err(name, "is missing"))
}

/// A positive finite number.
fn num(row: &Map<String, Value>, name: &str) -> Result<f64> {
    let v = field(row, name)?;
    v.as_f64()
        .filter(|x| x.is_finite() && *x > 0.0)
        .ok_or_else(|| row_err(name, format!("is {v}; expected a positive number")))
}

/// A positive whole number below 2⁴⁰.
fn count(row: &Map<String, Value>, name: &str) -> Result<u64> {
    let v = field(row, name)?;
    v.as_u64()
        .filter(|&x| x > 0 && x < 1 << 40)
        .ok_or_else(|| row_err(name, format!("is {v}; expected a positive whole number")))
}

/// [`count`] when the field is there, else `default`.
fn count_or(row: &Map<String, Value>, name: &str, default: u64) -> Result<u64> {
    match row.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(_) => count(row, name),
    }
}

fn text<'a>(row: &'a Map<String, Value>, name: &str) -> Result<&'a str> {
    let v = field(row, name)?;
    v.as_str()
        .ok_or_else(|| row_err(name, format!("is {v}; expected a string")))
}

/// The row's remat policy; `custom` takes MaxText's tensor names from the row's own
/// keys (`"query_proj": "offload"`, as MaxText's tuning parameters give them).
fn row_remat(row: &Map<String, Value>) -> Result<Remat> {
    let policy = text(row, "remat")?;
    if !policy.trim().eq_ignore_ascii_case("custom") {
        return Remat::parse(policy);
    }
    let mut names = Vec::new();
    for name in CUSTOM_NAMES {
        if row.contains_key(name) {
            names.push((name, text(row, name)?));
        }
    }
    Ok(Remat::Saves(Saves::custom(names)?))
}

/// How a serving row's server holds its KV cache, which sets the keys a decode step
/// reads (`kv_cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvCache {
    /// `"dense"` (the default): every slot keeps `cache_length` tokens and attention
    /// reads them all, as JetStream-PyTorch's dense cache does.
    Dense,
    /// `"paged"`: each sequence's own tokens only, as vLLM's paged attention reads
    /// them; the context is [`live_context`].
    Paged,
}

impl KvCache {
    fn of(row: &Map<String, Value>) -> Result<KvCache> {
        match row.get("kv_cache") {
            None | Some(Value::Null) => Ok(KvCache::Dense),
            Some(Value::String(s)) if s == "dense" => Ok(KvCache::Dense),
            Some(Value::String(s)) if s == "paged" => Ok(KvCache::Paged),
            Some(v) => Err(row_err(
                "kv_cache",
                format!("is {v}; expected \"dense\" or \"paged\""),
            )),
        }
    }
}

/// The keys a decode step reads on average when every request brings `prompt` tokens
/// and generates `output`: its prompt and half its output, rounded up. Exact for
/// requests of one length (a benchmark's `--ignore-eos` random prompts); with lengths
/// that vary, the steps of long requests weigh more than this mean gives.
pub fn live_context(prompt: u64, output: f64) -> u64 {
    prompt.saturating_add((output / 2.0).ceil() as u64).max(1)
}

/// MaxText's dropping MoE: `capacity_factor` > 0 with `"sparse_matmul": false`;
/// `None` otherwise (MaxText's default, dropless grouped matmuls).
fn row_capacity_factor(row: &Map<String, Value>) -> Result<Option<f64>> {
    let sparse = match row.get("sparse_matmul") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(row_err(
                "sparse_matmul",
                format!("is {v}; expected true or false"),
            ))
        }
    };
    match row.get("capacity_factor") {
        None | Some(Value::Null) => Ok(None),
        Some(_) => {
            let cf = num(row, "capacity_factor")?;
            Ok((!sparse && cf > 0.0).then_some(cf))
        }
    }
}

/// The row's model: a config object, or a name `models` finds.
fn row_model(row: &Map<String, Value>, id: &str, models: Models) -> Result<Model> {
    match field(row, "model")? {
        Value::Object(model) => hf::from_map(model, id),
        Value::String(name) => models(name),
        v => Err(row_err(
            "model",
            format!("is {v}; expected a built-in model's name or a config.json object"),
        )),
    }
}

/// Predict one row. Training rows (those with `step_s`) read `chip`, `slice`,
/// `slices`, `batch_tokens`, `seq`, `remat`, `weights` (`fp32…` or bf16 parameters),
/// `attention` (`causal=False` in it: full attention), `ici_fsdp`, `ici_tp` and,
/// when given, `ici_dp`, `ici_pp`, `ici_ep`, `ici_sp`, `dcn_fsdp` (slices the model
/// state is sharded over; the rest data parallel), and `capacity_factor` with
/// `"sparse_matmul": false` (MaxText's dropping MoE). Serving rows read `chip`,
/// `chips`, `precision` (weights and KV cache), `batch`, `cache_length` and
/// `throughput_tokens_per_s` (output tokens), and when given `tp` and `dp` (else
/// data parallel when the row's `note` says `--shard_on_batch`, as JetStream's
/// Gemma 2B rows do, model parallel over every chip otherwise),
/// `mean_prompt_tokens` and `mean_output_tokens` (else ShareGPT's), and `kv_cache`
/// (see [`KvCache`]). Both read `id` and `model` (a config object, or a name
/// `models` finds).
pub fn predict(row: &Map<String, Value>, eff: &Efficiency, models: Models) -> Result<Case> {
    let id = text(row, "id")?.to_string();
    let model = row_model(row, &id, models)?;
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
    let Compared {
        quantity,
        measured,
        predicted,
    } = if row.contains_key("step_s") {
        predict_train(row, model, chip, eff)?
    } else {
        predict_serve(row, model, chip, eff)?
    };
    Ok(Case {
        case: id,
        quantity,
        measured,
        predicted,
        error: (predicted - measured) / measured,
        split: split.to_string(),
    })
}

/// One row's quantity, as measured and as predicted.
struct Compared {
    quantity: &'static str,
    measured: f64,
    predicted: f64,
}

/// A training row's measured and predicted step time.
fn predict_train(
    row: &Map<String, Value>,
    model: Model,
    chip: Chip,
    eff: &Efficiency,
) -> Result<Compared> {
    let slices = count(row, "slices")?;
    let dcn_fsdp = count_or(row, "dcn_fsdp", 1)?;
    let input = TrainInput {
        model,
        slice: slices::parse(&chip, text(row, "slice")?)?,
        slices,
        dcn_fsdp,
        batch_tokens: count(row, "batch_tokens")?,
        seq: count(row, "seq")?,
        tokens: None,
        degrees: None,
        remat: row_remat(row)?,
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
        capacity_factor: row_capacity_factor(row)?,
    };
    let deg = Degrees {
        fsdp: count(row, "ici_fsdp")?,
        tp: count(row, "ici_tp")?,
        dp: count_or(row, "ici_dp", 1)?,
        pp: count_or(row, "ici_pp", 1)?,
        ep: count_or(row, "ici_ep", 1)?,
        sp: count_or(row, "ici_sp", 1)?,
        dcn_dp: slices / dcn_fsdp.max(1),
        dcn_fsdp,
        ..Degrees::default()
    };
    let r = evaluate(&input, deg)?;
    Ok(Compared {
        quantity: "train_step_s",
        measured: num(row, "step_s")?,
        predicted: r.step_s,
    })
}

/// A serving row's measured and predicted output tokens per second.
fn predict_serve(
    row: &Map<String, Value>,
    model: Model,
    chip: Chip,
    eff: &Efficiency,
) -> Result<Compared> {
    let chips = count(row, "chips")?;
    let precision = Precision::parse("precision", text(row, "precision")?)?;
    let batch = count(row, "batch")?;
    let shard_on_batch = row
        .get("note")
        .and_then(Value::as_str)
        .is_some_and(|n| n.contains("shard_on_batch"));
    let (tp, dp) = if shard_on_batch && chips > 1 {
        (1, chips)
    } else {
        (chips, 1)
    };
    let prompt = count_or(row, "mean_prompt_tokens", SHAREGPT_MEAN_PROMPT)?;
    let output = match row.get("mean_output_tokens") {
        None | Some(Value::Null) => SHAREGPT_MEAN_OUTPUT,
        Some(_) => num(row, "mean_output_tokens")?,
    };
    let context = match KvCache::of(row)? {
        KvCache::Dense => count(row, "cache_length")?,
        KvCache::Paged => live_context(prompt, output),
    };
    let input = ServeInput {
        model,
        slice: slices::parse(&chip, &chips.to_string())?,
        batch,
        context,
        weights: precision,
        expert_weights: None,
        kv: precision,
        prefill_tokens: Some(prompt),
        eff: *eff,
        mfu: None,
        attention_flops: true,
        tp: Some(count_or(row, "tp", tp)?),
        dp: Some(count_or(row, "dp", dp)?),
        tp_d: None,
        slices: 1,
    };
    let r = serve(&input)?;
    let dp = r.sharding.dp as f64;
    let prefill = r.prefill_s.unwrap_or(0.0) * batch as f64 / (dp * output);
    let tokens_per_s = batch as f64 / (r.decode_step_s + prefill);
    Ok(Compared {
        quantity: "serve_tokens_per_s",
        measured: num(row, "throughput_tokens_per_s")?,
        predicted: tokens_per_s,
    })
}

//! `tpusim.llm`: transformers and LLMs on TPU slices. One entry point,
//! `llm_json(verb, ask)`, takes the verb's options as a JSON object (the CLI's flag
//! names with `_` for `-`) and returns what `tpusim llm VERB … --json` prints.

use crate::errors::detached;
use pyo3::prelude::*;
use serde::Deserialize;
use std::collections::BTreeMap;
use tpusim_llm::ops::{Phase, Workload};
use tpusim_llm::serve::{answer as serve_answer, ServeInput};
use tpusim_llm::train::{answer as train_answer, TrainInput};
use tpusim_llm::{hf, slices, validate, zoo, Degrees, Efficiency, Model, Precision, Remat};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(llm_json, m)?)?;
    Ok(())
}

/// A model: a built-in name, or the text of a config.json.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelAsk {
    model: Option<String>,
    model_json: Option<String>,
}

impl ModelAsk {
    fn resolve(&self) -> Result<Model, String> {
        match (&self.model_json, &self.model) {
            (Some(text), name) => hf::from_json(text, name.as_deref().unwrap_or("config.json"))
                .map_err(|e| e.to_string()),
            (None, Some(name)) => zoo::lookup(name).map_err(|e| e.to_string()),
            (None, None) => Err("give a model: a built-in name or a config.json".into()),
        }
    }
}

/// `ideal` and `calib` (figure name → value).
fn efficiency(ideal: bool, calib: &BTreeMap<String, f64>) -> Result<Efficiency, String> {
    let mut e = if ideal {
        Efficiency::ideal()
    } else {
        Efficiency::calibrated()
    };
    for (k, v) in calib {
        e.set(k, *v).map_err(|e| e.to_string())?;
    }
    Ok(e)
}

fn precision(what: &str, text: &str) -> Result<Precision, String> {
    Precision::parse(what, text).map_err(|e| e.to_string())
}

fn expert_precision(text: Option<&str>) -> Result<Option<Precision>, String> {
    text.map(|t| precision("expert_weights", t)).transpose()
}

fn slice(chip: &str, shape: &str) -> Result<tpusim_chip::Slice, String> {
    let c = tpusim_chip::lookup(chip).map_err(|e| e.to_string())?;
    slices::parse(&c, shape).map_err(|e| e.to_string())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServeAsk {
    #[serde(flatten)]
    model: ModelAsk,
    chip: String,
    slice: String,
    batch: u64,
    context: u64,
    weights: String,
    #[serde(default)]
    expert_weights: Option<String>,
    kv_dtype: String,
    prefill_tokens: Option<u64>,
    mfu: Option<f64>,
    tp: Option<u64>,
    dp: Option<u64>,
    #[serde(default)]
    tp_d: Option<u64>,
    slices: u64,
    ideal: bool,
    calib: BTreeMap<String, f64>,
    sweep_batch: bool,
}

fn serve(ask: ServeAsk) -> Result<String, String> {
    let mut i = ServeInput::new(
        ask.model.resolve()?,
        slice(&ask.chip, &ask.slice)?,
        ask.ideal,
    );
    i.batch = ask.batch;
    i.context = ask.context;
    i.weights = precision("weights", &ask.weights)?;
    i.expert_weights = expert_precision(ask.expert_weights.as_deref())?;
    i.kv = precision("kv_dtype", &ask.kv_dtype)?;
    i.prefill_tokens = ask.prefill_tokens;
    i.mfu = ask.mfu;
    i.tp = ask.tp;
    i.dp = ask.dp;
    i.tp_d = ask.tp_d;
    i.slices = ask.slices;
    i.eff = efficiency(ask.ideal, &ask.calib)?;
    to(&serve_answer(&i, ask.sweep_batch).map_err(|e| e.to_string())?)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrainAsk {
    #[serde(flatten)]
    model: ModelAsk,
    chip: String,
    slice: String,
    slices: u64,
    batch_tokens: u64,
    seq: u64,
    tokens: Option<f64>,
    degrees: Option<BTreeMap<String, u64>>,
    remat: String,
    checkpoints_per_layer: Option<f64>,
    param_dtype: String,
    optimizer_bytes: f64,
    microbatches: Option<u64>,
    full_attention: bool,
    capacity_factor: Option<f64>,
    dcn_fsdp: u64,
    mfu: Option<f64>,
    ideal: bool,
    calib: BTreeMap<String, f64>,
}

fn degrees(given: &BTreeMap<String, u64>) -> Result<Degrees, String> {
    let mut d = Degrees::default();
    for (k, &v) in given {
        if v == 0 {
            return Err(format!("degree {k}=0: degrees are at least 1"));
        }
        match k.as_str() {
            "dp" => d.dp = v,
            "fsdp" => d.fsdp = v,
            "tp" => d.tp = v,
            "tp_d" => d.tp_d = v,
            "pp" => d.pp = v,
            "ep" => d.ep = v,
            "sp" => d.sp = v,
            other => {
                return Err(format!(
                    "unknown degree '{other}' (dp, fsdp, tp, tp_d, pp, ep, sp)"
                ))
            }
        }
    }
    Ok(d)
}

fn train(ask: TrainAsk) -> Result<String, String> {
    let mut i = TrainInput::new(
        ask.model.resolve()?,
        slice(&ask.chip, &ask.slice)?,
        ask.ideal,
    );
    i.slices = ask.slices;
    i.batch_tokens = ask.batch_tokens;
    i.seq = ask.seq;
    i.tokens = ask.tokens;
    i.degrees = ask.degrees.as_ref().map(degrees).transpose()?;
    i.remat = match ask.checkpoints_per_layer {
        Some(c) => Remat::Checkpoints(c),
        None => Remat::parse(&ask.remat).map_err(|e| e.to_string())?,
    };
    i.params = precision("param_dtype", &ask.param_dtype)?;
    if !(ask.optimizer_bytes.is_finite() && ask.optimizer_bytes >= 0.0) {
        return Err(format!(
            "optimizer_bytes {}: a number of bytes >= 0",
            ask.optimizer_bytes
        ));
    }
    i.optimizer_bytes_per_param = ask.optimizer_bytes;
    i.microbatches = ask.microbatches;
    i.full_attention = ask.full_attention;
    i.capacity_factor = ask.capacity_factor;
    i.dcn_fsdp = ask.dcn_fsdp;
    i.mfu = ask.mfu;
    i.eff = efficiency(ask.ideal, &ask.calib)?;
    to(&train_answer(&i).map_err(|e| e.to_string())?)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShowAsk {
    #[serde(flatten)]
    model: ModelAsk,
    kv_dtype: String,
    #[serde(default = "bf16")]
    weights: String,
    #[serde(default)]
    expert_weights: Option<String>,
}

fn bf16() -> String {
    "bf16".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ValidateAsk {
    ideal: bool,
    calib: BTreeMap<String, f64>,
    /// A user's measurements as JSON lines, and the name errors give them.
    rows: Option<String>,
    origin: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThresholdAsk {
    chip: String,
    #[serde(flatten)]
    model: ModelAsk,
    batch_tokens: Option<u64>,
    chips: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportAsk {
    #[serde(flatten)]
    model: ModelAsk,
    chip: String,
    phase: String,
    batch: u64,
    seq: u64,
    context: u64,
    weights: String,
    kv_dtype: String,
    systolic_cycles: bool,
}

fn report(a: ReportAsk) -> Result<String, String> {
    let chip = tpusim_chip::lookup(&a.chip).map_err(|e| e.to_string())?;
    let w = Workload {
        phase: Phase::parse(&a.phase).map_err(|e| e.to_string())?,
        batch: a.batch,
        seq: a.seq,
        context: a.context,
        weights: precision("weights", &a.weights)?,
        kv: precision("kv_dtype", &a.kv_dtype)?,
    };
    let checked =
        tpusim_llm::systolic_map::report(&a.model.resolve()?, &chip, &w, a.systolic_cycles);
    to(&checked.map_err(|e| e.to_string())?)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OnnxAsk {
    path: String,
    chip: String,
    batch: u64,
    seq: u64,
    context: u64,
    weights: String,
}

fn onnx(a: OnnxAsk) -> Result<String, String> {
    let bytes = std::fs::read(&a.path).map_err(|e| format!("cannot read '{}': {e}", a.path))?;
    let chip = tpusim_chip::lookup(&a.chip).map_err(|e| e.to_string())?;
    let bind = tpusim_graph::nd::Bind {
        batch: a.batch,
        seq: a.seq,
        past: a.context,
    };
    let g =
        tpusim_graph::nd::import_onnx(&bytes, &bind).map_err(|e| format!("'{}': {e}", a.path))?;
    let weights = precision("weights", &a.weights)?;
    to(&tpusim_llm::tpu::graph_report(&g, &chip, weights).map_err(|e| e.to_string())?)
}

fn parse<T: for<'a> Deserialize<'a>>(verb: &str, ask: &str) -> Result<T, String> {
    serde_json::from_str(ask).map_err(|e| format!("llm {verb}: {e}"))
}

fn run(verb: &str, ask: &str) -> Result<String, String> {
    match verb {
        "models" => {
            let all: Vec<_> = zoo::builtin()
                .into_iter()
                .map(|m| m.summary(Precision::Bf16))
                .collect();
            to(&all)
        }
        "show" => {
            let a: ShowAsk = parse(verb, ask)?;
            let summary = a
                .model
                .resolve()?
                .summary_with(
                    precision("kv_dtype", &a.kv_dtype)?,
                    precision("weights", &a.weights)?,
                    expert_precision(a.expert_weights.as_deref())?,
                )
                .map_err(|e| e.to_string())?;
            to(&summary)
        }
        "serve" => serve(parse(verb, ask)?),
        "report" => report(parse(verb, ask)?),
        "onnx" => onnx(parse(verb, ask)?),
        "train" => train(parse(verb, ask)?),
        "validate" => {
            let a: ValidateAsk = parse(verb, ask)?;
            let eff = efficiency(a.ideal, &a.calib)?;
            let cases = match &a.rows {
                None => validate::validate(&eff),
                Some(rows) => {
                    validate::validate_rows(rows, a.origin.as_deref().unwrap_or("rows"), &eff)
                }
            };
            to(&cases.map_err(|e| e.to_string())?)
        }
        "thresholds" => {
            let a: ThresholdAsk = parse(verb, ask)?;
            let chip = tpusim_chip::lookup(&a.chip).map_err(|e| e.to_string())?;
            let model = match (&a.model.model, &a.model.model_json) {
                (None, None) => None,
                _ => Some(a.model.resolve()?),
            };
            let bc = a
                .batch_tokens
                .zip(a.chips)
                .map(|(b, n)| (b as f64, n.max(1)));
            to(&tpusim_llm::thresholds::thresholds(
                &chip,
                model.map(|m| m.d_ff),
                bc,
            ))
        }
        other => Err(format!(
            "unknown llm verb '{other}' (models, show, report, serve, train, validate, thresholds)"
        )),
    }
}

/// JSON text of a result.
fn to<T: serde::Serialize>(v: &T) -> Result<String, String> {
    serde_json::to_string(v).map_err(|e| e.to_string())
}

/// `tpusim llm VERB … --json` with the options in `ask` (a JSON object).
#[pyfunction]
fn llm_json(py: Python<'_>, verb: String, ask: String) -> PyResult<String> {
    detached(py, move || run(&verb, &ask))
}

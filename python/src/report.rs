//! `tpusim.report`, `tpusim.plan` and the report sweep: the same requests the CLI makes.

use crate::errors::{bad, detached, detached_judged, json, Failure};
use pyo3::prelude::*;
use serde::Deserialize;
use tpusim_planner::tpumlir::nd_cache;
use tpusim_report::sweep::{self, Figures};
use tpusim_report::{ChipFile, ModelArg, ModelSource, Report, Request};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(report_json, m)?)?;
    m.add_function(wrap_pyfunction!(plan_json, m)?)?;
    m.add_function(wrap_pyfunction!(transformer_plan_json, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_reports, m)?)?;
    Ok(())
}

/// A MODEL as the CLI takes it: a built-in name, or an `.onnx` / `.csv` file.
fn model_source(model: &str) -> Result<ModelSource, String> {
    let read =
        |what: &str, path: &str, e: std::io::Error| format!("cannot read {what} '{path}': {e}");
    Ok(match ModelArg::parse(model) {
        ModelArg::Builtin(n) => ModelSource::Builtin(n),
        ModelArg::Onnx { path, name } => ModelSource::Onnx {
            bytes: std::fs::read(&path).map_err(|e| read("ONNX file", &path, e))?,
            name,
        },
        ModelArg::Topology { path, name } => ModelSource::Topology {
            text: std::fs::read_to_string(&path).map_err(|e| read("topology", &path, e))?,
            name,
        },
    })
}

/// One report's inputs, as the Python call and a sweep row give them.
#[derive(Debug, Clone, Deserialize)]
pub struct Ask {
    model: String,
    chip: String,
    batch: u64,
    dtype: Option<String>,
    resolution: Option<(u64, u64)>,
    vmem_bytes: Option<u64>,
    input_dtype: Option<String>,
    fuse: bool,
    /// The text of a chip TOML, and its origin.
    chip_toml: Option<(String, String)>,
    /// Transformers in a sweep: prefill or decode, prompt and KV-cache lengths.
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default)]
    context: Option<u64>,
}

impl Ask {
    fn request(&self) -> Result<Request, String> {
        Ok(Request {
            model: model_source(&self.model)?,
            chip: self.chip.clone(),
            batch: self.batch,
            dtype: self.dtype.clone(),
            resolution: self.resolution,
            vmem_bytes: self.vmem_bytes,
            input_dtype: self.input_dtype.clone(),
            fuse: self.fuse,
            chip_file: self
                .chip_toml
                .clone()
                .map(|(text, origin)| ChipFile { text, origin }),
        })
    }

    fn report(&self) -> Result<Report, Failure> {
        tpusim_report::report(&self.request()?).map_err(|e| Failure::judged(&e, e.is_internal()))
    }

    /// The model as a sweep runs it: a transformer (built-in LLM or model config), or
    /// a network `tpusim report` plans.
    fn network(&self) -> Result<sweep::Network, String> {
        let m = &self.model;
        if m.to_ascii_lowercase().ends_with(".json") {
            let text = std::fs::read_to_string(m)
                .map_err(|e| format!("cannot read model config '{m}': {e}"))?;
            let model = tpusim_llm::hf::from_json(&text, m).map_err(|e| e.to_string())?;
            return Ok(sweep::Network::Transformer(Box::new(model)));
        }
        if let Ok(model) = tpusim_llm::zoo::lookup(m) {
            return Ok(sweep::Network::Transformer(Box::new(model)));
        }
        Ok(sweep::Network::Cnn(model_source(m)?))
    }

    /// One sweep row's figures, through the engine of `tpusim report --sweep`.
    fn figures(&self) -> Figures {
        let network = match self.network() {
            Ok(n) => n,
            Err(e) => return Figures::of(Err(e)),
        };
        let point = sweep::SweepPoint {
            model: self.model.clone(),
            chip: self.chip.clone(),
            batch: self.batch,
            dtype: self.dtype.clone(),
            phase: self.phase.clone(),
            seq: self.seq,
            context: self.context,
        };
        let shared = sweep::Shared {
            resolution: self.resolution,
            vmem_bytes: self.vmem_bytes,
            input_dtype: self.input_dtype.clone(),
            fuse: self.fuse,
        };
        let file = self
            .chip_toml
            .clone()
            .map(|(text, origin)| ChipFile { text, origin });
        sweep::run(&point, &network, &shared, file.as_ref())
    }
}

/// `tpusim report … --json` of the request given as JSON (an [`Ask`]).
#[pyfunction]
fn report_json(py: Python<'_>, ask: &str) -> PyResult<String> {
    let ask: Ask = serde_json::from_str(ask).map_err(bad)?;
    let r = detached_judged(py, || ask.report(), |f: &Failure| f.internal)?;
    json(&r)
}

/// `tpusim plan MODEL --json`.
#[pyfunction]
#[pyo3(signature = (model, chip, batch, dtype, input_dtype, resolution, fuse, tpu_mlir_cache=None))]
#[allow(clippy::too_many_arguments)]
fn plan_json(
    py: Python<'_>,
    model: &str,
    chip: &str,
    batch: u64,
    dtype: &str,
    input_dtype: &str,
    resolution: Option<(u64, u64)>,
    fuse: bool,
    tpu_mlir_cache: Option<&str>,
) -> PyResult<String> {
    let work = || -> Result<tpusim_planner::Plan, Failure> {
        let dtype: tpusim_layout::ElementType = dtype
            .parse()
            .map_err(|_| format!("unknown dtype '{dtype}' (try f16, bf16, f32, int8)"))?;
        let input_bits = match input_dtype {
            "same" => dtype.bits(),
            t => t
                .parse::<tpusim_layout::ElementType>()
                .map_err(|_| format!("unknown input_dtype '{t}' (try f32, or same)"))?
                .bits(),
        };
        let written = model_source(model)?
            .graph(batch, resolution)
            .map_err(|e| e.to_string())?;
        let chip = tpusim_planner::NpuChip::preset(chip).map_err(|e| e.to_string())?;
        let how = tpusim_planner::Preparation {
            fuse,
            input_bits: (input_bits != dtype.bits()).then_some(input_bits),
            f32_ops: chip.f32_ops_at(dtype),
        };
        let graph = tpusim_planner::prepare(&written, how).map_err(|e| e.to_string())?;
        let opts = tpusim_planner::PlanOptions {
            dtype,
            ..Default::default()
        };
        let judged = |e: tpusim_planner::PlanError| Failure::judged(&e, e.is_internal());
        match tpu_mlir_cache {
            Some(cache_path) => {
                let text = std::fs::read_to_string(cache_path)
                    .map_err(|e| format!("cannot read TPU-MLIR cache '{cache_path}': {e}"))?;
                let cache = tpusim_planner::tpumlir::parse(&text).map_err(judged)?;
                let imported = tpusim_planner::tpumlir::import(&graph, &cache).map_err(judged)?;
                tpusim_planner::plan_with_groups(&graph, &chip, &opts, &imported.requests)
                    .map_err(judged)
            }
            None => tpusim_planner::plan(&graph, &chip, &opts).map_err(judged),
        }
    };
    let plan = detached_judged(py, work, |f: &Failure| f.internal)?;
    json(&plan)
}

/// `tpusim plan MODEL.onnx --json` for a transformer graph: its TPU-MLIR form planned in
/// layer groups on an NPU and verified; `None` when the file is no transformer (a CNN
/// goes through [`plan_json`]). Its arguments are the Python call's keywords.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (path, chip, batch, seq, context, dtype, tpu_mlir_cache=None))]
fn transformer_plan_json(
    py: Python<'_>,
    path: &str,
    chip: &str,
    batch: u64,
    seq: u64,
    context: u64,
    dtype: &str,
    tpu_mlir_cache: Option<&str>,
) -> PyResult<Option<String>> {
    let work = || -> Result<Option<serde_json::Value>, Failure> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read ONNX file '{path}': {e}"))?;
        let Some(slim) = tpusim_graph::nd::slim_onnx(&bytes)
            .filter(|b| tpusim_graph::nd::is_transformer_onnx(b))
        else {
            return Ok(None);
        };
        let dtype: tpusim_layout::ElementType = dtype
            .parse()
            .map_err(|_| format!("unknown dtype '{dtype}' (try f16, bf16, f32, int8)"))?;
        let limit = 1 << 24;
        if batch == 0 || seq == 0 || batch > limit || seq > limit || context > limit {
            return Err("batch and seq are between 1 and 2^24, context at most 2^24"
                .to_string()
                .into());
        }
        let bind = tpusim_graph::nd::Bind {
            batch,
            seq,
            past: context,
        };
        let g =
            tpusim_graph::nd::import_onnx(&slim, &bind).map_err(|e| format!("'{path}': {e}"))?;
        let chip = tpusim_planner::NpuChip::preset(chip).map_err(|e| e.to_string())?;
        let judged = |e: tpusim_planner::PlanError| Failure::judged(&e, e.is_internal());
        if let Some(cache_path) = tpu_mlir_cache {
            let text = std::fs::read_to_string(cache_path)
                .map_err(|e| format!("cannot read TPU-MLIR cache '{cache_path}': {e}"))?;
            let cache = tpusim_planner::tpumlir::parse(&text).map_err(judged)?;
            let (plan, report) =
                nd_cache::plan_imported(&g, &chip, dtype, &cache).map_err(judged)?;
            return Ok(Some(nd_cache::imported_document(&g, &plan, &report)));
        }
        let plan = tpusim_planner::nd_plan::plan_verified(&g, &chip, dtype).map_err(judged)?;
        Ok(Some(tpusim_planner::nd_plan::plan_document(&g, &plan)))
    };
    match detached_judged(py, work, |f: &Failure| f.internal)? {
        Some(doc) => Ok(Some(json(&doc)?)),
        None => Ok(None),
    }
}

/// Reports of many requests (a JSON list of [`Ask`]) on every core, the GIL released,
/// through the engine of `tpusim report --sweep` ([`tpusim_report::sweep::run_each`]);
/// a JSON list of their figures in the same order (a failed run keeps its error).
#[pyfunction]
fn sweep_reports(py: Python<'_>, asks: &str) -> PyResult<String> {
    let asks: Vec<Ask> = serde_json::from_str(asks).map_err(bad)?;
    let rows = detached(py, || -> Result<Vec<Figures>, String> {
        Ok(sweep::run_each(&asks, Ask::figures, || ()))
    })?;
    json(&rows)
}

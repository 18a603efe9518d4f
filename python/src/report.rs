//! `tpusim.report`, `tpusim.plan` and the report sweep: the same requests the CLI makes.

use crate::errors::{bad, detached, json};
use pyo3::prelude::*;
use serde::{Deserialize, Serialize};
use tpusim_report::{ChipFile, ModelArg, ModelSource, Report, Request};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(report_json, m)?)?;
    m.add_function(wrap_pyfunction!(plan_json, m)?)?;
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
    resolution: (u64, u64),
    vmem_bytes: Option<u64>,
    input_dtype: Option<String>,
    fuse: bool,
    /// The text of a chip TOML, and its origin.
    chip_toml: Option<(String, String)>,
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

    fn report(&self) -> Result<Report, String> {
        tpusim_report::report(&self.request()?).map_err(|e| e.to_string())
    }
}

/// `tpusim report … --json` of the request given as JSON (an [`Ask`]).
#[pyfunction]
fn report_json(py: Python<'_>, ask: &str) -> PyResult<String> {
    let ask: Ask = serde_json::from_str(ask).map_err(bad)?;
    let r = detached(py, || ask.report())?;
    json(&r)
}

/// `tpusim plan MODEL --json`.
#[pyfunction]
#[pyo3(signature = (model, chip, batch, dtype, input_dtype, resolution, fuse))]
#[allow(clippy::too_many_arguments)]
fn plan_json(
    py: Python<'_>,
    model: &str,
    chip: &str,
    batch: u64,
    dtype: &str,
    input_dtype: &str,
    resolution: (u64, u64),
    fuse: bool,
) -> PyResult<String> {
    let plan = detached(py, || -> Result<tpusim_planner::Plan, String> {
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
        let how = tpusim_planner::Preparation {
            fuse,
            input_bits: (input_bits != dtype.bits()).then_some(input_bits),
        };
        let graph = tpusim_planner::prepare(&written, how).map_err(|e| e.to_string())?;
        let chip = tpusim_planner::Chip::preset(chip).map_err(|e| e.to_string())?;
        let opts = tpusim_planner::PlanOptions {
            dtype,
            ..Default::default()
        };
        tpusim_planner::plan(&graph, &chip, &opts).map_err(|e| e.to_string())
    })?;
    json(&plan)
}

/// One sweep row's figures (the CLI sweep's CSV columns), or its error.
#[derive(Debug, Serialize)]
struct SweepFigures {
    total_time_s: Option<f64>,
    roofline_lower_bound_s: Option<f64>,
    compute_s: Option<f64>,
    exposed_dma_s: Option<f64>,
    flops: Option<u64>,
    bytes_logical: Option<u64>,
    bytes_moved: Option<u64>,
    achieved_flops_per_s: Option<f64>,
    peak_flops_per_s: Option<f64>,
    fits_hbm: Option<bool>,
    hbm_bytes_needed: Option<u64>,
    layers: Option<u64>,
    groups: Option<u64>,
    chip_kind: Option<String>,
    error: Option<String>,
}

fn figures(r: Result<Report, String>) -> SweepFigures {
    match r {
        Ok(r) => SweepFigures {
            total_time_s: Some(r.total_time_s),
            roofline_lower_bound_s: Some(r.roofline_lower_bound_s),
            compute_s: Some(r.compute_s),
            exposed_dma_s: Some(r.exposed_dma_s),
            flops: Some(r.flops),
            bytes_logical: Some(r.bytes_logical),
            bytes_moved: Some(r.bytes_moved),
            achieved_flops_per_s: Some(r.achieved_flops_per_s),
            peak_flops_per_s: Some(r.peak_flops_per_s),
            fits_hbm: r.fits_hbm,
            hbm_bytes_needed: Some(r.hbm_bytes_needed),
            layers: Some(r.layers.len() as u64),
            groups: Some(r.groups.len() as u64),
            chip_kind: Some(r.chip_kind),
            error: None,
        },
        Err(e) => SweepFigures {
            total_time_s: None,
            roofline_lower_bound_s: None,
            compute_s: None,
            exposed_dma_s: None,
            flops: None,
            bytes_logical: None,
            bytes_moved: None,
            achieved_flops_per_s: None,
            peak_flops_per_s: None,
            fits_hbm: None,
            hbm_bytes_needed: None,
            layers: None,
            groups: None,
            chip_kind: None,
            error: Some(e),
        },
    }
}

/// Reports of many requests (a JSON list of [`Ask`]) on every core, the GIL released;
/// a JSON list of their figures in the same order (a failed run keeps its error).
#[pyfunction]
fn sweep_reports(py: Python<'_>, asks: &str) -> PyResult<String> {
    use rayon::prelude::*;
    let asks: Vec<Ask> = serde_json::from_str(asks).map_err(bad)?;
    let rows = detached(py, || -> Result<Vec<SweepFigures>, String> {
        Ok(asks.par_iter().map(|a| figures(a.report())).collect())
    })?;
    json(&rows)
}

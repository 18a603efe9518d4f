//! One sweep point run: a network through [`crate::report`], or a transformer's step
//! on a TPU through `tpusim_llm` (what `tpusim report MODEL --phase …` runs).

use super::{Figures, SweepPoint};
use crate::request::{ChipFile, ModelSource, Request};
use tpusim_llm::ops::{Phase, Workload};
use tpusim_llm::{Model, Precision};

/// What a point's model is.
#[derive(Debug, Clone)]
pub enum Network {
    /// A network `tpusim report` plans (built-in CNN, ONNX, topology).
    Cnn(ModelSource),
    /// A transformer (built-in LLM or model config).
    Transformer(Box<Model>),
}

/// What every point of a sweep shares: the CLI's flags (Python gives them per row).
#[derive(Debug, Clone)]
pub struct Shared {
    /// Input resolution of CNNs (H, W); `None`: each model's own.
    pub resolution: Option<(u64, u64)>,
    /// TPU VMEM override, bytes.
    pub vmem_bytes: Option<u64>,
    /// NPUs: the inputs' element type.
    pub input_dtype: Option<String>,
    /// Fuse batch-norm and activations (TPU-MLIR's inference form).
    pub fuse: bool,
}

/// Run point `p` on `network`, with the user's chip file when it names the point's
/// chip (`chip_file`); a failure is the figures' `error`.
pub fn run(
    p: &SweepPoint,
    network: &Network,
    shared: &Shared,
    chip_file: Option<&ChipFile>,
) -> Figures {
    let outcome = match network {
        Network::Cnn(model) => cnn(p, model, shared, chip_file),
        Network::Transformer(m) => {
            return transformer(p, m, chip_file).unwrap_or_else(|e| Figures::of(Err(e)));
        }
    };
    Figures::of(outcome)
}

fn cnn(
    p: &SweepPoint,
    model: &ModelSource,
    shared: &Shared,
    chip_file: Option<&ChipFile>,
) -> Result<crate::Report, String> {
    if p.phase.is_some() || p.seq.is_some() || p.context.is_some() {
        return Err(format!(
            "phase, seq and context apply to transformers; '{}' is a network `tpusim report` plans",
            p.model
        ));
    }
    crate::report(&Request {
        model: model.clone(),
        chip: p.chip.clone(),
        batch: p.batch,
        dtype: p.dtype.clone(),
        resolution: shared.resolution,
        vmem_bytes: shared.vmem_bytes,
        input_dtype: shared.input_dtype.clone(),
        fuse: shared.fuse,
        chip_file: chip_file.cloned(),
    })
    .map_err(|e| e.to_string())
}

fn transformer(p: &SweepPoint, m: &Model, chip_file: Option<&ChipFile>) -> Result<Figures, String> {
    let chip = match chip_file {
        Some(f) => tpusim_chip::Chip::from_toml_str(&f.text, &f.origin),
        None => tpusim_chip::lookup(&p.chip),
    }
    .map_err(|e| e.to_string())?;
    let dtype = p.dtype.as_deref().unwrap_or("bf16");
    let precision = Precision::parse("dtype", dtype).map_err(|e| e.to_string())?;
    let w = Workload {
        phase: Phase::parse(p.phase.as_deref().unwrap_or("prefill")).map_err(|e| e.to_string())?,
        batch: p.batch,
        seq: p.seq.unwrap_or(2048),
        context: p.context.unwrap_or(2048),
        weights: precision,
        kv: precision,
    };
    let r = tpusim_llm::tpu::report(m, &chip, &w).map_err(|e| e.to_string())?;
    Ok(Figures::of_transformer(&r, m.layers))
}

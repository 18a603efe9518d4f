//! Arguments shared by the `tpusim llm` verbs and their resolution into library
//! values: the model (built-in name or JSON file), the chip and slice, the
//! efficiency figures, precisions and counts written as users write them.

use crate::cmd::chip::args::ChipFile;
use crate::input::{read_input, InputKind};
use crate::util::parse_quantity;
use anyhow::{anyhow, bail, Result};
use clap::Args;
use std::path::Path;
use tpusim_chip::{Chip, Slice};
use tpusim_llm::{calib, hf, zoo, Efficiency, Model, Precision};

/// A model by built-in name, or a JSON file (a path, or anything ending `.json`).
pub fn model(text: &str) -> Result<Model> {
    let path = Path::new(text);
    if text.ends_with(".json") || path.is_file() {
        let body = read_input(path, InputKind::ModelJson)?;
        return Ok(hf::from_json(&body, text)?);
    }
    Ok(zoo::lookup(text)?)
}

/// A chip and a slice of it.
#[derive(Args, Debug, Clone)]
pub struct Where {
    /// Chip name or alias (`tpusim chip list`): v5e, v5p, v6e, v4p, …
    #[arg(long, default_value = "v5e")]
    pub chip: String,
    /// Slice shape (`4x2`, `16x16`, `4x4x8`; `4x4` on a 3-D pod is `4x4x1`), chip
    /// count (`8`: the canonical shape, e.g. 4x2 on v5e) or cloud name (`v5litepod-8`;
    /// `v5p-16` counts TensorCores: 8 chips).
    #[arg(long, default_value = "4x2")]
    pub slice: String,
    #[command(flatten)]
    pub file: ChipFile,
}

impl Where {
    /// The chip and slice.
    pub fn resolve(&self) -> Result<(Chip, Slice)> {
        let chip = self.file.resolve(&self.chip)?;
        let slice = tpusim_llm::slices::parse(&chip, &self.slice)?;
        Ok((chip, slice))
    }
}

/// The kind of answer and its figures.
#[derive(Args, Debug, Clone)]
pub struct Mode {
    /// The book's roofline: peak rates, every term overlapped, FLOPs by the `2·P`
    /// (`6·P` training) rule, nothing fitted. Default: the calibrated model.
    #[arg(long)]
    pub ideal: bool,
    /// Override one efficiency figure, `NAME=VALUE` (repeatable): mxu_train,
    /// chip_train (the share of it the chip sustains; default the chip's measured figure,
    /// v6e 0.695), attention_train, mxu_serve, hbm, ici, hop_latency, dcn, dcn_sync_s, overlap,
    /// decode_step_overhead_s, decode_token_overhead_s.
    #[arg(long, value_name = "NAME=VALUE")]
    pub calib: Vec<String>,
}

impl Mode {
    /// The figures to use.
    pub fn efficiency(&self) -> Result<Efficiency> {
        let mut e = if self.ideal {
            Efficiency::ideal()
        } else {
            Efficiency::calibrated()
        };
        for item in &self.calib {
            let (name, value) = item.split_once('=').ok_or_else(|| {
                anyhow!(
                    "--calib '{item}': write NAME=VALUE with NAME one of {}",
                    calib::NAMES.join(", ")
                )
            })?;
            let v: f64 = value
                .trim()
                .parse()
                .map_err(|_| anyhow!("--calib '{item}': '{value}' is not a number"))?;
            e.set(name.trim(), v)?;
        }
        Ok(e)
    }
}

/// A precision flag.
pub fn precision(flag: &str, text: &str) -> Result<Precision> {
    Ok(Precision::parse(flag, text)?)
}

/// A whole count written as users write it (`8192`, `4Mi`, `1e6`, `15e12`).
pub fn count(flag: &str, text: &str) -> Result<u64> {
    let v = parse_quantity(text).map_err(|e| anyhow!("{flag}: {e}"))?;
    if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 9.0e15) {
        bail!("{flag} '{text}': expected a whole number below 9e15");
    }
    Ok(v as u64)
}

/// A real amount (`15e12` tokens).
pub fn amount(flag: &str, text: &str) -> Result<f64> {
    let v = parse_quantity(text).map_err(|e| anyhow!("{flag}: {e}"))?;
    if !(v.is_finite() && v > 0.0) {
        bail!("{flag} '{text}': expected a positive number");
    }
    Ok(v)
}

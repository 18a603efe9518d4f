//! What a report is asked for: the network ([`ModelSource`], [`ModelArg`]), the chip
//! (a preset or a [`ChipFile`]) and the options ([`Request`]).

use crate::error::{ReportError, Result};
use tpusim_graph::Graph;

/// Default model of `tpusim report`.
pub const DEFAULT_MODEL: &str = "resnet50";
/// Input resolution (H, W), pixels, of a built-in CNN when none is given (an ONNX file
/// keeps its own).
pub use tpusim_graph::source::DEFAULT_RESOLUTION;

/// Where a network comes from. Files are read by the caller (libraries do no I/O).
#[derive(Debug, Clone)]
pub enum ModelSource {
    /// A built-in model name (`resnet50`, …).
    Builtin(String),
    /// The bytes of an ONNX file, with the name to show.
    Onnx {
        /// Name to show (the file's stem).
        name: String,
        /// File contents.
        bytes: Vec<u8>,
    },
    /// The text of a SCALE-Sim topology CSV, with the name to show.
    Topology {
        /// Name to show (the file's stem).
        name: String,
        /// File contents.
        text: String,
    },
}

impl ModelSource {
    /// The name shown in the report.
    pub fn name(&self) -> &str {
        match self {
            ModelSource::Builtin(n) => n,
            ModelSource::Onnx { name, .. } | ModelSource::Topology { name, .. } => name,
        }
    }

    /// Build the network for `batch` images of `resolution` (`None`: the model's own, a
    /// built-in's [`DEFAULT_RESOLUTION`]), as written (the report prepares it for
    /// planning with [`tpusim_planner::prepare`]). A topology fixes its own sizes, so
    /// `resolution` does not apply to it.
    pub fn graph(&self, batch: u64, resolution: Option<(u64, u64)>) -> Result<Graph> {
        if batch == 0 {
            return Err(ReportError::BadBatch {
                given: 0,
                why: "must be at least 1".into(),
            });
        }
        let resolution = resolution.filter(|_| !matches!(self, ModelSource::Topology { .. }));
        self.import(Some(batch), resolution)
    }

    /// Build the network, `batch` and `resolution` (H, W) overriding the model's own
    /// when given: the one import every verb uses ([`tpusim_graph::source::import`]:
    /// built-ins default to batch 1 at 224×224, an ONNX file to its own sizes, and a
    /// topology refuses a resolution).
    pub fn import(&self, batch: Option<u64>, resolution: Option<(u64, u64)>) -> Result<Graph> {
        use tpusim_graph::source::{import, ModelSource as Source};
        let builtin;
        let source = match self {
            ModelSource::Builtin(n) => {
                builtin = n.to_ascii_lowercase();
                Source::Builtin(&builtin)
            }
            ModelSource::Onnx { bytes, .. } => Source::Onnx(bytes),
            ModelSource::Topology { name, text } => Source::Topology { text, name },
        };
        import(source, batch, resolution).map_err(|e| self.lower(e))
    }

    /// A graph error about this model, as a report error.
    pub(crate) fn lower(&self, e: tpusim_graph::GraphError) -> ReportError {
        ReportError::Lower {
            context: format!("model '{}'", self.name()),
            message: e.to_string(),
        }
    }
}

/// What a MODEL argument names, as every front end reads it: a built-in model, or a
/// file by its extension (the caller reads it), with the name to show (its stem).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelArg {
    /// A built-in model name.
    Builtin(String),
    /// An `.onnx` file.
    Onnx {
        /// The path as given.
        path: String,
        /// The file's stem.
        name: String,
    },
    /// A SCALE-Sim topology `.csv`.
    Topology {
        /// The path as given.
        path: String,
        /// The file's stem.
        name: String,
    },
}

impl ModelArg {
    /// Classify `model` by its extension (case-insensitive).
    pub fn parse(model: &str) -> ModelArg {
        let lower = model.to_ascii_lowercase();
        let name = std::path::Path::new(model)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| model.to_string());
        let path = model.to_string();
        if lower.ends_with(".onnx") {
            ModelArg::Onnx { path, name }
        } else if lower.ends_with(".csv") {
            ModelArg::Topology { path, name }
        } else {
            ModelArg::Builtin(path)
        }
    }
}

/// One report to make.
#[derive(Debug, Clone)]
pub struct Request {
    /// The network.
    pub model: ModelSource,
    /// Chip name (TPU or NPU preset).
    pub chip: String,
    /// Batch size.
    pub batch: u64,
    /// Element type name, `None` = the chip's default (bf16 on TPUs, f16 on NPUs).
    pub dtype: Option<String>,
    /// Input resolution (H, W); `None`: the model's own (an ONNX file's, a built-in's
    /// [`DEFAULT_RESOLUTION`]).
    pub resolution: Option<(u64, u64)>,
    /// TPU VMEM override, bytes.
    pub vmem_bytes: Option<u64>,
    /// NPUs: element type the network's inputs arrive in. `None` = f32 (TPU-MLIR keeps an
    /// ONNX model's f32 inputs and casts them on the chip, a cast op `tpusim plan` plans
    /// too); `same` = already in the dtype. TPUs take inputs in the dtype (`None` or
    /// `same` only).
    pub input_dtype: Option<String>,
    /// Fold batch-norm and activations into their producers and merge linear 1×1 convs
    /// (TPU-MLIR's inference form); `false` reports the layers as written.
    pub fuse: bool,
    /// A chip described by the user: the text of a chip TOML (TPU schema or NPU preset
    /// schema) and where it came from. `chip` is then ignored.
    pub chip_file: Option<ChipFile>,
}

/// A user's chip description (see [`crate::Machine::from_toml`]).
#[derive(Debug, Clone)]
pub struct ChipFile {
    /// The TOML text.
    pub text: String,
    /// Its origin in errors (the file name).
    pub origin: String,
}

impl Request {
    /// The default run: ResNet-50, batch 1, 224×224, on the default chip.
    pub fn default_run() -> Request {
        Request {
            model: ModelSource::Builtin(DEFAULT_MODEL.into()),
            chip: crate::machine::DEFAULT_CHIP.into(),
            batch: 1,
            dtype: None,
            resolution: None,
            vmem_bytes: None,
            input_dtype: None,
            fuse: true,
            chip_file: None,
        }
    }
}

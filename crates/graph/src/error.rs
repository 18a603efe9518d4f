//! The crate's error type. Every message names the offending op, tensor, file position or
//! value, so the CLI can show it to a user as one line.

use thiserror::Error;

/// Everything that can go wrong building, importing or checking a [`crate::Graph`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GraphError {
    /// An op's inputs or parameters do not give a valid output shape (shape inference).
    #[error("op '{op}' ({kind}): {reason}")]
    Shape {
        /// Name of the op.
        op: String,
        /// Op type (`conv`, `add`, …).
        kind: &'static str,
        /// What is inconsistent, with the offending numbers.
        reason: String,
    },
    /// A size computation overflowed u64 (absurdly large model or input).
    #[error("size overflow computing {what}")]
    Overflow {
        /// What was being computed.
        what: String,
    },
    /// A graph that breaks an IR invariant (reported by the validator).
    #[error("invalid graph '{graph}': {reason}")]
    Invalid {
        /// Graph name.
        graph: String,
        /// The broken invariant, naming the op/tensor.
        reason: String,
    },
    /// An unknown built-in model name.
    #[error("unknown model '{name}' (built-in models: {known})")]
    UnknownModel {
        /// The name asked for.
        name: String,
        /// Comma-separated list of valid names.
        known: String,
    },
    /// A batch size or resolution that a model cannot take.
    #[error("bad model option: {0}")]
    BadOption(String),
    /// The ONNX bytes do not decode as an ONNX model.
    #[error("not a usable ONNX model: {0}")]
    OnnxDecode(String),
    /// The ONNX model uses an op type we do not import.
    #[error("unsupported ONNX op '{op_type}' (node '{node}')")]
    OnnxUnsupported {
        /// ONNX op type, e.g. `LSTM`.
        op_type: String,
        /// Node name (or its first output if unnamed).
        node: String,
    },
    /// A transformer graph uses an op the N-D importer does not read; `hint` names
    /// the exporter setting that avoids it.
    #[error("unsupported ONNX op '{op_type}' (node '{node}'); {hint}")]
    OnnxUnsupportedHint {
        /// ONNX op type (with its domain when not the default one).
        op_type: String,
        /// Node name (or its first output if unnamed).
        node: String,
        /// What to export instead.
        hint: String,
    },
    /// An ONNX node we know, used in a way we cannot represent (bad attribute, rank, …).
    #[error("ONNX node '{node}' ({op_type}): {reason}")]
    Onnx {
        /// Node name (or its first output if unnamed).
        node: String,
        /// ONNX op type.
        op_type: String,
        /// What is wrong.
        reason: String,
    },
    /// A SCALE-Sim topology CSV that does not parse.
    #[error("topology CSV line {line}: {reason}")]
    Topology {
        /// 1-based line number in the CSV text.
        line: usize,
        /// What is wrong, with the offending field.
        reason: String,
    },
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, GraphError>;

/// Checked u64 multiplication with a [`GraphError::Overflow`] naming `what`.
pub(crate) fn mul(a: u64, b: u64, what: &str) -> Result<u64> {
    a.checked_mul(b).ok_or_else(|| GraphError::Overflow {
        what: what.to_string(),
    })
}

/// Checked u64 addition with a [`GraphError::Overflow`] naming `what`.
pub(crate) fn add(a: u64, b: u64, what: &str) -> Result<u64> {
    a.checked_add(b).ok_or_else(|| GraphError::Overflow {
        what: what.to_string(),
    })
}

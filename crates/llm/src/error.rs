//! The one error type of this crate: every variant names the offending input and,
//! where there is one, what would be valid.

use thiserror::Error;

/// What went wrong in a model, serving, training or sharding computation.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LlmError {
    /// No built-in model has this name.
    #[error("unknown model '{given}' (built in: {known}; or give a config.json file)")]
    UnknownModel {
        /// The name asked for.
        given: String,
        /// Comma-separated built-in names.
        known: String,
    },
    /// A model file (Hugging Face `config.json` or our keys) is missing or contradicts a field.
    #[error("model file {origin}: field '{field}' {problem}")]
    BadModelField {
        /// Where the text came from.
        origin: String,
        /// The key at fault.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A model file is not JSON.
    #[error("model file {origin}: not JSON: {message}")]
    NotJson {
        /// Where the text came from.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// A value given by the user is out of range or unknown.
    #[error("{what} '{given}': {problem}")]
    BadValue {
        /// What the value is (e.g. `--batch`).
        what: String,
        /// The value given.
        given: String,
        /// What would be valid.
        problem: String,
    },
    /// Sharding degrees that do not fit the slice.
    #[error("sharding {given} on slice {slice}: {problem}")]
    BadSharding {
        /// The degrees as given.
        given: String,
        /// The slice shape.
        slice: String,
        /// What would be valid.
        problem: String,
    },
    /// The model does not fit any slice of this chip's pod.
    #[error("{model} does not fit any slice of {chip}: it needs {needed_bytes:.3e} B, at least {min_chips} chips of {hbm_bytes:.3e} B, and a {chip} pod has {pod_chips}")]
    FitsNowhere {
        /// Model name.
        model: String,
        /// Chip name.
        chip: String,
        /// Bytes needed in all.
        needed_bytes: f64,
        /// HBM bytes per chip.
        hbm_bytes: f64,
        /// The smallest chip count that would hold it.
        min_chips: u64,
        /// Chips in a pod.
        pod_chips: u64,
    },
    /// A field of a measurement row (`llm validate --data`) is missing or wrong.
    #[error("field '{field}' {problem}")]
    BadRowField {
        /// The key at fault.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A measurement row (`llm validate --data`) that cannot be predicted.
    #[error("{origin}: {problem}")]
    InMeasurement {
        /// The file and line.
        origin: String,
        /// What is wrong with the row.
        problem: Box<LlmError>,
    },
    /// An error of the chip model (slice, collective).
    #[error(transparent)]
    Chip(#[from] tpusim_chip::error::ChipError),
}

/// This crate's result type.
pub type Result<T> = std::result::Result<T, LlmError>;

/// A `BadValue` error.
pub(crate) fn bad(what: &str, given: impl ToString, problem: impl ToString) -> LlmError {
    LlmError::BadValue {
        what: what.to_string(),
        given: given.to_string(),
        problem: problem.to_string(),
    }
}

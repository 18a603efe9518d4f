//! The crate's error type: every variant names the offending input.

use thiserror::Error;

/// Everything that can go wrong in `tpusim-systolic`. All variants describe bad input
/// (the caller's fault); none is an internal failure.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SystolicError {
    /// A dimension that must be at least 1 was 0.
    #[error("{what} must be at least 1 (got 0)")]
    Zero {
        /// Which dimension, e.g. "array rows" or "GEMM K".
        what: String,
    },
    /// A product or sum of sizes does not fit in u64 (or in memory for the engine).
    #[error("{what} overflows: the sizes are too large")]
    Overflow {
        /// Which quantity overflowed.
        what: String,
    },
    /// A value is outside the range this operation accepts.
    #[error("{what} is {given}, but the limit is {limit}")]
    TooLarge {
        /// Which quantity.
        what: String,
        /// The value given.
        given: u64,
        /// The largest accepted value.
        limit: u64,
    },
    /// A cycle-accurate run would need more memory than its caller can give it.
    #[error("the cycle engine would need {needed} bytes ({:.2} GiB) for this run, more than the {budget} bytes ({:.2} GiB) available to it; use the analytic mode or a smaller shape", *needed as f64 / 1073741824.0, *budget as f64 / 1073741824.0)]
    OutOfMemory {
        /// Bytes the run needs.
        needed: u64,
        /// Bytes the caller can give it.
        budget: u64,
    },
    /// A convolution whose filter (after dilation) does not fit the padded input, or
    /// whose channels/filters do not divide by the group count.
    #[error("invalid convolution: {0}")]
    BadConv(String),
    /// Operand matrices whose shapes do not agree with the GEMM.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// A dataflow name other than ws, os, is.
    #[error("unknown dataflow '{0}' (use ws, os or is)")]
    Dataflow(String),
    /// A layer outside the regime where `--scalesim-compat` reproduces SCALE-Sim
    /// exactly (the message says which part and why).
    #[error("--scalesim-compat for layer '{layer}': {why}; SCALE-Sim's numbers are not reproduced here (run without --scalesim-compat for tpusim's model)")]
    NotReproduced {
        /// The layer name.
        layer: String,
        /// What falls outside the reproduced regime.
        why: String,
    },
    /// A malformed SCALE-Sim config file.
    #[error("config {file}: {msg}")]
    Config {
        /// File name (or `<text>`).
        file: String,
        /// What is wrong, with the offending line or key.
        msg: String,
    },
    /// A malformed SCALE-Sim layout file, or a layout SCALE-Sim cannot apply.
    #[error("layout {file} line {line}: {msg}")]
    Layout {
        /// File name (or `<text>`).
        file: String,
        /// 1-based line number of the row at fault.
        line: usize,
        /// What is wrong.
        msg: String,
    },
    /// A malformed SCALE-Sim topology CSV.
    #[error("topology {file} line {line}: {msg}")]
    Topology {
        /// File name (or `<text>`).
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        msg: String,
    },
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, SystolicError>;

pub(crate) fn zero(what: &str) -> SystolicError {
    SystolicError::Zero {
        what: what.to_string(),
    }
}

pub(crate) fn overflow(what: &str) -> SystolicError {
    SystolicError::Overflow {
        what: what.to_string(),
    }
}

/// Checked multiply with a named overflow error.
pub(crate) fn mul(a: u64, b: u64, what: &str) -> Result<u64> {
    a.checked_mul(b).ok_or_else(|| overflow(what))
}

/// Checked add with a named overflow error.
pub(crate) fn add(a: u64, b: u64, what: &str) -> Result<u64> {
    a.checked_add(b).ok_or_else(|| overflow(what))
}

//! The report crate's error type. Every variant carries the offending input; whose fault
//! it is follows from the variant (a bad name or file from the user, or an error passed
//! up from a lower crate).

use thiserror::Error;

/// Everything that can go wrong while building or rendering a report.
#[derive(Debug, Error)]
pub enum ReportError {
    /// The sweep file is not valid TOML or has unknown/missing keys.
    #[error("sweep file: {0}")]
    BadSweep(String),
    /// The sweep grid is empty or too large.
    #[error("sweep grid has {given} runs; it must have between 1 and {limit}")]
    SweepSize {
        /// Number of runs the grid would have (saturating).
        given: u64,
        /// Largest grid accepted.
        limit: u64,
    },
    /// A chip name is neither a TPU in the chip database nor an NPU preset.
    #[error("unknown chip '{given}' (TPUs: {tpus}; NPUs: {npus})")]
    UnknownChip {
        /// The name given.
        given: String,
        /// Known TPU names.
        tpus: String,
        /// Known NPU preset names.
        npus: String,
    },
    /// The element type is unknown or the chip has no rate for it.
    #[error("dtype '{given}': {why}")]
    BadDtype {
        /// The dtype given.
        given: String,
        /// Why it cannot be used.
        why: String,
    },
    /// The input element type is unknown or does not apply to the chip.
    #[error("input dtype '{given}': {why}")]
    BadInputDtype {
        /// The input dtype given.
        given: String,
        /// Why it cannot be used.
        why: String,
    },
    /// A batch size of 0 or beyond what the model builder accepts.
    #[error("batch {given}: {why}")]
    BadBatch {
        /// The batch given.
        given: u64,
        /// Why it cannot be used.
        why: String,
    },
    /// A size computation overflowed u64.
    #[error("size overflow while computing {0}")]
    Overflow(String),
    /// The chip lacks a figure the timing model needs.
    #[error("chip '{chip}' has no {field}: the timing model needs it")]
    MissingFigure {
        /// Chip name.
        chip: String,
        /// The missing field.
        field: String,
    },
    /// The Parquet writer failed (it writes to memory: an internal error).
    #[error("writing the sweep as Parquet: {0}")]
    Parquet(String),
    /// The planner's error, with what was being planned; it keeps its source, so a
    /// planner bug stays one ([`ReportError::is_internal`]).
    #[error("{context}: {source}")]
    Plan {
        /// What was being done.
        context: String,
        /// The planner's error.
        #[source]
        source: tpusim_planner::PlanError,
    },
    /// An error from another lower crate (graph import, chip, lmem, layout, systolic),
    /// with its message.
    #[error("{context}: {message}")]
    Lower {
        /// What was being done.
        context: String,
        /// The lower crate's message.
        message: String,
    },
}

impl ReportError {
    /// Whether this is tpusim's own failure rather than bad input: a plan the
    /// planner's verifier rejected, or the in-memory Parquet writer failing.
    pub fn is_internal(&self) -> bool {
        match self {
            ReportError::Plan { source, .. } => source.is_internal(),
            ReportError::Parquet(_) => true,
            _ => false,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, ReportError>;

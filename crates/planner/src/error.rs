//! The planner's error type. Every variant names the offending input and says whose
//! fault it is: the caller's (bad graph, bad plan file, bad option) or the planner's own
//! (a plan the verifier rejected: an internal bug).

use tpusim_lmem::LmemError;

/// Everything that can go wrong while planning, verifying or converting a plan.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// The graph refers to a tensor or op that does not exist, or is otherwise malformed.
    #[error("bad graph: {0}")]
    BadGraph(String),
    /// A local-memory size computation failed (from the lmem crate).
    #[error("local memory: {0}")]
    Lmem(#[from] LmemError),
    /// A u64 size or cycle count overflowed.
    #[error("{0} overflows 64 bits")]
    Overflow(&'static str),
    /// An option outside its valid range.
    #[error("bad option {name} = {value}: {why}")]
    BadOption {
        /// Option name.
        name: &'static str,
        /// The value given.
        value: String,
        /// What is required.
        why: &'static str,
    },
    /// A plan failed verification; `0` lists the violations found (first ones).
    #[error("invalid plan: {0}")]
    Invalid(String),
    /// A group requested by the caller (e.g. from a TPU-MLIR cache) cannot be placed.
    #[error("group {group} cannot be planned: {why}")]
    Infeasible {
        /// The group's op names, abbreviated.
        group: String,
        /// Why.
        why: String,
    },
    /// A TPU-MLIR cache file or plan file that does not parse or names unknown ops.
    #[error("bad {what}: {why}")]
    BadFile {
        /// Which file kind (`TPU-MLIR cache JSON`, `plan JSON`).
        what: &'static str,
        /// What is wrong.
        why: String,
    },
}

impl PlanError {
    /// Whether this is the planner's own failure (a plan it made that the verifier
    /// rejected) rather than bad input.
    pub fn is_internal(&self) -> bool {
        matches!(self, PlanError::Invalid(_))
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, PlanError>;

/// Checked addition naming the quantity on overflow.
pub(crate) fn add(a: u64, b: u64, what: &'static str) -> Result<u64> {
    a.checked_add(b).ok_or(PlanError::Overflow(what))
}

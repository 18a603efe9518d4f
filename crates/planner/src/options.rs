//! Planning options.

use crate::error::{PlanError, Result};
use tpusim_layout::ElementType;

/// How groups are searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// Dynamic programming over cuts of the op sequence into consecutive groups, each
    /// candidate taking the first slicing that fits (N first, then H), like TPU-MLIR's
    /// default. The baseline.
    Dp,
    /// The same dynamic program, then each chosen group also tries its first few
    /// fitting slicings and keeps the cheapest (more slices can pipeline better).
    /// Never worse than [`Search::Dp`]. The default.
    DpBestSlicing,
}

/// How a group's blocks get their local-memory addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocator {
    /// TPU-MLIR's (the default): a group of two or more ops is software-pipelined, its
    /// loads and stores moved by cycle slack, and its blocks placed by TPU-MLIR's
    /// greedy allocator ([`crate::tpumlir`]), so a group fits exactly when
    /// TPU-MLIR can allocate it, at the addresses TPU-MLIR gives it.
    TpuMlir,
    /// The spec's: resident weights first, then longest lifetime, then largest, with
    /// bank preferences and in-place adds (the crate's `alloc`); the transfers of a
    /// pipelined group held over every compute step.
    Spec,
}

/// Options of one planning run.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOptions {
    /// Element type of every activation and weight.
    pub dtype: ElementType,
    /// Apply the spec's h/2 rule: a candidate slicing fails when, after backward
    /// slicing, the rows repeated between a tensor's H slices exceed half its height.
    /// Off by default, as in TPU-MLIR today.
    pub h_half_rule: bool,
    /// Group search strategy.
    pub search: Search,
    /// Longest group considered, ops (bounds the search; at most [`MAX_GROUP_OPS`]).
    /// Default 72: TPU-MLIR's own ResNet-50 plan on bm1684x has a 67-op group, which our
    /// search now finds (at 64 it could not; planning ResNet-50 stays under a second).
    pub max_group_ops: usize,
    /// Local-memory allocator.
    pub allocator: Allocator,
}

/// The most ops one group may hold: a group's time steps (ops + 2) are tracked as bits
/// of a 128-bit mask.
pub const MAX_GROUP_OPS: usize = 120;

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            dtype: ElementType::F16,
            h_half_rule: false,
            search: Search::DpBestSlicing,
            max_group_ops: 72,
            allocator: Allocator::TpuMlir,
        }
    }
}

impl PlanOptions {
    /// Error unless the options are usable.
    pub fn validate(&self) -> Result<()> {
        if self.max_group_ops < 1 || self.max_group_ops > MAX_GROUP_OPS {
            return Err(PlanError::BadOption {
                name: "max_group_ops",
                value: self.max_group_ops.to_string(),
                why: "must be between 1 and 120",
            });
        }
        let bits = self.dtype.bits();
        if !matches!(bits, 8 | 16 | 32) {
            return Err(PlanError::BadOption {
                name: "dtype",
                value: self.dtype.name().to_string(),
                why: "the planner handles 8-, 16- and 32-bit element types",
            });
        }
        Ok(())
    }
}

//! The planner's NPU model against TPU-MLIR 1.30.2's own measurements: its transfer
//! cycles (`gdma`), op cycles (`compute`; single ops of a sweep, `op_sweeps`) and op
//! buffers (`buffers`). They test crate internals (the cost model and the time-step
//! buffers), so they live inside the crate.

mod buffers;
mod compute;
mod gdma;
mod op_sweeps;

/// Helpers the reproductions' own unit tests share (`steps`, `combine`, `nd_place`).
pub(super) mod fixtures {
    use crate::tpumlir::alloc::{Lane, StepOp};

    /// A small lane: 64 KiB in 16 banks, 64-byte alignment.
    pub(crate) const LANE: Lane = Lane {
        bytes: 1 << 16,
        align: 64,
        bank: 1 << 12,
    };

    /// An op reading `operands` and writing `result`.
    pub(crate) fn op(operands: Vec<usize>, result: usize) -> StepOp {
        StepOp {
            operands,
            results: vec![result],
            imm: None,
            inplace: false,
        }
    }
}

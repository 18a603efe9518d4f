//! The planner's NPU model against TPU-MLIR 1.30.2's own measurements: its transfer
//! cycles (`gdma`), op cycles (`compute`) and op buffers (`buffers`). They test crate
//! internals (the cost model and the time-step buffers), so they live inside the crate.

mod buffers;
mod compute;
mod gdma;

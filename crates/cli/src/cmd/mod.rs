//! One module per area; each owns its clap types and its `run` functions.

pub mod chip;
pub mod docs;
pub mod layout;
pub mod llm;
pub mod lmem;
pub mod plan;
pub mod report;
pub mod systolic;

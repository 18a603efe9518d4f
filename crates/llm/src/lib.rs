//! # tpusim-llm
//!
//! Transformers and LLMs on TPU slices, after the later chapters of "How to Scale
//! Your Model" (Austin et al.): the model family and its counts, serving (memory
//! fit, prefill, decode), training (memory by part, step time per sharding
//! strategy), a sharding search, the book's thresholds for any chip, and
//! validation against published TPU measurements. Contract:
//! `docs/spec/06-transformers-on-slices.md`. Collectives come from
//! `tpusim-chip`, with the wraparound of the axes each strategy holds. This crate
//! never prints, never exits and never reads files: the CLI does the I/O.
//!
//! ```
//! use tpusim_llm::{zoo, Precision};
//! let m = zoo::lookup("llama-3-8b").unwrap();
//! assert_eq!(m.params().params, 8_030_261_248);
//! assert_eq!(m.kv_bytes_per_token(Precision::Bf16), 131_072.0);
//! ```
//!
//! ## Module map
//!
//! - [`model`]: the dimensions (`L, D, F, N, K, H, V`, MLP and block kinds, MoE),
//!   parameters by part, FLOPs and KV bytes per token.
//! - [`zoo`]: built-in models (GPT-2, BERT, LLaMA-2/3/3.1, Mistral, Mixtral,
//!   Gemma); [`hf`]: Hugging Face `config.json` and our `mlp`/`block` keys.
//! - [`precision`]: storage precisions; [`remat`]: checkpoint policies.
//! - [`slices`]: `--slice` as a shape or a chip count, and the canonical slices.
//! - [`axes`]: sharding degrees and their place on the slice's axes;
//!   [`comm`]: collective times on a strategy's axes.
//! - [`calib`]: the efficiency figures: ideal (the book) and calibrated.
//! - [`serve`], [`train`] (with its [`train::search`]), [`thresholds`], [`validate`],
//!   [`svg`].
//!
//! ## Conventions
//!
//! Bytes are f64 (int4 is half a byte), times seconds. The ideal model follows
//! the book's arithmetic: FLOPs are `2·P` per token forward and `6·P` training,
//! attention not counted, every term overlapped (the step is the max of its
//! terms). The calibrated model adds attention FLOPs, recomputation and the
//! efficiency figures, and overlaps only a fraction of the shorter terms.
#![deny(missing_docs)]

pub mod axes;
pub mod calib;
pub mod comm;
pub mod error;
pub mod hf;
pub mod model;
pub mod ops;
pub mod precision;
pub mod remat;
pub mod serve;
pub mod slices;
pub mod svg;
pub mod systolic_map;
pub mod thresholds;
pub mod tpu;
pub mod train;
pub mod validate;
pub mod zoo;

pub use axes::Degrees;
pub use calib::Efficiency;
pub use error::{LlmError, Result};
pub use model::{Model, ParamCounts};
pub use precision::Precision;
pub use remat::Remat;

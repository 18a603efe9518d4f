//! The bodies of tpusim's fuzz targets, one module per parser or file-reading entry
//! point, each calling the library functions the CLI calls. `fuzz/` wraps each in a
//! cargo-fuzz binary; `tests/replay.rs` runs every kept corpus input and every
//! minimised finding (`fuzz/regressions/`) through them in `cargo test`.
//!
//! A target panics only on a broken promise: a crash, an assertion of a round trip.
#![allow(missing_docs)]

pub mod chip_toml;
pub mod hlo;
pub mod layout_tiles;
pub mod llm_measurements;
pub mod llm_model;
pub mod lmem_toml;
pub mod nd_onnx;
pub mod npy;
pub mod onnx;
pub mod onnx_graph;
pub mod plan_json;
pub mod scalesim_cfg_keys;
pub mod scalesim_config;
pub mod scalesim_layout;
pub mod shape;
pub mod sweep_toml;
pub mod topology;
pub mod tpumlir_cache;

/// Run target `name` on one input's bytes (structured targets build their input from
/// the bytes as libFuzzer's `arbitrary` glue does). `false` for an unknown name.
pub fn replay(name: &str, data: &[u8]) -> bool {
    use arbitrary::{Arbitrary, Unstructured};
    fn take<'a, T: Arbitrary<'a>>(data: &'a [u8]) -> Option<T> {
        T::arbitrary_take_rest(Unstructured::new(data)).ok()
    }
    match name {
        "shape" => shape::run(data),
        "hlo" => hlo::run(data),
        "npy" => npy::run(data),
        "onnx" => onnx::run(data),
        "onnx_graph" => {
            if let Some(i) = take::<onnx_graph::Model>(data) {
                onnx_graph::run(i);
            }
        }
        "scalesim_config" => scalesim_config::run(data),
        "scalesim_cfg_keys" => {
            if let Some(i) = take::<scalesim_cfg_keys::Cfg>(data) {
                scalesim_cfg_keys::run(i);
            }
        }
        "topology" => topology::run(data),
        "scalesim_layout" => scalesim_layout::run(data),
        "chip_toml" => chip_toml::run(data),
        "lmem_toml" => lmem_toml::run(data),
        "llm_model" => llm_model::run(data),
        "llm_measurements" => llm_measurements::run(data),
        "nd_onnx" => nd_onnx::run(data),
        "tpumlir_cache" => tpumlir_cache::run(data),
        "plan_json" => plan_json::run(data),
        "sweep_toml" => sweep_toml::run(data),
        "layout_tiles" => {
            if let Some(i) = take::<layout_tiles::Layout>(data) {
                layout_tiles::run(i);
            }
        }
        _ => return false,
    }
    true
}

/// Every target's name.
pub const TARGETS: [&str; 18] = [
    "shape",
    "hlo",
    "npy",
    "onnx",
    "onnx_graph",
    "scalesim_config",
    "scalesim_cfg_keys",
    "topology",
    "scalesim_layout",
    "chip_toml",
    "lmem_toml",
    "tpumlir_cache",
    "plan_json",
    "sweep_toml",
    "layout_tiles",
    "llm_model",
    "nd_onnx",
    "llm_measurements",
];

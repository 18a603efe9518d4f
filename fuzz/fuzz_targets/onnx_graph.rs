#![no_main]
use libfuzzer_sys::fuzz_target;
use tpusim_fuzz_targets::onnx_graph::{run, Model};

fuzz_target!(|input: Model| run(input));

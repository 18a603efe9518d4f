#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tpusim_fuzz_targets::llm_measurements::run(data));

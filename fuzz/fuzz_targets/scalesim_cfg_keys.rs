#![no_main]
use libfuzzer_sys::fuzz_target;
use tpusim_fuzz_targets::scalesim_cfg_keys::{run, Cfg};

fuzz_target!(|input: Cfg| run(input));

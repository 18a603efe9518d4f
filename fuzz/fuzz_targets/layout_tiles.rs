#![no_main]
use libfuzzer_sys::fuzz_target;
use tpusim_fuzz_targets::layout_tiles::{run, Layout};

fuzz_target!(|input: Layout| run(input));

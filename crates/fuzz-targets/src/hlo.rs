//! HLO text dumps (`tpusim layout hlo`): the padding scan.

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(p) = tpusim_layout::hlo::padding(text) {
        let _ = (p.total_logical_bytes(), p.total_array_size_bytes());
    }
}

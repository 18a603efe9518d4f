//! Sweep TOML (`report --sweep`): parse the grid.

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = tpusim_report::sweep::SweepSpec::parse(text);
}

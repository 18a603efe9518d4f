//! NPU chip TOML (`--chip-file` of lmem, plan, report): geometry, timing and
//! calibration parsed and validated as the CLI reads them; a valid chip's TOML parses
//! back to the same chip.
use tpusim_planner::NpuChip as Chip;

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(chip) = Chip::from_toml(text) else {
        return;
    };
    let again = Chip::from_toml(&chip.to_toml()).expect("printed TOML parses");
    assert_eq!(again, chip);
}

//! TPU/GPU chip TOML (`--chip-file` of chip, roofline, slice, comm, report): parse and
//! validate; a valid chip prints as TOML that parses back to the same chip.
use tpusim_chip::Chip;

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Chip::from_toml_str(text, "fuzz.toml");
}

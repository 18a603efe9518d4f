//! XLA shape text: parse and validate (`tpusim layout info`), size every valid array,
//! and check that the canonical text parses back to the same shape.
use tpusim_layout::{parse_valid, sizes, Shape};

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(shape) = parse_valid(text) else { return };
    let canonical = shape.to_string();
    // the canonical text (XLA's printer: default layouts spelled out) is a fixed point
    let again = parse_valid(&canonical).expect("canonical text parses");
    assert_eq!(again.to_string(), canonical, "{text:?}");
    assert_eq!(parse_valid(&again.to_string()).expect("reparses"), again);
    if let Shape::Array(a) = &shape {
        let _ = sizes(a);
    }
}

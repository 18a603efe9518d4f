//! `.npy` headers (`tpusim layout convert`): the first line is the array's shape text,
//! the rest the file's bytes, checked against it.
use tpusim_layout::{npy, parse_valid, Shape};

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Some(nl) = data.iter().position(|&b| b == b'\n') else {
        return;
    };
    let Ok(text) = std::str::from_utf8(&data[..nl]) else {
        return;
    };
    let Ok(Shape::Array(a)) = parse_valid(text) else {
        return;
    };
    let bytes = &data[nl + 1..];
    for reinterpret in [false, true] {
        if let Ok(off) = npy::data_offset(bytes, &a, reinterpret) {
            assert!(off >= 10, "a data offset inside the magic");
        }
    }
    if npy::is_npy(&a) {
        let dims: Vec<u64> = a.dims.iter().filter_map(|d| d.allocated()).collect();
        let h = npy::npy_header(a.element_type, &dims);
        assert_eq!(h.len() % 64, 0);
    }
}

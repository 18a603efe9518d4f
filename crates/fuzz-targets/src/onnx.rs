//! ONNX models as bytes (`tpusim plan/report MODEL.onnx`): decode and import.

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let _ = tpusim_graph::from_onnx_bytes(data, None, None);
    let _ = tpusim_graph::from_onnx_bytes(data, Some(2), Some((17, 9)));
}

//! An ONNX transformer through the N-D importer (and its weightless re-encoding) (`tpusim report MODEL.onnx` when
//! MODEL is a transformer): import with bound axes, then time on a v5e, and plan and
//! export on a bm1684x (`tpusim plan MODEL.onnx`); none may panic (errors are fine).
use tpusim_graph::nd::{import_onnx, is_transformer_onnx, slim_onnx, Bind};

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let _ = is_transformer_onnx(data);
    // The CLI imports the weightless re-encoding of the file.
    if let Some(slim) = slim_onnx(data) {
        let _ = import_onnx(
            &slim,
            &Bind {
                batch: 2,
                seq: 16,
                past: 4,
            },
        );
    }
    let Ok(g) = import_onnx(
        data,
        &Bind {
            batch: 2,
            seq: 16,
            past: 4,
        },
    ) else {
        return;
    };
    let chip = tpusim_chip::lookup("v5e").expect("built-in chip");
    let _ = tpusim_llm::tpu::graph_report(&g, &chip, tpusim_llm::Precision::Bf16);
    // and on an NPU: TPU-MLIR's form planned in layer groups, verified, exported
    // (`tpusim plan MODEL.onnx --export-tpu-mlir`)
    // what `tpusim plan` says of the attentions TPU-MLIR would fuse
    let _ = tpusim_planner::tpumlir::nd_fusion::fused_attentions(&g, "bm1684x");
    let npu = tpusim_planner::NpuChip::preset("bm1684x").expect("built-in preset");
    let dtype = tpusim_layout::ElementType::F16;
    if let Ok(plan) = tpusim_planner::nd_plan::plan_verified(&g, &npu, dtype) {
        let _ = tpusim_planner::tpumlir::nd_export::export_nd(&g, &npu, dtype, &plan);
    }
}

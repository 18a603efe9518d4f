//! TPU-MLIR layer-group caches (`plan --import-tpu-mlir`): parse, import against a
//! small built-in network and plan with the imported groups; and the same against a
//! small transformer (the zoo's llama_d128_s64, as `plan MODEL.onnx --import-tpu-mlir`
//! reads a transformer's cache).
use std::sync::OnceLock;
use tpusim_graph::nd::{import_onnx, Bind, NdGraph};
use tpusim_graph::Graph;
use tpusim_layout::ElementType;
use tpusim_planner::tpumlir::nd_cache;
use tpusim_planner::{tpumlir, NpuChip, PlanOptions};

fn transformer() -> &'static NdGraph {
    static G: OnceLock<NdGraph> = OnceLock::new();
    G.get_or_init(|| {
        let onnx = include_bytes!("../../planner/tests/data/tx_zoo/llama_d128_s64_static.onnx");
        let bind = Bind {
            batch: 1,
            seq: 64,
            past: 0,
        };
        import_onnx(onnx, &bind).expect("the zoo's graph imports")
    })
}

fn graph() -> &'static Graph {
    static G: OnceLock<Graph> = OnceLock::new();
    G.get_or_init(|| {
        let g = tpusim_graph::load("resnet18", 1, (32, 32)).expect("built-in model");
        tpusim_graph::fuse::fuse(&g).expect("fuses")
    })
}

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(cache) = tpumlir::parse(text) else {
        return;
    };
    let chip = NpuChip::preset("bm1684x").expect("preset");
    let _ = nd_cache::plan_imported(transformer(), &chip, ElementType::F16, &cache);
    let Ok(imported) = tpumlir::import(graph(), &cache) else {
        return;
    };
    let _ = tpusim_planner::plan_with_groups(
        graph(),
        &chip,
        &PlanOptions::default(),
        &imported.requests,
    );
}

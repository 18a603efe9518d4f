//! TPU-MLIR layer-group caches (`plan --import-tpu-mlir`): parse, import against a
//! small built-in network, and plan with the imported groups.
use std::sync::OnceLock;
use tpusim_graph::Graph;
use tpusim_planner::{tpumlir, NpuChip, PlanOptions};

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
    let Ok(imported) = tpumlir::import(graph(), &cache) else {
        return;
    };
    let chip = NpuChip::preset("bm1684x").expect("preset");
    let _ = tpusim_planner::plan_with_groups(
        graph(),
        &chip,
        &PlanOptions::default(),
        &imported.requests,
    );
}

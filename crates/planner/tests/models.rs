//! Every built-in model (fused, as TPU-MLIR plans it) on every lmem preset: the planner
//! returns a plan (verified inside `plan`), the verifier accepts it again after a JSON
//! round trip, no op is dropped, and grouping never costs more than all-global; also
//! with the f32 network input cast on the chip.
//! Small resolutions keep the test fast; the 224² runs are in the benchmark.

use tpusim_planner::NpuChip;
use tpusim_planner::{plan, verify::verify, PlanOptions};

#[test]
fn every_model_on_every_preset() {
    for (model, _) in tpusim_graph::models::list() {
        let res = if model == "vgg16" { (32, 32) } else { (64, 64) };
        let fused = tpusim_graph::fuse::fuse(&tpusim_graph::load(model, 1, res).unwrap()).unwrap();
        // as written, and with the f32 input cast on the chip (the CLI's default)
        let cast = tpusim_graph::cast::cast_inputs(&fused, 32);
        for (g, chip) in [fused, cast]
            .iter()
            .flat_map(|g| NpuChip::presets().into_iter().map(move |c| (g, c)))
        {
            let p = plan(g, &chip, &PlanOptions::default())
                .unwrap_or_else(|e| panic!("{model} on {}: {e}", chip.geometry.name));
            let text = serde_json::to_string(&p).unwrap();
            let back: tpusim_planner::Plan = serde_json::from_str(&text).unwrap();
            verify(&back).unwrap_or_else(|e| panic!("{model} on {}: {e}", chip.geometry.name));
            let planned: usize =
                p.groups.iter().map(|g| g.ops.len()).sum::<usize>() + p.global_ops.len();
            assert_eq!(planned, g.ops.len(), "{model} on {}", chip.geometry.name);
            assert!(
                p.cycles <= p.cycles_all_global,
                "{model} on {}: {} > {}",
                chip.geometry.name,
                p.cycles,
                p.cycles_all_global
            );
            assert!(
                p.gmem_bytes <= p.gmem_bytes_all_global,
                "{model} on {}",
                chip.geometry.name
            );
        }
    }
}

#[test]
fn resnet18_224_bm1684x_groups_and_beats_all_global() {
    let g =
        tpusim_graph::fuse::fuse(&tpusim_graph::load("resnet18", 1, (224, 224)).unwrap()).unwrap();
    let chip = NpuChip::preset("bm1684x").unwrap();
    let p = plan(&g, &chip, &PlanOptions::default()).unwrap();
    assert!(!p.groups.is_empty());
    assert!(p.cycles < p.cycles_all_global);
    assert!(p.gmem_bytes < p.gmem_bytes_all_global);
    // the fc stays global: gemm and flatten are never placed in local memory
    assert!(p.global_ops.iter().any(|o| o == "fc"), "{:?}", p.global_ops);
}

//! Time planning a built-in model: `cargo run --release -p tpusim-planner --example
//! plan_time -- resnet50 bm1684x 1 224 [dp|best] [reps]`. Prints the wall time per plan.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().collect();
    let model = a.get(1).map_or("resnet50", |s| s.as_str());
    let chip = tpusim_planner::NpuChip::preset(a.get(2).map_or("bm1684x", |s| s.as_str()))?;
    let batch: u64 = a.get(3).map_or(Ok(1), |s| s.parse())?;
    let res: u64 = a.get(4).map_or(Ok(224), |s| s.parse())?;
    let search = match a.get(5).map(|s| s.as_str()) {
        Some("dp") => tpusim_planner::Search::Dp,
        _ => tpusim_planner::Search::DpBestSlicing,
    };
    let reps: u32 = a.get(6).map_or(Ok(5), |s| s.parse())?;
    // as `tpusim plan` loads a model: fused, the f32 input cast on the chip, ordered
    let fused = tpusim_graph::fuse::fuse(&tpusim_graph::load(model, batch, (res, res))?)?;
    let g = tpusim_planner::tpu_mlir_order(&tpusim_graph::cast::cast_inputs(&fused, 32));
    let opts = tpusim_planner::PlanOptions {
        search,
        ..Default::default()
    };
    let mut best = f64::MAX;
    let mut p = None;
    for _ in 0..reps {
        let t = std::time::Instant::now();
        p = Some(tpusim_planner::plan(&g, &chip, &opts)?);
        best = best.min(t.elapsed().as_secs_f64());
    }
    let p = p.ok_or("no repetitions")?;
    println!(
        "{model} b{batch} {res}x{res} on {}: {} ops, {} groups, {} global; cycles {} (all-global {}); best of {reps}: {:.3} s",
        chip.geometry.name,
        g.ops.len(),
        p.groups.len(),
        p.global_ops.len(),
        p.cycles,
        p.cycles_all_global,
        best
    );
    Ok(())
}

//! An f32 network input cast on the chip (`tpusim_graph::cast`): the input is held and
//! moved as 4-byte elements, the cast's output as the plan's; the cast may run alone or
//! inside a group, and every such plan verifies.

use tpusim_graph::{cast::cast_inputs, fuse::fuse, load, Graph};
use tpusim_layout::ElementType;
use tpusim_lmem::{LocalLayout, TensorShape};
use tpusim_planner::verify::verify;
use tpusim_planner::NpuChip;
use tpusim_planner::{plan, plan_with_groups, tpu_mlir_order, GroupRequest, PlanOptions};

fn resnet18(batch: u64) -> Graph {
    tpu_mlir_order(&cast_inputs(
        &fuse(&load("resnet18", batch, (224, 224)).unwrap()).unwrap(),
        32,
    ))
}

#[test]
fn a_global_cast_moves_f32_in_and_f16_out() {
    let g = resnet18(1);
    let chip = NpuChip::preset("bm1684x").unwrap();
    let p = plan_with_groups(&g, &chip, &PlanOptions::default(), &[]).unwrap();
    let c = p
        .global_costs
        .iter()
        .find(|c| c.op == "input_cast")
        .expect("the cast runs global when nothing is grouped");
    assert_eq!(c.gmem_bytes, 3 * 224 * 224 * (4 + 2));
    // its output feeds conv1 as f16: conv1 alone loads 2-byte input elements
    let conv1 = p.global_costs.iter().find(|c| c.op == "conv1").unwrap();
    let w = 64 * 3 * 7 * 7 * 2;
    let y = 64 * 112 * 112 * 2;
    assert!(
        conv1.gmem_bytes >= 3 * 224 * 224 * 2 + w + y,
        "{}",
        conv1.gmem_bytes
    );
    assert!(
        conv1.gmem_bytes < 3 * 224 * 224 * 4 + w + y,
        "{}",
        conv1.gmem_bytes
    );
}

#[test]
fn a_grouped_cast_holds_its_input_as_f32() {
    let g = resnet18(4);
    let chip = NpuChip::preset("bm1684x").unwrap();
    // the cast, conv1 and the max pool as one group, sliced as TPU-MLIR does ([4,2])
    let p = plan_with_groups(
        &g,
        &chip,
        &PlanOptions::default(),
        &[GroupRequest {
            first: 0,
            last: 2,
            secs: Some((4, 2)),
        }],
    )
    .unwrap();
    verify(&p).unwrap();
    let grp = &p.groups[0];
    assert_eq!(grp.ops, ["input_cast", "conv1", "maxpool"]);
    let rows = |t: &str| {
        grp.slices
            .iter()
            .flat_map(|s| s.tensors.iter().filter(|r| r.tensor == t))
            .map(|r| (r.n[1] - r.n[0], r.h[1] - r.h[0]))
            .max()
            .unwrap()
    };
    let lane = |t: &str, ty: ElementType| {
        let (n, h) = rows(t);
        let s = TensorShape::nchw(n, 3, h, 224);
        tpusim_lmem::lane_bytes(&chip.geometry, &s, ty, LocalLayout::Aligned, 0).unwrap()
    };
    let block = |t: &str| grp.blocks.iter().find(|b| b.name == t).unwrap().size;
    assert_eq!(block("input"), lane("input", ElementType::F32));
    assert_eq!(block("input_cast"), lane("input_cast", ElementType::F16));
    assert!(block("input") > block("input_cast"));
    // GMEM: the f32 input is read once (the rows the two H slices share twice)
    let input_bytes: u64 = grp
        .slices
        .iter()
        .flat_map(|s| s.tensors.iter().filter(|r| r.tensor == "input"))
        .map(|r| (r.n[1] - r.n[0]) * 3 * (r.h[1] - r.h[0]) * 224 * 4)
        .sum();
    assert!(input_bytes >= 4 * 3 * 224 * 224 * 4);
    assert!(grp.gmem_bytes > input_bytes);
}

#[test]
fn plans_with_casts_verify_on_every_preset() {
    for preset in ["bm1684x", "bm1688"] {
        let chip = NpuChip::preset(preset).unwrap();
        for batch in [1, 4] {
            let g = resnet18(batch);
            let p = plan(&g, &chip, &PlanOptions::default()).unwrap();
            verify(&p).unwrap();
            let placed = p
                .groups
                .iter()
                .any(|g| g.ops.iter().any(|o| o == "input_cast"))
                || p.global_ops.iter().any(|o| o == "input_cast");
            assert!(placed, "{preset} b{batch}: the cast is planned");
        }
    }
}

#[test]
fn a_cast_from_f32_runs_at_the_f32_element_rate() {
    let chip = NpuChip::preset("bm1684x").unwrap();
    let t = chip.timing_at(ElementType::F16).unwrap();
    let g = resnet18(2);
    let cast = &g.ops[0];
    let wide = tpusim_planner::op_cycles(&g, cast, 2, 224, chip.geometry.npu_num, &t);
    // the same op with its input already 16-bit: one f16 element per EU per cycle
    let mut narrow = g.clone();
    narrow.tensors[cast.inputs[0]].bits = None;
    let same = tpusim_planner::op_cycles(&narrow, cast, 2, 224, chip.geometry.npu_num, &t);
    let eu_num_f16 = tpusim_lmem::eu_num(&chip.geometry, ElementType::F16).unwrap() as f64;
    assert_eq!(
        same,
        (2 * 224 * 224) as f64 / eu_num_f16,
        "3 channels = one lane row"
    );
    assert_eq!(wide, 2.0 * same);
}

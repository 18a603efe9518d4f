//! The zoo of `bench/tpumlir_zoo.py` (85 generated CNNs, every op kind the importer
//! takes) against TPU-MLIR 1.30.2's own layer-group caches of them, F16 on bm1684x and
//! bm1688 (`tests/data/zoo/`, see `tests/data/README.md`), without TPU-MLIR:
//! - our export names exactly the ops TPU-MLIR's cache names, its casts included
//!   (TPU-MLIR skips a name it does not know without a word);
//! - TPU-MLIR's own grouping imports onto our graph whole (every loc matched but the
//!   casts our graph leaves implicit, around a global average pool and after a 16-bit
//!   network output) and the imported plan verifies.

use std::collections::BTreeSet;
use tpusim_graph::{Graph, ModelSource};
use tpusim_layout::ElementType;
use tpusim_planner::tpumlir::lowering::lower;
use tpusim_planner::tpumlir::{export, import, parse, Cache};
use tpusim_planner::{plan, plan_with_groups, verify::verify, NpuChip, PlanOptions, Preparation};

const CHIPS: [&str; 2] = ["bm1684x", "bm1688"];

fn dir() -> String {
    format!("{}/tests/data/zoo", env!("CARGO_MANIFEST_DIR"))
}

/// The zoo's networks and their batch.
fn zoo() -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(format!("{}/zoo.json", dir())).unwrap();
    let index: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
    index
        .iter()
        .map(|(name, v)| (name.clone(), v["input_shape"][0].as_u64().unwrap()))
        .collect()
}

/// Network `name` as `tpusim plan NAME.onnx --batch B --chip CHIP --dtype f16` prepares it.
fn prepared(name: &str, batch: u64, chip: &NpuChip) -> Graph {
    let bytes = std::fs::read(format!("{}/{name}.onnx", dir())).unwrap();
    let written = tpusim_graph::import(ModelSource::Onnx(&bytes), Some(batch), None).unwrap();
    let how = Preparation {
        fuse: true,
        input_bits: Some(32),
        f32_ops: chip.f32_ops_at(ElementType::F16),
    };
    tpusim_planner::prepare(&written, how).unwrap()
}

fn theirs(name: &str, chip: &str) -> Cache {
    let path = format!("{}/{name}_{chip}.tpumlir_cache.json", dir());
    parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every op name a cache lists, in groups and as global layers.
fn names(cache: &Cache) -> BTreeSet<String> {
    let grouped = cache
        .group_layer
        .iter()
        .flat_map(|g| g.locs.iter().cloned());
    let global = cache.global_layer.iter().map(|g| g.loc.clone());
    grouped.chain(global).collect()
}

#[test]
fn the_zoo_is_all_there() {
    assert!(zoo().len() >= 15, "the issue asks for at least 15 networks");
}

#[test]
fn our_export_names_exactly_the_ops_tpu_mlir_names() {
    let opts = PlanOptions {
        dtype: ElementType::F16,
        ..Default::default()
    };
    for (name, batch) in zoo() {
        for chip_name in CHIPS {
            let chip = NpuChip::preset(chip_name).unwrap();
            let g = prepared(&name, batch, &chip);
            let p = plan(&g, &chip, &opts).unwrap();
            let ours = names(&export(&p));
            let theirs = names(&theirs(&name, chip_name));
            assert_eq!(
                ours.difference(&theirs).collect::<Vec<_>>(),
                Vec::<&String>::new(),
                "{name} on {chip_name}: names TPU-MLIR does not know"
            );
            assert_eq!(
                theirs.difference(&ours).collect::<Vec<_>>(),
                Vec::<&String>::new(),
                "{name} on {chip_name}: names our export leaves out"
            );
        }
    }
}

#[test]
fn tpu_mlir_groupings_of_the_zoo_import_whole_and_verify() {
    for (name, batch) in zoo() {
        for chip_name in CHIPS {
            let chip = NpuChip::preset(chip_name).unwrap();
            let g = prepared(&name, batch, &chip);
            let imported = import(&g, &theirs(&name, chip_name)).unwrap();
            let implicit: BTreeSet<String> = lower(&g, "f16")
                .into_iter()
                .flat_map(|l| l.casts_in.into_iter().map(|c| c.loc).chain(l.cast_out))
                .collect();
            let unknown: Vec<&String> = imported
                .unmatched
                .iter()
                .filter(|l| !implicit.contains(*l) && *l != "func.return")
                .collect();
            assert_eq!(
                unknown,
                Vec::<&String>::new(),
                "{name} on {chip_name}: locs matching none of our ops"
            );
            let p = plan_with_groups(&g, &chip, &PlanOptions::default(), &imported.requests)
                .unwrap_or_else(|e| panic!("{name} on {chip_name}: {e}"));
            verify(&p).unwrap_or_else(|e| panic!("{name} on {chip_name}: {e}"));
        }
    }
}

/// `ours` cycles within `tolerance` (a fraction) of the `compiled` program's.
fn assert_timed_within(ours: u64, compiled: f64, tolerance: f64) {
    let r = ours as f64 / compiled;
    assert!((r - 1.0).abs() < tolerance, "ours {ours} ({r:.4}x)");
}

/// Network `name` at `batch` on `chip_name`, planned with `cache`'s grouping forced.
fn planned_with(name: &str, batch: u64, chip_name: &str, cache: &Cache) -> tpusim_planner::Plan {
    let chip = NpuChip::preset(chip_name).unwrap();
    let g = prepared(name, batch, &chip);
    let imported = import(&g, cache).unwrap();
    plan_with_groups(&g, &chip, &PlanOptions::default(), &imported.requests).unwrap()
}

/// preact_resnet_b3 (held out) on `chip_name`, planned with the cache `file` of
/// `tests/data/zoo/` forced.
fn preact_with(chip_name: &str, file: &str) -> tpusim_planner::Plan {
    let text = std::fs::read_to_string(format!("{}/{file}", dir())).unwrap();
    planned_with("preact_resnet_b3", 3, chip_name, &parse(&text).unwrap())
}

/// TPU-MLIR cuts a group's batch (and height) with the larger slices first: its own
/// cache of preact_resnet_b3 on bm1688 cuts the 26-op group's batch of 3 in 2, and the
/// program it compiles runs `n_slice = [2, 1]`. The plan slices it so, and is timed
/// within 0.5 % of that program's 871,813 cycles (875,237, 0.39 % over, with the
/// 1-sample slice first: its filters' loads were exposed under 1 sample's compute).
#[test]
fn an_n_cut_runs_the_larger_slice_first_as_tpu_mlir_does() {
    let p = preact_with("bm1688", "preact_resnet_b3_bm1688.tpumlir_cache.json");
    let g = &p.groups[0];
    assert_eq!((g.ops.len(), g.nsecs, g.hsecs), (26, 2, 1));
    let input = |s: &tpusim_planner::Slice| {
        s.tensors
            .iter()
            .find(|t| t.tensor == "input")
            .map(|t| t.n)
            .unwrap()
    };
    let parts: Vec<[u64; 2]> = g.slices.iter().map(input).collect();
    assert_eq!(parts, [[0, 2], [2, 3]]);
    assert_timed_within(p.cycles, 871_813.0, 0.005);
}

/// A sliced group loads its next slice's input where TPU-MLIR's moves by slack put it:
/// our first export of preact_resnet_b3 on bm1684x cut its group in 3 N slices, and
/// TPU-MLIR's program loads each next sample beside the group's fourth-last conv
/// (`conv66`), which its estimates leave slack for, stalling there; the first slice
/// takes 61,310 cycles against 50,492 for the others. Timed with that load in our step
/// of most slack, the plan said 166,014 cycles, 1.4 % under the program's 168,373; in
/// TPU-MLIR's step it is within 1 %.
#[test]
fn a_next_slice_load_runs_where_tpu_mlirs_moves_put_it() {
    let p = preact_with("bm1684x", "preact_resnet_b3_bm1684x_n3.cache.json");
    let g = &p.groups[0];
    assert_eq!((g.ops.len(), g.nsecs, g.hsecs), (26, 3, 1));
    assert_timed_within(p.cycles, 168_373.0, 0.01);
}

/// A group of element-wise ops alone is held in TPU-MLIR's `GROUP_SMALL_C` layout, its
/// rows over every lane: the U-Net's output cast and sigmoid (1×1×128²) fit whole
/// there, as TPU-MLIR's own caches hold them on both chips (sized per channel, 1 of
/// the lanes' 32 or 64, we re-cut them in 4 and 2 slices), and are timed within 1 % of
/// the group's span in TPU-MLIR's programs (bm1688 13,665 cycles, bm1684x 3,118).
#[test]
fn a_group_of_casts_and_activations_is_held_over_every_lane() {
    for (chip_name, span) in [("bm1688", 13_665.0), ("bm1684x", 3_118.0)] {
        let p = planned_with("unet_small", 1, chip_name, &theirs("unet_small", chip_name));
        let grp = p.groups.last().unwrap();
        assert_eq!(grp.ops, ["sigmoid105_cast0", "sigmoid105"]);
        assert_eq!((grp.nsecs, grp.hsecs), (1, 1), "{chip_name}");
        let r = grp.cycles as f64 / span;
        assert!(
            (r - 1.0).abs() < 0.01,
            "{chip_name}: ours {} ({r:.4}x)",
            grp.cycles
        );
    }
}

/// A global cast moves its tensors at the chip's matrix rate: fpn_like (held out) on
/// bm1688 ends in its output's cast to f32 run global in TPU-MLIR's own grouping, 5,228
/// cycles in its program (40,960 bytes in, 81,920 out), which we priced at 7,896 at the
/// tensor rate; the whole grouping is now timed within 0.5 % of its 180,977 cycles.
#[test]
fn a_global_cast_moves_at_the_matrix_rate() {
    let p = planned_with("fpn_like", 1, "bm1688", &theirs("fpn_like", "bm1688"));
    assert_timed_within(p.cycles, 180_977.0, 0.005);
}

/// aspp_like (held out, third round): four branches read one value, dilated 3×3 convs
/// (dilations 1, 2, 4) and a 1×1, which need it in different rows. TPU-MLIR 1.30.2
/// cannot merge such windows when a dilated conv reads them, at any H count
/// (`tpumlir::margins`), and refused our first export on bm1684x, its 12-op group cut in
/// 2 H slices. The plan now holds the group whole, as TPU-MLIR's own grouping does, and
/// is timed within 0.5 % of that program's 51,080 cycles.
#[test]
fn a_value_dilated_convs_read_in_other_rows_is_not_cut_along_h() {
    let chip = NpuChip::preset("bm1684x").unwrap();
    let g = prepared("aspp_like", 1, &chip);
    let p = plan(&g, &chip, &PlanOptions::default()).unwrap();
    let shape: Vec<(usize, u64, u64)> = p
        .groups
        .iter()
        .map(|g| (g.ops.len(), g.nsecs, g.hsecs))
        .collect();
    assert_eq!(shape, [(12, 1, 1)]);
    assert_timed_within(p.cycles, 51_080.0, 0.005);
}

/// Bias vectors and a pool's 1×1 output move as small planes, in rows of 256 bytes at
/// 3.93× the plane floor on bm1688 (`bench/tpumlir_small_planes.py`): small_cnn in
/// TPU-MLIR's own grouping is timed within 1 % of its program's 15,122 cycles (6.3 %
/// under when they were priced at 2× in 512-byte rows).
#[test]
fn bm1688_small_planes_time_small_cnn_as_compiled() {
    let p = planned_with("small_cnn", 1, "bm1688", &theirs("small_cnn", "bm1688"));
    assert_timed_within(p.cycles, 15_122.0, 0.01);
}

/// A pool output stored at f32 leaves its cast to a global layer: mbv3_like's [1, 320]
/// on bm1688 stores in 2,218 cycles at f16 and about 1,733 at f32, and the global cast
/// takes 655, so the group keeps the flatten and the cast, as TPU-MLIR's own grouping
/// does (left global, our export compiled 123 cycles slower).
#[test]
fn a_pool_output_stays_f16_where_its_global_cast_would_cost_more() {
    let chip = NpuChip::preset("bm1688").unwrap();
    let g = prepared("mbv3_like", 1, &chip);
    let p = plan(&g, &chip, &PlanOptions::default()).unwrap();
    let cache = export(&p);
    let grouped = &cache.group_layer.last().unwrap().locs;
    for loc in ["flat79_Flatten", "flat79_Flattenfc82_Gemm_f16"] {
        assert!(grouped.iter().any(|l| l == loc), "{loc} not in {grouped:?}");
    }
    let own = theirs("mbv3_like", "bm1688");
    assert_eq!(grouped, &own.group_layer.last().unwrap().locs);
}

/// A global Concat of one sample runs in place (`only_merge`): TPU-MLIR's own grouping
/// of dil124_odd_72 (held out, round 10) on bm1688 leaves its two concats of
/// [1, 71, 36, 36] global, and its program has no command for either. Priced as a load,
/// copy and store each, the plan said 199,243 cycles against the program's 151,035;
/// free, it is within 0.5 %.
#[test]
fn a_global_concat_of_one_sample_runs_in_place() {
    let p = planned_with(
        "dil124_odd_72",
        1,
        "bm1688",
        &theirs("dil124_odd_72", "bm1688"),
    );
    let concats: Vec<_> = p
        .global_costs
        .iter()
        .filter(|c| c.op.starts_with("concat"))
        .map(|c| (c.cycles, c.gmem_bytes))
        .collect();
    assert_eq!(concats, [(0, 0), (0, 0)]);
    assert_timed_within(p.cycles, 151_035.0, 0.005);
}

/// One f32 cast of a tensor serves every f32 reader (psp_pool_64, held out, round 11:
/// two average pools and a global average pool of one map), named after the first
/// reader in the file: TPU-MLIR's own cache lists `relu12_Reluavgpool13_AveragePool_f32`
/// before the global pool. Our export named a cast of its own for the global pool and
/// ran that pool before the shared cast; TPU-MLIR refused it ("operand #0 does not
/// dominate this use").
#[test]
fn a_cast_up_shared_by_a_global_pool_runs_before_it() {
    let opts = PlanOptions {
        dtype: ElementType::F16,
        ..Default::default()
    };
    for chip_name in CHIPS {
        let chip = NpuChip::preset(chip_name).unwrap();
        let g = prepared("psp_pool_64", 1, &chip);
        let cache = export(&plan(&g, &chip, &opts).unwrap());
        let order: Vec<&String> = cache
            .group_layer
            .iter()
            .flat_map(|g| g.locs.iter())
            .chain(cache.global_layer.iter().map(|g| &g.loc))
            .collect();
        let at = |loc: &str| order.iter().position(|l| *l == loc);
        let cast = at("relu12_Reluavgpool13_AveragePool_f32").expect(chip_name);
        let gap = at("gap29_GlobalAveragePool").expect(chip_name);
        assert!(cast < gap, "{chip_name}: {order:?}");
    }
}

/// A depthwise op the pooling unit runs loads its bias in the plan's type
/// (`timestep::wide_bias`): bn_relu6_ir_63 (held out, round 10) on bm1688, TPU-MLIR's
/// own grouping (one group, 33,326 cycles compiled), waits on its transfers, among them
/// f16 biases of 96 to 384 channels that take 750 to 2,133 cycles each (one row of small
/// planes). Held at 32 bits, they were priced at 31,011 (6.9 % short).
#[test]
fn a_depthwise_bias_loads_in_the_plans_type() {
    let own = theirs("bn_relu6_ir_63", "bm1688");
    let p = planned_with("bn_relu6_ir_63", 1, "bm1688", &own);
    assert_timed_within(p.cycles, 33_326.0, 0.01);
}

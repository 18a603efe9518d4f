//! TPU-MLIR interop against its real output (see `tests/data/README.md`): its cache
//! JSON imports onto our IR of the same ONNX file, its groups and slicings are
//! reproduced, the imported plan verifies, and our cost model's estimate of its main
//! group is close to TPU-MLIR's own `group_cost`. Export → import round-trips.

/// The zoo of generated networks against TPU-MLIR's caches (one test binary with these,
/// to link once).
#[path = "tpumlir/zoo.rs"]
mod zoo;

use tpusim_graph::Graph;
use tpusim_planner::tpumlir::{export, import, parse};
use tpusim_planner::NpuChip;
use tpusim_planner::{plan, plan_with_groups, verify::verify, GroupRequest, PlanOptions};

fn load(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn graph(name: &str) -> Graph {
    serde_json::from_str(&load(name)).unwrap()
}

/// The same network with its f32 input cast on the chip, as TPU-MLIR compiles it
/// (`tpusim plan`'s default `--input-dtype f32`).
fn graph_cast(name: &str) -> Graph {
    tpusim_graph::cast::cast_inputs(&graph(name), 32)
}

/// [`graph_cast`] in TPU-MLIR's op order, as `tpusim plan` plans it.
fn ordered_cast(name: &str) -> Graph {
    tpusim_planner::tpu_mlir_order(&graph_cast(name))
}

/// TPU-MLIR's grouping in `cache_file` imported onto `g` and planned on `chip`; the plan
/// verifies.
fn imported(g: &Graph, cache_file: &str, chip: &str) -> tpusim_planner::Plan {
    let cache = parse(&load(cache_file)).unwrap();
    let imp = import(g, &cache).unwrap();
    let chip = NpuChip::preset(chip).unwrap();
    let p = plan_with_groups(g, &chip, &PlanOptions::default(), &imp.requests).unwrap();
    verify(&p).unwrap();
    p
}

/// The group of `p` whose first op is `first`.
fn group_from<'a>(p: &'a tpusim_planner::Plan, first: &str) -> &'a tpusim_planner::GroupPlan {
    p.groups
        .iter()
        .find(|g| g.ops.first().map(String::as_str) == Some(first))
        .unwrap_or_else(|| panic!("no group starts at {first}"))
}

/// Each group of `p` as (ops, nsecs, hsecs).
fn cut(p: &tpusim_planner::Plan) -> Vec<(usize, u64, u64)> {
    p.groups
        .iter()
        .map(|g| (g.ops.len(), g.nsecs, g.hsecs))
        .collect()
}

/// `ratio`: the expected range of (our cycles for TPU-MLIR's largest group) / (its own
/// `group_cost`).
fn check(
    g: Graph,
    cache_file: &str,
    chip: &str,
    want: &[(usize, u64, u64)],
    main_group_cost: i64,
    ratio: (f64, f64),
) {
    let p = imported(&g, cache_file, chip);
    let chip = NpuChip::preset(chip).unwrap();
    assert_eq!(cut(&p), want, "{cache_file}");
    // our estimate of TPU-MLIR's largest group vs its own estimate
    let ours = p.groups.iter().map(|g| g.cycles).max().unwrap() as f64;
    let r = ours / main_group_cost as f64;
    assert!(
        r >= ratio.0 && r <= ratio.1,
        "{cache_file}: ours {ours} vs TPU-MLIR {main_group_cost} (ratio {r:.3})"
    );
    // our own plan is no worse under our model than TPU-MLIR's grouping
    let mine = plan(&g, &chip, &PlanOptions::default()).unwrap();
    assert!(
        mine.cycles <= p.cycles,
        "{cache_file}: ours {} vs imported {}",
        mine.cycles,
        p.cycles
    );
}

#[test]
fn resnet18_b1() {
    // TPU-MLIR: one group of 29 ops (conv3 .. add85), shape_secs [1,1,1,1,1], cost 542274;
    // its second group (cast, gap, flatten, cast), cost 15,436, is our global average
    // pool alone (a group by itself under 16-bit types, `group::groups_alone`)
    check(
        graph("resnet18_onnx_b1.graph.json"),
        "resnet18_b1.tpumlir_cache.json",
        "bm1684x",
        &[(29, 1, 1), (1, 1, 1)],
        542_274,
        (0.85, 1.15),
    );
    // the same with the input cast, which TPU-MLIR runs alone at batch 1
    let g = graph_cast("resnet18_onnx_b1.graph.json");
    check(
        g.clone(),
        "resnet18_b1.tpumlir_cache.json",
        "bm1684x",
        &[(29, 1, 1), (1, 1, 1)],
        542_274,
        (0.85, 1.15),
    );
    let p = imported(&g, "resnet18_b1.tpumlir_cache.json", "bm1684x");
    let pool = group_from(&p, "gap87");
    let r = pool.cycles as f64 / 15_436.0;
    assert!((0.95..1.05).contains(&r), "ours {} ({r:.3}x)", pool.cycles);
    // and our own search picks the same cut (TPU-MLIR compiles it in 591,722 cycles,
    // ours with the pool at the end of the first group in 592,305)
    let mine = plan(
        &g,
        &NpuChip::preset("bm1684x").unwrap(),
        &PlanOptions::default(),
    )
    .unwrap();
    let cut: Vec<(usize, &str)> = mine
        .groups
        .iter()
        .map(|x| (x.ops.len(), x.ops[0].as_str()))
        .collect();
    assert_eq!(cut, [(29, "conv3"), (1, "gap87")]);
}

#[test]
fn resnet18_b4() {
    // TPU-MLIR: [input cast, conv3, pool5] with shape_secs [4,1,1,2,1], then 28 ops
    // unsliced; without the cast in our graph its first group maps to [conv3, pool5]
    check(
        graph("resnet18_onnx_b4.graph.json"),
        "resnet18_b4.tpumlir_cache.json",
        "bm1684x",
        &[(2, 4, 2), (28, 1, 1)],
        992_856,
        (0.85, 1.15),
    );
    check(
        graph_cast("resnet18_onnx_b4.graph.json"),
        "resnet18_b4.tpumlir_cache.json",
        "bm1684x",
        &[(3, 4, 2), (28, 1, 1)],
        992_856,
        (0.85, 1.15),
    );
}

#[test]
fn resnet18_b1_bm1688() {
    // TPU-MLIR on bm1688: [input cast, conv3, pool5] cut in 4 along H, 22 ops unsliced
    // (group_cost 1,357,875), and a tail group whose GAP is the only op we group (the
    // rest of it, casts and the flatten, we run globally or have no op for)
    check(
        ordered_cast("resnet18_onnx_b1.graph.json"),
        "resnet18_b1_bm1688.tpumlir_cache.json",
        "bm1688",
        &[(3, 1, 4), (22, 1, 1), (2, 1, 1)],
        1_357_875,
        (0.85, 1.15),
    );
}

#[test]
fn resnet18_b4_bm1688_streams_weights() {
    // TPU-MLIR on bm1688 at batch 4: [input cast, conv3, pool5] cut 4×4, then the 22 ops
    // of layers 1 to 4's first block with N cut in 4 (group_cost 5,366,985), and the
    // tail. Layer 3–4 filters (up to 73,728 bytes per lane each) cannot all stay
    // resident: TPU-MLIR reloads every filter in each of the 4 slices (its profile shows
    // each weight load 4 times, once per slice), and so do we now. Before, this cache
    // failed to import ("no N/H slicing fits"). Our estimate of the group is ~1.2x its
    // own (its profile: 5,665,739 cycles). The 2-op tail keeps TPU-MLIR's slicing,
    // unsliced (its group lists the flatten after the pool too; our own plan cuts that
    // tail in 2, which TPU-MLIR compiles 978 cycles faster: 8,202,730 vs 8,203,708).
    let g = ordered_cast("resnet18_onnx_b4.graph.json");
    check(
        g.clone(),
        "resnet18_b4_bm1688.tpumlir_cache.json",
        "bm1688",
        &[(3, 4, 4), (22, 4, 1), (2, 1, 1)],
        5_366_985,
        (1.0, 1.35),
    );
    let p = imported(&g, "resnet18_b4_bm1688.tpumlir_cache.json", "bm1688");
    let main = &p.groups[1];
    let weights: Vec<_> = main
        .blocks
        .iter()
        .filter(|b| b.kind == tpusim_planner::plan::BlockKind::Weight)
        .collect();
    assert!(!weights.is_empty());
    assert!(
        weights.iter().all(|b| b.end_ts.is_some()),
        "weights of the N-sliced group are reloaded per slice, not resident"
    );
    // every slice loads every filter: the group moves at least 4x its weight bytes
    let wbytes: u64 = main
        .ops
        .iter()
        .flat_map(|name| g.ops.iter().filter(move |o| &o.name == name))
        .flat_map(|o| o.weights.iter())
        .map(|&w| {
            let s = g.tensors[w].shape;
            s.n * s.c * s.h * s.w * 2
        })
        .sum();
    assert!(
        main.gmem_bytes >= 4 * wbytes,
        "{} vs 4 x {wbytes}",
        main.gmem_bytes
    );
}

#[test]
fn groups_tpu_mlir_cannot_allocate_do_not_fit_here_either() {
    // Our plan of 2026-11-22 put 13 ops of layers 2–3 (conv30 .. conv75) in one unsliced
    // group on bm1688 at batch 4; TPU-MLIR refused it ("local memory allocate failed for
    // group 2"). Placed by TPU-MLIR's allocator on its software-pipelined time steps
    // (`tpumlir::alloc`, `tpumlir::steps`) the group does not fit unsliced here either,
    // and the import cuts it along N.
    let g = ordered_cast("resnet18_onnx_b4.graph.json");
    let p = imported(
        &g,
        "resnet18_b4_bm1688_rejected.tpumlir_cache.json",
        "bm1688",
    );
    let grp = group_from(&p, "conv30");
    assert_eq!(grp.ops.len(), 13);
    assert!(grp.nsecs * grp.hsecs > 1, "{} x {}", grp.nsecs, grp.hsecs);

    // the same on ResNet-50 at batch 1: our plan of 2026-11-22 had layer 1's 16 ops
    // unsliced; TPU-MLIR refused it ("local memory allocate failed for group 1") and
    // its own plan cuts that group in 2 along H
    let g = ordered_cast("resnet50_onnx_b1.graph.json");
    let p = imported(
        &g,
        "resnet50_b1_bm1688_rejected.tpumlir_cache.json",
        "bm1688",
    );
    let grp = p.groups.iter().find(|x| x.ops.len() == 16).unwrap();
    assert!(grp.nsecs * grp.hsecs > 1, "{} x {}", grp.nsecs, grp.hsecs);

    // ResNet-18 on bm1688 at batch 1, [cast, conv1, pool, conv8] cut in 3 along H (a
    // plan of this session): TPU-MLIR refused it ("local memory allocate failed for
    // group 0") and compiled the same group cut in 4 (tpumlir_alloc.rs)
    let g = ordered_cast("resnet18_onnx_b1.graph.json");
    let p = imported(
        &g,
        "tpumlir_alloc/resnet18_b1_bm1688_ours_h3_rejected.cache.json",
        "bm1688",
    );
    let grp = &p.groups[0];
    assert_eq!((grp.ops.len(), grp.nsecs, grp.hsecs), (4, 1, 4));
}

#[test]
fn resnet50_b8_layers_1_to_3_fit_cut_in_4_with_adds_in_place() {
    // TPU-MLIR's batch-8 ResNet-50 plan on bm1684x: [cast, conv1, pool] 8×2, then 35
    // ops (layers 1 to 3's first block) with N cut in 4 (group_cost 2,130,407), 30 ops
    // unsliced, the tail. Its allocator writes each residual add's output over its
    // first input; with that rule the 35-op group fits here too at 4 slices with its
    // weights resident (without it the import needed the weights reloaded per slice).
    // Its 30-op group fits unsliced here too now that groups are placed by TPU-MLIR's
    // own allocator on its own time steps (before, we held an unsliced group's input
    // and output blocks over the whole loop body, and it needed 2 N slices).
    let g = ordered_cast("resnet50_onnx_b8.graph.json");
    let p = imported(&g, "resnet50_b8.tpumlir_cache.json", "bm1684x");
    let got = cut(&p);
    // the tail, unsliced as TPU-MLIR runs it (its group also lists the flatten after the
    // pool, which the import now passes over to keep TPU-MLIR's slicing)
    assert_eq!(got, [(3, 8, 2), (35, 4, 1), (30, 1, 1), (4, 1, 1)]);
    let main = &p.groups[1];
    assert!(main
        .blocks
        .iter()
        .filter(|b| b.kind == tpusim_planner::plan::BlockKind::Weight)
        .all(|b| b.end_ts.is_none()));
    let r = main.cycles as f64 / 2_130_407.0;
    assert!(
        (0.9..1.15).contains(&r),
        "ours / TPU-MLIR's group_cost = {r:.3}"
    );
    // our search finds a plan no worse under our model than TPU-MLIR's grouping (it
    // did not while it stopped growing a group at the first length that fitted at no
    // slicing and never retried fewer slices than the shorter group needed: 5,049,762
    // against 4,921,549)
    let chip = NpuChip::preset("bm1684x").unwrap();
    let mine = plan(&g, &chip, &PlanOptions::default()).unwrap();
    assert!(
        mine.cycles <= p.cycles,
        "ours {} vs imported {}",
        mine.cycles,
        p.cycles
    );
}

#[test]
fn ties_in_cycles_go_to_the_cut_that_moves_fewer_bytes() {
    // On bm1688 at batch 1 our model costs layer 1's first conv (conv8) the same alone
    // (its 116 kB of DMA hides under 112,896 compute cycles) as in the group. TPU-MLIR
    // compiled our plan to 2,452,487 cycles with it alone and 2,423,575 with it grouped
    // (alone its load and store are exposed: 139,848 cycles in its profile). The
    // search breaks the tie by GMEM bytes, and groups it.
    let g = ordered_cast("resnet18_onnx_b1.graph.json");
    let chip = NpuChip::preset("bm1688").unwrap();
    let p = plan(&g, &chip, &PlanOptions::default()).unwrap();
    assert!(
        !p.global_ops.iter().any(|o| o == "conv8"),
        "global: {:?}",
        p.global_ops
    );
}

#[test]
fn mini_mobilenetv2_b1() {
    // Our estimate of TPU-MLIR's 22-op group is within 4 % of its own (100,799): its
    // per-op estimates taught the cost model input channels in EU_NUM passes, fused
    // activations, strided and few-channel depthwise convs, and the group is timed on
    // TPU-MLIR's own reproduced schedule. It was ~0.78x before, 0.37x before the
    // per-plane DMA floors. 1.031 since the first conv's fold follows the codegen
    // profile (10,584 cycles for MobileNetV2's 3×3/2, where the group's estimate came
    // within 0.4 % with 7,056): the whole network compiles to 120,639 cycles, more than
    // either estimate.
    check(
        graph("mini_mbv2_onnx_b1.graph.json"),
        "mini_mbv2_b1.tpumlir_cache.json",
        "bm1684x",
        &[(22, 1, 1)],
        100_799,
        (0.97, 1.04),
    );
}

#[test]
fn export_import_round_trip() {
    for g in [
        graph("resnet18_onnx_b4.graph.json"),
        graph_cast("resnet18_onnx_b4.graph.json"),
        graph_cast("resnet18_onnx_b1.graph.json"),
    ] {
        round_trip(g);
    }
}

fn round_trip(g: Graph) {
    let chip = NpuChip::preset("bm1684x").unwrap();
    let p = plan(&g, &chip, &PlanOptions::default()).unwrap();
    let text = tpusim_planner::tpumlir::to_text(&export(&p));
    assert!(text.contains("\"subfunc_0\""));
    let back = parse(&text).unwrap();
    assert_eq!(back.group_layer.len(), p.groups.len());
    assert_eq!(back.opt, 2);
    let imp = import(&g, &back).unwrap();
    // the only names without an op of ours are the casts TPU-MLIR inserts before a
    // global average pool (f32) and after a flatten (f16), which the export lists for
    // TPU-MLIR's sake; the only op split off is that flatten (batch 1: exported in the
    // group, run global by us)
    assert!(
        imp.split_at.iter().all(|o| o == "flat88"),
        "{:?}",
        imp.split_at
    );
    assert!(
        imp.unmatched
            .iter()
            .all(|n| n.ends_with("_GlobalAveragePool_f32") || n.ends_with("_Gemm_f16")),
        "{:?}",
        imp.unmatched
    );
    let q = plan_with_groups(&g, &chip, &PlanOptions::default(), &imp.requests).unwrap();
    assert_eq!(q.groups, p.groups);
    assert_eq!(q.cycles, p.cycles);
}

#[test]
fn bad_caches_are_errors() {
    let g = graph("mini_mbv2_onnx_b1.graph.json");
    assert!(parse("{").is_err());
    assert!(parse("{\"GroupLayer\": []}")
        .unwrap_err()
        .to_string()
        .contains("opt"));
    let c = parse(
        r#"{"opt": 2, "GroupLayer": [{"locs": ["nope1", "nope2"], "shape_secs": [1,1,1,1,1]}]}"#,
    )
    .unwrap();
    let e = import(&g, &c).unwrap_err().to_string();
    assert!(e.contains("nope1"), "{e}");
    // an impossible slicing in a cache (found by mutating caches: it asked for 10^9
    // batch parts and the planner tried to allocate them) is refused, and the group
    // gets the best slicing that fits instead
    let mut cache = parse(&load("resnet18_b4.tpumlir_cache.json")).unwrap();
    cache.group_layer[1].shape_secs = vec![1_000_000_000, 1, 1, 1, 1];
    let g4 = graph_cast("resnet18_onnx_b4.graph.json");
    let imp = import(&g4, &cache).unwrap();
    let chip = NpuChip::preset("bm1684x").unwrap();
    let p = plan_with_groups(&g4, &chip, &PlanOptions::default(), &imp.requests).unwrap();
    assert!(
        p.groups.iter().all(|g| g.nsecs <= 4),
        "{:?}",
        p.groups.iter().map(|g| g.nsecs).collect::<Vec<_>>()
    );
}

/// TPU-MLIR silently skips cache names it does not know (and then groups nothing), so
/// every name we export must be one of its own op names: those in its cache of the same
/// network (group `locs` and global `loc`s list all its ops, casts included).
#[test]
fn exported_names_are_tpu_mlir_op_names() {
    for (graph_file, cache_file) in [
        (
            "resnet18_onnx_b1.graph.json",
            "resnet18_b1.tpumlir_cache.json",
        ),
        (
            "resnet18_onnx_b4.graph.json",
            "resnet18_b4.tpumlir_cache.json",
        ),
    ] {
        let theirs = parse(&load(cache_file)).unwrap();
        let known: std::collections::HashSet<&str> = theirs
            .group_layer
            .iter()
            .flat_map(|grp| grp.locs.iter().map(String::as_str))
            .chain(theirs.global_layer.iter().map(|gl| gl.loc.as_str()))
            .collect();
        let chip = NpuChip::preset("bm1684x").unwrap();
        for g in [graph(graph_file), graph_cast(graph_file)] {
            let p = plan(&g, &chip, &PlanOptions::default()).unwrap();
            let ours = export(&p);
            let names: Vec<&str> = ours
                .group_layer
                .iter()
                .flat_map(|grp| grp.locs.iter().map(String::as_str))
                .chain(ours.global_layer.iter().map(|gl| gl.loc.as_str()))
                .collect();
            assert!(
                names.len() >= p.graph.ops.len(),
                "{graph_file}: every op is named"
            );
            let unknown: Vec<&&str> = names.iter().filter(|n| !known.contains(**n)).collect();
            assert!(
                unknown.is_empty(),
                "{graph_file}: not TPU-MLIR names: {unknown:?}"
            );
        }
    }
}

/// A flatten run global after a group's last op (a global average pool) is exported
/// inside that group, with TPU-MLIR's cast, where the group's store of the flattened
/// 16-bit tensor costs no more than that of the pool's f32 output: on bm1684x for
/// ResNet-18 at batch 1 (512 channels, one 4,096-byte row either way; TPU-MLIR groups
/// it so), not at batch 4 nor for ResNet-50's 2,048 channels (the f32 store takes two
/// rows and half the cycles: 25,588 vs 51,177 in TPU-MLIR's profiles); on bm1688 (no
/// rows) always. Each plan's last group is extended to the pool (our ResNet-18 plan on
/// bm1684x runs it alone).
#[test]
fn trailing_flatten_is_exported_in_the_group_where_its_store_costs_no_more() {
    for (file, chip, flat, inside) in [
        ("resnet18_onnx_b1.graph.json", "bm1684x", "flat88", true),
        ("resnet18_onnx_b4.graph.json", "bm1684x", "flat88", false),
        ("resnet50_onnx_b1.graph.json", "bm1684x", "flat227", false),
        ("resnet50_onnx_b1.graph.json", "bm1688", "flat227", true),
    ] {
        let chip = NpuChip::preset(chip).unwrap();
        let g = tpusim_planner::tpu_mlir_order(&graph(file));
        let p = plan(&g, &chip, &PlanOptions::default()).unwrap();
        // the plan's groups, the last one reaching the pool that feeds the flatten
        let id = |name: &str| g.ops.iter().position(|o| o.name == name).unwrap();
        let flat_id = id(flat);
        let pool = (0..flat_id)
            .rev()
            .find(|&i| {
                g.ops[i]
                    .outputs
                    .iter()
                    .any(|t| g.ops[flat_id].inputs.contains(t))
            })
            .unwrap();
        let mut req: Vec<GroupRequest> = p
            .groups
            .iter()
            .map(|gr| GroupRequest {
                first: id(&gr.ops[0]),
                last: id(gr.ops.last().unwrap()),
                secs: Some((gr.nsecs, gr.hsecs)),
            })
            .collect();
        let tail = req.last_mut().unwrap();
        tail.last = pool;
        tail.secs = None;
        let p = plan_with_groups(&g, &chip, &PlanOptions::default(), &req).unwrap();
        assert!(p.global_ops.iter().any(|o| o == flat), "{file}");
        let c = export(&p);
        let last = c.group_layer.last().unwrap();
        let tail: Vec<&str> = last
            .locs
            .iter()
            .rev()
            .take(2)
            .rev()
            .map(String::as_str)
            .collect();
        let global: Vec<&str> = c.global_layer.iter().map(|g| g.loc.as_str()).collect();
        let loc = format!("{flat}_Flatten");
        if inside {
            assert_eq!(
                tail,
                [loc.clone(), format!("{loc}output_Gemm_f16")],
                "{file}"
            );
            assert!(!global.contains(&loc.as_str()), "{file}: {global:?}");
        } else {
            assert!(!last.locs.iter().any(|l| l.starts_with(flat)), "{file}");
            assert!(global.contains(&loc.as_str()), "{file}: {global:?}");
        }
    }
}

#[test]
fn our_op_order_is_tpu_mlir_topo_sort_order() {
    // TPU-MLIR's caches list each group's ops in its own op order (after its
    // `--topo-sort`): in ResNet-50's bottlenecks the shortcut conv runs before the 1×1
    // reduce conv (`conv116_Conv, relu106_Relu, relu110_Relu, conv113_Conv`), although
    // the shortcut is the heavier op. Our groups must be consecutive runs in that order,
    // or TPU-MLIR rejects the exported cache ("operand #0 does not dominate this use";
    // it did for the lightest-first order we used before, on bm1688). The graph file is in ONNX node order.
    let g = tpusim_planner::tpu_mlir_order(&graph("resnet50_onnx_b1.graph.json"));
    for file in [
        "resnet50_b1.tpumlir_cache.json",
        "resnet50_b1_bm1688.tpumlir_cache.json",
        "resnet18_b1.tpumlir_cache.json",
        "resnet18_b4.tpumlir_cache.json",
    ] {
        let g = if file.starts_with("resnet18") {
            tpusim_planner::tpu_mlir_order(&graph("resnet18_onnx_b1.graph.json"))
        } else {
            g.clone()
        };
        let cache: serde_json::Value = serde_json::from_str(&load(file)).unwrap();
        let mut checked = 0;
        for grp in cache["subfunc_0"]["GroupLayer"].as_array().unwrap() {
            let pos: Vec<usize> = grp["locs"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|l| tpusim_planner::tpumlir::match_loc(&g, l.as_str().unwrap()))
                .collect();
            // ops we run globally (flatten) may sit inside; what we group is consecutive
            let mut sorted = pos.clone();
            sorted.dedup();
            assert!(
                sorted.windows(2).all(|w| w[0] < w[1]),
                "{file}: TPU-MLIR's order {:?} is not ours {:?}",
                grp["locs"],
                pos.iter()
                    .map(|&i| g.ops[i].name.as_str())
                    .collect::<Vec<_>>()
            );
            checked += pos.len();
        }
        assert!(checked > 5, "{file}");
    }
}

#[test]
fn a_bm1688_group_tpu_mlir_refused_is_refused_by_our_reproduction() {
    // An export of an earlier session (ResNet-18 b4 on bm1688, a variant of the planner
    // that timed TPU-MLIR's schedule) that TPU-MLIR refused: "local memory allocate
    // failed for group 2", conv51 .. conv75 with N cut in 4. With bm1688's moves timed by
    // the fitted plainer model our reproduction fitted it, the lane exactly full; timed
    // as TPU-MLIR estimates them (our op cycles, transfers by the chip's
    // `tpu_mlir_dma_speedup`) it is refused at that slicing too and fits with H also
    // cut in 2.
    let g = ordered_cast("resnet18_onnx_b4.graph.json");
    let p = imported(
        &g,
        "tpumlir_alloc/resnet18_b4_bm1688_ours_refused.cache.json",
        "bm1688",
    );
    let grp = group_from(&p, "conv51");
    assert_eq!((grp.ops.len(), grp.nsecs, grp.hsecs), (6, 4, 2));
}

/// Our earlier batch-8 ResNet-50 export held a 32-op group (conv113 .. conv215)
/// unsliced; TPU-MLIR could not allocate it at 1 or 2 N slices and compiled it at 3.
/// With bm1684x's moves timed by our own cycles (they match TPU-MLIR's estimates) the
/// reproduction refuses 1 and 2 too and fits 3, with no margin needed.
#[test]
fn resnet50_b8_32_op_group_fits_where_tpu_mlir_fitted_it() {
    let g = ordered_cast("resnet50_onnx_b8.graph.json");
    let p = imported(
        &g,
        "tpumlir_alloc/resnet50_b8_bm1684x_ours_n1_changed.cache.json",
        "bm1684x",
    );
    let grp = group_from(&p, "conv113");
    assert_eq!((grp.ops.len(), grp.nsecs, grp.hsecs), (32, 3, 1));
}

/// ResNet-50 batch 4 on bm1684x (a TPU-MLIR run made in the seventh round; new to the
/// planner when first compared, 1.1 % behind, and one of the cases that led to timing
/// sliced groups on TPU-MLIR's schedule). Its 33-op group cut in 2 N slices spans 1,038,271 cycles of its profile;
/// timed on TPU-MLIR's reproduced schedule we say within 5 % of that (our own balancer
/// of the unmoved steps said 1,142,499, +10 %). Our search picked TPU-MLIR's own
/// grouping (compiled 2,690,652 cycles; our earlier cut was 1.1 % slower) until slices
/// were cut as TPU-MLIR cuts them (the larger first) and the neighbouring slices'
/// transfers put where TPU-MLIR runs them: it now cuts the same groups finer, the first
/// in 4 × 3 and the 33-op one in 3 N slices, which TPU-MLIR 1.30.2 compiles in
/// 2,675,988 cycles, 0.5 % faster than its own.
#[test]
fn resnet50_b4_plans_tpu_mlir_groups_cut_finer() {
    let g = ordered_cast("resnet50_onnx_b4.graph.json");
    let p = imported(&g, "resnet50_b4.tpumlir_cache.json", "bm1684x");
    let grp = group_from(&p, "conv19");
    assert_eq!((grp.ops.len(), grp.nsecs, grp.hsecs), (33, 2, 1));
    let r = grp.cycles as f64 / 1_038_271.0;
    assert!((0.95..1.05).contains(&r), "ours {} ({r:.3}x)", grp.cycles);
    let mine = plan(
        &g,
        &NpuChip::preset("bm1684x").unwrap(),
        &PlanOptions::default(),
    )
    .unwrap();
    let theirs = cut(&p);
    assert_eq!(theirs, [(3, 4, 2), (33, 2, 1), (8, 1, 1), (28, 1, 1)]);
    assert_eq!(cut(&mine), [(3, 4, 3), (33, 3, 1), (8, 1, 1), (28, 1, 1)]);
}

/// Every candidate's slicing search starts unsliced: ResNet-50 b1 on bm1688 plans its
/// layer-1 group cut in 2 H slices (TPU-MLIR's 16-op group: the group one op shorter
/// needs 3, and searching the longer one from 3 on missed it). Since adds cost their
/// profile (2 cycles an EU row, not TPU-MLIR's estimate of 4) the planner extends the
/// group to 19 ops, still in 2 H slices (compiled by TPU-MLIR 1.30.2: 5,750,035 cycles,
/// its own grouping 5,756,801).
#[test]
fn resnet50_bm1688_layer1_group_fits_in_two_h_slices() {
    let g = ordered_cast("resnet50_onnx_b1.graph.json");
    let mine = plan(
        &g,
        &NpuChip::preset("bm1688").unwrap(),
        &PlanOptions::default(),
    )
    .unwrap();
    let grp = group_from(&mine, "conv19");
    assert!(grp.ops.len() >= 16, "{} ops", grp.ops.len());
    assert_eq!((grp.nsecs, grp.hsecs), (1, 2));
}

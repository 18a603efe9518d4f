//! Layer groups of transformer graphs (`nd_plan`): the verifier's checks, the layout rule
//! that keeps 2-D element-wise chains global, and the planned cycles against TPU-MLIR
//! 1.30.2's compiled totals on the transformer zoo (`tests/data/tx_zoo/`: the static
//! graphs TPU-MLIR compiled, weights' data left out, and its `total_cycle` per network).

use serde_json::Value;
use tpusim_graph::nd::{import_onnx, Bind, NdGraph};
use tpusim_layout::ElementType;
use tpusim_planner::nd_plan::{plan_nd_graph, verify_nd_plan, NdGroup, NdPlan};
use tpusim_planner::NpuChip;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tx_zoo");

fn graph(path: &str, seq: u64) -> NdGraph {
    let bind = Bind {
        batch: 1,
        seq,
        past: 0,
    };
    import_onnx(&std::fs::read(path).unwrap(), &bind).unwrap()
}

fn chip() -> NpuChip {
    NpuChip::preset("bm1684x").unwrap()
}

fn planned(g: &NdGraph) -> NdPlan {
    let p = plan_nd_graph(g, &chip(), ElementType::F16).unwrap();
    verify_nd_plan(g, &chip(), ElementType::F16, &p).unwrap();
    p
}

/// TPU-MLIR's compiled cycles and the held-out flag per network of the zoo.
fn tpu_mlir_totals() -> Vec<(String, bool, f64)> {
    let zoo: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{DATA}/zoo.json")).unwrap())
            .unwrap();
    let layers = std::fs::read_to_string(format!("{DATA}/tpumlir_layers.jsonl")).unwrap();
    layers
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v.get("total_cycle").is_some())
        .map(|v| {
            let net = v["net"].as_str().unwrap().to_string();
            let held = zoo[&net]["held_out"] == true;
            (net, held, v["total_cycle"].as_f64().unwrap())
        })
        .collect()
}

#[test]
fn planned_cycles_of_the_zoo_stay_near_what_tpu_mlir_compiles() {
    let totals = tpu_mlir_totals();
    assert_eq!(totals.len(), 13);
    for (net, held_out, theirs) in totals {
        let g = graph(&format!("{DATA}/{net}_static.onnx"), 1);
        let p = planned(&g);
        let ratio = p.cycles as f64 / theirs;
        // measured (bench/RESULTS-plan.md, twenty-third session): tuned 0.85–1.00, held
        // out 0.99–1.02, and the two networks added then, 0.942 (gpt2_d768_s64) and 0.991
        // (llama_d640_s128_b2); tuned 0.84–1.01 and held out 0.99–1.02 before
        let band = if held_out { 0.94..=1.05 } else { 0.8..=1.1 };
        assert!(
            band.contains(&ratio),
            "{net} (held out: {held_out}): {} cycles, TPU-MLIR {theirs}",
            p.cycles
        );
        assert!(p.cycles <= p.ungrouped_cycles, "{net}");
    }
}

/// TPU-MLIR's compiled cycles of the zoo on bm1688 (`compiled_bm1688.jsonl`).
fn tpu_mlir_totals_bm1688() -> Vec<(String, bool, f64)> {
    let rows = std::fs::read_to_string(format!("{DATA}/compiled_bm1688.jsonl")).unwrap();
    rows.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            let net = v["net"].as_str().unwrap().to_string();
            (
                net,
                v["held_out"] == true,
                v["tpumlir_cycles"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn planned_cycles_on_bm1688_stay_near_what_tpu_mlir_compiles() {
    let chip = NpuChip::preset("bm1688").unwrap();
    let totals = tpu_mlir_totals_bm1688();
    assert_eq!(totals.len(), 13);
    for (net, held_out, theirs) in totals {
        let g = graph(&format!("{DATA}/{net}_static.onnx"), 1);
        let p = plan_nd_graph(&g, &chip, ElementType::F16).unwrap();
        let ratio = p.cycles as f64 / theirs;
        // measured (bench/RESULTS-plan.md, twenty-third session): 0.954–1.049 since the
        // global kernels' transfer rates, function tables and matmul slicing, and a cut
        // group's first slice, were modelled; 0.98–1.21 before
        assert!(
            (0.94..=1.06).contains(&ratio),
            "{net} (held out: {held_out}): {} cycles, TPU-MLIR {theirs}",
            p.cycles
        );
    }
}

#[test]
fn two_dimensional_element_wise_chains_stay_global_three_dimensional_ones_group() {
    // onnxsim's GPT-2 graph runs its FFN on 2-D [rows, 4d] values: in local memory each
    // element would be its own plane (TPU-MLIR's own group of two of those layers loads a
    // 128×512 value in 310,593 cycles), so the GELU stays global, as TPU-MLIR runs it.
    let g = graph(&format!("{DATA}/gpt2_d128_s128_static.onnx"), 128);
    let p = planned(&g);
    let in_group = |name: &str| {
        p.groups.iter().filter(|r| r.end - r.start > 1).any(|r| {
            p.layers[r.start..r.end]
                .iter()
                .any(|l| l.name.contains(name) && l.op_type != "MatMul")
        })
    };
    let tanh = p
        .layers
        .iter()
        .find(|l| l.op_type == "Tanh")
        .unwrap()
        .name
        .clone();
    assert!(!in_group(&tanh), "{tanh} grouped");
    // the exporter's graph keeps [1, seq, 4d]: channels over the lanes, and the chain groups
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../graph/tests/data/nd");
    let g = graph(&format!("{dir}/gpt2_tiny.onnx"), 64);
    let p = planned(&g);
    let grouped: Vec<&str> = p
        .groups
        .iter()
        .filter(|r| r.end - r.start > 1)
        .flat_map(|r| p.layers[r.start..r.end].iter().map(|l| l.op_type.as_str()))
        .collect();
    assert!(
        grouped.contains(&"Tanh") && grouped.contains(&"Exp"),
        "{grouped:?}"
    );
}

#[test]
fn the_verifier_names_what_is_wrong_with_a_transformer_plan() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../graph/tests/data/nd");
    let g = graph(&format!("{dir}/llama_tiny.onnx"), 16);
    let p = planned(&g);
    let check = |q: &NdPlan| {
        verify_nd_plan(&g, &chip(), ElementType::F16, q)
            .unwrap_err()
            .to_string()
    };
    // a total that is not the runs' sum
    let mut q = p.clone();
    q.cycles += 1;
    assert!(check(&q).contains("add up to"), "{}", check(&q));
    // a run's cycles not the model's
    let mut q = p.clone();
    q.groups[1].cycles += 7;
    assert!(check(&q).contains("the model gives"), "{}", check(&q));
    // a layer left out
    let mut q = p.clone();
    q.groups.remove(0);
    assert!(
        check(&q).contains("expected to start at 0"),
        "{}",
        check(&q)
    );
    // the embedding gather (global only) pulled into the group after it
    let gather = p.layers.iter().position(|l| l.op_type == "Gather").unwrap();
    let mut q = p.clone();
    let k = q.groups.iter().position(|r| r.start == gather).unwrap();
    let next = q.groups.remove(k + 1);
    q.groups[k].end = next.end;
    assert!(
        check(&q).contains("runs only as a global layer"),
        "{}",
        check(&q)
    );
    // everything in one group: something global-only, or too big for a lane
    let mut q = p.clone();
    let n = q.layers.len();
    q.groups.truncate(1);
    q.groups[0].start = 0;
    q.groups[0].end = n;
    let e = check(&q);
    assert!(
        e.contains("global layer") || e.contains("does not fit"),
        "{e}"
    );
    // a different dtype's plan does not verify as this one
    let e = verify_nd_plan(&g, &chip(), ElementType::F32, &p)
        .unwrap_err()
        .to_string();
    assert!(e.contains("transformer plan"), "{e}");
}

/// TPU-MLIR's own cache of a zoo network: its groups' names and slices, and every name
/// it lists.
fn tpu_mlir_cache(net: &str) -> (Vec<(Vec<String>, Value)>, std::collections::HashSet<String>) {
    tpu_mlir_cache_on(net, "bm1684x")
}

/// TPU-MLIR's own cache of a zoo network on `chip`.
fn tpu_mlir_cache_on(
    net: &str,
    chip: &str,
) -> (Vec<(Vec<String>, Value)>, std::collections::HashSet<String>) {
    let text = std::fs::read_to_string(format!("{DATA}/{net}_{chip}.tpumlir_cache.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let names = |x: &Value| -> Vec<String> {
        x.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let groups: Vec<(Vec<String>, Value)> = v["subfunc_0"]["GroupLayer"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (names(&g["locs"]), g["shape_secs"].clone()))
        .collect();
    let mut all: std::collections::HashSet<String> =
        groups.iter().flat_map(|g| g.0.iter().cloned()).collect();
    for g in v["subfunc_0"]["GlobalLayer"].as_array().unwrap() {
        all.insert(g["loc"].as_str().unwrap().to_string());
    }
    (groups, all)
}

#[test]
fn every_op_tpu_mlir_names_is_a_layer_of_its_form() {
    use tpusim_planner::tpumlir::nd_form::lower_on;
    for (net, _, _) in tpu_mlir_totals() {
        let g = graph(&format!("{DATA}/{net}_static.onnx"), 1);
        let ours: std::collections::HashSet<String> = lower_on(&g, &chip(), ElementType::F16)
            .into_iter()
            .flat_map(|l| l.locs)
            .collect();
        let (_, theirs) = tpu_mlir_cache(&net);
        // views (TPU-MLIR's Reshape, Unsqueeze, … make no layer of ours), the transposes
        // TPU-MLIR lists as global layers but runs in no time (llama_d128_s64's, which its
        // profiles never show), and the Expands it turns into Tiles
        let missing: Vec<&String> = theirs
            .iter()
            .filter(|loc| !ours.contains(*loc))
            .filter(|loc| {
                ![
                    "Reshape",
                    "Unsqueeze",
                    "Squeeze",
                    "Flatten",
                    "Transpose",
                    "Expand",
                ]
                .iter()
                .any(|view| loc.ends_with(&format!("_{view}")))
            })
            .filter(|loc| *loc != "func.return")
            .collect();
        assert!(missing.is_empty(), "{net}: {missing:?}");
        // the attention's matmuls as TPU-MLIR rewrites them
        for loc in theirs
            .iter()
            .filter(|l| l.contains("hdim_is_batch") || l.ends_with("_permute"))
        {
            assert!(ours.contains(loc), "{net}: {loc}");
        }
    }
}

#[test]
fn exported_groups_name_tpu_mlir_ops_in_its_order() {
    // measured on the eleven networks: on bm1684x 71 of our groups are exactly
    // TPU-MLIR's own (same ops, order and cut), 7 of ours cut in slices; on bm1688 (never
    // tuned on) 58, 13 of ours cut. Before the views of a group's last op were left
    // outside it: 60 and 52; before a group's loads counted from their first reader,
    // which let llama_d1024_s256 take TPU-MLIR's groups, 57 on bm1684x; 55 and 54 before
    // BERT's flat mask view took its turn in the op order; 56 on bm1688 before its global
    // layers loaded and stored at once, which leaves more of GPT-2's layers global there.
    let bm1684x = exports_against_tpu_mlir("bm1684x");
    assert!(
        bm1684x.same_groups >= 69 && bm1684x.sliced >= 6,
        "{bm1684x:?}"
    );
    // TPU-MLIR allocated every group of its own caches, so our reproduction of its
    // allocator must take them: all on bm1684x (llama_d1024_s256's P·V…SiLU groups were
    // refused while a group's loads counted from its start); on bm1688 3 are still
    // refused (llama_d1024_s256's P·V…norm in 4 C slices, twice; llama_d320_s256's FFN)
    assert_eq!(bm1684x.refused, 0, "{bm1684x:?}");
    let bm1688 = exports_against_tpu_mlir("bm1688");
    assert!(bm1688.same_groups >= 57, "bm1688: {bm1688:?}");
    assert!(bm1688.refused <= 3, "bm1688: {bm1688:?}");
    // every cache imports: TPU-MLIR cuts llama_d640_s128_b2's groups along N and H at
    // once on both chips, which did not import before the fortieth session, and none of
    // the zoo along C and H at once (which does not)
    assert_eq!((bm1684x.c_and_h_cut, bm1688.c_and_h_cut), (0, 0));
}

/// `--import-tpu-mlir` on a zoo network: our own export, read back, is priced as the plan
/// it came from (the permutes at the groups' edges, which it lists as global, joining
/// them again); TPU-MLIR's own cache imports whole, and where our reproduction of its
/// allocator takes every one of its groups, the search's plan costs no more than it by
/// the same model. Returns how many of TPU-MLIR's groups that reproduction refuses, or
/// `None` where TPU-MLIR cut a group along N, which the transformer planner does not model.
fn prices_caches_as_planned(
    g: &NdGraph,
    chip: &NpuChip,
    p: &NdPlan,
    ours: &tpusim_planner::tpumlir::Cache,
    net: &str,
    chip_name: &str,
) -> Option<usize> {
    use tpusim_planner::nd_plan::plan_nd_with_groups;
    use tpusim_planner::tpumlir::{nd_cache::import_nd, parse, to_text};
    let f16 = ElementType::F16;
    let back = import_nd(g, chip, f16, &parse(&to_text(ours)).unwrap()).unwrap();
    assert!(back.unmatched.is_empty(), "{net}: {:?}", back.unmatched);
    let again = plan_nd_with_groups(g, chip, f16, &back.requests).unwrap();
    assert_eq!(again.plan, *p, "{chip_name} {net}: our export, read back");
    assert!(again.refused.is_empty() && again.ungroupable.is_empty());
    let text =
        std::fs::read_to_string(format!("{DATA}/{net}_{chip_name}.tpumlir_cache.json")).unwrap();
    let cache = parse(&text).unwrap();
    let theirs = match import_nd(g, chip, f16, &cache) {
        Err(e) if e.to_string().contains("cut along C and H") => return None,
        other => other.unwrap(),
    };
    assert_eq!(theirs.requests.len(), cache.group_layer.len(), "{net}");
    let priced = plan_nd_with_groups(g, chip, f16, &theirs.requests).unwrap();
    eprintln!(
        "{chip_name} {net}: TPU-MLIR's grouping {} cycles, ours {}, {} of its groups refused",
        priced.plan.cycles,
        p.cycles,
        priced.refused.len()
    );
    // our search finds no plan its own model prices above TPU-MLIR's grouping, its
    // groups cut along the batch included (searched since the forty-first session)
    if priced.refused.is_empty() {
        assert!(priced.plan.cycles >= p.cycles, "{chip_name} {net}");
    }
    Some(priced.refused.len())
}

/// Our exports of the zoo on one chip against TPU-MLIR's own caches.
#[derive(Debug, Default)]
struct ExportTally {
    /// Our groups exactly TPU-MLIR's own (ops, order and cut).
    same_groups: usize,
    /// Our groups cut in slices.
    sliced: usize,
    /// TPU-MLIR's own groups our reproduction of its allocator refuses.
    refused: usize,
    /// Networks whose TPU-MLIR cache cuts a group along C and H at once, which the
    /// transformer planner does not model, so it does not import.
    c_and_h_cut: usize,
}

/// Every zoo network planned and exported on `chip`, checked against TPU-MLIR's own cache
/// there.
fn exports_against_tpu_mlir(chip_name: &str) -> ExportTally {
    use tpusim_planner::tpumlir::nd_export::export_nd;
    let chip = NpuChip::preset(chip_name).unwrap();
    let mut tally = ExportTally::default();
    for (net, _, _) in tpu_mlir_totals() {
        let g = graph(&format!("{DATA}/{net}_static.onnx"), 1);
        let p = plan_nd_graph(&g, &chip, ElementType::F16).unwrap();
        verify_nd_plan(&g, &chip, ElementType::F16, &p).unwrap();
        let cache = export_nd(&g, &chip, ElementType::F16, &p);
        match prices_caches_as_planned(&g, &chip, &p, &cache, &net, chip_name) {
            Some(refused) => tally.refused += refused,
            None => tally.c_and_h_cut += 1,
        }
        let (theirs, known) = tpu_mlir_cache_on(&net, chip_name);
        assert!(!cache.group_layer.is_empty(), "{net}");
        assert_lists_every_op(&cache, &known, &format!("{chip_name} {net}"));
        for grp in &cache.group_layer {
            // every name is one TPU-MLIR gives an op of this graph (GPT-2's scale too, which
            // it renames `div_47_0_Div_matmul_45_0_MatMul` when it moves it before the
            // permute after Q·Kᵀ), but views it folded away (BERT's reshape of P·V's
            // output), which it ignores
            for loc in &grp.locs {
                let view = ["_Reshape", "_Unsqueeze", "_Squeeze", "_Flatten"]
                    .iter()
                    .any(|v| loc.ends_with(v));
                assert!(
                    known.contains(loc) || view,
                    "{net}: {loc} unknown to TPU-MLIR"
                );
            }
            // what this group shares with TPU-MLIR's own group of most overlap comes in
            // the same order (TPU-MLIR refuses a group listed out of its op order)
            let Some((best, secs)) = theirs
                .iter()
                .max_by_key(|t| t.0.iter().filter(|l| grp.locs.contains(l)).count())
            else {
                continue;
            };
            // the same group is cut the same way (llama_d320_s256's scaled and masked
            // scores: 4 H slices, as TPU-MLIR cuts them)
            if *best == grp.locs {
                if serde_json::json!(grp.shape_secs) == *secs {
                    tally.same_groups += 1;
                } else {
                    eprintln!("{chip_name} {net}: {:?} cut {secs}", grp.locs);
                }
            }
            let ours: Vec<&String> = grp.locs.iter().filter(|l| best.contains(l)).collect();
            let same: Vec<&String> = best.iter().filter(|l| grp.locs.contains(l)).collect();
            assert_eq!(ours, same, "{net}");
            tally.sliced += usize::from(grp.shape_secs.iter().any(|&s| s > 1));
        }
    }
    eprintln!("{chip_name}: {tally:?}");
    tally
}

/// Every op TPU-MLIR names (`known`, from its own cache) is listed in `cache`, in a group
/// or as a global layer, and `func.return` last: TPU-MLIR overlaps two groups it finds
/// no global layer between, and then reads a value before the global layer between them
/// writes it (its own cache of bert_d128_s64 on bm1688 with the global layers left out
/// computes a wrong output in its cmodel).
fn assert_lists_every_op(
    cache: &tpusim_planner::tpumlir::Cache,
    known: &std::collections::HashSet<String>,
    what: &str,
) {
    let listed: std::collections::HashSet<&String> = cache
        .group_layer
        .iter()
        .flat_map(|g| g.locs.iter())
        .chain(cache.global_layer.iter().map(|g| &g.loc))
        .collect();
    let unlisted: Vec<&String> = known.iter().filter(|l| !listed.contains(l)).collect();
    assert!(unlisted.is_empty(), "{what}: {unlisted:?}");
    assert_eq!(
        cache.global_layer.last().map(|g| g.loc.as_str()),
        Some("func.return"),
        "{what}"
    );
}

/// The three networks added in the twenty-fifth session, held out, chosen before they
/// were compiled (`bench/tpumlir_tx_zoo.py`): our exports list every op TPU-MLIR names.
/// On bm1684x TPU-MLIR fuses bert_d384_s128's attention, Q, K, V and output projections
/// included, into one `tpu.Attention` a head (its `ConvertMatMul2Attention`: separate Q,
/// K and V weight matmuls, a scale, a padding mask, a softmax), which the planner does
/// not model: those names are not ours, and our export of it does not compile there.
#[test]
fn exports_of_the_newest_held_out_networks_list_every_op_tpu_mlir_names() {
    for net in ["bert_d384_s128", "gpt2_d320_s80_b2", "llama_d512_s96_b3"] {
        for chip_name in ["bm1684x", "bm1688"] {
            let cache = verified_export(net, chip_name);
            let (_, known) = tpu_mlir_cache_on(net, chip_name);
            let fused = known.iter().any(|l| l.contains("_head_"));
            assert_eq!(fused, (net, chip_name) == ("bert_d384_s128", "bm1684x"));
            if !fused {
                assert_lists_every_op(&cache, &known, &format!("{chip_name} {net}"));
            }
        }
    }
}

/// The twelve short-sequence networks added in the thirty-eighth session (1 to 40 tokens,
/// held out, chosen before they were compiled, in two rounds): our exports list every op
/// TPU-MLIR names on both chips (bert_d192_s16's and bert_d320_s5_b3's fused attentions
/// on bm1684x as `nd_fused` names TPU-MLIR's heads). gpt2_d96_s24_b3's QKV pieces are 96
/// columns wide, too narrow for `model_transform` to cut, so TPU-MLIR's lowering cuts
/// them and names them after the matmul (`add_26_0_Add_matmul_1`, `_3`, `_5`, their
/// Reshapes `add_26_0_Add_reshape_1`, …): our first export named them after the Split's
/// pieces and did not compile.
///
/// The ninth round's six (`compiled_round9.jsonl`, thirty-ninth session, held out) too:
/// their first exports did not compile on bm1688 for three of them (`tests/tx_round9.rs`);
/// and the tenth round's three (`compiled_round10.jsonl`, forty-first session, held out),
/// all six of whose first exports compiled, and the eleventh's (`compiled_round11.jsonl`,
/// forty-second session, held out), all six of whose first exports compiled too, and
/// the twelfth's (`compiled_round12.jsonl`, forty-seventh session, held out), all six of
/// whose first exports compiled and ran right in TPU-MLIR's cmodel, and the thirteenth's
/// (`compiled_round13.jsonl`, fiftieth session, held out), five of whose six first
/// exports compiled (bm1688's gpt2_d240_s88_b5 held a group TPU-MLIR could not allocate,
/// from a search rule since withdrawn: bench/RESULTS-plan.md), and the fourteenth's
/// (`compiled_round14.jsonl`, the same session's last build), all six of whose first
/// exports compiled and ran right, and the fifteenth's (`compiled_round15.jsonl`,
/// fifty-first session, held out), all six of whose first exports compiled (five ran
/// right in the cmodel; on bm1688 it stops on TPU-MLIR's own bmodel of
/// llama_d384_s88_b4 too).
#[test]
fn exports_of_the_short_sequence_networks_list_every_op_tpu_mlir_names() {
    for (rows, count) in [
        ("compiled_short_seq.jsonl", 12),
        ("compiled_round9.jsonl", 6),
        ("compiled_round10.jsonl", 3),
        ("compiled_round11.jsonl", 3),
        ("compiled_round12.jsonl", 3),
        ("compiled_round13.jsonl", 3),
        ("compiled_round14.jsonl", 3),
        ("compiled_round15.jsonl", 3),
    ] {
        let nets = nets_recorded_in(rows);
        assert_eq!(nets.len(), count, "{rows}");
        for net in &nets {
            for chip_name in ["bm1684x", "bm1688"] {
                let cache = verified_export(net, chip_name);
                let (_, known) = tpu_mlir_cache_on(net, chip_name);
                assert_lists_every_op(&cache, &known, &format!("{chip_name} {net}"));
            }
        }
    }
    let cache = zoo_export("gpt2_d96_s24_b3", "bm1684x");
    let names: Vec<&String> = cache
        .group_layer
        .iter()
        .flat_map(|g| g.locs.iter())
        .chain(cache.global_layer.iter().map(|g| &g.loc))
        .collect();
    for id in [1, 3, 5] {
        for part in ["matmul", "reshape"] {
            let loc = format!("add_26_0_Add_{part}_{id}");
            assert!(names.contains(&&loc), "{loc}");
        }
    }
}

/// The user-style exports of `crates/graph/tests/data/nd` (Hugging Face's Qwen2, Phi-3,
/// Gemma 2 and our LLaMA, GPT-2 and BERT, random tiny weights), bound to 1 × 64 tokens
/// and simplified as TPU-MLIR's users export them (`tests/data/tx_user/`), were first
/// compiled by TPU-MLIR 1.30.2 in the fifty-second session: the three Hugging Face ones
/// did not compile on either chip. Their RMSNorm is `1 / sqrt(mean + ε)`, which TPU-MLIR
/// runs in f32 from the Sqrt to the Div, Pow(x, 2) is its x·x, and Phi-3 cuts its fused
/// projections by Slices, which TPU-MLIR's lowering makes one matmul a piece
/// (`…_MatMul_matmul_1`). Every op TPU-MLIR names is in our export, and every name our
/// groups list is one of its (views aside, which it ignores). Also a round of six Hugging
/// Face models written in the fifty-third session before any was planned
/// (`tests/data/tx_hf/`, `bench/hf_tx_round.py`): hf_phi3_d96_s64's export did not
/// compile, its gate and up halves of 192 columns cut at the top and named after their
/// Slices (`…/mlp/Slice_output_0_Slice`).
#[test]
fn hugging_face_exports_list_every_op_tpu_mlir_names() {
    let user = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tx_user");
    let round = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tx_hf");
    let mut checked = 0;
    for (dir, net) in [
        (user, "bert_tiny"),
        (user, "gpt2_tiny"),
        (user, "hf_gemma2"),
        (user, "hf_phi3"),
        (user, "hf_qwen2"),
        (user, "llama_tiny"),
        (round, "hf_llama_d64_s80"),
        (round, "hf_mistral_d96_s64"),
        (round, "hf_qwen2_d128_s48_b2"),
        (round, "hf_gemma2_d64_s96"),
        (round, "hf_phi3_d96_s64"),
        (round, "hf_gemma_d64_s64"),
    ] {
        for chip_name in ["bm1684x", "bm1688"] {
            let Ok(text) =
                std::fs::read_to_string(format!("{dir}/{net}_{chip_name}.tpumlir_cache.json"))
            else {
                continue; // TPU-MLIR's own flow stops on bert_tiny for bm1688
            };
            let theirs = tpusim_planner::tpumlir::parse(&text).unwrap();
            let known: std::collections::HashSet<String> = theirs
                .group_layer
                .iter()
                .flat_map(|g| g.locs.iter().cloned())
                .chain(theirs.global_layer.iter().map(|g| g.loc.clone()))
                .collect();
            let chip = NpuChip::preset(chip_name).unwrap();
            let g = graph(&format!("{dir}/{net}_static.onnx"), 1);
            let p = plan_nd_graph(&g, &chip, ElementType::F16).unwrap();
            verify_nd_plan(&g, &chip, ElementType::F16, &p).unwrap();
            let ours =
                tpusim_planner::tpumlir::nd_export::export_nd(&g, &chip, ElementType::F16, &p);
            let what = format!("{chip_name} {net}");
            assert_lists_every_op(&ours, &known, &what);
            for loc in ours.group_layer.iter().flat_map(|g| g.locs.iter()) {
                let view = is_view_loc(loc);
                assert!(
                    known.contains(loc) || view,
                    "{what}: {loc} unknown to TPU-MLIR"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 23);
}

/// The networks whose compiles the rows of `file` (under `tx_zoo/`) record.
fn nets_recorded_in(file: &str) -> Vec<String> {
    let rows = std::fs::read_to_string(format!("{DATA}/{file}")).unwrap();
    let mut nets: Vec<String> = rows
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["net"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    nets.sort();
    nets.dedup();
    nets
}

/// bm1688 keeps a weight matmul's bias in f32 under F16 (its lowered MLIR: gpt2_d320_s80_b2's
/// `tensor<1x1x320xf32>`), bm1684x in f16: the FFN's 1,280-wide bias takes 5,120 bytes of
/// a bm1688 lane in a group. Sized at 16 bits, the planner packed the last FFN and the
/// LM head in 3 C slices that TPU-MLIR could not allocate.
#[test]
fn a_matmul_bias_is_f32_on_bm1688_and_f16_on_bm1684x() {
    use tpusim_planner::tpumlir::nd_form::lower;
    let g = graph(&format!("{DATA}/gpt2_d320_s80_b2_static.onnx"), 1);
    for (chip_name, wide) in [("bm1684x", false), ("bm1688", true)] {
        let f32_ops = NpuChip::preset(chip_name)
            .unwrap()
            .f32_ops_at(ElementType::F16);
        let layers = lower(&g, f32_ops, 16);
        let fc = layers
            .iter()
            .find(|l| l.locs.iter().any(|loc| loc == "add_139_0_Add"))
            .unwrap();
        let bias = fc
            .reads
            .iter()
            .find(|v| v.weight && v.dims.len() == 1)
            .unwrap();
        assert_eq!(bias.dims, [1280]);
        assert_eq!(bias.wide, wide, "{chip_name}");
        // the weight itself stays 16-bit
        assert!(fc
            .reads
            .iter()
            .filter(|v| v.weight && v.dims.len() == 2)
            .all(|v| !v.wide));
    }
}

/// llama_d640_s128_b2 on bm1688: TPU-MLIR estimates its transfers 1.6 times faster than
/// they run and moves them by those estimates and by one slice's compute a row; moved
/// so, the next layer's Q, K and V weights load together under the FFN's down projection,
/// and a group of the down projection through Q in 4 C slices does not allocate (our
/// exports before the twenty-fifth session: "local memory allocate failed"). The plan no
/// longer makes it (since the fortieth session the down projection runs global).
#[test]
fn the_ffn_down_projection_is_not_grouped_with_the_next_qkv_where_tpu_mlir_cannot_allocate_it() {
    let cache = zoo_export("llama_d640_s128_b2", "bm1688");
    let down = cache
        .group_layer
        .iter()
        .find(|grp| grp.locs.iter().any(|l| l == "matmul_134_0_MatMul"));
    assert!(down.map_or(true, |grp| !grp
        .locs
        .iter()
        .any(|l| l == "matmul_155_0_MatMul")));
}

/// A chain of `n` element-wise adds of a [1, seq, width] value with a bias weight.
fn long_chain(seq: u64, width: u64, n: usize) -> NdGraph {
    use tpusim_graph::nd::{NdEdge, NdInput, NdInputKind, NdNode, Work};
    let dims = vec![1, seq, width];
    let elements = (seq * width) as f64;
    let nodes = (0..n)
        .map(|i| NdNode {
            name: format!("add{i}"),
            op_type: "Add".into(),
            work: Work::Vector { flops: elements },
            elements_in: elements,
            weight_elements: width as f64,
            elements_out: elements,
            out_dims: dims.clone(),
            inputs: vec![
                NdEdge {
                    name: if i == 0 {
                        "x".into()
                    } else {
                        format!("v{}", i - 1)
                    },
                    dims: dims.clone(),
                    kind: NdInputKind::Activation,
                    scalar: None,
                },
                NdEdge {
                    name: format!("b{i}"),
                    dims: vec![width],
                    kind: NdInputKind::Weight,
                    scalar: None,
                },
            ],
            outputs: vec![format!("v{i}")],
            perm: Vec::new(),
        })
        .collect();
    NdGraph {
        name: "chain".into(),
        inputs: vec![NdInput {
            name: "x".into(),
            dims,
            f32: false,
        }],
        nodes,
        parameters: n as u64 * width,
        opset: 17,
        ir_version: 8,
    }
}

#[test]
fn a_group_too_big_to_hold_whole_is_cut_along_the_sequence() {
    // [1, 4096, 1024] f16: 64 rows of 2 KiB on every lane, 128 KiB a value; three of them
    // do not fit a 256 KiB lane whole
    let g = long_chain(4096, 1024, 4);
    let p = planned(&g);
    let grouped: Vec<_> = p.groups.iter().filter(|r| r.end - r.start > 1).collect();
    assert!(!grouped.is_empty(), "{:?}", p.groups);
    for r in &grouped {
        assert!(r.csecs > 1 && r.hsecs == 1, "{r:?}");
        assert!(r.lane_bytes <= p.lane_bytes, "{r:?}");
    }
    assert!(p.cycles < p.ungrouped_cycles);
    // short enough to hold whole: no cut
    let p = planned(&long_chain(256, 256, 4));
    assert!(p.groups.iter().all(|r| r.csecs == 1 && r.hsecs == 1));
    assert!(p.groups.iter().any(|r| r.end - r.start > 1));
    // the verifier recomputes the cut: a plan claiming another is refused
    let g = long_chain(4096, 1024, 4);
    let mut q = planned(&g);
    let k = q.groups.iter().position(|r| r.end - r.start > 1).unwrap();
    q.groups[k].csecs += 1;
    let e = verify_nd_plan(&g, &chip(), ElementType::F16, &q)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the model gives"), "{e}");
}

/// `long_chain` of three layers whose middle one is `op_type` (no weight).
fn chain_around(op_type: &str, seq: u64, width: u64) -> NdGraph {
    let mut g = long_chain(seq, width, 3);
    let middle = &mut g.nodes[1];
    middle.op_type = op_type.into();
    middle.inputs.truncate(1);
    middle.weight_elements = 0.0;
    g
}

#[test]
fn a_softmax_or_norm_buffer_can_cut_a_group_that_fits_without_it() {
    // [1, 4096, 384] f16 on bm1684x: 48 KiB a value on every lane, so the three values
    // live at the middle layer fit a 256 KiB lane whole; TPU-MLIR's softmax and
    // LayerNorm also keep two f32 copies of every plane (192 KiB) and per-row figures,
    // and then they do not
    let relu = planned(&chain_around("Relu", 4096, 384));
    assert!(
        relu.groups.len() == 1 && relu.groups[0].csecs == 1,
        "{:?}",
        relu.groups
    );
    for op in ["Softmax", "LayerNormalization"] {
        let p = planned(&chain_around(op, 4096, 384));
        let holding = p
            .groups
            .iter()
            .find(|r| (r.start..r.end).contains(&1))
            .unwrap();
        assert!(
            holding.end - holding.start == 1 || holding.csecs > 1,
            "{op}: {:?}",
            p.groups
        );
    }
    // short enough, it is held whole, and its buffer counts at its step: two [1, 64,
    // 128] f16 values (256 B a lane each) beside 2 × 512 + 128 B of LayerNorm's
    let relu = planned(&chain_around("Relu", 64, 128));
    let norm = planned(&chain_around("LayerNormalization", 64, 128));
    assert!(relu.groups.len() == 1 && norm.groups.len() == 1);
    assert!(norm.groups[0].lane_bytes >= 512 + 1152, "{:?}", norm.groups);
    assert!(relu.groups[0].lane_bytes < 1152, "{:?}", relu.groups);
}

/// The zoo network `net` planned on `chip_name` in F16 and exported as a TPU-MLIR cache.
/// `net`'s plan on `chip_name`, verified, exported as a TPU-MLIR cache.
fn verified_export(net: &str, chip_name: &str) -> tpusim_planner::tpumlir::Cache {
    use tpusim_planner::tpumlir::nd_export::export_nd;
    let chip = NpuChip::preset(chip_name).unwrap();
    let g = graph(&format!("{DATA}/{net}_static.onnx"), 1);
    let p = plan_nd_graph(&g, &chip, ElementType::F16).unwrap();
    verify_nd_plan(&g, &chip, ElementType::F16, &p).unwrap();
    export_nd(&g, &chip, ElementType::F16, &p)
}

fn zoo_export(net: &str, chip_name: &str) -> tpusim_planner::tpumlir::Cache {
    use tpusim_planner::tpumlir::nd_export::export_nd;
    let chip = NpuChip::preset(chip_name).unwrap();
    let g = graph(&format!("{DATA}/{net}_static.onnx"), 1);
    let plan = plan_nd_graph(&g, &chip, ElementType::F16).unwrap();
    export_nd(&g, &chip, ElementType::F16, &plan)
}

/// The slices of the exported group that names `loc`, on `chip`: (C, H).
fn exported_slices(net: &str, chip_name: &str, loc: &str) -> (i64, i64) {
    let cache = zoo_export(net, chip_name);
    let grp = cache
        .group_layer
        .iter()
        .find(|grp| grp.locs.iter().any(|l| l == loc))
        .unwrap_or_else(|| panic!("{loc} is in no group on {chip_name}"));
    (grp.shape_secs[1], grp.shape_secs[3])
}

#[test]
fn groups_are_cut_as_far_as_tpu_mlir_needs_to_allocate_them() {
    // llama_d320_s256 (held out, though its compiles have been read since), as
    // TPU-MLIR 1.30.2 cuts its own groups:
    // - the masked scores on bm1684x in 4 H slices: in 3 they fit a count of live bytes,
    //   and TPU-MLIR's allocator refuses them;
    assert_eq!(
        exported_slices("llama_d320_s256", "bm1684x", "where_89_0_Where"),
        (1, 4)
    );
    // - the rotary embeddings of Q and K on bm1688, 14 layers in 2 H slices: the cos
    //   and sin tables cut with them, as TPU-MLIR loads them;
    assert_eq!(
        exported_slices("llama_d320_s256", "bm1688", "add_76_0_Add"),
        (1, 2)
    );
    assert_eq!(
        exported_slices("llama_d320_s256", "bm1688", "mul_61_0_Mul"),
        (1, 2)
    );
    // - P·V and the FFN on bm1688 in C slices, V held whole. Through the next layer's
    //   norm and QKV (19 ops) it took 4: in 3, TPU-MLIR, moving its weight loads early,
    //   found no room ("local memory allocate failed"). Timed in TPU-MLIR's pipelined
    //   time steps (fortieth session) the group ends at the FFN's residual add (13 ops)
    //   in 2 slices, which TPU-MLIR compiled: 1,780,025 cycles, 0.996 of its own
    assert_eq!(
        exported_slices(
            "llama_d320_s256",
            "bm1688",
            "matmul_91_0_MatMul_hdim_is_batch"
        ),
        (2, 1)
    );
}

/// Whether a TPU-MLIR name is a view's (`unsqueeze_78_0_Unsqueeze`, `reshape_49_0_Reshape`).
fn is_view_loc(loc: &str) -> bool {
    ["_Reshape", "_Unsqueeze", "_Squeeze", "_Flatten"]
        .iter()
        .any(|s| loc.ends_with(s))
}

/// The zoo's networks (`zoo.json`).
fn zoo_nets() -> Vec<String> {
    let zoo: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{DATA}/zoo.json")).unwrap())
            .unwrap();
    zoo.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn a_group_holding_a_view_is_never_cut_along_h() {
    // TPU-MLIR's own groups hold views whole or in N or C slices, never in H slices (a
    // view's `AllowDataSplit`: N and C alone) ...
    for chip in ["bm1684x", "bm1688"] {
        for net in zoo_nets() {
            for (locs, secs) in tpu_mlir_cache_on(&net, chip).0 {
                if locs.iter().any(|l| is_view_loc(l)) {
                    assert_eq!(secs[3], 1, "TPU-MLIR's own {net} on {chip}: {locs:?}");
                }
            }
        }
    }
    // ... and our exports follow it: llama_d640_s128_b2's and llama_d512_s96_b3's on
    // bm1688 held K's rotary and its `unsqueeze_78_0_Unsqueeze` in 2 H slices, which
    // TPU-MLIR 1.30.2 refused ("local memory allocate failed for group 9")
    for chip in ["bm1684x", "bm1688"] {
        for net in zoo_nets() {
            for grp in zoo_export(&net, chip).group_layer {
                if grp.locs.iter().any(|l| is_view_loc(l)) {
                    assert_eq!(grp.shape_secs[3], 1, "our {net} on {chip}: {:?}", grp.locs);
                }
            }
        }
    }
    // the rotary group itself may still be cut along H, the Unsqueeze left outside
    let (_, h) = exported_slices("llama_d640_s128_b2", "bm1688", "add_76_0_Add");
    assert_eq!(h, 2);
}

/// One global layer of TPU-MLIR's own grouping, priced by our model beside its profile.
#[derive(Debug)]
struct PricedLayer {
    /// TPU-MLIR's layer type (`Active`, `MatMul`, `Softmax`, …).
    kind: String,
    /// Our layer's op type.
    op: String,
    /// Elements it writes.
    elements: u64,
    /// Our cycles over TPU-MLIR's.
    ratio: f64,
    /// Where it was seen.
    what: String,
}

/// TPU-MLIR's own grouping of zoo network `net` on `chip_name`, imported and priced;
/// `None` for a grouping cut along both C and H, which does not import
/// (`exports_against_tpu_mlir`).
fn own_grouping_priced(net: &str, chip_name: &str) -> Option<NdPlan> {
    own_grouping_given(net, chip_name).map(|p| p.plan)
}

/// [`own_grouping_priced`] with the groups our model refuses.
fn own_grouping_given(net: &str, chip_name: &str) -> Option<tpusim_planner::nd_plan::NdGivenPlan> {
    use tpusim_planner::nd_plan::plan_nd_with_groups;
    use tpusim_planner::tpumlir::{nd_cache::import_nd, parse};
    let chip = NpuChip::preset(chip_name).unwrap();
    let g = graph(&format!("{DATA}/{net}_static.onnx"), 1);
    let text =
        std::fs::read_to_string(format!("{DATA}/{net}_{chip_name}.tpumlir_cache.json")).unwrap();
    let theirs = match import_nd(&g, &chip, ElementType::F16, &parse(&text).unwrap()) {
        Err(e) if e.to_string().contains("cut along C and H") => return None,
        other => other.unwrap(),
    };
    Some(plan_nd_with_groups(&g, &chip, ElementType::F16, &theirs.requests).unwrap())
}

/// Each zoo network and chip whose own grouping by TPU-MLIR has groups that `flagged`
/// picks out of its priced plan, with their indices (a grouping cut along two axes does
/// not import and is left out).
fn own_groups_flagged(
    flagged: fn(&tpusim_planner::nd_plan::NdGivenPlan) -> &[usize],
) -> Vec<String> {
    let mut out = Vec::new();
    for chip_name in ["bm1684x", "bm1688"] {
        for net in zoo_nets() {
            let Some(p) = own_grouping_given(&net, chip_name) else {
                continue;
            };
            if !flagged(&p).is_empty() {
                out.push(format!("{net} {chip_name} {:?}", flagged(&p)));
            }
        }
    }
    out
}

#[test]
fn tpu_mlirs_own_groups_allocate_by_our_reproduction_but_five_groups() {
    // Every group TPU-MLIR 1.30.2 formed for the zoo allocates by our reproduction of
    // its time steps and allocator, but llama_d1024_s256's two P·V…SiLU groups on
    // bm1688 (in 3 C slices; a known gap, RESULTS-plan.md). Until the thirty-first
    // session a second check, every transfer 1,000 times slower, also refused
    // bert_d384_s128's whole group and llama_d320_s256's FFN in 3 C slices on bm1688,
    // which TPU-MLIR compiles. Held out, the ninth round adds bert_d256_s384's group of
    // 15 ops in 4 C slices on bm1688 (its padding mask's Add to the next layer's Q and K
    // projections): another gap, and why our grouping of it compiles 0.7 % behind.
    // The tenth to twelfth rounds entered `zoo.json` in the forty-seventh session, and
    // one more BERT group on bm1688 is refused: bert_d320_s256_b2's fifth. A sixth,
    // bert_d288_s160_b3's whole network in 2 N slices (126,304 of a lane's 131,072 bytes
    // in TPU-MLIR's program), was refused until its weights were no longer held through
    // the loop: together they take more than a lane, and TPU-MLIR then holds nothing
    // (`nd_place::may_hold`). The fifteenth round (held out, fifty-first session) adds
    // bert_d352_s96_b3's second group on bm1688, 28 layers held whole (layer 0's masked
    // scores to the end), which TPU-MLIR places and our reproduction does not: why our grouping
    // of it compiles 1.2 % behind.
    let refused = own_groups_flagged(|p| &p.refused);
    assert_eq!(
        refused,
        [
            "bert_d256_s384 bm1688 [3]",
            "bert_d320_s256_b2 bm1688 [4]",
            "bert_d352_s96_b3 bm1688 [3]",
            "llama_d1024_s256 bm1688 [5, 19]"
        ]
    );
}

/// Held-out bert_d352_s96_b3 on bm1684x (round 15): TPU-MLIR fuses both attentions into
/// eleven heads each and holds the whole network, 66 of our layers, in one unsliced
/// group. A bound of 64 layers on our search left the last LayerNorm and its output cast
/// in a group of their own, 2.9 % slower compiled; TPU-MLIR bounds a group by local
/// memory alone, and so does our search now: its plan names exactly TPU-MLIR's groups.
#[test]
fn a_group_holds_as_many_layers_as_local_memory_allows() {
    let ours = verified_export("bert_d352_s96_b3", "bm1684x");
    let (theirs, _) = tpu_mlir_cache_on("bert_d352_s96_b3", "bm1684x");
    let ours: Vec<(Vec<String>, Vec<i64>)> = ours
        .group_layer
        .iter()
        .map(|g| (g.locs.clone(), g.shape_secs.clone()))
        .collect();
    let theirs: Vec<(Vec<String>, Vec<i64>)> = theirs
        .into_iter()
        .map(|(locs, secs)| (locs, serde_json::from_value(secs).unwrap()))
        .collect();
    assert_eq!(ours, theirs);
    assert!(ours[0].0.len() > 64, "{}", ours[0].0.len());
}

/// TPU-MLIR's bm1688 grouping of bert_d288_s160_b3 (held out, round 12): the whole
/// 2-layer network in one group of 2 N slices, 3 sequences cut 2 and 1, its weights
/// loaded in every slice. It compiles to 1,719,417 cycles; its profile gives the group's
/// compute 1,541,332 cycles of TIU commands (MatMul 1,035,504, GELU 336,978, softmax
/// 113,586, LayerNorm 37,140). Priced with every slice as the larger (2 sequences), its
/// element-wise layers came to 4/3 of their commands, the group to 1,697,200 of compute
/// and the grouping to 1,820,640 (5.9 % over); slice by slice, within 1 % and 4 %.
#[test]
fn a_group_cut_along_the_batch_is_priced_slice_by_slice() {
    let theirs = own_grouping_priced("bert_d288_s160_b3", "bm1688").unwrap();
    let group = theirs.groups.iter().find(|g| g.end - g.start > 1).unwrap();
    assert_eq!((group.end - group.start, group.nsecs), (38, 2));
    let tiu = group.compute_cycles as f64 / 1_541_332.0;
    assert!((0.99..=1.0).contains(&tiu), "{tiu}");
    let total = theirs.cycles as f64 / 1_719_417.0;
    assert!((0.96..=1.0).contains(&total), "{total}");
}

#[test]
fn tpu_mlirs_own_cut_groups_never_need_a_value_whole_and_in_slices() {
    // TPU-MLIR's backward slicing refuses a cut group that computes a value one reader
    // needs whole (a heads-as-batch matmul's right operand, or what it is computed from)
    // and another in slices; none of the groups it formed for the zoo does
    let split = own_groups_flagged(|p| &p.split_shared);
    assert_eq!(split, Vec::<String>::new());
}

/// The group TPU-MLIR 1.30.2 refused in our bm1688 export of gpt2_d320_s80_b2 (a build
/// pricing in-group weight matmuls by their lane rows, before the rule): the GELU, the
/// FFN down projection, the LayerNorm, the Q, K and V projections and Q·Kᵀ in 3 C
/// slices. K's projection needs the LayerNorm's output whole (K is Q·Kᵀ's right
/// operand), Q's and V's need it in slices: "multi-branch backward failed since multi-branch op's
/// user's tpu-kernel is not supported and user is not LutOp or CastOp".
#[test]
fn a_cut_group_needing_a_value_whole_and_in_slices_is_refused() {
    use tpusim_planner::nd_plan::{plan_nd_with_groups, NdGroupRequest};
    let chip = NpuChip::preset("bm1688").unwrap();
    let g = graph(&format!("{DATA}/gpt2_d320_s80_b2_static.onnx"), 1);
    let given = |start: usize, end: usize, csecs: u64| {
        let r = NdGroupRequest {
            start,
            end,
            nsecs: 1,
            csecs,
            hsecs: 1,
        };
        plan_nd_with_groups(&g, &chip, ElementType::F16, &[r]).unwrap()
    };
    let refused = given(17, 42, 3);
    let names: Vec<&str> = refused.plan.layers[17..42]
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    assert!(names.contains(&"/LayerNormalization_85") && names.contains(&"/MatMul_116"));
    let starts: Vec<usize> = refused
        .split_shared
        .iter()
        .map(|&i| refused.plan.groups[i].start)
        .collect();
    assert_eq!(starts, [17]);
    // held whole, every reader needs all of it; without Q·Kᵀ, K leaves the group in
    // slices as Q and V do
    assert!(given(17, 42, 1).split_shared.is_empty());
    assert!(given(17, 38, 3).split_shared.is_empty());
    // and the search never makes such a group
    let ours = plan_nd_graph(&g, &chip, ElementType::F16).unwrap();
    let requests: Vec<NdGroupRequest> = ours.groups.iter().map(NdGroupRequest::from).collect();
    let again = plan_nd_with_groups(&g, &chip, ElementType::F16, &requests).unwrap();
    assert!(ours.groups.iter().any(|grp| grp.csecs > 1));
    assert!(again.split_shared.is_empty());
}

/// The rotary block of llama_d512_s96_b3's first layer (batch 3) on bm1688, as TPU-MLIR
/// 1.30.2 groups it: 14 ops in 2 N slices (a group holding a view is never cut along H,
/// and the cos and sin tables, broadcast over the heads, keep it from C). A cache may ask
/// for such a cut; it is priced as a cut group, exported as TPU-MLIR's shape_secs and
/// read back. (Its cycles are not yet right: TPU-MLIR's profile spans 72,346 cycles for
/// that group, and the search does not offer N cuts; RESULTS-plan.md, "Groups cut along
/// the batch".)
#[test]
fn a_group_cut_along_the_batch_is_priced_exported_and_read_back() {
    use tpusim_planner::nd_plan::{plan_nd_with_groups, NdGroupRequest};
    use tpusim_planner::tpumlir::{nd_cache::import_nd, nd_export::export_nd, parse, to_text};
    let chip = NpuChip::preset("bm1688").unwrap();
    let f16 = ElementType::F16;
    let g = graph(&format!("{DATA}/llama_d512_s96_b3_static.onnx"), 1);
    let rotary = |nsecs: u64| NdGroupRequest {
        start: 7,
        end: 23,
        nsecs,
        csecs: 1,
        hsecs: 1,
    };
    let whole = plan_nd_with_groups(&g, &chip, f16, &[rotary(1)]).unwrap();
    let whole = whole
        .plan
        .groups
        .iter()
        .find(|grp| grp.start == 7)
        .unwrap()
        .clone();
    let given = plan_nd_with_groups(&g, &chip, f16, &[rotary(2)]).unwrap();
    let grp = given.plan.groups.iter().find(|grp| grp.start == 7).unwrap();
    assert_eq!((grp.end, grp.nsecs, grp.csecs, grp.hsecs), (23, 2, 1, 1));
    assert!(given.refused.is_empty() && given.ungroupable.is_empty());
    // a slice of each value at a time, timed by its slices (not as the group held whole
    // in TPU-MLIR's time steps, as it was before nsecs counted as a cut)
    assert!(
        grp.lane_bytes < whole.lane_bytes,
        "{grp:?} against {whole:?}"
    );
    assert_ne!(grp.cycles, whole.cycles);
    // exported as TPU-MLIR's shape_secs [2, 1, 1, 1, 1], and read back the same
    let cache = export_nd(&g, &chip, f16, &given.plan);
    let secs: Vec<Vec<i64>> = cache
        .group_layer
        .iter()
        .map(|grp| grp.shape_secs.clone())
        .collect();
    assert_eq!(secs, [vec![2, 1, 1, 1, 1]]);
    let back = import_nd(&g, &chip, f16, &parse(&to_text(&cache)).unwrap()).unwrap();
    let again = plan_nd_with_groups(&g, &chip, f16, &back.requests).unwrap();
    assert_eq!(again.plan, given.plan);
    // a cut along N and C at once, as TPU-MLIR's own attention groups of it are, is read,
    // priced at both and written back as it came
    let theirs = std::fs::read_to_string(format!(
        "{DATA}/llama_d512_s96_b3_bm1688.tpumlir_cache.json"
    ))
    .unwrap();
    let theirs = parse(&theirs).unwrap();
    let asked: Vec<Vec<i64>> = theirs
        .group_layer
        .iter()
        .map(|grp| grp.shape_secs.clone())
        .collect();
    assert!(asked.contains(&vec![3, 2, 1, 1, 1]), "{asked:?}");
    let imported = import_nd(&g, &chip, f16, &theirs).unwrap();
    let priced = plan_nd_with_groups(&g, &chip, f16, &imported.requests).unwrap();
    let both: Vec<&NdGroup> = priced
        .plan
        .groups
        .iter()
        .filter(|grp| grp.nsecs == 3 && grp.csecs == 2)
        .collect();
    assert!(!both.is_empty());
    // one slice of each: the batch's one sequence in 3, half its rows in 2, so each
    // holds less than the same group cut along C alone
    for grp in both {
        let request = NdGroupRequest {
            nsecs: 1,
            ..NdGroupRequest::from(grp)
        };
        let c_only = plan_nd_with_groups(&g, &chip, f16, &[request]).unwrap();
        let c_only = c_only
            .plan
            .groups
            .iter()
            .find(|o| o.start == grp.start)
            .unwrap();
        assert!(
            grp.lane_bytes < c_only.lane_bytes,
            "{grp:?} against {c_only:?}"
        );
    }
    let written: Vec<Vec<i64>> = export_nd(&g, &chip, f16, &priced.plan)
        .group_layer
        .iter()
        .map(|grp| grp.shape_secs.clone())
        .collect();
    assert_eq!(written, asked);
}

/// TPU-MLIR's own grouping of every zoo network on `chip_name` imported and priced, each
/// global layer beside the same layer of its profile (`file`), for the networks where the
/// two runs align one to one.
fn own_global_layers_priced(chip_name: &str, file: &str) -> Vec<PricedLayer> {
    let rows: Vec<Value> = std::fs::read_to_string(format!("{DATA}/{file}"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut out = Vec::new();
    for (net, _, _) in tpu_mlir_totals() {
        let Some(p) = own_grouping_priced(&net, chip_name) else {
            continue;
        };
        let profiled: Vec<&Value> = rows
            .iter()
            .filter(|r| r["net"] == net.as_str() && r.get("type").is_some())
            .filter(|r| !(r["global"] == true && r["cycles"] == 0))
            .collect();
        let priced: Vec<_> = p.groups.iter().filter(|r| r.cycles > 0).collect();
        if priced.len() != profiled.len() {
            continue;
        }
        for (r, theirs) in priced.iter().zip(profiled) {
            if theirs["global"] != true {
                continue;
            }
            let out_dims = &theirs["outputs"][0]["shape"];
            let elements = out_dims.as_array().map_or(0, |d| {
                d.iter().map(|x| x.as_u64().unwrap()).product::<u64>()
            });
            out.push(PricedLayer {
                kind: theirs["type"].as_str().unwrap().to_string(),
                op: p.layers[r.start].op_type.clone(),
                elements,
                ratio: r.cycles as f64 / theirs["cycles"].as_f64().unwrap(),
                what: format!("{net} {out_dims}"),
            });
        }
    }
    out
}

/// Every priced layer of TPU-MLIR type `kind` of 16,384 elements or more within `band`;
/// at least `min` of them.
fn assert_kind_within(
    layers: &[PricedLayer],
    kind: &str,
    min: usize,
    band: std::ops::RangeInclusive<f64>,
) {
    let of_kind: Vec<&PricedLayer> = layers
        .iter()
        .filter(|l| l.kind == kind && l.elements >= 16_384)
        .collect();
    assert!(of_kind.len() >= min, "{kind}: {} layers", of_kind.len());
    for l in of_kind {
        assert!(
            band.contains(&l.ratio),
            "{kind} ({}) in {}: {:.3} of TPU-MLIR's cycles",
            l.op,
            l.what,
            l.ratio
        );
    }
}

#[test]
fn tpu_mlirs_own_global_layers_cost_what_its_profiles_show_on_bm1684x() {
    // measured (bench/RESULTS-plan.md, twenty-third session): activations 0.991–1.006
    // (a function table's EU operations an element, `nd_global::function_ops`, run
    // double-buffered), softmaxes 0.999–1.000 (rows at the per-plane floors, 26 EU
    // operations an element and 81 cycles a lane's row), element-wise layers at the
    // matrix rates 0.997–1.006
    let layers = own_global_layers_priced("bm1684x", "tpumlir_layers.jsonl");
    assert_kind_within(&layers, "Active", 30, 0.98..=1.02);
    assert_kind_within(&layers, "Softmax", 6, 0.98..=1.02);
    for kind in ["Add", "Mul", "MulConst", "AddConst", "Where"] {
        assert_kind_within(&layers, kind, 6, 0.98..=1.02);
    }
}

#[test]
fn tpu_mlirs_own_global_layers_cost_what_its_profiles_show_on_bm1688() {
    // measured (bench/RESULTS-plan.md, twenty-third session): activations 0.942–1.017,
    // matmuls 0.961–1.028 (flat at 26.67 bytes a cycle, sliced past half the local
    // memory; llama_d128_s64's P·V as written 0.924, compared since the twenty-fourth
    // session, when its permutes joined groups and its layers aligned), softmaxes 0.847–1.000 (gpt2_d192's in two uneven slices the low one),
    // permutes 0.809–1.000 (rows of 32 elements the low one), element-wise layers
    // 0.87–1.04 since each operand's transfer pays its set-up (0.81–1.00 before). Since
    // the thirty-ninth session a permute at a group's edge takes no room of its own, so
    // TPU-MLIR's llama_d320_s256 grouping, its permutes fused as it fuses them, aligns
    // with its profile and is compared: its global softmax [1, 5, 256, 256] at 1.037.
    let layers = own_global_layers_priced("bm1688", "tpumlir_layers_bm1688.jsonl");
    assert_kind_within(&layers, "Active", 40, 0.93..=1.03);
    assert_kind_within(&layers, "MatMul", 50, 0.92..=1.04);
    assert_kind_within(&layers, "Softmax", 8, 0.84..=1.04);
    assert_kind_within(&layers, "Permute", 8, 0.8..=1.02);
    for kind in ["Add", "Mul", "MulConst", "AddConst", "Where"] {
        assert_kind_within(&layers, kind, 6, 0.86..=1.04);
    }
}

/// TPU-MLIR's own groups of the zoo (both chips), imported and priced, beside the spans
/// its compiled profiles give them (`group_spans.jsonl`, from
/// `bench/tpumlir_group_spans.py`): every group held whole that spans 100,000 cycles or
/// more within 5 %, of 30,000 or more within 15 % (14.2 % at worst, bert_d256_s96_b2's
/// on bm1688; 17.2 % before views, casts, slices and concats cost their pass over what
/// they write). Such a group's weights load beside its matmuls time step by time
/// step; run back to back, as the planner timed them before, gpt2_d768_s64's last group
/// on bm1684x came to 0.907 of its span and llama_d1024_s256's P·V…FFN group to 0.941.
/// (Shorter groups are left out: their first loads may run under the layer before,
/// which their span then counts.)
///
/// llama_d640_s128_b2's o_proj…FFN group on bm1684x (layers 29 on), compared since the
/// fortieth session, came to 0.931 of its span; since its RMSNorms run their kernel's
/// commands (`nd_plan::local_norm`) and its attention output loads permuted a row at a
/// time, 0.960.
#[test]
fn long_groups_held_whole_take_what_tpu_mlir_compiles_them_to() {
    let spans: Vec<Value> = std::fs::read_to_string(format!("{DATA}/group_spans.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut checked = 0;
    for chip_name in ["bm1684x", "bm1688"] {
        for (net, _, _) in tpu_mlir_totals() {
            let ours: Vec<&Value> = spans
                .iter()
                .filter(|s| s["net"] == net.as_str() && s["chip"] == chip_name)
                .collect();
            let Some(p) = own_grouping_priced(&net, chip_name) else {
                continue;
            };
            let groups: Vec<_> = p.groups.iter().filter(|r| r.end - r.start > 1).collect();
            assert_eq!(groups.len(), ours.len(), "{chip_name} {net}");
            for (grp, span) in groups.iter().zip(ours) {
                let compiled = span["cycles"].as_f64().unwrap();
                if grp.nsecs * grp.csecs * grp.hsecs > 1 || compiled < 30_000.0 {
                    continue;
                }
                let ratio = grp.cycles as f64 / compiled;
                let band = if compiled < 100_000.0 {
                    0.85..=1.15
                } else {
                    0.95..=1.05
                };
                assert!(
                    band.contains(&ratio),
                    "{chip_name} {net} group {}: {} cycles, compiled {compiled}",
                    span["group"],
                    grp.cycles
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 35, "{checked}");
}

/// The held-out bert_d320_s112_b3's whole network (its layers 2..40) forced into one
/// group on bm1688: TPU-MLIR 1.30.2 fails to place it in 2 N slices of its 3 sequences
/// (2 of its 96 buffers found no room, 128,096 bytes of a lane taken) and places it in
/// 3 (115,968). Our reproduction placed the 2-slice group until its time steps were
/// estimated at the first, larger slice and Q, K and V were read through their
/// reshapes, as TPU-MLIR's are; it now fails after 94 placements, as TPU-MLIR's does.
#[test]
fn a_whole_network_in_two_batch_slices_is_refused_as_tpu_mlir_refuses_it() {
    use tpusim_planner::nd_plan::{plan_nd_with_groups, NdGroupRequest};
    let chip = NpuChip::preset("bm1688").unwrap();
    let g = graph(&format!("{DATA}/bert_d320_s112_b3_static.onnx"), 1);
    let whole_in = |nsecs: u64| {
        let r = NdGroupRequest {
            start: 2,
            end: 40,
            nsecs,
            csecs: 1,
            hsecs: 1,
        };
        plan_nd_with_groups(&g, &chip, ElementType::F16, &[r]).unwrap()
    };
    let two = whole_in(2);
    assert_eq!(
        two.plan.layers.len(),
        40,
        "the network's last layer ends the group"
    );
    let group = |p: &tpusim_planner::nd_plan::NdGivenPlan| {
        p.plan.groups.iter().position(|grp| grp.start == 2).unwrap()
    };
    assert_eq!(two.refused, [group(&two)]);
    let three = whole_in(3);
    assert!(three.refused.is_empty(), "{:?}", three.refused);
}

/// TPU-MLIR's own bm1688 grouping of the user-style Gemma 2 export (`tx_user/`), priced:
/// its logit soft-cap group (a scale, a cast, a tanh and a cast of the [1, 4, 64, 64]
/// scores), which TPU-MLIR lays out as `GROUP_SMALL_C` (the scores' 256 rows over the 32
/// lanes), is priced as its compiled span, 12,031 cycles from its load's start to its
/// store's end in codegen's profile, within 2 % (held as 4 heads on 4 lanes: 64,809);
/// the whole grouping within 3 % of its compiled 101,085 (it was 205,034).
#[test]
fn a_group_of_activations_alone_spreads_its_rows_over_the_lanes() {
    use tpusim_planner::nd_plan::plan_nd_with_groups;
    use tpusim_planner::tpumlir::{nd_cache::import_nd, parse};
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tx_user");
    let chip = NpuChip::preset("bm1688").unwrap();
    let g = graph(&format!("{dir}/hf_gemma2_static.onnx"), 1);
    let text =
        std::fs::read_to_string(format!("{dir}/hf_gemma2_bm1688.tpumlir_cache.json")).unwrap();
    let theirs = import_nd(&g, &chip, ElementType::F16, &parse(&text).unwrap()).unwrap();
    let p = plan_nd_with_groups(&g, &chip, ElementType::F16, &theirs.requests)
        .unwrap()
        .plan;
    let soft_cap: Vec<u64> = p
        .groups
        .iter()
        .filter(|grp| p.layers[grp.start].name.ends_with("self_attn/Div_2"))
        .map(|grp| grp.cycles)
        .collect();
    assert_eq!(soft_cap.len(), 2, "one soft-cap group a layer");
    for cycles in soft_cap {
        let ratio = cycles as f64 / 12_031.0;
        assert!(
            (0.98..=1.02).contains(&ratio),
            "soft-cap group {cycles} cycles"
        );
    }
    let ratio = p.cycles as f64 / 101_085.0;
    assert!((0.97..=1.03).contains(&ratio), "{} cycles", p.cycles);
}

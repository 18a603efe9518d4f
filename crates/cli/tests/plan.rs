//! `tpusim plan`: the real binary on built-in models — JSON contract fields, the
//! verifier verb accepting our plans and rejecting tampered ones, pictures, TPU-MLIR
//! cache export/import, and one-line errors with exit code 2 for bad input.

mod common;

use common::tpusim;
use predicates::prelude::*;
use serde_json::Value;

fn plan_json(args: &[&str]) -> Value {
    common::json_of("plan", args)
}

#[test]
fn list_shows_the_built_in_models() {
    tpusim().args(["plan", "--list"]).assert().success().stdout(
        predicate::str::contains("resnet18")
            .and(predicate::str::contains("resnet50"))
            .and(predicate::str::contains("mobilenetv2"))
            .and(predicate::str::contains("vgg16")),
    );
}

#[test]
fn json_has_the_contract_fields() {
    let v = plan_json(&["resnet18", "--resolution", "112,112"]);
    for f in [
        "chip",
        "lane_bytes",
        "banks",
        "groups",
        "global_ops",
        "gmem_bytes",
        "gmem_bytes_all_global",
        "cycles",
        "cycles_all_global",
    ] {
        assert!(v.get(f).is_some(), "missing {f}");
    }
    assert_eq!(v["chip"], "bm1684x");
    assert_eq!(v["lane_bytes"], 262144);
    assert_eq!(v["banks"], 16);
    let g = &v["groups"][0];
    for f in [
        "ops",
        "nsecs",
        "hsecs",
        "blocks",
        "timesteps",
        "gmem_bytes",
        "cycles",
    ] {
        assert!(g.get(f).is_some(), "group missing {f}");
    }
    let b = &g["blocks"][0];
    for f in ["name", "kind", "addr", "size", "start_ts", "end_ts"] {
        assert!(b.get(f).is_some(), "block missing {f}");
    }
    let kinds: Vec<&str> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["blocks"].as_array().unwrap())
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"activation") && kinds.contains(&"weight"));
    assert!(v["cycles"].as_u64().unwrap() <= v["cycles_all_global"].as_u64().unwrap());
    assert!(v["global_ops"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o == "fc"));
}

#[test]
fn batch_chip_dtype_options() {
    let v = plan_json(&[
        "mobilenetv2",
        "--chip",
        "bm1688",
        "--batch",
        "2",
        "--resolution",
        "96",
        "--dtype",
        "int8",
    ]);
    assert_eq!(v["chip"], "bm1688");
    assert_eq!(v["dtype"], "s8");
    // resident weights (end_ts null) appear only in sliced groups
    for g in v["groups"].as_array().unwrap() {
        let sliced = g["nsecs"].as_u64().unwrap() * g["hsecs"].as_u64().unwrap() > 1;
        for b in g["blocks"].as_array().unwrap() {
            if b["end_ts"].is_null() {
                assert!(sliced && b["kind"] == "weight");
            }
        }
    }
}

#[test]
fn verify_accepts_our_plan_and_rejects_a_tampered_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.json");
    let out = tpusim()
        .args(["plan", "resnet18", "--resolution", "112,112", "--json"])
        .output()
        .unwrap();
    std::fs::write(&path, &out.stdout).unwrap();
    tpusim()
        .args(["plan", "verify"])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("valid"));
    // move a block onto another one live at the same time: overlap
    let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let blocks = v["groups"][0]["blocks"].as_array_mut().unwrap();
    let life = |b: &Value| {
        let s = b["start_ts"].as_u64().unwrap();
        (s, b["end_ts"].as_u64().unwrap_or(u64::MAX))
    };
    let (i, j) = (0..blocks.len())
        .flat_map(|i| (i + 1..blocks.len()).map(move |j| (i, j)))
        .find(|&(i, j)| {
            let ((s0, e0), (s1, e1)) = (life(&blocks[i]), life(&blocks[j]));
            s0 <= e1 && s1 <= e0
        })
        .unwrap();
    let a = blocks[i]["addr"].clone();
    blocks[j]["addr"] = a;
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    rejected(&path, &["overlap in address"]);
    tpusim()
        .args(["plan", "verify", "--json"])
        .arg(&path)
        .assert()
        .code(2)
        .stdout(predicate::str::contains("\"valid\": false"));
    // a plan file is user input: a graph with a dangling tensor id is a clear error,
    // not a panic (found by mutating plan files at random)
    let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["graph"]["ops"][3]["inputs"][0] = serde_json::json!(1_000_000u64);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    rejected(&path, &["its graph is invalid", "out of range"]);
    std::fs::write(&path, "{not json").unwrap();
    rejected(&path, &["not a plan JSON"]);
}

/// `tpusim plan verify FILE` exits 2 with one `error:` line holding every needle.
fn rejected(path: &std::path::Path, needles: &[&str]) {
    let out = tpusim()
        .args(["plan", "verify"])
        .arg(path)
        .output()
        .unwrap();
    common::bad_input(&out, needles);
}

#[test]
fn svg_and_tpu_mlir_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("lmem.svg");
    let cache = dir.path().join("cache.json");
    let out = tpusim()
        .args([
            "plan",
            "resnet18",
            "--resolution",
            "112,112",
            "--json",
            "--svg",
        ])
        .arg(&svg)
        .arg("--export-tpu-mlir")
        .arg(&cache)
        .output()
        .unwrap();
    assert!(out.status.success());
    let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("bank 15") && text.contains("<rect"));
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
    assert_eq!(c["opt"], 2);
    assert_eq!(
        c["subfunc_0"]["GroupLayer"].as_array().unwrap().len(),
        ours["groups"].as_array().unwrap().len()
    );
    let back = plan_json(&[
        "resnet18",
        "--resolution",
        "112,112",
        "--import-tpu-mlir",
        cache.to_str().unwrap(),
    ]);
    assert_eq!(back["cycles"], ours["cycles"]);
    assert_eq!(back["groups"], ours["groups"]);
}

#[test]
fn weights_that_do_not_fit_resident_are_reloaded_per_slice() {
    // torchvision ResNet-18 (weights stripped) at batch 4 on bm1688, with a grouping
    // forced through a TPU-MLIR cache: layers 1–3 and layer 4's downsample in one group
    // with N cut in 4, as TPU-MLIR itself groups it. Its filters do not fit resident in
    // a 128 kB lane, so each slice reloads them.
    let onnx = format!(
        "{}/../graph/tests/data/tv_resnet18.onnx",
        env!("CARGO_MANIFEST_DIR")
    );
    let l1 = |b: &str, x: &str| {
        format!(
            "/layer{b}/{x}_output_0_{}",
            x.rsplit('/').next().unwrap_or("")
        )
    };
    let mut locs: Vec<String> = Vec::new();
    for (b, blocks) in [
        ("1", ["layer1.0", "layer1.1"]),
        ("2", ["layer2.0", "layer2.1"]),
        ("3", ["layer3.0", "layer3.1"]),
    ] {
        for blk in blocks {
            if blk.ends_with(".0") && b != "1" {
                locs.push(l1(b, &format!("{blk}/downsample/downsample.0/Conv")));
            }
            locs.push(l1(b, &format!("{blk}/relu/Relu")));
            locs.push(l1(b, &format!("{blk}/conv2/Conv")));
            locs.push(l1(b, &format!("{blk}/relu_1/Relu")));
        }
    }
    locs.push(l1("4", "layer4.0/downsample/downsample.0/Conv"));
    let cache = serde_json::json!({
        "opt": 2,
        "subfunc_0": {"GroupLayer": [{"index": 0, "locs": locs, "shape_secs": [4, 1, 1, 1, 1]}]}
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache.json");
    std::fs::write(&path, cache.to_string()).unwrap();
    let args = [
        "plan",
        onnx.as_str(),
        "--batch",
        "4",
        "--chip",
        "bm1688",
        "--import-tpu-mlir",
        path.to_str().unwrap(),
    ];
    let p = plan_json(&args[1..]);
    let g = p["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["ops"].as_array().unwrap().len() > 15)
        .expect("the forced group");
    assert_eq!(g["nsecs"], 4);
    let weights: Vec<&Value> = g["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "weight")
        .collect();
    assert!(!weights.is_empty() && weights.iter().all(|b| !b["end_ts"].is_null()));
    tpusim()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains("weights reloaded in every slice"));
}

#[test]
fn an_imported_group_longer_than_a_group_may_be_is_cut() {
    // 150 chained convs listed as one TPU-MLIR group: a group holds at most 120 ops
    // (its time steps are bits of a 128-bit mask), so the import cuts it in two
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("deep.csv");
    let mut rows = String::from(
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n",
    );
    for i in 0..150 {
        rows.push_str(&format!("c{i}, 10, 10, 3, 3, 8, 8, 1,\n"));
    }
    std::fs::write(&csv, rows).unwrap();
    let locs: Vec<String> = (0..150).map(|i| format!("c{i}")).collect();
    let cache = dir.path().join("cache.json");
    let c = serde_json::json!({"opt": 2, "subfunc_0": {"GroupLayer": [
        {"index": 0, "locs": locs, "shape_secs": [1, 1, 1, 1, 1]}]}});
    std::fs::write(&cache, c.to_string()).unwrap();
    let args = [
        "plan",
        csv.to_str().unwrap(),
        "--input-dtype",
        "same",
        "--import-tpu-mlir",
        cache.to_str().unwrap(),
    ];
    let p = plan_json(&args[1..]);
    let sizes: Vec<usize> = p["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["ops"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [120, 30]);
    tpusim()
        .args(args)
        .assert()
        .success()
        .stderr(predicate::str::contains("cut before c120"));
}

#[test]
fn text_summary() {
    tpusim()
        .args(["plan", "resnet18", "--resolution", "112,112"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("nsecs")
                .and(predicate::str::contains("all-global"))
                .and(predicate::str::contains("lmem peak")),
        );
}

#[test]
fn the_f32_input_and_output_are_cast_on_the_chip_unless_they_are_in_the_dtype() {
    let all_ops = |v: &Value| -> Vec<String> {
        let mut ops: Vec<String> = v["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["ops"].as_array().unwrap().clone())
            .chain(v["global_ops"].as_array().unwrap().clone())
            .map(|o| o.as_str().unwrap().to_string())
            .collect();
        ops.sort();
        ops
    };
    let cast = plan_json(&["resnet18", "--resolution", "64"]);
    let same = plan_json(&["resnet18", "--resolution", "64", "--input-dtype", "same"]);
    let f32 = plan_json(&["resnet18", "--resolution", "64", "--dtype", "f32"]);
    let with: Vec<String> = all_ops(&cast);
    let without: Vec<String> = all_ops(&same);
    // the input's cast to f16 and, as TPU-MLIR stores a 16-bit network's output in
    // f32, the fc output's cast back
    assert_eq!(with.len(), without.len() + 2);
    assert!(with.iter().any(|o| o == "input_cast"));
    assert_eq!(with.iter().filter(|o| o.ends_with("_cast")).count(), 2);
    assert!(!without.iter().any(|o| o.ends_with("_cast")));
    // no cast when the plan is f32 itself
    assert!(!all_ops(&f32).iter().any(|o| o.ends_with("_cast")));
    // all global, the casts add their own traffic: 3 x 64 x 64 f32 in, f16 out (conv1
    // reads the same f16 input either way), and 1,000 f16 logits in, f32 out
    let d = cast["gmem_bytes_all_global"].as_u64().unwrap()
        - same["gmem_bytes_all_global"].as_u64().unwrap();
    assert_eq!(d, 3 * 64 * 64 * (4 + 2) + 1000 * (2 + 4));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        vec!["plan", "resnet99"],
        vec!["plan", "resnet18", "--chip", "bm9999"],
        vec!["plan", "resnet18", "--dtype", "f17"],
        vec!["plan", "resnet18", "--input-dtype", "f33"],
        // rejected by the argument parser: also one line (no usage block)
        vec!["plan", "resnet18", "--batch", "-1"],
        vec!["plan", "resnet18", "--search", "nope"],
        vec!["plan", "resnet18", "--bogus"],
        vec!["plan", "resnet18", "--chip"],
        vec!["plan", "resnet18", "--resolution", "0,224"],
        vec!["plan", "resnet18", "--resolution", "1,2,3"],
        vec!["plan", "resnet18", "--batch", "0"],
        vec!["plan", "missing.onnx"],
        vec!["plan", "verify", "/nonexistent/plan.json"],
    ] {
        let out = tpusim().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error:") && err.trim_end().lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_batch_beyond_the_planners_limit_is_one_clear_error() {
    let out = assert_cmd::Command::cargo_bin("tpusim")
        .unwrap()
        .args(["plan", "resnet18", "--batch", "100000000000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("limit of 4096"), "{err}");
}

#[test]
fn the_allocator_option_picks_tpu_mlir_or_the_spec_order() {
    // default: TPU-MLIR's allocator, with each block's lifetime in TPU-MLIR's own
    // pipelined steps; `--allocator spec`: the spec's order, no such lifetimes. Both
    // plans pass the verifier, and only their addresses may differ.
    let dir = tempfile::tempdir().unwrap();
    let args = ["mobilenetv2", "--resolution", "112,112"];
    let mut plans = Vec::new();
    for alloc in ["tpu-mlir", "spec"] {
        let v = plan_json(&[&args[..], &["--allocator", alloc]].concat());
        let path = dir.path().join(format!("{alloc}.json"));
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
        tpusim()
            .args(["plan", "verify"])
            .arg(&path)
            .assert()
            .success();
        plans.push(v);
    }
    let lifetimes = |v: &Value| {
        v["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["blocks"].as_array().unwrap().clone())
            .filter(|b| b.get("tpu_mlir_ts").is_some())
            .count()
    };
    assert!(lifetimes(&plans[0]) > 0);
    assert_eq!(lifetimes(&plans[1]), 0);
    assert_eq!(plan_json(&args), plans[0], "tpu-mlir is the default");
    tpusim()
        .args(["plan", "resnet18", "--allocator", "greedy"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("greedy"));
}

/// `plan MODEL.onnx --export-tpu-mlir` on a network whose sigmoid and global average
/// pools TPU-MLIR runs in f32: the exported cache names exactly the ops of TPU-MLIR's
/// own cache of the same network (casts included; issue 19's zoo), on both chips, and
/// the text says which ops run in f32.
#[test]
fn an_onnx_export_names_the_casts_tpu_mlir_inserts() {
    let zoo = concat!(env!("CARGO_MANIFEST_DIR"), "/../planner/tests/data/zoo");
    let dir = tempfile::tempdir().unwrap();
    for chip in ["bm1684x", "bm1688"] {
        let cache = dir.path().join(format!("se_net_{chip}.json"));
        let out = tpusim()
            .args(["plan", &format!("{zoo}/se_net.onnx"), "--chip", chip])
            .arg("--export-tpu-mlir")
            .arg(&cache)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("f32 ops: 3 ops in f32 under f16"), "{text}");
        let names = |path: &std::path::Path| -> std::collections::BTreeSet<String> {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let sub = &v["subfunc_0"];
            let grouped = sub["GroupLayer"].as_array().unwrap().iter().flat_map(|g| {
                g["locs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| l.as_str().unwrap().to_string())
            });
            let global = sub["GlobalLayer"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g["loc"].as_str().unwrap().to_string());
            grouped.chain(global).collect()
        };
        let theirs = std::path::PathBuf::from(format!("{zoo}/se_net_{chip}.tpumlir_cache.json"));
        assert_eq!(names(&cache), names(&theirs), "{chip}");
    }
}

/// TPU-MLIR 1.30.2 fuses bert_d384_s128's two attentions into `tpu.Attention` on bm1684x
/// (its own cache names the heads) and not on bm1688. A 16-bit plan holds them as their
/// heads (`tpumlir::nd_fused`) and says nothing; an F32 plan, which does not model them,
/// says so on bm1684x, and `--export-tpu-mlir` adds that the cache will not compile. On
/// bm1688, and for GPT-2 (its mask a Where, not an Add), nothing is said.
#[test]
fn an_attention_tpu_mlir_fuses_is_modelled_or_named_on_bm1684x_only() {
    let zoo = concat!(env!("CARGO_MANIFEST_DIR"), "/../planner/tests/data/tx_zoo");
    let bert = format!("{zoo}/bert_d384_s128_static.onnx");
    let gpt2 = format!("{zoo}/gpt2_d64_s64_static.onnx");
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("bert.json");
    let stderr = |args: &[&str]| {
        let out = tpusim().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(stderr(&["plan", &bert, "--chip", "bm1684x"]), "");
    let f32_plan = ["plan", &bert, "--chip", "bm1684x", "--dtype", "f32"];
    let plain = stderr(&f32_plan);
    assert!(
        plain.contains("fuses the attention before '/MatMul_64'"),
        "{plain}"
    );
    assert!(
        plain.contains("and 1 more into tpu.Attention on bm1684x"),
        "{plain}"
    );
    assert!(!plain.contains("will not compile"), "{plain}");
    let mut exporting = f32_plan.to_vec();
    exporting.extend(["--export-tpu-mlir", cache.to_str().unwrap()]);
    let exporting = stderr(&exporting);
    assert!(
        exporting.contains("TPU-MLIR will not compile it"),
        "{exporting}"
    );
    let report = stderr(&[
        "report",
        &bert,
        "--chip",
        "bm1684x",
        "--dtype",
        "f32",
        "--summary",
    ]);
    assert!(report.contains("into tpu.Attention"), "{report}");
    assert_eq!(stderr(&["plan", &bert, "--chip", "bm1688"]), "");
    let doc = |chip: &str| plan_json(&[&bert, "--chip", chip]);
    let bm1684x = doc("bm1684x");
    assert_eq!(
        bm1684x["tpu_mlir_fused_attentions"],
        serde_json::json!(["/MatMul_64", "/MatMul_122"])
    );
    assert_eq!(
        bm1684x["tpu_mlir_unmodelled_attentions"],
        serde_json::json!([])
    );
    let heads = bm1684x["plan"]["layers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["op_type"] == "Attention")
        .count();
    assert_eq!(heads, 12);
    assert_eq!(
        doc("bm1688")["tpu_mlir_fused_attentions"],
        serde_json::json!([])
    );
    assert_eq!(stderr(&["plan", &gpt2, "--chip", "bm1684x"]), "");
}

/// The zoo's aspp_like (dilated 3×3 convs beside a 1×1 over one value) and, in `dir`,
/// TPU-MLIR's own bm1684x cache of it with its one group cut in 2 H slices, a cut
/// TPU-MLIR 1.30.2 refuses: (the ONNX path, the cache path).
fn aspp_like_cut_in_two(dir: &std::path::Path) -> (String, std::path::PathBuf) {
    let zoo = format!("{}/../planner/tests/data/zoo", env!("CARGO_MANIFEST_DIR"));
    let own =
        std::fs::read_to_string(format!("{zoo}/aspp_like_bm1684x.tpumlir_cache.json")).unwrap();
    let mut cache: Value = serde_json::from_str(&own).unwrap();
    cache["subfunc_0"]["GroupLayer"][0]["shape_secs"] = serde_json::json!([1, 1, 1, 2, 1]);
    let path = dir.join("cut.json");
    std::fs::write(&path, cache.to_string()).unwrap();
    (format!("{zoo}/aspp_like.onnx"), path)
}

/// A cache asking for a cut TPU-MLIR cannot make is planned at a cut it can, with a note
/// naming the value: aspp_like held in 2 H slices, which TPU-MLIR 1.30.2 refuses on
/// bm1684x.
#[test]
fn an_imported_cut_tpu_mlir_cannot_make_is_replanned_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let (onnx, path) = aspp_like_cut_in_two(dir.path());
    let args = [
        "plan",
        onnx.as_str(),
        "--chip",
        "bm1684x",
        "--import-tpu-mlir",
    ];
    tpusim()
        .args(args)
        .arg(&path)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "the cache asks for 1x2 (N x H) slices, but TPU-MLIR cannot cut it so",
        ))
        .stdout(predicate::str::contains("1     1"));
    // TPU-MLIR's own cache (held whole) plans as it is, without a note
    let own_path = onnx.replace("aspp_like.onnx", "aspp_like_bm1684x.tpumlir_cache.json");
    tpusim()
        .args(args)
        .arg(&own_path)
        .assert()
        .success()
        .stderr(predicate::str::contains("cannot cut").not());
}

/// `plan verify` names a cut TPU-MLIR cannot make in a plan that is otherwise valid: the
/// spec's allocator places aspp_like cut in 2 H slices (as the cache forces it), which
/// TPU-MLIR 1.30.2 refuses; the same plan held whole has no such note.
#[test]
fn verify_names_a_cut_tpu_mlir_cannot_make() {
    let dir = tempfile::tempdir().unwrap();
    let (onnx, cut) = aspp_like_cut_in_two(dir.path());
    for (allocator, cut_in) in [("spec", 2), ("tpu-mlir", 1)] {
        let out = tpusim()
            .args(["plan", onnx.as_str(), "--chip", "bm1684x", "--json"])
            .args(["--allocator", allocator, "--import-tpu-mlir"])
            .arg(&cut)
            .output()
            .unwrap();
        assert!(out.status.success());
        let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(plan["groups"][0]["hsecs"], cut_in, "{allocator}");
        let file = dir.path().join(format!("{allocator}.json"));
        std::fs::write(&file, &out.stdout).unwrap();
        let v = common::json_of("plan", &["verify", file.to_str().unwrap()]);
        assert_eq!(v["valid"], true);
        let uncut = v["tpu_mlir_cannot_cut"].as_array().unwrap();
        if cut_in == 2 {
            assert_eq!(uncut.len(), 1, "{v}");
            assert_eq!(uncut[0]["group"], 0);
            tpusim()
                .args(["plan", "verify"])
                .arg(&file)
                .assert()
                .success()
                .stderr(predicate::str::contains("TPU-MLIR 1.30.2 cannot make"));
        } else {
            assert!(uncut.is_empty(), "{v}");
        }
    }
}

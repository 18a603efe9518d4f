//! `tpusim llm` as a user meets it: the JSON fields the spec names, built-in
//! models and config files, pictures, and one-line errors with exit code 2.

mod common;

use common::{json, tpusim};
use serde_json::Value;

#[track_caller]
fn fails(args: &[&str], needle: &str) {
    common::bad_input(&tpusim().args(args).output().unwrap(), &[needle]);
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// `tpusim ARGS EXTRA… --json`'s document, `args` split at spaces.
fn json_with(args: &str, extra: &[&str]) -> Value {
    let all: Vec<&str> = args
        .split_whitespace()
        .chain(extra.iter().copied())
        .chain(["--json"])
        .collect();
    json(&all)
}

#[test]
fn show_prints_the_spec_fields() {
    let v = json(&["llm", "show", "llama-3-8b", "--json"]);
    assert_eq!(v["params"], 8_030_261_248u64);
    let parts = ["params_attention", "params_mlp", "params_embedding"];
    let sum: f64 = parts.iter().map(|k| f(&v, k)).sum();
    assert!(sum <= f(&v, "params") && sum > 0.99 * f(&v, "params"));
    assert_eq!(f(&v, "kv_bytes_per_token"), 131_072.0);
    let int8 = json(&["llm", "show", "llama-3-8b", "--kv-dtype", "int8", "--json"]);
    assert_eq!(f(&int8, "kv_bytes_per_token"), 65_536.0);
    let models = json(&["llm", "models", "--json"]);
    assert!(models.as_array().unwrap().len() >= 16);
}

#[test]
fn serve_prints_the_spec_fields() {
    let v = json(&[
        "llm",
        "serve",
        "llama-3-70b",
        "--chip",
        "v5e",
        "--slice",
        "4x2",
        "--batch",
        "32",
        "--context",
        "8192",
        "--weights",
        "int8",
        "--kv-dtype",
        "int8",
        "--prefill-tokens",
        "1024",
        "--ideal",
        "--json",
    ]);
    for k in [
        "bytes_per_chip",
        "weights_bytes",
        "kv_bytes",
        "decode_step_s",
        "decode_tokens_per_s",
        "prefill_s",
    ] {
        assert!(f(&v, k) > 0.0, "{k}");
    }
    assert_eq!(v["fits"], true);
    assert_eq!(v["bound"], "hbm");
    assert_eq!(v["min_slice"], "4x2");
    // The calibrated answer is slower than the roofline.
    let cal = json(&[
        "llm",
        "serve",
        "llama-3-70b",
        "--chip",
        "v5e",
        "--slice",
        "4x2",
        "--batch",
        "32",
        "--context",
        "8192",
        "--weights",
        "int8",
        "--kv-dtype",
        "int8",
        "--json",
    ]);
    assert!(f(&cal, "decode_step_s") > f(&v, "decode_step_s"));
    assert!(v.get("frontier").is_none());
}

#[test]
fn serve_frontier_is_monotone_in_throughput_and_latency() {
    let v = json(&[
        "llm",
        "serve",
        "llama-2-7b",
        "--chip",
        "v5e",
        "--slice",
        "8",
        "--context",
        "2048",
        "--sweep-batch",
        "--json",
    ]);
    let pts = v["frontier"].as_array().unwrap();
    assert!(pts.len() > 4);
    for w in pts.windows(2) {
        assert!(f(&w[1], "decode_step_s") >= f(&w[0], "decode_step_s"));
        assert!(f(&w[1], "decode_tokens_per_s") >= f(&w[0], "decode_tokens_per_s"));
    }
    let last = pts.last().unwrap();
    assert_eq!(last["batch"], v["max_batch"]);
    assert_eq!(last["fits"], true);
}

#[test]
fn train_prints_the_spec_fields() {
    let v = json(&[
        "llm",
        "train",
        "llama-3-8b",
        "--chip",
        "v5e",
        "--slice",
        "16x16",
        "--slices",
        "2",
        "--batch-tokens",
        "2Mi",
        "--seq",
        "4096",
        "--tokens",
        "1e12",
        "--fsdp",
        "256",
        "--remat",
        "full",
        "--json",
    ]);
    for k in [
        "memory_per_chip_bytes",
        "weights_bytes",
        "optimizer_bytes",
        "checkpoint_bytes",
        "step_s",
        "mfu",
        "tokens_per_s",
        "total_s",
        "flops_total",
    ] {
        assert!(f(&v, k) > 0.0, "{k}");
    }
    let s = &v["sharding"];
    assert_eq!(
        (s["fsdp"].as_u64(), s["dcn_dp"].as_u64(), s["tp"].as_u64()),
        (Some(256), Some(2), Some(1))
    );
    assert!(["compute", "ici", "dcn"].contains(&v["bound"].as_str().unwrap()));
    assert!(f(&v, "mfu") < 1.0);
    // total = tokens / (tokens per second)
    assert!((f(&v, "total_s") * f(&v, "tokens_per_s") / 1e12 - 1.0).abs() < 1e-9);
}

#[test]
fn train_search_names_runners_up() {
    let v = json(&[
        "llm",
        "train",
        "llama-3-8b",
        "--chip",
        "v5p",
        "--slice",
        "4x4x4",
        "--batch-tokens",
        "1Mi",
        "--seq",
        "4096",
        "--json",
    ]);
    let r = v["runners_up"].as_array().unwrap();
    assert!(!r.is_empty());
    for alt in r {
        assert!(f(alt, "step_s") >= f(&v, "step_s") || alt["fits"] == false);
        assert!(!alt["why"].as_str().unwrap().is_empty());
    }
}

#[test]
fn validate_lists_every_shipped_measurement() {
    let v = json(&["llm", "validate", "--json"]);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 70);
    for r in rows {
        let (m, p, e) = (f(r, "measured"), f(r, "predicted"), f(r, "error"));
        assert!(((p - m) / m - e).abs() < 1e-12);
        assert!(r["case"].is_string());
    }
}

#[test]
fn config_files_and_model_files_with_variants() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("maxtext16b.json");
    std::fs::write(
        &path,
        r#"{"hidden_size":5120,"intermediate_size":32768,"num_hidden_layers":32,"num_attention_heads":32,
            "num_key_value_heads":32,"head_dim":256,"vocab_size":32768,"tie_word_embeddings":true,
            "mlp":"plain","block":"parallel"}"#,
    )
    .unwrap();
    let v = json(&["llm", "show", path.to_str().unwrap(), "--json"]);
    // L·(D·H·4N + 2·D·F + D) + V·D + D
    let want = 32u64 * (5120 * 256 * 128 + 2 * 5120 * 32768 + 5120) + 32768 * 5120 + 5120;
    assert_eq!(v["params"].as_u64(), Some(want));
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"model_type":"llama","hidden_size":4096}"#).unwrap();
    fails(
        &["llm", "show", bad.to_str().unwrap()],
        "field 'num_attention_heads' is missing",
    );
}

#[test]
fn pictures_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let (svg, html) = (dir.path().join("s.svg"), dir.path().join("s.html"));
    json(&[
        "llm",
        "serve",
        "gemma-7b",
        "--slice",
        "4x2",
        "--batch",
        "64",
        "--context",
        "2048",
        "--svg",
        svg.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--json",
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("frontier") && text.contains("HBM"));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("decode_step_s"));
    let tsvg = dir.path().join("t.svg");
    json(&[
        "llm",
        "train",
        "llama-3-8b",
        "--chip",
        "v5e",
        "--slice",
        "16x16",
        "--batch-tokens",
        "1Mi",
        "--fsdp",
        "64",
        "--tp",
        "4",
        "--svg",
        tsvg.to_str().unwrap(),
        "--json",
    ]);
    let t = std::fs::read_to_string(&tsvg).unwrap();
    assert!(t.contains("tp 4") && t.contains("fsdp"), "{t}");
}

#[test]
fn bad_input_is_one_line() {
    fails(&["llm", "show", "llama-9"], "unknown model 'llama-9'");
    fails(
        &["llm", "serve", "llama-3-8b", "--slice", "3x3x3"],
        "slice 3x3x3 does not fit",
    );
    fails(
        &["llm", "serve", "llama-3-8b", "--slice", "12"],
        "no slice of 12 chips",
    );
    fails(&["llm", "serve", "llama-3-8b", "--batch", "0"], "--batch");
    fails(
        &["llm", "serve", "llama-3-8b", "--batch", "2", "--dp", "8"],
        "less than one sequence",
    );
    fails(
        &[
            "llm",
            "serve",
            "llama-3.1-405b",
            "--chip",
            "v5e",
            "--slice",
            "4x4",
            "--context",
            "128000",
            "--batch",
            "64",
        ],
        "does not fit any slice",
    );
    fails(
        &[
            "llm",
            "train",
            "llama-3-8b",
            "--slice",
            "4x4",
            "--fsdp",
            "4",
            "--tp",
            "2",
        ],
        "must equal 16",
    );
    fails(
        &[
            "llm",
            "train",
            "llama-3-8b",
            "--slice",
            "4x4",
            "--fsdp",
            "16",
            "--batch-tokens",
            "4096",
            "--seq",
            "4096",
        ],
        "less than one sequence",
    );
    fails(
        &["llm", "serve", "llama-3-8b", "--calib", "hbm=2"],
        "--calib",
    );
    fails(
        &["llm", "serve", "llama-3-8b", "--calib", "speed=2"],
        "unknown figure",
    );
    fails(
        &["llm", "train", "llama-3-8b", "--remat", "sometimes"],
        "--remat",
    );
}

#[test]
fn report_takes_a_transformer() {
    let v = json(&[
        "report",
        "llama-3-8b",
        "--chip",
        "v5p",
        "--phase",
        "decode",
        "--batch",
        "8",
        "--context",
        "4096",
        "--json",
    ]);
    assert_eq!(v["phase"], "decode");
    assert_eq!(v["bound"], "hbm");
    assert!(f(&v, "kv_cache_bytes_read") > 0.0 && f(&v, "total_time_s") > 0.0);
    let same = json(&[
        "llm",
        "report",
        "llama-3-8b",
        "--chip",
        "v5p",
        "--phase",
        "decode",
        "--batch",
        "8",
        "--context",
        "4096",
        "--json",
    ]);
    assert_eq!(v, same);
    let ops = v["ops"].as_array().unwrap();
    for name in [
        "qkv",
        "scores",
        "softmax",
        "attn_values",
        "mlp_up",
        "mlp_act",
        "logits",
    ] {
        assert!(ops.iter().any(|o| o["name"] == name), "{name}");
    }
    let prefill = json(&["report", "gpt2", "--seq", "512", "--json"]);
    assert_eq!(prefill["phase"], "prefill");
    fails(
        &["report", "resnet50", "--phase", "decode"],
        "apply to transformers",
    );
    fails(
        &["report", "bert-base", "--phase", "decode"],
        "is an encoder",
    );
    fails(
        &["report", "gpt2", "--phase", "sideways"],
        "use prefill or decode",
    );
}

#[test]
fn systolic_cycles_cross_check_and_topology() {
    let v = json(&[
        "report",
        "gpt2",
        "--chip",
        "v5e",
        "--phase",
        "decode",
        "--batch",
        "2",
        "--context",
        "256",
        "--systolic-cycles",
        "--json",
    ]);
    let rows = v["systolic"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|g| g["name"] == "scores" && g["batch"] == 24),
        "batched over sequences and heads"
    );
    let mut checked = 0;
    for g in rows {
        if let Some(e) = g["engine_cycles"].as_u64() {
            assert_eq!(Some(e), g["cycles"].as_u64(), "{}", g["name"]);
            checked += 1;
        }
    }
    assert!(checked >= 5);
    // One layer's GEMMs as a SCALE-Sim topology, run by `tpusim systolic run`.
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("gpt2_layer.csv");
    let out = tpusim()
        .args([
            "llm",
            "report",
            "gpt2",
            "--phase",
            "decode",
            "--batch",
            "2",
            "--context",
            "256",
            "--summary",
            "--topology",
        ])
        .arg(&topo)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&topo).unwrap();
    assert!(text.starts_with("Layer, M, N, K,\n"));
    assert_eq!(
        text.lines().filter(|l| l.starts_with("scores.")).count(),
        24
    );
    let cfg = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../systolic/tests/data/scalesim/gemm_32_ws_calc/scale.cfg"
    );
    let run = tpusim()
        .args(["systolic", "run", "--config", cfg, "--topology"])
        .arg(&topo)
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn report_reads_an_onnx_transformer() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../graph/tests/data/nd");
    let gpt2 = format!("{dir}/gpt2_tiny.onnx");
    let v = json(&["report", &gpt2, "--batch", "2", "--seq", "16", "--json"]);
    assert_eq!(v["inputs"][0]["dims"], serde_json::json!([2, 16]));
    assert_eq!(v["parameters"], 29568);
    assert!(f(&v, "flops") > 0.0 && f(&v, "total_time_s") > 0.0);
    let names: Vec<&str> = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert!(
        names.iter().any(|n| n.contains("(Softmax)"))
            && names.iter().any(|n| n.contains("(LayerNormalization)"))
    );
    // Twice the batch, twice the matmul work (the weights are the same).
    let v4 = json(&["report", &gpt2, "--batch", "4", "--seq", "16", "--json"]);
    let mm = |v: &Value| -> f64 {
        v["ops"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["unit"] == "mxu")
            .map(|o| f(o, "flops"))
            .sum()
    };
    assert!((mm(&v4) / mm(&v) - 2.0).abs() < 1e-12);
    fails(
        &["report", &format!("{dir}/fused_attention.onnx")],
        "unsupported ONNX op 'com.microsoft.Attention'",
    );
    fails(
        &["report", &format!("{dir}/llama_tiny.onnx"), "--seq", "100"],
        "do not broadcast",
    );
    // past the 64 positions its causal mask was exported with, the node says so
    fails(&["plan", &gpt2, "--seq", "128"], "do not broadcast");
}

#[test]
fn serve_on_several_slices() {
    let one = json(&[
        "llm",
        "serve",
        "llama-3-8b",
        "--slice",
        "4x2",
        "--batch",
        "32",
        "--context",
        "4096",
        "--json",
    ]);
    let two = json(&[
        "llm",
        "serve",
        "llama-3-8b",
        "--slice",
        "4x2",
        "--slices",
        "2",
        "--batch",
        "64",
        "--context",
        "4096",
        "--json",
    ]);
    assert_eq!(
        (two["slices"].as_u64(), two["chips"].as_u64()),
        (Some(2), Some(16))
    );
    assert_eq!(
        f(&two, "decode_tokens_per_s"),
        2.0 * f(&one, "decode_tokens_per_s")
    );
    fails(
        &[
            "llm",
            "serve",
            "llama-3-8b",
            "--slices",
            "2",
            "--batch",
            "3",
        ],
        "does not split evenly",
    );
}

#[test]
fn serve_takes_2d_tensor_parallelism() {
    const ARGS: &str =
        "llm serve llama-2-70b --chip v5p --slice 8x8x4 --batch 8192 --context 128 --ideal";
    let two_d = json_with(ARGS, &["--tp", "32", "--tp-d", "8"]);
    assert_eq!(two_d["sharding"]["tp_d"], 8);
    assert_eq!(two_d["sharding"]["tp"], 32);
    let one_d = json_with(ARGS, &["--tp", "256"]);
    assert_eq!(one_d["sharding"]["tp_d"], 1);
    // the same weights per chip, a third of the ICI time (256 chips, past the book's 63;
    // 8192 sequences, so that the collectives are bandwidth bound)
    assert_eq!(
        f(&two_d["memory_per_chip"], "weights"),
        f(&one_d["memory_per_chip"], "weights")
    );
    assert!(f(&two_d["decode"], "ici_s") < 0.5 * f(&one_d["decode"], "ici_s"));
    let bad: Vec<&str> = ARGS
        .split_whitespace()
        .take(7)
        .chain(["--tp-d", "3"])
        .collect();
    fails(&bad, "--tp-d");
}

#[test]
fn train_takes_2d_tensor_parallelism() {
    const ARGS: &str =
        "llm train llama-2-70b --chip v5p --slice 8x8x4 --batch-tokens 4Mi --seq 4096";
    let two_d = json_with(ARGS, &["--tp", "16", "--tp-d", "4", "--fsdp", "4"]);
    assert_eq!(two_d["sharding"]["tp_d"], 4);
    let one_d = json_with(ARGS, &["--tp", "64", "--fsdp", "4"]);
    // the same model split per chip; 2-D moves fewer bytes over ICI on 64 chips of model
    // parallelism (past the book's 63 for F/D = 3.5)
    assert_eq!(
        f(&two_d["memory_per_chip"], "weights"),
        f(&one_d["memory_per_chip"], "weights")
    );
    assert!(f(&two_d["comms"], "tp_s") < f(&one_d["comms"], "tp_s"));
    let bad: Vec<&str> = ARGS
        .split_whitespace()
        .chain(["--tp", "16", "--tp-d", "5", "--fsdp", "4"])
        .collect();
    fails(&bad, "tp_d");
}

#[test]
fn report_plans_an_onnx_transformer_on_an_npu_in_layer_groups() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../graph/tests/data/nd");
    let gpt2 = format!("{dir}/gpt2_tiny.onnx");
    let args = [
        "report", &gpt2, "--chip", "bm1684x", "--seq", "32", "--json",
    ];
    let v = json(&args);
    assert_eq!(v["inputs"][0]["dims"], serde_json::json!([1, 32]));
    let plan = &v["plan"];
    assert_eq!(plan["chip"], "bm1684x");
    assert_eq!(plan["dtype_bits"], 16);
    let layers = plan["layers"].as_array().unwrap();
    let groups = plan["groups"].as_array().unwrap();
    // the runs cover the layers in order, and add up to the plan's cycles, below the
    // ungrouped sum of every layer
    let mut next = 0.0;
    for r in groups {
        assert_eq!(f(r, "start"), next);
        next = f(r, "end");
    }
    assert_eq!(next, layers.len() as f64);
    let runs: f64 = groups.iter().map(|r| f(r, "cycles")).sum();
    let ungrouped: f64 = layers.iter().map(|l| f(l, "cycles")).sum();
    assert_eq!(runs, f(plan, "cycles"));
    assert_eq!(ungrouped, f(plan, "ungrouped_cycles"));
    assert!(runs > 0.0 && runs < ungrouped);
    assert!(groups.iter().any(|r| f(r, "end") - f(r, "start") > 1.0));
    // the bias adds go into the matmuls before them; the GELU's tanh runs in f32 between
    // two casts, its cube as five f32 layers between two more
    let biased = layers
        .iter()
        .filter(|l| l["op_type"] == "MatMul" && l["nodes"] == 2 && l["heads_as_batch"] == false);
    assert_eq!(biased.count(), 2 * 4);
    // the attention's two matmuls read the heads as a batch, with a permute each
    let heads = layers.iter().filter(|l| l["heads_as_batch"] == true);
    assert_eq!(heads.count(), 2 * 2);
    assert_eq!(
        layers.iter().filter(|l| l["op_type"] == "Permute").count(),
        2 * 2
    );
    assert!(layers
        .iter()
        .all(|l| l["op_type"] != "Add" || l["nodes"] == 1));
    assert!(layers
        .iter()
        .any(|l| l["op_type"] == "Tanh" && l["f32"] == true));
    assert!(layers
        .iter()
        .any(|l| l["op_type"] == "Exp" && l["f32"] == true));
    let casts = layers.iter().filter(|l| l["op_type"] == "Cast").count();
    assert_eq!(
        casts,
        2 * 4 + 1,
        "two layers, each with a tanh and a cube between casts, and the logits' cast to f32"
    );
    // twice the tokens, more cycles; f32 data, more bytes (the f16 plan's GELU runs in
    // f32 already, so not twice), though not always more cycles: this block's rows are
    // 32 elements, and bm1684x moves small planes in rows of 4,096 bytes at four times
    // the floor a plane, so its f16 maps, in half the rows, take longer than its f32
    // ones, as its profiles show for 1,280 pool outputs
    let long = json(&[
        "report", &gpt2, "--chip", "bm1684x", "--seq", "64", "--json",
    ]);
    assert!(f(&long["plan"], "cycles") > runs);
    let wide = json(&[&args[..6], &["--dtype", "f32", "--json"]].concat());
    let bytes = |plan: &serde_json::Value| -> f64 {
        plan["layers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| f(l, "bytes"))
            .sum()
    };
    assert!(bytes(&wide["plan"]) > bytes(&v["plan"]));
    let out = tpusim().args(&args[..6]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("in layer groups"),
        "{text}"
    );
    // `plan` gives the same plan, and exports its groups as a TPU-MLIR cache
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("gpt2.layer_group_cache.json");
    let cache_arg = cache.to_str().unwrap();
    let planned = json(&[
        "plan",
        &gpt2,
        "--seq",
        "32",
        "--json",
        "--export-tpu-mlir",
        cache_arg,
    ]);
    assert_eq!(planned["plan"], *plan);
    let text = std::fs::read_to_string(&cache).unwrap();
    let cache: Value = serde_json::from_str(&text).unwrap();
    let exported = cache["subfunc_0"]["GroupLayer"].as_array().unwrap();
    let groups = groups
        .iter()
        .filter(|r| f(r, "end") - f(r, "start") > 1.0)
        .count();
    assert_eq!(exported.len(), groups);
    assert!(exported
        .iter()
        .all(|g| g["shape_secs"] == serde_json::json!([1, 1, 1, 1, 1])));
    // and the cache, read back, is priced as the same plan
    let imported = json(&[
        "plan",
        &gpt2,
        "--seq",
        "32",
        "--json",
        "--import-tpu-mlir",
        cache_arg,
    ]);
    assert_eq!(imported["plan"], *plan);
    let report = &imported["tpu_mlir_import"];
    assert_eq!(report["groups"], exported.len());
    assert_eq!(report["refused"], serde_json::json!([]));
    // a cache of another graph names no layer of this one
    let other = cache["subfunc_0"]["GroupLayer"][0].clone();
    let mut foreign = other.clone();
    foreign["locs"] = serde_json::json!(["conv1_Conv", "relu1_Relu"]);
    let bad = dir.path().join("foreign.json");
    let doc = serde_json::json!({"opt": 2, "total subfunc": 1,
        "subfunc_0": {"GroupLayer": [foreign], "GlobalLayer": []}});
    std::fs::write(&bad, doc.to_string()).unwrap();
    fails(
        &[
            "plan",
            &gpt2,
            "--seq",
            "32",
            "--import-tpu-mlir",
            bad.to_str().unwrap(),
        ],
        "names no layer of this graph",
    );
}

#[test]
fn a_built_in_transformer_on_an_npu_asks_for_an_onnx_export() {
    fails(&["report", "gpt2", "--chip", "bm1684x"], "ONNX export");
    fails(&["plan", "llama-3-8b"], "ONNX export");
    fails(&["plan", "resnet18", "--seq", "8"], "apply to transformers");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../graph/tests/data/nd");
    let gpt2 = format!("{dir}/gpt2_tiny.onnx");
    fails(
        &["plan", &gpt2, "--svg", "x.svg"],
        "covers CNN plans so far",
    );
}

/// gpt2_tiny's causal mask is 64 × 64: at --seq's default of 128 it does not import.
/// The error names the default and a length that imports, for report and plan alike;
/// with --seq given there is no such hint, and the length it names does import.
#[test]
fn a_graph_shorter_than_the_default_sequence_names_one_it_imports_at() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../graph/tests/data/nd");
    let gpt2 = format!("{dir}/gpt2_tiny.onnx");
    let hint = "bound to its default, 128; this graph imports with --seq 64";
    fails(&["report", &gpt2], hint);
    fails(&["plan", &gpt2], hint);
    let given = tpusim()
        .args(["report", &gpt2, "--seq", "65"])
        .output()
        .unwrap();
    common::bad_input(&given, &["do not broadcast"]);
    assert!(!String::from_utf8_lossy(&given.stderr).contains("imports with"));
    let v = json(&["report", &gpt2, "--seq", "64", "--json"]);
    assert_eq!(v["inputs"][0]["dims"], serde_json::json!([1, 64]));
}

/// A config with a sliding window, from the command line: `show` says which layers
/// slide, and `serve` caches at most the window in them (Mistral 7B v0.1 caches
/// 4,096 tokens in every layer, so a longer context holds no more).
#[test]
fn sliding_windows_reach_show_and_serve() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../llm/tests/data/hf_configs/gemma-2-2b.json");
    let out = tpusim()
        .args(["llm", "show", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("sliding window of 4096 tokens on 13 of 26 layers"),
        "{text}"
    );
    let v = json(&["llm", "show", dir.to_str().unwrap(), "--json"]);
    assert_eq!(v["model"]["window"]["layers"], 13);
    let kv = |context: &str| {
        let v = json(&[
            "llm",
            "serve",
            "mistral-7b",
            "--chip",
            "v5e",
            "--slice",
            "2x2",
            "--batch",
            "16",
            "--context",
            context,
            "--json",
        ]);
        f(&v, "kv_bytes")
    };
    assert_eq!(kv("32768"), kv("4096"));
    assert!(kv("2048") < kv("4096"));
}

/// Hugging Face Qwen2, Gemma 2 and Phi-3 as torch.onnx.export writes them
/// (`crates/graph/tests/data/nd/make_hf_exports.py`) import at any bound batch and
/// sequence: their matmuls do the FLOPs their config implies (every linear layer
/// over every token, eager attention over the whole sequence, logits of every token),
/// the only other matmul being the rotary table's outer product, and they plan on
/// an NPU.
#[test]
fn hugging_face_exports_of_newer_families_import_and_plan() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../graph/tests/data/nd");
    for family in ["qwen2", "gemma2", "phi3"] {
        let onnx = dir.join(format!("hf_{family}.onnx"));
        let onnx = onnx.to_str().unwrap();
        let cfg: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("hf_{family}.json"))).unwrap(),
        )
        .unwrap();
        let c = |k: &str| cfg[k].as_u64().unwrap();
        let (d, ff, l, n, k, v) = (
            c("hidden_size"),
            c("intermediate_size"),
            c("num_hidden_layers"),
            c("num_attention_heads"),
            c("num_key_value_heads"),
            c("vocab_size"),
        );
        let h = cfg["head_dim"].as_u64().unwrap_or(d / n);
        let (batch, seq) = (3u64, 12u64);
        let r = json(&[
            "report", onnx, "--chip", "v5e", "--batch", "3", "--seq", "12", "--json",
        ]);
        let gemms: Vec<&Value> = r["ops"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["unit"] == "mxu")
            .collect();
        let contracting = |o: &&Value| o["gemm"]["k"].as_u64().unwrap();
        let got: f64 = gemms
            .iter()
            .filter(|o| contracting(o) > 1)
            .map(|o| f(o, "flops"))
            .sum();
        let tokens = batch * seq;
        let linear = l * (d * h * (2 * n + 2 * k) + 3 * d * ff) + d * v;
        let want = 2 * tokens * linear + l * 4 * batch * n * seq * seq * h;
        assert_eq!(got, want as f64, "{family}");
        for o in gemms.iter().filter(|o| contracting(o) == 1) {
            assert_eq!(f(o, "flops"), (2 * (h / 2) * seq) as f64, "{family}: {o}");
        }
        let plan = json(&[
            "plan", onnx, "--chip", "bm1684x", "--batch", "3", "--seq", "12", "--json",
        ]);
        let groups = plan["plan"]["groups"].as_array().unwrap();
        assert!(
            f(&plan["plan"], "cycles") > 0.0 && !groups.is_empty(),
            "{family}"
        );
    }
}

/// `tpusim report` of a transformer writes its page with --html (it was ignored), on
/// a TPU for a built-in and for an ONNX export, and refuses it on an NPU before any
/// work; `llm report --svg` writes the pictures alone.
#[test]
fn transformer_reports_write_pictures() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("g.html");
    let args = [
        "report",
        "gemma-2-2b",
        "--phase",
        "decode",
        "--context",
        "16384",
        "--batch",
        "8",
    ];
    let out = tpusim()
        .args(args)
        .args(["--html", page.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<svg") && html.contains("scores_window"),
        "{html}"
    );
    let total = json(&[args.as_slice(), &["--json"]].concat())["total_time_s"].clone();
    assert!(
        html.contains(&format!("total_time_s&quot;: {total}")),
        "the page holds the figures"
    );
    let svg = dir.path().join("q.svg");
    let out = tpusim()
        .args(["llm", "report", "qwen3-8b", "--svg", svg.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    let onnx = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../graph/tests/data/nd/hf_qwen2.onnx");
    let onnx = onnx.to_str().unwrap();
    let page = dir.path().join("o.html");
    let out = tpusim()
        .args([
            "report",
            onnx,
            "--seq",
            "32",
            "--html",
            page.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&page).unwrap().contains("MatMul"));
    let npu_page = dir.path().join("n.html");
    fails(
        &[
            "report",
            onnx,
            "--chip",
            "bm1684x",
            "--html",
            npu_page.to_str().unwrap(),
        ],
        "--html covers transformer graphs on TPUs so far",
    );
    assert!(!npu_page.exists());
}

/// The CNN-only options of `tpusim report` are refused for a transformer, not ignored.
#[test]
fn cnn_options_are_refused_for_transformers() {
    fails(
        &["report", "llama-3-8b", "--resolution", "224"],
        "--resolution applies to CNNs; 'llama-3-8b' is a transformer",
    );
    let onnx = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../graph/tests/data/nd/hf_qwen2.onnx");
    fails(
        &[
            "report",
            onnx.to_str().unwrap(),
            "--chip",
            "bm1684x",
            "--no-fuse",
        ],
        "--no-fuse applies to CNNs",
    );
}

/// `llm validate --data PATH --json`.
fn validate_data(path: &std::path::Path) -> Value {
    json(&[
        "llm",
        "validate",
        "--data",
        path.to_str().unwrap(),
        "--json",
    ])
}

/// Rows of a user's own measurements (`llm validate --data`), predicted as `llm serve`
/// and `llm train` predict them with the same settings.
#[test]
fn validate_reads_a_users_measurements_as_serve_and_train_predict_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.jsonl");
    let rows = [
        r#"{"id":"serve-a","model":"llama-2-7b","chip":"v5e","chips":8,"precision":"bf16","batch":32,"cache_length":1024,"tp":4,"dp":2,"mean_prompt_tokens":500,"mean_output_tokens":200,"throughput_tokens_per_s":1000,"split":"lab"}"#,
        "",
        r#"{"id":"train-a","model":"llama-2-7b","chip":"v5e","slice":"4x4","slices":1,"batch_tokens":262144,"seq":2048,"remat":"full","weights":"fp32 params","attention":"flash, causal","ici_fsdp":8,"ici_tp":2,"step_s":5.0}"#,
    ];
    std::fs::write(&path, rows.join("\n")).unwrap();
    let v = validate_data(&path);
    let cases = v.as_array().unwrap();
    assert_eq!(cases.len(), 2);
    let s = json(&[
        "llm",
        "serve",
        "llama-2-7b",
        "--slice",
        "8",
        "--batch",
        "32",
        "--context",
        "1024",
        "--tp",
        "4",
        "--dp",
        "2",
        "--prefill-tokens",
        "500",
        "--json",
    ]);
    // a step of the 32 slots, plus each request's prefill spread over its 200 tokens
    let want = 32.0 / (f(&s, "decode_step_s") + f(&s, "prefill_s") * 32.0 / (2.0 * 200.0));
    assert!((f(&cases[0], "predicted") / want - 1.0).abs() < 1e-9);
    assert_eq!(cases[0]["split"], "lab");
    assert!((f(&cases[0], "error") - (want / 1000.0 - 1.0)).abs() < 1e-9);
    let t = json(&[
        "llm",
        "train",
        "llama-2-7b",
        "--chip",
        "v5e",
        "--slice",
        "4x4",
        "--batch-tokens",
        "262144",
        "--seq",
        "2048",
        "--fsdp",
        "8",
        "--tp",
        "2",
        "--remat",
        "full",
        "--param-dtype",
        "f32",
        "--json",
    ]);
    assert!((f(&cases[1], "predicted") / f(&t, "step_s") - 1.0).abs() < 1e-9);
    assert_eq!(cases[1]["split"], "user");
}

#[test]
fn validate_names_the_line_and_field_of_a_bad_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let serve = r#""id":"x","model":"llama-2-7b","chip":"v5e","chips":8,"precision":"bf16","cache_length":2048,"throughput_tokens_per_s":100"#;
    let neg = write(
        "neg.jsonl",
        &format!("{{{serve}}}\n\n{{{serve},\"batch\":-4}}\n"),
    );
    fails(
        &["llm", "validate", "--data", &neg],
        "neg.jsonl line 1: field 'batch' is missing",
    );
    let neg = write("neg2.jsonl", &format!("\n{{{serve},\"batch\":-4}}\n"));
    fails(
        &["llm", "validate", "--data", &neg],
        "neg2.jsonl line 2: field 'batch' is -4; expected a positive whole number",
    );
    let array = write("array.jsonl", "[1,2]\n");
    fails(
        &["llm", "validate", "--data", &array],
        "line 1: row '[1,2]': is not a JSON object",
    );
    let empty = write("empty.jsonl", "\n\n");
    fails(&["llm", "validate", "--data", &empty], "holds no rows");
    let model = write("model.jsonl", r#"{"id":"x","model":7}"#);
    fails(
        &["llm", "validate", "--data", &model],
        "field 'model' is 7; expected a built-in model's name or a config.json object",
    );
}

/// A MaxText `save_…` policy keeps more than `full` and reruns less: its step and its
/// checkpoint memory fall between `full`'s and `minimal`'s.
#[test]
fn train_takes_maxtexts_save_policies() {
    const ARGS: &str =
        "llm train llama-2-70b --chip v5p --slice 8x8x8 --batch-tokens 8Mi --seq 4096 --fsdp 512";
    let run = |remat: &str| {
        let v = json_with(ARGS, &["--remat", remat]);
        assert_eq!(v["remat"], remat);
        (f(&v, "step_s"), f(&v["memory_per_chip"], "checkpoints"))
    };
    let (full, minimal) = (run("full"), run("minimal"));
    let mlpwi = run("save_dot_except_mlpwi");
    assert!(
        full.0 > mlpwi.0 && mlpwi.0 > minimal.0,
        "{full:?} {mlpwi:?} {minimal:?}"
    );
    assert!(full.1 < mlpwi.1 && mlpwi.1 < minimal.1);
    fails(
        &["llm", "train", "llama-2-7b", "--remat", "some"],
        "save_dot_except_mlpwi",
    );
}

/// A row may name its model by a config file beside the measurements.
#[test]
fn validate_reads_a_rows_model_from_a_config_file_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":11008,"num_hidden_layers":32,"num_attention_heads":32,"vocab_size":32000}"#;
    std::fs::create_dir(dir.path().join("configs")).unwrap();
    std::fs::write(dir.path().join("configs/l2.json"), config).unwrap();
    let row = |model: &str| {
        format!(
            r#"{{"id":"r","model":{model},"chip":"v5e","chips":8,"precision":"bf16","batch":32,"cache_length":1024,"throughput_tokens_per_s":1000}}"#
        )
    };
    let by_file = dir.path().join("by_file.jsonl");
    std::fs::write(&by_file, row(r#""configs/l2.json""#)).unwrap();
    let inline = dir.path().join("inline.jsonl");
    std::fs::write(&inline, row(config)).unwrap();
    let a = validate_data(&by_file);
    let b = validate_data(&inline);
    assert_eq!(a[0]["predicted"], b[0]["predicted"]);
    let missing = dir.path().join("missing.jsonl");
    std::fs::write(&missing, row(r#""configs/none.json""#)).unwrap();
    fails(
        &["llm", "validate", "--data", missing.to_str().unwrap()],
        "missing.jsonl line 1: model 'configs/none.json': cannot read model file",
    );
}

/// `--capacity-factor` runs an MoE model's experts as MaxText's dropping MoE: the
/// executed FLOPs grow by the library's count of its empty slots and one-hot einsums,
/// the model FLOPs (and so the MFU's numerator) do not; a dense model refuses it.
#[test]
fn the_dropping_moe_adds_executed_work_only() {
    const ARGS: &str =
        "llm train mixtral-8x7b --chip v6e --slice 16x16 --batch-tokens 12Mi --seq 4096 --fsdp 256";
    let dropless = json_with(ARGS, &[]);
    let dropping = json_with(ARGS, &["--capacity-factor", "1.25"]);
    let m = tpusim_llm::zoo::lookup("mixtral-8x7b").unwrap();
    let extra =
        tpusim_llm::train::capacity::extra_flops_per_token(&m, 4096, 1.25, tpusim_llm::Remat::Full)
            * (12u64 << 20) as f64;
    let grown = f(&dropping, "flops_executed_per_step") - f(&dropless, "flops_executed_per_step");
    assert!((grown / extra - 1.0).abs() < 1e-9, "{grown} {extra}");
    assert_eq!(
        f(&dropping, "flops_per_step"),
        f(&dropless, "flops_per_step")
    );
    assert!(f(&dropping, "step_s") > f(&dropless, "step_s"));
    let dense = "llm train llama-3-8b --chip v6e --slice 16x16 --capacity-factor 1.25";
    fails(
        &dense.split_whitespace().collect::<Vec<_>>(),
        "--capacity-factor",
    );
    let zero = "llm train mixtral-8x7b --chip v6e --slice 16x16 --capacity-factor 0";
    fails(
        &zero.split_whitespace().collect::<Vec<_>>(),
        "a positive factor",
    );
}

/// `--dcn-fsdp` shards the model state over slices too: the sharding says so, each
/// chip holds half the state on two slices, and a degree that does not divide the
/// slices is refused naming the flag.
#[test]
fn fsdp_across_slices_halves_the_state_a_chip_holds() {
    const ARGS: &str = "llm train llama-3.1-70b --chip v6e --slice 16x16 --slices 2 --batch-tokens 4Mi --seq 8192 --fsdp 256 --remat full";
    let dp = json_with(ARGS, &[]);
    let fsdp = json_with(ARGS, &["--dcn-fsdp", "2"]);
    assert_eq!(fsdp["sharding"]["dcn_fsdp"], 2);
    assert_eq!(fsdp["sharding"]["dcn_dp"], 1);
    assert_eq!(dp["sharding"]["dcn_dp"], 2);
    let weights = |v: &Value| f(&v["memory_per_chip"], "weights");
    assert!((weights(&dp) / weights(&fsdp) - 2.0).abs() < 1e-12);
    assert!(f(&fsdp["comms"], "dcn_s") > f(&dp["comms"], "dcn_s"));
    let bad: Vec<&str> = ARGS.split_whitespace().chain(["--dcn-fsdp", "3"]).collect();
    fails(&bad, "--dcn-fsdp");
}

/// GPT-OSS's checkpoint: the experts' matrices in MXFP4, the rest bf16, 60.8 GiB by its
/// model card; serving holds them so; a dense model has no experts to store apart.
#[test]
fn experts_may_be_stored_at_their_own_precision() {
    let v = json_with("llm show gpt-oss-120b --expert-weights mxfp4", &[]);
    assert_eq!(f(&v, "weights_bytes"), 65_248_815_744.0);
    assert_eq!(v["expert_weights_dtype"], "mxfp4");
    let bf16 = json_with("llm show gpt-oss-120b", &[]);
    assert_eq!(f(&bf16, "weights_bytes"), 2.0 * f(&bf16, "params"));
    let serve = "llm serve gpt-oss-120b --chip v6e --slice 4 --batch 16 --context 4096 --tp 4";
    let plain = json_with(serve, &[]);
    let mx = json_with(serve, &["--expert-weights", "mxfp4"]);
    assert!(f(&mx, "weights_bytes") < 0.3 * f(&plain, "weights_bytes"));
    assert!(f(&mx, "decode_step_s") < f(&plain, "decode_step_s"));
    assert_eq!(mx["expert_weights_dtype"], "mxfp4");
    fails(
        &["llm", "show", "llama-3-8b", "--expert-weights", "mxfp4"],
        "no experts",
    );
    fails(
        &[
            "llm",
            "serve",
            "gpt-oss-20b",
            "--chip",
            "v5e",
            "--slice",
            "8",
            "--expert-weights",
            "fp3",
        ],
        "--expert-weights",
    );
}

/// transformers 5 through torch.onnx.export's default (dynamo) exporter: reported on a
/// TPU and planned on both NPUs (`../graph/tests/data/nd/make_dynamo_exports.py`).
#[test]
fn dynamo_exports_report_and_plan() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../graph/tests/data/nd");
    for name in [
        "dyn_llama_sdpa",
        "dyn_qwen3_sdpa",
        "dyn_gemma3_text_eager",
        "dyn_gpt2_sdpa",
        "dyn_bert_eager",
    ] {
        let onnx = dir.join(format!("{name}.onnx"));
        let onnx = onnx.to_str().unwrap();
        let r = json_with(&format!("report {onnx} --chip v5e --batch 3 --seq 12"), &[]);
        assert!(
            f(&r, "flops") > 0.0 && r["ops"].as_array().unwrap().len() > 50,
            "{name}"
        );
        for chip in ["bm1684x", "bm1688"] {
            let plan = json_with(
                &format!("plan {onnx} --chip {chip} --batch 3 --seq 12"),
                &[],
            );
            let groups = plan["plan"]["groups"].as_array().unwrap();
            assert!(
                f(&plan["plan"], "cycles") > 0.0 && !groups.is_empty(),
                "{name} {chip}"
            );
            // TPU-MLIR 1.30.2 refuses every opset-20 export (tpumlir_onnx_refusals.json)
            let refused = plan["tpu_mlir_unconvertible_nodes"].as_array().unwrap();
            assert!(!refused.is_empty(), "{name} {chip}");
        }
    }
    let out = tpusim()
        .args(["plan", dir.join("dyn_bert_eager.onnx").to_str().unwrap()])
        .args(["--chip", "bm1684x", "--batch", "2", "--seq", "16"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("cannot convert 'node_gelu' (Gelu)"),
        "{err}"
    );
}

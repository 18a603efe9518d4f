//! XLA:TPU itself as the reference for a transformer layer: one GPT-2-small block
//! (prefill, batch 1, 1024 tokens, bf16) compiled by libtpu for v5e, v6e and v5p
//! (`tests/data/xla_gpt2_block.json`, from `crates/report/tests/data/xla/generate.py`).
//! Parameters and argument bytes agree exactly; FLOPs and bytes differ for the
//! reasons each assertion states.

use serde_json::Value;
use tpusim_layout::TpuGen;
use tpusim_llm::ops::{Phase, Workload};
use tpusim_llm::tpu::{report, tiled_bytes};
use tpusim_llm::{hf, Precision};

fn cases() -> Vec<Value> {
    let text = include_str!("data/xla_gpt2_block.json");
    let v: Value = serde_json::from_str(text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn block() -> tpusim_llm::Model {
    let cfg = r#"{"model_type":"gpt2","n_embd":768,"n_layer":1,"n_head":12,"vocab_size":50257}"#;
    hf::from_json(cfg, "gpt2-block").unwrap()
}

#[test]
fn parameters_and_argument_bytes_equal_xla() {
    let m = block();
    for c in cases() {
        let gen: TpuGen = c["chip"].as_str().unwrap().parse().unwrap();
        let layer: u64 = m.layer_tensors().iter().map(|t| t.elements()).sum();
        assert_eq!(layer, c["param_count"].as_u64().unwrap());
        let input = tpusim_llm::model::Tensor {
            name: "input".into(),
            dims: vec![1, 1024, 768],
        };
        let bytes = tiled_bytes(&m.layer_tensors(), Precision::Bf16, gen).unwrap()
            + tiled_bytes(&[input], Precision::Bf16, gen).unwrap();
        let want = c["memory_analysis"]["argument_size_in_bytes"]
            .as_f64()
            .unwrap();
        assert_eq!(bytes, want, "{gen}");
    }
}

#[test]
fn flops_and_bytes_against_cost_analysis() {
    let m = block();
    let w = Workload {
        phase: Phase::Prefill,
        batch: 1,
        seq: 1024,
        context: 0,
        weights: Precision::Bf16,
        kv: Precision::Bf16,
    };
    for c in cases() {
        let chip = tpusim_chip::lookup(c["chip"].as_str().unwrap()).unwrap();
        let r = report(&m, &chip, &w).unwrap();
        // The block alone: no embedding, final norm, logits or cache.
        let outside = ["embedding", "norm_final", "logits", "kv_cache_write"];
        let layer: Vec<_> = r
            .ops
            .iter()
            .filter(|o| !outside.contains(&o.op.name.as_str()))
            .collect();
        let flops: f64 = layer.iter().map(|o| o.op.flops).sum();
        let xla = c["cost_analysis"]["flops"].as_f64().unwrap();
        // The matmuls are the same 17.72e9 FLOPs; XLA also counts the attention
        // scale, the causal mask's select, the bias adds and LayerNorm in f32 at more
        // operations per element than our 4, and its count moves by 0.7 % between
        // generations (v6e fuses differently). We are 0.9-1.6 % under.
        let gap = flops / xla - 1.0;
        assert!(
            (-0.02..0.0).contains(&gap),
            "{}: {flops} vs {xla} ({gap:+.4})",
            c["chip"]
        );
        let matmul: f64 = layer
            .iter()
            .filter(|o| o.op.gemm.is_some())
            .map(|o| o.op.flops)
            .sum();
        assert_eq!(
            matmul,
            2.0 * 1024.0 * 7_077_888.0 + 4.0 * 1024.0 * 1024.0 * 768.0
        );
        // Bytes: we count every operation's reads and writes unfused (175 MB); XLA
        // fuses the element-wise work into the matmuls but moves the scores through
        // HBM in f32 for the softmax: 200 MB on v5e, 190 MB on v6e, and 306 MB on
        // v5p, whose compile also keeps a 27 MB temporary (memory_analysis) and
        // writes 170 MB where v5e writes 85 MB. Ours is 0.57-0.92 of XLA's.
        let bytes: f64 = layer.iter().map(|o| o.op.bytes()).sum();
        let xb = c["cost_analysis"]["bytes accessed"].as_f64().unwrap();
        assert!(
            (0.5..1.0).contains(&(bytes / xb)),
            "{}: {bytes} vs {xb}",
            c["chip"]
        );
        // Time: XLA's optimal_seconds is a memory roofline over its bytes accessed
        // (corrected for its ConcatBitcast quirk, see crates/report/tests/data/xla) at
        // the rate it assumes per chip: 0.69 TB/s on v5e (our table: 0.81), 1.61 TB/s
        // on v6e (1.64), 1.98 TB/s on v5p (2.8). Ours is the sum of every op's own
        // roofline time: 0.83 of XLA's on v5e, 0.92 on v6e, 0.52 on v5p (fewer bytes,
        // and v5p's faster HBM in our table).
        let ours: f64 = layer.iter().map(|o| o.time_s).sum();
        let xt = c["optimal_seconds_corrected"].as_f64().unwrap();
        assert!(
            (0.45..1.0).contains(&(ours / xt)),
            "{}: {ours} vs {xt}",
            c["chip"]
        );
    }
}

/// One layer's weights of Gemma 2, Qwen2 (Q/K/V biases), Qwen3 (Q/K norms) and Phi-3
/// (fused QKV), as transformers lists them, passed to a program XLA:TPU compiles for
/// v5e, v6e and v5p: its argument bytes equal our tiled size of the layer's tensors
/// (`bench/xla_layer_bytes.py`; `tests/data/xla_layer_bytes.json`).
#[test]
fn newer_families_layer_bytes_equal_xla() {
    let v: Value = serde_json::from_str(include_str!("data/xla_layer_bytes.json")).unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hf_configs");
    let models = [
        ("gemma-2-2b", "gemma-2-2b.json"),
        ("qwen2.5-7b", "qwen2.5-7b.json"),
        ("qwen3-8b", "qwen3-8b.json"),
        ("phi-3-mini", "phi-3-mini-4k.json"),
        ("olmo-2-7b", "olmo-2-1124-7b.json"),
        ("gpt-oss-20b", "gpt-oss-20b.json"),
        ("smollm3-3b", "smollm3-3b.json"),
        ("granite-3.3-8b", "granite-3.3-8b.json"),
    ];
    for (name, file) in models {
        let m = hf::from_json(&std::fs::read_to_string(dir.join(file)).unwrap(), file).unwrap();
        let xla = &v["layer_argument_bytes"][name];
        // the same parameters, whatever their names and fusing
        let theirs: u64 = v["layer_shapes"][name]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                p[1].as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap())
                    .product::<u64>()
            })
            .sum();
        let ours: u64 = m.layer_tensors().iter().map(|t| t.elements()).sum();
        assert_eq!(ours, theirs, "{name}");
        for chip in ["v5e", "v6e", "v5p"] {
            let gen: TpuGen = chip.parse().unwrap();
            let bytes = tiled_bytes(&m.layer_tensors(), Precision::Bf16, gen).unwrap();
            assert_eq!(bytes, xla[chip].as_f64().unwrap(), "{name} {chip}");
        }
    }
}

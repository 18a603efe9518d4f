//! Every built-in model's parameter count equals the published one, and the
//! spec's worked counts hold.

use tpusim_llm::{hf, zoo, Precision};

/// Published totals (model cards, papers, or the Hugging Face models' own
/// `num_parameters()`), independent of our formulas.
const PUBLISHED: &[(&str, u64)] = &[
    ("gpt2", 124_439_808),
    ("gpt2-medium", 354_823_168),
    ("gpt2-large", 774_030_080),
    ("gpt2-xl", 1_557_611_200),
    ("bert-base", 109_482_240),
    ("llama-2-7b", 6_738_415_616),
    ("llama-2-13b", 13_015_864_320),
    ("llama-2-70b", 68_976_648_192),
    ("llama-3-8b", 8_030_261_248),
    ("llama-3-70b", 70_553_706_496),
    ("llama-3.1-8b", 8_030_261_248),
    ("llama-3.1-70b", 70_553_706_496),
    ("llama-3.1-405b", 405_853_388_800),
    ("mistral-7b", 7_241_732_096),
    ("mixtral-8x7b", 46_702_792_704),
    ("gemma-2b", 2_506_172_416),
    ("gemma-7b", 8_537_680_896),
    ("gemma-2-2b", 2_614_341_888),
    ("gemma-2-9b", 9_241_705_984),
    ("gemma-2-27b", 27_227_128_320),
    ("qwen2.5-7b", 7_615_616_512),
    ("qwen3-8b", 8_190_735_360),
    // transformers 5.6.2's count of the hub configs (OLMo's 7.30B, OpenAI's 20.91B and
    // 116.83B)
    ("olmo-2-7b", 7_298_617_344),
    ("gpt-oss-20b", 20_914_757_184),
    ("gpt-oss-120b", 116_829_156_672),
];

#[test]
fn builtin_counts_equal_the_published_ones() {
    for &(name, want) in PUBLISHED {
        let m = zoo::lookup(name).unwrap();
        assert_eq!(m.params().params, want, "{name}");
    }
    assert_eq!(
        zoo::builtin().len(),
        PUBLISHED.len(),
        "every built-in is pinned"
    );
}

#[test]
fn parts_add_up_and_moe_active_counts_two_experts() {
    for m in zoo::builtin() {
        let c = m.params();
        let sum = c.params_attention
            + c.params_mlp
            + c.params_embedding
            + c.params_norms
            + c.params_other;
        assert_eq!(sum, c.params, "{}", m.name);
    }
    // Mixtral 8x7B: about 12.9e9 parameters active per token (two experts).
    let mx = zoo::lookup("mixtral-8x7b").unwrap().params();
    assert_eq!(mx.params_active, 46_702_792_704 - 6 * 32 * 3 * 4096 * 14336);
}

#[test]
fn spec_worked_counts() {
    // LLaMA-2 13B: MLP 8.5e9, attention 4.2e9, vocab 0.3e9.
    let m = zoo::lookup("llama-2-13b").unwrap();
    let c = m.params();
    assert!((c.params_mlp as f64 / 8.5e9 - 1.0).abs() < 0.01);
    assert!((c.params_attention as f64 / 4.2e9 - 1.0).abs() < 0.01);
    assert!((c.params_embedding as f64 / 0.33e9 - 1.0).abs() < 0.01);
    // KV per token: 819 kB bf16 (13B); 160 kB int8 (LLaMA-3 70B).
    assert_eq!(m.kv_bytes_per_token(Precision::Bf16), 819_200.0);
    let l70 = zoo::lookup("llama-3-70b").unwrap();
    assert_eq!(l70.kv_bytes_per_token(Precision::Int8), 163_840.0);
    // ≈ 4.2e11 training FLOPs per token (6·P).
    assert!((6.0 * l70.params().params as f64 / 4.2e11 - 1.0).abs() < 0.01);
}

#[test]
fn aliases_and_unknown_names() {
    assert_eq!(
        zoo::lookup("meta-llama/Meta-Llama-3-8B").unwrap().name,
        "llama-3-8b"
    );
    assert_eq!(zoo::lookup("Llama-2-7b-hf").unwrap().name, "llama-2-7b");
    assert_eq!(zoo::lookup("gpt2-small").unwrap().name, "gpt2");
    let e = zoo::lookup("llama-9").unwrap_err().to_string();
    assert!(
        e.contains("unknown model 'llama-9'") && e.contains("llama-3-8b"),
        "{e}"
    );
}

/// Hugging Face configs as the hub ships them give the same counts.
#[test]
fn hugging_face_configs() {
    let llama3 = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,
        "intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,
        "num_key_value_heads":8,"vocab_size":128256,"tie_word_embeddings":false,"rms_norm_eps":1e-5}"#;
    assert_eq!(
        hf::from_json(llama3, "c.json").unwrap().params().params,
        8_030_261_248
    );
    let gpt2 = r#"{"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"n_positions":1024,"vocab_size":50257}"#;
    assert_eq!(
        hf::from_json(gpt2, "g.json").unwrap().params().params,
        124_439_808
    );
    let bert = r#"{"model_type":"bert","hidden_size":768,"intermediate_size":3072,"num_hidden_layers":12,
        "num_attention_heads":12,"vocab_size":30522,"max_position_embeddings":512,"type_vocab_size":2}"#;
    assert_eq!(
        hf::from_json(bert, "b.json").unwrap().params().params,
        109_482_240
    );
    let mixtral = r#"{"model_type":"mixtral","hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":8,"vocab_size":32000,"num_local_experts":8,"num_experts_per_tok":2}"#;
    assert_eq!(
        hf::from_json(mixtral, "m.json").unwrap().params().params,
        46_702_792_704
    );
    let gemma = r#"{"model_type":"gemma","hidden_size":2048,"intermediate_size":16384,"num_hidden_layers":18,
        "num_attention_heads":8,"num_key_value_heads":1,"head_dim":256,"vocab_size":256000}"#;
    assert_eq!(
        hf::from_json(gemma, "g.json").unwrap().params().params,
        2_506_172_416
    );
}

#[test]
fn bad_configs_name_the_field() {
    let cases = [
        (
            r#"{"model_type":"llama","hidden_size":4096}"#,
            "'num_attention_heads' is missing",
        ),
        (r#"{"model_type":"t5"}"#, "'model_type' is 't5'"),
        (
            r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":1,"num_hidden_layers":1,"num_attention_heads":32,"num_key_value_heads":5,"vocab_size":10}"#,
            "'num_key_value_heads' is 5",
        ),
        (
            r#"{"model_type":"gpt2","n_embd":768,"hidden_size":512}"#,
            "they name one dimension",
        ),
        (r#"{"hidden_size":-3}"#, "'hidden_size' is -3"),
        (
            r#"{"hidden_size":8,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":1,"vocab_size":8,"mlp":"swi"}"#,
            "'mlp' is 'swi'",
        ),
        (
            r#"{"model_type":"gemma3","text_config":{}}"#,
            "give its text_config as the model file",
        ),
        (
            r#"{"model_type":"gemma2","hidden_size":64,"intermediate_size":64,"num_hidden_layers":3,"num_attention_heads":2,"vocab_size":10,"sliding_window":8,"layer_types":["sliding_attention","full_attention"]}"#,
            "'layer_types' lists 2 layers but num_hidden_layers is 3",
        ),
        (
            r#"{"model_type":"qwen2","hidden_size":64,"intermediate_size":64,"num_hidden_layers":1,"num_attention_heads":2,"vocab_size":10,"sliding_window":8,"layer_types":["chunked_attention"]}"#,
            "'layer_types' has \"chunked_attention\"",
        ),
        (
            r#"{"model_type":"gemma2","hidden_size":64,"intermediate_size":64,"num_hidden_layers":1,"num_attention_heads":2,"vocab_size":10,"sliding_window":8,"layer_types":"sliding_attention"}"#,
            "'layer_types' is \"sliding_attention\"; expected a list",
        ),
        (
            r#"{"model_type":"qwen3_moe","hidden_size":64,"intermediate_size":64,"moe_intermediate_size":32,"num_experts":4,"num_hidden_layers":2,"num_attention_heads":2,"vocab_size":10,"decoder_sparse_step":2}"#,
            "'decoder_sparse_step' is not 1",
        ),
        (
            r#"{"model_type":"qwen3_moe","hidden_size":64,"intermediate_size":64,"moe_intermediate_size":32,"num_experts":4,"num_hidden_layers":2,"num_attention_heads":2,"vocab_size":10,"mlp_only_layers":[0]}"#,
            "'mlp_only_layers' is not empty",
        ),
        (
            r#"{"model_type":"mistral","hidden_size":64,"intermediate_size":64,"num_hidden_layers":1,"num_attention_heads":2,"vocab_size":10,"sliding_window":-1}"#,
            "'sliding_window' is -1",
        ),
        (
            r#"{"model_type":"gemma2","hidden_size":64,"intermediate_size":64,"num_hidden_layers":1,"num_attention_heads":2,"vocab_size":10,"attn_logit_softcapping":-50}"#,
            "'attn_logit_softcapping' is -50",
        ),
        ("[1,2]", "expected an object"),
        ("{", "not JSON"),
    ];
    for (text, want) in cases {
        let e = hf::from_json(text, "f.json").unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
}

/// The weight tensors (as a model stores them) hold exactly the parameters counted
/// by the formulas.
#[test]
fn tensors_hold_every_parameter() {
    for m in zoo::builtin() {
        let layer: u64 = m.layer_tensors().iter().map(|t| t.elements()).sum();
        let outer: u64 = m.outer_tensors().iter().map(|t| t.elements()).sum();
        assert_eq!(m.layers * layer + outer, m.params().params, "{}", m.name);
    }
}

/// Hugging Face configs of every family the reader knows, as the hub ships them:
/// the parameter count and the windowed layers equal what `transformers` itself
/// builds from the same file (`bench/hf_config_counts.py` wrote `counts.jsonl`).
#[test]
fn hugging_face_configs_match_transformers() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hf_configs");
    let counts = std::fs::read_to_string(dir.join("counts.jsonl")).unwrap();
    let mut families = std::collections::BTreeSet::new();
    for line in counts.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let file = row["file"].as_str().unwrap();
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let m = hf::from_json(&text, file).unwrap();
        assert_eq!(m.params().params, row["params"].as_u64().unwrap(), "{file}");
        let windowed = m.window.map_or(0, |w| w.layers);
        assert_eq!(windowed, row["windowed_layers"].as_u64().unwrap(), "{file}");
        if let Some(w) = m.window {
            assert_eq!(Some(w.tokens), row["sliding_window"].as_u64(), "{file}");
        }
        families.insert(row["model_type"].as_str().unwrap().to_string());
    }
    let all = [
        "bert",
        "gemma",
        "gemma2",
        "gemma3_text",
        "gpt2",
        "llama",
        "mistral",
        "mixtral",
        "phi3",
        "qwen2",
        "qwen3",
        "qwen3_moe",
        "granite",
        "smollm3",
        "olmo2",
        "olmo3",
        "gpt_oss",
    ];
    assert_eq!(
        families,
        all.map(String::from).into(),
        "every family has a config"
    );
}

/// Soft-capping as the configs give it: Gemma 2's hub config caps both, Gemma 3's
/// (null) neither, a Gemma 2 config without the keys takes transformers' defaults.
#[test]
fn soft_capping_from_configs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hf_configs");
    let read = |f: &str| hf::from_json(&std::fs::read_to_string(dir.join(f)).unwrap(), f).unwrap();
    let g2 = read("gemma-2-2b.json").softcap;
    assert!(g2.attention && g2.logits);
    let g3 = read("gemma-3-1b.json").softcap;
    assert!(!g3.attention && !g3.logits);
    let bare = read("random_gemma2_0.json").softcap;
    assert!(bare.attention && bare.logits);
}

/// The built-ins that have a config here are the model that config describes.
#[test]
fn builtins_equal_their_configs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hf_configs");
    let pairs = [
        ("gemma-2-2b", "gemma-2-2b.json"),
        ("gemma-2-9b", "gemma-2-9b.json"),
        ("gemma-2-27b", "gemma-2-27b.json"),
        ("qwen2.5-7b", "qwen2.5-7b.json"),
        ("qwen3-8b", "qwen3-8b.json"),
        ("mistral-7b", "mistral-7b-v0.1.json"),
        ("mixtral-8x7b", "mixtral-8x7b.json"),
        ("gemma-2b", "gemma-2b.json"),
        ("gpt2", "gpt2.json"),
        ("olmo-2-7b", "olmo-2-1124-7b.json"),
        ("gpt-oss-20b", "gpt-oss-20b.json"),
        ("gpt-oss-120b", "gpt-oss-120b.json"),
    ];
    for (name, file) in pairs {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let from_config = hf::from_json(&text, file).unwrap();
        let builtin = zoo::lookup(name).unwrap();
        let same = tpusim_llm::Model {
            name: builtin.name.clone(),
            ..from_config
        };
        assert_eq!(same, builtin, "{name}");
    }
}

/// A per-layer list must name every layer, whichever family reads it.
#[test]
fn per_layer_lists_of_the_wrong_length_are_refused() {
    let base = r#""hidden_size":64,"intermediate_size":96,"num_hidden_layers":4,"num_attention_heads":4,"vocab_size":100"#;
    let smol = format!(
        r#"{{"model_type":"smollm3",{base},"use_sliding_window":true,"sliding_window":16,"no_rope_layers":[1,1,0]}}"#
    );
    let e = hf::from_json(&smol, "smol.json").unwrap_err().to_string();
    assert_eq!(
        e,
        "model file smol.json: field 'no_rope_layers' lists 3 layers but num_hidden_layers is 4"
    );
    let oss = format!(r#"{{"model_type":"gpt_oss",{base},"layer_types":"sliding_attention"}}"#);
    let e = hf::from_json(&oss, "oss.json").unwrap_err().to_string();
    assert!(
        e.contains("field 'layer_types' is \"sliding_attention\"; expected a list"),
        "{e}"
    );
    // without the switch SmolLM3 has no window, whatever the lists say
    let off = smol.replace(
        r#""use_sliding_window":true"#,
        r#""use_sliding_window":false"#,
    );
    assert_eq!(hf::from_json(&off, "off.json").unwrap().window, None);
}

//! Built-in models. Each parameter count equals the published one exactly
//! (`tests/params.rs` pins every one).

use crate::error::{LlmError, Result};
use crate::model::{Biases, Dims, Model, QkNorm, SlidingWindow, Softcap};

fn llama(name: &str, d: Dims) -> Model {
    Model::decoder(name, "llama", d)
}

fn gemma(name: &str, d: Dims) -> Model {
    Model {
        tied_embedding: true,
        ..Model::decoder(name, "gemma", d)
    }
}

/// Gemma 2: Gemma with norms after attention and the MLP, and a 4,096-token
/// window on every other layer.
fn gemma2(name: &str, d: Dims) -> Model {
    Model {
        family: "gemma2".into(),
        post_norms: true,
        softcap: Softcap {
            attention: true,
            logits: true,
        },
        window: Some(SlidingWindow {
            tokens: 4096,
            layers: d.layers.div_ceil(2),
        }),
        ..gemma(name, d)
    }
}

/// GPT-OSS: experts of 2,880 with biases, a biased router picking 4, biased
/// attention of 64 heads of 64 with a learned sink each, and a 128-token window on
/// every other layer (the first, third, …).
fn gpt_oss(name: &str, layers: u64, experts: u64) -> Model {
    let d = Dims {
        head_dim: 64,
        ..dims(layers, 2880, 2880, 64, 8, 201088)
    };
    Model {
        family: "gpt_oss".into(),
        biases: Biases {
            qkv: true,
            out: true,
            mlp: true,
            router: true,
        },
        sinks: true,
        fused_gate_up: true,
        experts,
        experts_active: 4,
        window: Some(SlidingWindow {
            tokens: 128,
            layers: layers.div_ceil(2),
        }),
        ..llama(name, d)
    }
}

fn gpt2(name: &str, layers: u64, d_model: u64) -> Model {
    let heads = d_model / 64;
    let d = Dims {
        layers,
        d_model,
        d_ff: 4 * d_model,
        heads,
        kv_heads: heads,
        head_dim: 64,
        vocab: 50257,
    };
    Model::decoder(name, "gpt2", d).gpt2_style(1024)
}

fn bert_base() -> Model {
    let d = Dims {
        layers: 12,
        d_model: 768,
        d_ff: 3072,
        heads: 12,
        kv_heads: 12,
        head_dim: 64,
        vocab: 30522,
    };
    Model::decoder("bert-base", "bert", d).bert_style(512, 2)
}

const fn dims(layers: u64, d_model: u64, d_ff: u64, heads: u64, kv_heads: u64, vocab: u64) -> Dims {
    Dims {
        layers,
        d_model,
        d_ff,
        heads,
        kv_heads,
        head_dim: 128,
        vocab,
    }
}

/// Gemma's heads of 256, whatever the width.
const fn head_dim_256(d: Dims) -> Dims {
    Dims { head_dim: 256, ..d }
}

/// Every built-in model, in listing order.
pub fn builtin() -> Vec<Model> {
    let mixtral = Model {
        family: "mixtral".into(),
        experts: 8,
        experts_active: 2,
        ..llama("mixtral-8x7b", dims(32, 4096, 14336, 32, 8, 32000))
    };
    vec![
        gpt2("gpt2", 12, 768),
        gpt2("gpt2-medium", 24, 1024),
        gpt2("gpt2-large", 36, 1280),
        gpt2("gpt2-xl", 48, 1600),
        bert_base(),
        llama("llama-2-7b", dims(32, 4096, 11008, 32, 32, 32000)),
        llama("llama-2-13b", dims(40, 5120, 13824, 40, 40, 32000)),
        llama("llama-2-70b", dims(80, 8192, 28672, 64, 8, 32000)),
        llama("llama-3-8b", dims(32, 4096, 14336, 32, 8, 128256)),
        llama("llama-3-70b", dims(80, 8192, 28672, 64, 8, 128256)),
        llama("llama-3.1-8b", dims(32, 4096, 14336, 32, 8, 128256)),
        llama("llama-3.1-70b", dims(80, 8192, 28672, 64, 8, 128256)),
        llama("llama-3.1-405b", dims(126, 16384, 53248, 128, 8, 128256)),
        Model {
            family: "mistral".into(),
            window: Some(SlidingWindow {
                tokens: 4096,
                layers: 32,
            }),
            ..llama("mistral-7b", dims(32, 4096, 14336, 32, 8, 32000))
        },
        mixtral,
        gemma(
            "gemma-2b",
            head_dim_256(dims(18, 2048, 16384, 8, 1, 256000)),
        ),
        gemma(
            "gemma-7b",
            head_dim_256(dims(28, 3072, 24576, 16, 16, 256000)),
        ),
        gemma2(
            "gemma-2-2b",
            head_dim_256(dims(26, 2304, 9216, 8, 4, 256000)),
        ),
        gemma2(
            "gemma-2-9b",
            head_dim_256(dims(42, 3584, 14336, 16, 8, 256000)),
        ),
        gemma2("gemma-2-27b", dims(46, 4608, 36864, 32, 16, 256000)),
        Model {
            family: "qwen2".into(),
            biases: Biases {
                qkv: true,
                ..Biases::NONE
            },
            ..llama("qwen2.5-7b", dims(28, 3584, 18944, 28, 4, 152064))
        },
        Model {
            family: "qwen3".into(),
            qk_norm: QkNorm::PerHead,
            ..llama("qwen3-8b", dims(36, 4096, 12288, 32, 8, 151936))
        },
        Model {
            family: "olmo2".into(),
            qk_norm: QkNorm::Whole,
            ..llama("olmo-2-7b", dims(32, 4096, 11008, 32, 32, 100352))
        },
        gpt_oss("gpt-oss-20b", 24, 32),
        gpt_oss("gpt-oss-120b", 36, 128),
    ]
}

/// Other spellings users type for built-in names.
const ALIASES: &[(&str, &str)] = &[
    ("gpt2-small", "gpt2"),
    ("gpt-2", "gpt2"),
    ("bert-base-uncased", "bert-base"),
    ("bert-base-cased", "bert-base"),
    ("llama2-7b", "llama-2-7b"),
    ("llama2-13b", "llama-2-13b"),
    ("llama2-70b", "llama-2-70b"),
    ("llama3-8b", "llama-3-8b"),
    ("llama3-70b", "llama-3-70b"),
    ("llama3.1-8b", "llama-3.1-8b"),
    ("llama3.1-70b", "llama-3.1-70b"),
    ("llama3.1-405b", "llama-3.1-405b"),
    ("llama-3-405b", "llama-3.1-405b"),
    ("mixtral-8x7b-v0.1", "mixtral-8x7b"),
    ("mistral-7b-v0.1", "mistral-7b"),
    ("gemma2-2b", "gemma-2-2b"),
    ("gemma2-9b", "gemma-2-9b"),
    ("gemma2-27b", "gemma-2-27b"),
    ("qwen2.5-7b-instruct", "qwen2.5-7b"),
    ("qwen3-8b-base", "qwen3-8b"),
    ("olmo-2-1124-7b", "olmo-2-7b"),
    ("olmo2-7b", "olmo-2-7b"),
];

/// Normalise a name as users write it: case, an organisation prefix
/// (`meta-llama/`), `meta-`, `-hf`, `_` for `-`.
fn normalise(name: &str) -> String {
    let n = name.trim().to_ascii_lowercase().replace('_', "-");
    let n = n.rsplit('/').next().unwrap_or(&n).to_string();
    let n = n.strip_prefix("meta-").unwrap_or(&n).to_string();
    n.strip_suffix("-hf").unwrap_or(&n).to_string()
}

/// A built-in model by name or alias.
pub fn lookup(name: &str) -> Result<Model> {
    let n = normalise(name);
    let n = ALIASES
        .iter()
        .find(|(a, _)| *a == n)
        .map_or(n.clone(), |(_, to)| (*to).to_string());
    let all = builtin();
    let known = all
        .iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    all.iter()
        .find(|m| m.name == n)
        .cloned()
        .ok_or_else(|| LlmError::UnknownModel {
            given: name.to_string(),
            known,
        })
}

//! Models from a Hugging Face `config.json` (LLaMA, Mistral/Mixtral, Gemma,
//! Gemma 2 and 3, Qwen2 and Qwen3 (dense and MoE), Phi-3, Granite, SmolLM3, OLMo 2
//! and 3, GPT-OSS, GPT-2 and BERT families),
//! or the same keys plus `mlp` (`gated` | `plain`) and `block` (`sequential` |
//! `parallel`) for models outside those families.
//!
//! What each family adds to LLaMA's layer, as Hugging Face's modelling code has it:
//! - Qwen2: biases on Q, K and V (not O);
//! - Qwen3: a per-head RMSNorm of Q and K; `qwen3_moe` experts of
//!   `moe_intermediate_size` in every layer;
//! - Gemma 2: norms after attention and the MLP too, soft-capped scores and logits,
//!   a sliding window on every other layer (the first, third, …); Gemma 3 also Q/K norms and the window on
//!   five layers of six; with `use_bidirectional_attention` (EmbeddingGemma) an
//!   encoder, whose window transformers makes `w/2 + 1`;
//! - Phi-3: Q, K and V stored as one matrix, and the gate and up projections;
//! - Granite: LLaMA's layer (its multipliers scale, they add no weights);
//! - SmolLM3: LLaMA's, tied by default, windowed (with `use_sliding_window`) on the
//!   layers without rotary embeddings (`no_rope_layers`, else every fourth);
//! - OLMo 2: norms after attention and the MLP instead of before (as many), an
//!   RMSNorm over all the queries and one over all the keys, no MLP bias whatever
//!   `mlp_bias` says; OLMo 3 also a 4,096-token window on three layers of four;
//! - GPT-OSS: biased attention with a learned sink per head, experts with biases (gate
//!   and up stored as one matrix) and a biased router (128 experts, 4 active, heads of 64 by default), a 128-token
//!   window on every other layer;
//! - LLaMA's `attention_bias` (Q, K, V, O) and `mlp_bias`;
//! - a `layer_types` list (`sliding_attention` | `full_attention`) names the
//!   windowed layers in any family but LLaMA and Gemma (whose code has no window);
//!   else Mistral, Mixtral, Phi-3 and Qwen3-MoE
//!   window every layer, and Qwen2 and Qwen3 the layers from `max_window_layers`
//!   (28 when not given) on. Qwen windows only with `use_sliding_window: true`;
//!   a `sliding_window` not given at all is transformers 5's default for the family
//!   (4,096 for Mistral, Gemma 2 and 3 and Qwen; none for Mixtral and Phi-3), and
//!   `null` is no window. Every rule is checked against transformers itself
//!   (`bench/hf_config_counts.py`, hub configs and random ones).

use crate::error::{LlmError, Result};
use crate::model::{Biases, Block, Dims, Mlp, Model, QkNorm, SlidingWindow, Softcap};
use serde_json::{Map, Value};

/// The families this reader knows, by `model_type`.
const FAMILIES: &str = "llama, mistral, mixtral, gemma, gemma2, gemma3_text, qwen2, qwen3, \
     qwen3_moe, phi3, granite, smollm3, olmo2, olmo3, gpt_oss, gpt2, bert (or no model_type \
     with mlp/block keys)";

/// The `model_type`s read as LLaMA with the family's additions.
const LLAMA_LIKE: [&str; 15] = [
    "llama",
    "mistral",
    "mixtral",
    "gemma",
    "gemma2",
    "gemma3_text",
    "qwen2",
    "qwen3",
    "qwen3_moe",
    "phi3",
    "granite",
    "smollm3",
    "olmo2",
    "olmo3",
    "gpt_oss",
];

/// Reads fields of one config object, naming the file and field in every error.
struct Fields<'a> {
    origin: &'a str,
    map: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn err(&self, field: &str, problem: impl ToString) -> LlmError {
        LlmError::BadModelField {
            origin: self.origin.to_string(),
            field: field.to_string(),
            problem: problem.to_string(),
        }
    }

    /// A positive integer under the first of `names` present (aliases of one field
    /// must agree), or `None` when none is present.
    fn count(&self, names: &[&str]) -> Result<Option<u64>> {
        let mut found: Option<(String, u64)> = None;
        for &n in names {
            let Some(v) = self.map.get(n) else { continue };
            if v.is_null() {
                continue;
            }
            let x = v
                .as_u64()
                .filter(|&x| x > 0 && x < (1 << 40))
                .ok_or_else(|| self.err(n, format!("is {v}; expected a positive integer")))?;
            match &found {
                Some((m, y)) if *y != x => {
                    return Err(self.err(
                        n,
                        format!("is {x} but '{m}' is {y}; they name one dimension"),
                    ))
                }
                _ => found = Some((n.to_string(), x)),
            }
        }
        Ok(found.map(|(_, x)| x))
    }

    fn need(&self, names: &[&str]) -> Result<u64> {
        self.count(names)?
            .ok_or_else(|| self.err(names[0], "is missing (a positive integer)"))
    }

    fn flag(&self, name: &str) -> Result<Option<bool>> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.err(name, format!("is {v}; expected true or false"))),
        }
    }

    fn text(&self, name: &str) -> Result<Option<String>> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.err(name, format!("is {v}; expected a string"))),
        }
    }
}

/// Parse a model file's text. `origin` names it in errors and becomes the model's
/// name unless the file has `name` or `_name_or_path`.
pub fn from_json(text: &str, origin: &str) -> Result<Model> {
    let value: Value = serde_json::from_str(text).map_err(|e| LlmError::NotJson {
        origin: origin.to_string(),
        message: e.to_string(),
    })?;
    let Value::Object(map) = &value else {
        return Err(LlmError::NotJson {
            origin: origin.to_string(),
            message: "expected an object of config keys".into(),
        });
    };
    from_map(map, origin)
}

/// A model from a parsed config object.
pub fn from_map(map: &Map<String, Value>, origin: &str) -> Result<Model> {
    let f = Fields { origin, map };
    let family = match f.text("model_type")?.as_deref() {
        None => "custom".to_string(),
        Some(t) if t == "gpt2" || t == "bert" || LLAMA_LIKE.contains(&t) => t.to_string(),
        Some("gemma3") => {
            return Err(f.err(
                "model_type",
                "is 'gemma3', a model with a vision tower: give its text_config as the model file (with \"model_type\": \"gemma3_text\")",
            ))
        }
        Some(other) => {
            return Err(f.err(
                "model_type",
                format!("is '{other}'; this reader knows {FAMILIES}"),
            ))
        }
    };
    let mut m = match family.as_str() {
        "gpt2" => gpt2_family(&f)?,
        "bert" => bert_family(&f)?,
        _ => llama_family(&f, &family)?,
    };
    m.family = family;
    m.name = f
        .text("name")?
        .or(f.text("_name_or_path")?)
        .unwrap_or_else(|| origin.to_string());
    apply_variants(&f, &mut m)?;
    check(&f, &m)?;
    Ok(m)
}

fn llama_family(f: &Fields, family: &str) -> Result<Model> {
    let d = f.need(&["hidden_size"])?;
    let heads = f.need(&["num_attention_heads"])?;
    let gpt_oss = family == "gpt_oss";
    let head_dim = match f.count(&["head_dim"])? {
        Some(h) => h,
        None if gpt_oss => 64,
        None if d % heads == 0 => d / heads,
        None => {
            return Err(f.err(
                "head_dim",
                format!(
                "is missing and hidden_size {d} is not a multiple of num_attention_heads {heads}"
            ),
            ))
        }
    };
    let default_experts = if gpt_oss { 128 } else { 1 };
    let experts = f
        .count(&["num_local_experts", "num_experts"])?
        .unwrap_or(default_experts);
    let dims = Dims {
        layers: f.need(&["num_hidden_layers"])?,
        d_model: d,
        d_ff: expert_width(f, experts)?,
        heads,
        kv_heads: f.count(&["num_key_value_heads"])?.unwrap_or(heads),
        head_dim,
        vocab: f.need(&["vocab_size"])?,
    };
    let default_active = if gpt_oss { 4 } else { 2 };
    let active = f
        .count(&["num_experts_per_tok"])?
        .unwrap_or(experts.min(default_active));
    let attention_bias = f.flag("attention_bias")?.unwrap_or(gpt_oss);
    let qwen2 = family == "qwen2";
    let olmo = matches!(family, "olmo2" | "olmo3");
    let tied_by_default = family.starts_with("gemma") || family == "smollm3";
    let model = Model {
        tied_embedding: f.flag("tie_word_embeddings")?.unwrap_or(tied_by_default),
        biases: Biases {
            qkv: attention_bias || qwen2,
            out: attention_bias,
            // OLMo's MLP has none whatever the file says; GPT-OSS's experts always do
            mlp: gpt_oss || (!olmo && f.flag("mlp_bias")?.unwrap_or(false)),
            router: gpt_oss,
        },
        fused_qkv: family == "phi3",
        fused_gate_up: matches!(family, "phi3" | "gpt_oss"),
        post_norms: matches!(family, "gemma2" | "gemma3_text"),
        qk_norm: match family {
            "qwen3" | "qwen3_moe" | "gemma3_text" => QkNorm::PerHead,
            "olmo2" | "olmo3" => QkNorm::Whole,
            _ => QkNorm::None,
        },
        sinks: gpt_oss,
        softcap: softcap(f, family)?,
        experts,
        experts_active: if experts > 1 { active } else { 1 },
        // an embedding model (EmbeddingGemma): no causal mask, no generation
        decoder: f.flag("use_bidirectional_attention")? != Some(true),
        ..Model::decoder("", family, dims)
    };
    Ok(Model {
        window: sliding_window(f, family, model.layers)?,
        ..model
    })
}

/// Gemma 2's and 3's logit soft-capping: a positive `attn_logit_softcapping` or
/// `final_logit_softcapping` (Gemma 2's defaults, 50 and 30, when not given; Gemma 3's
/// none; `null` none).
fn softcap(f: &Fields, family: &str) -> Result<Softcap> {
    let on = |key: &str| -> Result<bool> {
        match f.map.get(key) {
            None => Ok(family == "gemma2"),
            Some(Value::Null) => Ok(false),
            Some(v) => match v.as_f64() {
                Some(c) if c > 0.0 && c.is_finite() => Ok(true),
                _ => Err(f.err(key, format!("is {v}; expected a positive number or null"))),
            },
        }
    };
    if !matches!(family, "gemma2" | "gemma3_text") {
        return Ok(Softcap::NONE);
    }
    Ok(Softcap {
        attention: on("attn_logit_softcapping")?,
        logits: on("final_logit_softcapping")?,
    })
}

/// The MLP width: `intermediate_size`, or an expert's `moe_intermediate_size` in a
/// mixture of experts (Qwen3-MoE), whose layers must then all be sparse.
fn expert_width(f: &Fields, experts: u64) -> Result<u64> {
    let moe = f.count(&["moe_intermediate_size"])?.filter(|_| experts > 1);
    let Some(width) = moe else {
        return f.need(&["intermediate_size"]);
    };
    if f.count(&["decoder_sparse_step"])?.unwrap_or(1) != 1 {
        return Err(f.err(
            "decoder_sparse_step",
            "is not 1: layers alternating between dense and expert MLPs are not modelled",
        ));
    }
    if let Some(Value::Array(a)) = f.map.get("mlp_only_layers") {
        if !a.is_empty() {
            return Err(f.err(
                "mlp_only_layers",
                "is not empty: layers with a dense MLP among expert layers are not modelled",
            ));
        }
    }
    Ok(width)
}

/// The window when the config does not give `sliding_window` at all (an explicit
/// `null` means none): transformers' default for the family.
fn default_window(family: &str) -> Option<u64> {
    match family {
        "mistral" | "gemma2" | "gemma3_text" | "qwen2" | "qwen3" | "qwen3_moe" | "olmo3" => {
            Some(4096)
        }
        "gpt_oss" => Some(128),
        _ => None,
    }
}

/// The layers with a sliding window (see the module's notes), `None` when no
/// layer has one.
fn sliding_window(f: &Fields, family: &str, layers: u64) -> Result<Option<SlidingWindow>> {
    let listed = match per_layer(f, "layer_types", layers)? {
        Some(types) => Some(windowed_layer_types(f, types)?),
        None => None,
    };
    let tokens = match f.map.get("sliding_window") {
        None => default_window(family),
        Some(_) => f.count(&["sliding_window"])?,
    };
    let Some(mut tokens) = tokens else {
        return Ok(None);
    };
    if matches!(family, "llama" | "gemma" | "granite" | "olmo2") {
        // their modelling code has no window, whatever the file says
        return Ok(None);
    }
    let switched = matches!(family, "qwen2" | "qwen3" | "qwen3_moe" | "smollm3");
    if switched && f.flag("use_sliding_window")? != Some(true) {
        return Ok(None);
    }
    if family == "gemma3_text" && f.flag("use_bidirectional_attention")? == Some(true) {
        // transformers halves it for bidirectional (embedding) models
        tokens = tokens / 2 + 1;
    }
    let windowed = match listed {
        Some(windowed) => windowed,
        None => match family {
            "mistral" | "mixtral" | "phi3" | "qwen3_moe" => layers,
            "gemma2" => layers.div_ceil(2),
            "gemma3_text" => {
                let pattern = f.count(&["sliding_window_pattern"])?.unwrap_or(6);
                layers - layers / pattern
            }
            "qwen2" | "qwen3" => {
                let from = f.count(&["max_window_layers"])?.unwrap_or(28);
                layers.saturating_sub(from)
            }
            // every fourth layer full, the others windowed
            "olmo3" => layers - layers / 4,
            // the first of each pair windowed
            "gpt_oss" => layers.div_ceil(2),
            "smollm3" => smollm3_windowed(f, layers)?,
            _ => 0,
        },
    };
    Ok((windowed > 0).then_some(SlidingWindow {
        tokens,
        layers: windowed,
    }))
}

/// SmolLM3's windowed layers: those without rotary embeddings, by `no_rope_layers`
/// (0 = none) or, without it, every `no_rope_layer_interval`-th (4 by default).
fn smollm3_windowed(f: &Fields, layers: u64) -> Result<u64> {
    match per_layer(f, "no_rope_layers", layers)? {
        Some(flags) => Ok(flags.iter().filter(|v| v.as_u64() == Some(0)).count() as u64),
        None => Ok(layers / f.count(&["no_rope_layer_interval"])?.unwrap_or(4)),
    }
}

/// A list of one entry per layer under `key` (`layer_types`, `no_rope_layers`);
/// `None` when the file has none.
fn per_layer<'a>(f: &Fields<'a>, key: &str, layers: u64) -> Result<Option<&'a [Value]>> {
    match f.map.get(key) {
        Some(Value::Array(list)) if list.len() as u64 == layers => Ok(Some(list)),
        Some(Value::Array(list)) => Err(f.err(
            key,
            format!(
                "lists {} layers but num_hidden_layers is {layers}",
                list.len()
            ),
        )),
        Some(v) if !v.is_null() => Err(f.err(key, format!("is {v}; expected a list"))),
        _ => Ok(None),
    }
}

/// Windowed layers by `layer_types`.
fn windowed_layer_types(f: &Fields, types: &[Value]) -> Result<u64> {
    let mut windowed = 0;
    for t in types {
        match t.as_str() {
            Some("sliding_attention") => windowed += 1,
            Some("full_attention") => {}
            _ => {
                return Err(f.err(
                    "layer_types",
                    format!("has {t}; expected \"sliding_attention\" or \"full_attention\""),
                ))
            }
        }
    }
    Ok(windowed)
}

/// Multi-head dimensions of the GPT-2 and BERT families (`H = D / N`), from the
/// first name of each field present.
fn multi_head(
    f: &Fields,
    width: &[&str],
    heads: &[&str],
    layers: &[&str],
    ff: Option<&[&str]>,
) -> Result<Dims> {
    let d = f.need(width)?;
    let n = f.need(heads)?;
    if d % n != 0 {
        return Err(f.err(
            heads[0],
            format!("is {n}, which does not divide {} {d}", width[0]),
        ));
    }
    let d_ff = match ff {
        Some(names) => f.need(names)?,
        None => f.count(&["n_inner", "intermediate_size"])?.unwrap_or(4 * d),
    };
    Ok(Dims {
        layers: f.need(layers)?,
        d_model: d,
        d_ff,
        heads: n,
        kv_heads: n,
        head_dim: d / n,
        vocab: f.need(&["vocab_size"])?,
    })
}

fn gpt2_family(f: &Fields) -> Result<Model> {
    let dims = multi_head(
        f,
        &["n_embd", "hidden_size"],
        &["n_head", "num_attention_heads"],
        &["n_layer", "num_hidden_layers"],
        None,
    )?;
    let positions = f
        .count(&["n_positions", "max_position_embeddings"])?
        .unwrap_or(1024);
    Ok(Model {
        tied_embedding: f.flag("tie_word_embeddings")?.unwrap_or(true),
        ..Model::decoder("", "gpt2", dims).gpt2_style(positions)
    })
}

fn bert_family(f: &Fields) -> Result<Model> {
    let dims = multi_head(
        f,
        &["hidden_size"],
        &["num_attention_heads"],
        &["num_hidden_layers"],
        Some(&["intermediate_size"]),
    )?;
    let positions = f.count(&["max_position_embeddings"])?.unwrap_or(512);
    let types = f.count(&["type_vocab_size"])?.unwrap_or(2);
    Ok(Model::decoder("", "bert", dims).bert_style(positions, types))
}

/// `mlp`, `block` and an activation that names a plain MLP.
fn apply_variants(f: &Fields, m: &mut Model) -> Result<()> {
    if let Some(act) = f.text("hidden_act")?.or(f.text("activation_function")?) {
        if m.family == "custom" && matches!(act.as_str(), "relu" | "gelu" | "gelu_new") {
            m.mlp = Mlp::Plain;
        }
    }
    if let Some(mlp) = f.text("mlp")? {
        m.mlp = match mlp.as_str() {
            "gated" => Mlp::Gated,
            "plain" => Mlp::Plain,
            other => return Err(f.err("mlp", format!("is '{other}'; expected gated or plain"))),
        };
    }
    if let Some(block) = f.text("block")? {
        m.block = match block.as_str() {
            "sequential" => Block::Sequential,
            "parallel" => Block::Parallel,
            other => {
                return Err(f.err(
                    "block",
                    format!("is '{other}'; expected sequential or parallel"),
                ))
            }
        };
    }
    Ok(())
}

/// Contradictions between fields.
fn check(f: &Fields, m: &Model) -> Result<()> {
    if m.heads % m.kv_heads != 0 {
        return Err(f.err(
            "num_key_value_heads",
            format!(
                "is {}, which does not divide num_attention_heads {}",
                m.kv_heads, m.heads
            ),
        ));
    }
    if m.experts_active > m.experts {
        return Err(f.err(
            "num_experts_per_tok",
            format!(
                "is {} but the model has {} experts",
                m.experts_active, m.experts
            ),
        ));
    }
    // Bounds that keep every count below 2^61 (so no product can overflow) and
    // far above any real model.
    let limits = [
        ("num_hidden_layers", m.layers, 1 << 12),
        ("hidden_size", m.d_model, 1 << 18),
        ("intermediate_size", m.d_ff, 1 << 20),
        ("num_attention_heads", m.heads, 1 << 12),
        ("head_dim", m.head_dim, 1 << 12),
        ("vocab_size", m.vocab, 1 << 24),
        ("num_local_experts", m.experts, 1 << 8),
        ("max_position_embeddings", m.positions, 1 << 24),
        ("type_vocab_size", m.token_types, 1 << 24),
    ];
    for (field, value, limit) in limits {
        if value > limit {
            return Err(f.err(field, format!("is {value}; at most {limit} is supported")));
        }
    }
    Ok(())
}

//! Models from a Hugging Face `config.json` (LLaMA, Mistral/Mixtral, Gemma, GPT-2
//! and BERT families), or the same keys plus `mlp` (`gated` | `plain`) and `block`
//! (`sequential` | `parallel`) for models outside those families.

use crate::error::{LlmError, Result};
use crate::model::{Block, Dims, Mlp, Model};
use serde_json::{Map, Value};

/// The families this reader knows, by `model_type`.
const FAMILIES: &str =
    "llama, mistral, mixtral, gemma, gpt2, bert (or no model_type with mlp/block keys)";

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
        Some(t @ ("llama" | "mistral" | "mixtral" | "gemma" | "gpt2" | "bert")) => t.to_string(),
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
    let head_dim = match f.count(&["head_dim"])? {
        Some(h) => h,
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
    let dims = Dims {
        layers: f.need(&["num_hidden_layers"])?,
        d_model: d,
        d_ff: f.need(&["intermediate_size"])?,
        heads,
        kv_heads: f.count(&["num_key_value_heads"])?.unwrap_or(heads),
        head_dim,
        vocab: f.need(&["vocab_size"])?,
    };
    let experts = f.count(&["num_local_experts", "num_experts"])?.unwrap_or(1);
    let active = f.count(&["num_experts_per_tok"])?.unwrap_or(experts.min(2));
    Ok(Model {
        tied_embedding: f.flag("tie_word_embeddings")?.unwrap_or(family == "gemma"),
        bias: f.flag("attention_bias")?.unwrap_or(false),
        experts,
        experts_active: if experts > 1 { active } else { 1 },
        ..Model::decoder("", family, dims)
    })
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

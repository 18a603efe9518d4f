//! Rematerialisation policies: what a layer keeps for the backward pass
//! (checkpoints, in `D`-wide vectors per token) and what it recomputes.

use crate::error::{bad, Result};
use crate::model::Model;
use serde::Serialize;

/// What each layer saves for the backward pass (MaxText's policy names).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Remat {
    /// Save every intermediate: nothing recomputed.
    None,
    /// Save the matmul outputs (MaxText's `minimal`: every dot but attention's
    /// context); recompute the element-wise work and attention's forward pass.
    Minimal,
    /// Save each layer's input; recompute the whole forward pass in the backward.
    Full,
    /// Save `c` `D`-wide vectors per token per layer (the book's `c`).
    Checkpoints(f64),
    /// One of MaxText's named-tensor policies (`save_…`, `…_offloaded`, `custom`):
    /// each named output kept on the device, offloaded to the host or recomputed.
    Saves(Saves),
}

/// Where a policy keeps one of a layer's named outputs (MaxText's `remat`,
/// `device`, `offload`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// Recomputed in the backward pass.
    Remat,
    /// Kept in HBM.
    Device,
    /// Kept in host memory: written out in the forward pass, read back in the backward.
    Offload,
}

impl Keep {
    fn kept(self) -> bool {
        self != Keep::Remat
    }

    /// MaxText's word for it.
    fn word(self) -> &'static str {
        match self {
            Keep::Remat => "remat",
            Keep::Device => "device",
            Keep::Offload => "offload",
        }
    }
}

/// A layer's named outputs (MaxText's checkpoint names) and where a policy keeps
/// each. Keeping `mlpwo` costs memory only: nothing in the backward pass needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Saves {
    /// MaxText's name for the policy.
    pub policy: &'static str,
    /// `decoder_layer_input`, the scan's carry: on the device unless offloaded.
    pub layer_input: Keep,
    /// `query_proj`.
    pub query: Keep,
    /// `key_proj`.
    pub key: Keep,
    /// `value_proj`.
    pub value: Keep,
    /// `context`: attention's output before `out_proj`.
    pub context: Keep,
    /// `out_proj`.
    pub out_proj: Keep,
    /// `mlpwi` (`mlpwi_0`, `mlpwi_1`): the MLP's input projections (gate and up).
    pub mlpwi: Keep,
    /// `mlpwo`: the MLP's output projection.
    pub mlpwo: Keep,
}

/// What of an MLP's forward pass a remat policy reruns in the backward pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MlpRerun {
    /// Nothing: its outputs are kept.
    Nothing,
    /// Its input projections (`mlpwi`), which the activation's gradient needs.
    Inputs,
    /// The whole layer's forward pass.
    Whole,
}

impl Saves {
    /// Nothing but the layer input kept: MaxText's default for every name.
    const REMAT: Saves = Saves {
        policy: "custom",
        layer_input: Keep::Device,
        query: Keep::Remat,
        key: Keep::Remat,
        value: Keep::Remat,
        context: Keep::Remat,
        out_proj: Keep::Remat,
        mlpwi: Keep::Remat,
        mlpwo: Keep::Remat,
    };

    /// A preset keeping the Q/K/V projections, `context`, `out_proj`, `mlpwi` and
    /// `mlpwo` as given (`D` device, `O` offload, `R` remat).
    const fn preset(policy: &'static str, qkv: Keep, rest: [Keep; 4]) -> Saves {
        Saves {
            policy,
            layer_input: Keep::Device,
            query: qkv,
            key: qkv,
            value: qkv,
            context: rest[0],
            out_proj: rest[1],
            mlpwi: rest[2],
            mlpwo: rest[3],
        }
    }

    /// `custom`: MaxText's names with `remat`, `device` or `offload`
    /// (`decoder_layer_input` is on the device unless offloaded; any other name
    /// not given is recomputed).
    pub fn custom<'a>(names: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Saves> {
        let mut s = Saves::REMAT;
        let (mut wi0, mut wi1) = (None, None);
        for (name, value) in names {
            let keep = match value.trim().to_ascii_lowercase().as_str() {
                "remat" => Keep::Remat,
                "device" => Keep::Device,
                "offload" => Keep::Offload,
                _ => return Err(bad(name, value, "use remat, device or offload")),
            };
            match name.trim() {
                "decoder_layer_input" if keep == Keep::Remat => {
                    return Err(bad(
                        name,
                        value,
                        "the layer input is the remat start point: device or offload",
                    ))
                }
                "decoder_layer_input" => s.layer_input = keep,
                "query_proj" => s.query = keep,
                "key_proj" => s.key = keep,
                "value_proj" => s.value = keep,
                "kv_proj" => (s.key, s.value) = (keep, keep),
                "qkv_proj" => (s.query, s.key, s.value) = (keep, keep, keep),
                "context" => s.context = keep,
                "out_proj" => s.out_proj = keep,
                "mlpwi" => s.mlpwi = keep,
                "mlpwi_0" => wi0 = Some(keep),
                "mlpwi_1" => wi1 = Some(keep),
                "mlpwo" => s.mlpwo = keep,
                other => {
                    return Err(bad(
                        "custom remat",
                        other,
                        format!("names are {}", CUSTOM_NAMES.join(", ")),
                    ))
                }
            }
        }
        match (wi0, wi1) {
            (Some(a), Some(b)) if a != b => {
                return Err(bad(
                    "mlpwi_0",
                    a.word(),
                    format!(
                        "differs from mlpwi_1 ({}): a gate and an up projection kept apart are not modelled",
                        b.word()
                    ),
                ))
            }
            (Some(k), _) | (_, Some(k)) => s.mlpwi = k,
            (None, None) => {}
        }
        Ok(s)
    }

    /// `D`-wide vectors per token of each named output, for layer `m`.
    fn sizes(&self, m: &Model) -> [(Keep, f64); 8] {
        let d = m.d_model as f64;
        let q = (m.heads * m.head_dim) as f64 / d;
        let kv = (m.kv_heads * m.head_dim) as f64 / d;
        // a token's gate and up outputs in each expert it visits
        let hidden = (m.mlp_matrices() - 1) as f64 * (m.d_ff * m.experts_active) as f64 / d;
        [
            (self.layer_input, 1.0),
            (self.query, q),
            (self.key, kv),
            (self.value, kv),
            (self.context, q),
            (self.out_proj, 1.0),
            (self.mlpwi, hidden),
            (self.mlpwo, 1.0),
        ]
    }

    /// Vectors per token per layer kept as `keep`.
    fn vectors(&self, m: &Model, keep: Keep) -> f64 {
        // a fold from +0 (an empty f64 sum is −0, which prints as "-0 B")
        self.sizes(m)
            .iter()
            .filter(|(k, _)| *k == keep)
            .fold(0.0, |sum, (_, v)| sum + v)
    }
}

/// MaxText's tensor names a `custom` policy assigns.
pub const CUSTOM_NAMES: [&str; 12] = [
    "decoder_layer_input",
    "query_proj",
    "key_proj",
    "value_proj",
    "kv_proj",
    "qkv_proj",
    "context",
    "out_proj",
    "mlpwi",
    "mlpwi_0",
    "mlpwi_1",
    "mlpwo",
];

const D: Keep = Keep::Device;
const O: Keep = Keep::Offload;
const R: Keep = Keep::Remat;

/// MaxText's presets (`layers/decoders.py`, `utils/maxtext_utils.py`), by what they keep:
/// the Q/K/V projections, then `context`, `out_proj`, `mlpwi`, `mlpwo`.
const PRESETS: [Saves; 8] = [
    Saves::preset("save_dot_with_context_except_mlp", D, [D, D, R, R]),
    Saves::preset("save_dot_except_mlpwi", D, [R, D, R, D]),
    Saves::preset("save_dot_except_mlp", D, [R, D, R, R]),
    Saves::preset("save_qkv_proj", D, [R, R, R, R]),
    Saves::preset("save_out_proj", R, [R, D, R, R]),
    Saves::preset("minimal_with_context", D, [D, D, D, D]),
    Saves::preset("qkv_proj_offloaded", O, [R, R, R, R]),
    Saves::preset("minimal_offloaded", O, [R, O, O, O]),
];

/// Forward work a policy recomputes in the backward pass, per token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recomputed {
    /// Weight-matmul FLOPs per token.
    pub matmul_flops: f64,
    /// Times attention's forward pass (scores and values) is run again: 0 or 1.
    pub attention_forwards: f64,
}

impl Remat {
    /// Parse `none`, `minimal`, `full`, one of MaxText's presets
    /// (`save_dot_except_mlpwi`, `save_dot_except_mlp`, `save_dot_with_context_except_mlp`,
    /// `save_qkv_proj`, `save_out_proj`, `minimal_with_context`, `qkv_proj_offloaded`,
    /// `minimal_offloaded`) or `custom:NAME=KEEP,…` (MaxText's tensor names, each
    /// `remat`, `device` or `offload`).
    pub fn parse(text: &str) -> Result<Remat> {
        let t = text.trim().to_ascii_lowercase();
        if let Some(list) = t.strip_prefix("custom:") {
            let pairs: Vec<(&str, &str)> = list
                .split(',')
                .filter(|p| !p.trim().is_empty())
                .map(|p| p.split_once('=').unwrap_or((p, "")))
                .collect();
            return Ok(Remat::Saves(Saves::custom(pairs)?));
        }
        Ok(match t.as_str() {
            "none" | "nothing" => Remat::None,
            "minimal" => Remat::Minimal,
            "full" => Remat::Full,
            "custom" => Remat::Saves(Saves::REMAT),
            _ => match PRESETS.iter().find(|s| s.policy == t) {
                Some(s) => Remat::Saves(*s),
                None => {
                    return Err(bad(
                        "--remat",
                        text,
                        "use none, minimal, full, save_dot_except_mlpwi, save_dot_except_mlp, \
                         save_dot_with_context_except_mlp, save_qkv_proj, save_out_proj, \
                         minimal_with_context, qkv_proj_offloaded, minimal_offloaded or \
                         custom:NAME=remat|device|offload,… (or --checkpoints-per-layer C)",
                    ))
                }
            },
        })
    }

    /// Checkpoints per layer, in `D`-wide vectors per token.
    pub fn checkpoints(self, m: &Model) -> f64 {
        let d = m.d_model as f64;
        let qkv = ((m.heads + 2 * m.kv_heads) * m.head_dim) as f64 / d;
        let attn_out = (m.heads * m.head_dim) as f64 / d;
        let hidden = (m.mlp_matrices() - 1) as f64 * m.d_ff as f64 / d;
        match self {
            // norms, residuals and the matmul inputs and outputs
            Remat::None => 4.0 + qkv + attn_out + 2.0 * hidden,
            Remat::Minimal => qkv + 2.0 + hidden,
            Remat::Full => 1.0,
            Remat::Checkpoints(c) => c,
            Remat::Saves(s) => s.vectors(m, Keep::Device),
        }
    }

    /// What the backward pass runs again: the whole forward pass with `full` (or
    /// fewer checkpoints than `minimal` keeps: `2·P` per token, the `8·P` of the
    /// book for `6·P` counted); with a `save_…` policy, each matmul whose output
    /// it does not keep (out_proj's needed to rebuild the residual, the MLP's input
    /// projections for its activation) and attention's forward unless `context` is
    /// kept; `minimal` attention's forward alone.
    pub fn recomputed(self, m: &Model) -> Recomputed {
        let whole = Recomputed {
            matmul_flops: 2.0 * m.params().params_active as f64,
            attention_forwards: 1.0,
        };
        let nothing = Recomputed {
            matmul_flops: 0.0,
            attention_forwards: 0.0,
        };
        if self.reruns_whole_layer(m) {
            return whole;
        }
        match self {
            Remat::Full => whole,
            // checkpoints at least `minimal`'s (fewer rerun the whole layer, above)
            Remat::None | Remat::Checkpoints(_) => nothing,
            Remat::Minimal => Recomputed {
                matmul_flops: 0.0,
                attention_forwards: 1.0,
            },
            Remat::Saves(s) => {
                let (d, q) = (m.d_model as f64, (m.heads * m.head_dim) as f64);
                let kv = (m.kv_heads * m.head_dim) as f64;
                let mlpwi = (m.mlp_matrices() - 1) as f64 * m.d_ff as f64 * m.experts_active as f64;
                let unkept = |keep: Keep, weights: f64| if keep.kept() { 0.0 } else { weights };
                let per_layer = unkept(s.query, d * q)
                    + unkept(s.key, d * kv)
                    + unkept(s.value, d * kv)
                    + unkept(s.out_proj, q * d)
                    + unkept(s.mlpwi, d * mlpwi);
                Recomputed {
                    matmul_flops: 2.0 * per_layer * m.layers as f64,
                    attention_forwards: if s.context.kept() { 0.0 } else { 1.0 },
                }
            }
        }
    }

    /// What of an MLP's forward pass the backward pass reruns: the whole layer's
    /// (`full`, and checkpoints below `minimal`'s), its input projections (a policy
    /// that does not keep `mlpwi`), or nothing.
    pub fn mlp_rerun(self, m: &Model) -> MlpRerun {
        match self {
            _ if self.reruns_whole_layer(m) => MlpRerun::Whole,
            Remat::Saves(s) if !s.mlpwi.kept() => MlpRerun::Inputs,
            _ => MlpRerun::Nothing,
        }
    }

    /// `full`, or fewer checkpoints than `minimal` keeps: the backward pass reruns
    /// each layer's whole forward pass.
    fn reruns_whole_layer(self, m: &Model) -> bool {
        match self {
            Remat::Full => true,
            Remat::Checkpoints(_) => self.checkpoints(m) < Remat::Minimal.checkpoints(m),
            _ => false,
        }
    }

    /// Vectors per token per layer a policy offloads to the host (written in the
    /// forward pass, read back in the backward).
    pub fn offloaded(self, m: &Model) -> f64 {
        match self {
            Remat::Saves(s) => s.vectors(m, Keep::Offload),
            _ => 0.0,
        }
    }

    /// Name as printed.
    pub fn name(self) -> String {
        match self {
            Remat::None => "none".into(),
            Remat::Minimal => "minimal".into(),
            Remat::Full => "full".into(),
            Remat::Checkpoints(c) => format!("{c} checkpoints per layer"),
            Remat::Saves(s) => s.name(),
        }
    }
}

impl Saves {
    /// The policy's name; `custom` with what it keeps (`custom:query_proj=offload,…`).
    fn name(&self) -> String {
        if self.policy != "custom" {
            return self.policy.to_string();
        }
        let named = [
            ("decoder_layer_input", self.layer_input, Keep::Device),
            ("query_proj", self.query, Keep::Remat),
            ("key_proj", self.key, Keep::Remat),
            ("value_proj", self.value, Keep::Remat),
            ("context", self.context, Keep::Remat),
            ("out_proj", self.out_proj, Keep::Remat),
            ("mlpwi", self.mlpwi, Keep::Remat),
            ("mlpwo", self.mlpwo, Keep::Remat),
        ];
        let set: Vec<String> = named
            .iter()
            .filter(|(_, keep, default)| keep != default)
            .map(|(n, keep, _)| format!("{n}={}", keep.word()))
            .collect();
        if set.is_empty() {
            "custom".into()
        } else {
            format!("custom:{}", set.join(","))
        }
    }
}

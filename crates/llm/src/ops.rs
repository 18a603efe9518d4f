//! A transformer's work as a list of operations, for one phase on one device: the
//! matmuls (with the attention matmuls batched over key/value heads) and the
//! vector work (norms, rotary embedding, softmax, activations, residual adds), each
//! with its shape, FLOPs and the bytes it reads and writes. What `tpusim report`
//! times for a transformer (`tpu::report`) and what `systolic` maps as GEMMs.

use crate::error::{bad, Result};
use crate::model::{AttentionSpan, Block, Mlp, Model, QkNorm};
use crate::precision::Precision;
use serde::Serialize;

/// Prefill (a prompt of `seq` tokens per sequence) or decode (one new token per
/// sequence against a KV cache of `context` tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Process the prompt.
    Prefill,
    /// Generate one token.
    Decode,
}

impl Phase {
    /// Parse `prefill` or `decode`.
    pub fn parse(text: &str) -> Result<Phase> {
        match text.trim().to_ascii_lowercase().as_str() {
            "prefill" => Ok(Phase::Prefill),
            "decode" => Ok(Phase::Decode),
            _ => Err(bad("--phase", text, "use prefill or decode")),
        }
    }
}

/// What one run covers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Workload {
    /// Prefill or decode.
    pub phase: Phase,
    /// Sequences.
    pub batch: u64,
    /// Prompt tokens per sequence (prefill).
    pub seq: u64,
    /// KV-cache length per sequence before this step (decode).
    pub context: u64,
    /// Weight precision.
    pub weights: Precision,
    /// KV-cache precision.
    pub kv: Precision,
}

impl Workload {
    /// Tokens processed per sequence (`seq` in prefill, 1 in decode).
    pub fn new_tokens(&self) -> u64 {
        match self.phase {
            Phase::Prefill => self.seq,
            Phase::Decode => 1,
        }
    }

    /// Keys each query attends to (`seq` in prefill, `context + 1` in decode).
    pub fn attended(&self) -> u64 {
        match self.phase {
            Phase::Prefill => self.seq,
            Phase::Decode => self.context + 1,
        }
    }
}

/// The unit an operation runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Matrix units.
    Mxu,
    /// Vector unit.
    Vpu,
}

/// A matmul `[batch × (m, k)] · [batch × (k, n)]`; the right operand is a weight or
/// the KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Gemm {
    /// Independent products.
    pub batch: u64,
    /// Rows of the left operand.
    pub m: u64,
    /// Contracting dimension.
    pub k: u64,
    /// Columns of the result.
    pub n: u64,
}

/// Which layers an operation runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every layer.
    Layers,
    /// The layers attending to the whole context (a model with a window).
    FullAttentionLayers,
    /// The layers whose sliding window caps the keys.
    WindowedLayers,
    /// Once a step, outside the layers (embedding, head), or a node of a graph.
    Once,
}

/// One operation of the model (of one layer when `count` is the layer count).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Op {
    /// Name (`qkv`, `scores`, `softmax`, …).
    pub name: String,
    /// Times it runs per step (the layers, or 1).
    pub count: u64,
    /// The layers it runs in.
    pub scope: Scope,
    /// MXU or VPU.
    pub unit: Unit,
    /// The matmul, for MXU work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gemm: Option<Gemm>,
    /// Useful FLOPs of one run.
    pub flops: f64,
    /// Bytes of activations read (bf16).
    pub act_bytes_in: f64,
    /// Bytes of weights read.
    pub weight_bytes: f64,
    /// Bytes of KV cache read.
    pub kv_bytes_read: f64,
    /// Bytes of KV cache written.
    pub kv_bytes_written: f64,
    /// Bytes of activations written (bf16).
    pub act_bytes_out: f64,
}

impl Op {
    /// Every byte one run moves.
    pub fn bytes(&self) -> f64 {
        self.act_bytes_in
            + self.weight_bytes
            + self.kv_bytes_read
            + self.kv_bytes_written
            + self.act_bytes_out
    }
}

/// Bytes of an activation element (bf16), in every timed operation.
pub(crate) const ACTIVATION_BYTES: f64 = 2.0;
const ACT: f64 = ACTIVATION_BYTES;

struct Builder<'a> {
    m: &'a Model,
    w: &'a Workload,
    /// The scope of the operations pushed next.
    scope: Scope,
    ops: Vec<Op>,
}

impl Builder<'_> {
    fn gemm(&mut self, name: &str, count: u64, g: Gemm, weights: f64, kv: f64) {
        let f = |x: u64| x as f64;
        self.ops.push(Op {
            name: name.into(),
            count,
            scope: self.scope,
            unit: Unit::Mxu,
            gemm: Some(g),
            flops: 2.0 * f(g.batch) * f(g.m) * f(g.k) * f(g.n),
            act_bytes_in: f(g.batch) * f(g.m) * f(g.k) * ACT,
            weight_bytes: weights,
            kv_bytes_read: kv,
            kv_bytes_written: 0.0,
            act_bytes_out: f(g.batch) * f(g.m) * f(g.n) * ACT,
        });
    }

    /// Element-wise or reduction work over `elements` values read and written.
    fn vector(&mut self, name: &str, count: u64, elements: f64, flops_each: f64, inputs: f64) {
        self.ops.push(Op {
            name: name.into(),
            count,
            scope: self.scope,
            unit: Unit::Vpu,
            gemm: None,
            flops: elements * flops_each,
            act_bytes_in: elements * inputs * ACT,
            weight_bytes: 0.0,
            kv_bytes_read: 0.0,
            kv_bytes_written: 0.0,
            act_bytes_out: elements * ACT,
        });
    }
}

/// The operations of one step of `w` on `m`: per layer (count = layers), then the
/// embedding, final norm and output projection (count 1). Prefill computes logits for
/// the last token of each sequence only, as generation does.
pub fn ops(m: &Model, w: &Workload) -> Result<Vec<Op>> {
    for (what, v) in [
        ("--batch", w.batch),
        ("--seq", w.new_tokens()),
        ("--context", w.attended()),
    ] {
        if v == 0 || v > 1 << 24 {
            return Err(bad(what, v, "between 1 and 2^24"));
        }
    }
    let scores = [w.batch, m.heads, w.new_tokens(), w.attended()]
        .iter()
        .try_fold(1u64, |a, &x| a.checked_mul(x))
        .filter(|&n| n <= 1 << 50);
    if scores.is_none() {
        return Err(bad(
            "--batch/--seq/--context",
            format!("{}/{}/{}", w.batch, w.seq, w.context),
            "make an attention score tensor of more than 2^50 elements",
        ));
    }
    if !m.decoder && w.phase == Phase::Decode {
        return Err(bad(
            "--phase",
            "decode",
            format!(
                "{} is an encoder: it has no decode phase and no KV cache (use prefill)",
                m.name
            ),
        ));
    }
    let mut b = Builder {
        m,
        w,
        scope: Scope::Layers,
        ops: Vec::new(),
    };
    layer(&mut b);
    head(&mut b);
    Ok(b.ops)
}

fn layer(b: &mut Builder) {
    let (m, w) = (b.m, b.w);
    let l = m.layers;
    let t = w.batch * w.new_tokens();
    let tf = t as f64;
    let (d, h) = (m.d_model, m.head_dim);
    let wb = w.weights.bytes();
    let s = w.attended();
    b.vector("norm_attn", l, tf * d as f64, 4.0, 1.0);
    let qkv_n = (m.heads + 2 * m.kv_heads) * h;
    b.gemm(
        "qkv",
        l,
        Gemm {
            batch: 1,
            m: t,
            k: d,
            n: qkv_n,
        },
        (d * qkv_n) as f64 * wb,
        0.0,
    );
    if m.positions == 0 {
        b.vector(
            "rotary",
            l,
            tf * ((m.heads + m.kv_heads) * h) as f64,
            3.0,
            2.0,
        );
    }
    if m.qk_norm != QkNorm::None {
        b.vector(
            "qk_norm",
            l,
            tf * ((m.heads + m.kv_heads) * h) as f64,
            4.0,
            1.0,
        );
    }
    if m.decoder {
        cache_write(b, tf);
    }
    for span in m.attention_spans(s) {
        attention(b, span);
    }
    let o_k = m.heads * h;
    b.gemm(
        "attn_out",
        l,
        Gemm {
            batch: 1,
            m: t,
            k: o_k,
            n: d,
        },
        (o_k * d) as f64 * wb,
        0.0,
    );
    if m.post_norms {
        b.vector("norm_attn_post", l, tf * d as f64, 4.0, 1.0);
    }
    b.vector("residual_attn", l, tf * d as f64, 1.0, 2.0);
    if m.block == Block::Sequential {
        b.vector("norm_mlp", l, tf * d as f64, 4.0, 1.0);
    }
    mlp(b, t);
    if m.post_norms {
        b.vector("norm_mlp_post", l, tf * d as f64, 4.0, 1.0);
    }
    b.vector("residual_mlp", l, tf * d as f64, 1.0, 2.0);
}

/// Scores, softmax and values of the `span.layers` layers whose queries attend to
/// `span.keys` keys each (read from the cache), batched over key/value heads;
/// `_window` names those of windowed layers.
fn attention(b: &mut Builder, span: AttentionSpan) {
    let (m, w) = (b.m, b.w);
    let suffix = if span.capped { "_window" } else { "" };
    b.scope = match (span.layers == m.layers, span.capped) {
        (true, _) => Scope::Layers,
        (false, true) => Scope::WindowedLayers,
        (false, false) => Scope::FullAttentionLayers,
    };
    let (l, s, h) = (span.layers, span.keys, m.head_dim);
    let heads_rows = w.new_tokens() * (m.heads / m.kv_heads);
    let cache = (w.batch * m.kv_heads * s * h) as f64 * w.kv.bytes();
    let att = Gemm {
        batch: w.batch * m.kv_heads,
        m: heads_rows,
        k: h,
        n: s,
    };
    b.gemm(&format!("scores{suffix}"), l, att, 0.0, cache);
    let scores = (w.batch * m.heads * w.new_tokens() * s) as f64;
    if m.softcap.attention {
        // c·tanh(x/c): a divide, a tanh and a multiply a score
        b.vector(&format!("softcap{suffix}"), l, scores, 3.0, 1.0);
    }
    b.vector(&format!("softmax{suffix}"), l, scores, 5.0, 1.0);
    let pv = Gemm {
        batch: w.batch * m.kv_heads,
        m: heads_rows,
        k: s,
        n: h,
    };
    b.gemm(&format!("attn_values{suffix}"), l, pv, 0.0, cache);
    b.scope = Scope::Layers;
}

/// The new keys and values of `tf` tokens go into the cache.
fn cache_write(b: &mut Builder, tf: f64) {
    let (m, w) = (b.m, b.w);
    let (l, h) = (m.layers, m.head_dim);
    let kv_new = tf * (2 * m.kv_heads * h) as f64 * w.kv.bytes();
    b.ops.push(Op {
        name: "kv_cache_write".into(),
        count: l,
        scope: Scope::Layers,
        unit: Unit::Vpu,
        gemm: None,
        flops: 0.0,
        act_bytes_in: tf * (2 * m.kv_heads * h) as f64 * ACT,
        weight_bytes: 0.0,
        kv_bytes_read: 0.0,
        kv_bytes_written: kv_new,
        act_bytes_out: 0.0,
    });
}

fn mlp(b: &mut Builder, t: u64) {
    let (m, w) = (b.m, b.w);
    let l = m.layers;
    let (d, f) = (m.d_model, m.d_ff);
    let wb = w.weights.bytes();
    let k = m.experts_active.max(1);
    if m.experts > 1 {
        b.gemm(
            "router",
            l,
            Gemm {
                batch: 1,
                m: t,
                k: d,
                n: m.experts,
            },
            (d * m.experts) as f64 * wb,
            0.0,
        );
    }
    // Each token visits k experts; the experts touched (on average, with uniform
    // routing) are read once each.
    let touched = m.experts_touched(t as f64);
    let rows = t * k;
    let up_n = match m.mlp {
        Mlp::Gated => 2 * f,
        Mlp::Plain => f,
    };
    b.gemm(
        "mlp_up",
        l,
        Gemm {
            batch: 1,
            m: rows,
            k: d,
            n: up_n,
        },
        touched * (d * up_n) as f64 * wb,
        0.0,
    );
    let act_flops = match m.mlp {
        Mlp::Gated => 5.0,
        Mlp::Plain => 8.0,
    };
    let act_inputs = match m.mlp {
        Mlp::Gated => 2.0,
        Mlp::Plain => 1.0,
    };
    b.vector("mlp_act", l, (rows * f) as f64, act_flops, act_inputs);
    b.gemm(
        "mlp_down",
        l,
        Gemm {
            batch: 1,
            m: rows,
            k: f,
            n: d,
        },
        touched * (f * d) as f64 * wb,
        0.0,
    );
}

fn head(b: &mut Builder) {
    b.scope = Scope::Once;
    let (m, w) = (b.m, b.w);
    let t = (w.batch * w.new_tokens()) as f64;
    let d = m.d_model;
    // The embedding gather reads one row per token.
    b.ops.push(Op {
        name: "embedding".into(),
        count: 1,
        scope: Scope::Once,
        unit: Unit::Vpu,
        gemm: None,
        flops: 0.0,
        act_bytes_in: 0.0,
        weight_bytes: t * d as f64 * w.weights.bytes(),
        kv_bytes_read: 0.0,
        kv_bytes_written: 0.0,
        act_bytes_out: t * d as f64 * ACT,
    });
    if !m.decoder {
        return;
    }
    let rows = w.batch; // logits of the last token of each sequence
    b.vector("norm_final", 1, (rows * d) as f64, 4.0, 1.0);
    let g = Gemm {
        batch: 1,
        m: rows,
        k: d,
        n: m.vocab,
    };
    b.gemm(
        "logits",
        1,
        g,
        (d * m.vocab) as f64 * w.weights.bytes(),
        0.0,
    );
    if m.softcap.logits {
        b.vector("softcap_logits", 1, (rows * m.vocab) as f64, 3.0, 1.0);
    }
}

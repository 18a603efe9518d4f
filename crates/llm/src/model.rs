//! The model family of `docs/spec/06-transformers-on-slices.md`: a stack of
//! transformer layers described by its dimensions, and what follows from them
//! (parameters by part, FLOPs per token, KV-cache bytes per token).

use crate::error::{bad, Result};
use crate::precision::Precision;
use serde::Serialize;

/// The feed-forward block of a layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mlp {
    /// Three `D×F` matrices (SwiGLU/GeGLU: LLaMA, Gemma, Mixtral).
    Gated,
    /// Two `D×F` matrices (GELU/ReLU: GPT-2, BERT).
    Plain,
}

/// How attention and MLP are composed in a layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Block {
    /// Attention then MLP, each with its own norm (two norms per layer).
    Sequential,
    /// One norm feeds attention and MLP side by side; their outputs are summed.
    Parallel,
}

/// The normalisation layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Norm {
    /// RMSNorm: a scale of `D`.
    Rms,
    /// LayerNorm: a scale and a bias, `2·D`.
    Layer,
}

/// Which linear layers carry biases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Biases {
    /// Q, K and V (GPT-2, BERT, Qwen2, LLaMA's `attention_bias`).
    pub qkv: bool,
    /// The attention output (GPT-2, BERT, LLaMA's `attention_bias`; not Qwen2).
    pub out: bool,
    /// The MLP's matrices (GPT-2, BERT, LLaMA's `mlp_bias`; GPT-OSS's experts).
    pub mlp: bool,
    /// The MoE router (GPT-OSS).
    pub router: bool,
}

/// Where a model normalises its queries and keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QkNorm {
    /// No norm.
    None,
    /// An RMSNorm of `H` weights over each head (Qwen3, Gemma 3).
    PerHead,
    /// One RMSNorm over all the heads' queries and one over the keys (OLMo 2 and 3).
    Whole,
}

impl Biases {
    /// No biases (LLaMA, Mistral, Gemma).
    pub const NONE: Biases = Biases {
        qkv: false,
        out: false,
        mlp: false,
        router: false,
    };
    /// Every linear layer (GPT-2, BERT).
    pub const ALL: Biases = Biases {
        qkv: true,
        out: true,
        mlp: true,
        router: false,
    };
}

/// Which logits a model caps with `c·tanh(x/c)` (VPU work over every score or logit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Softcap {
    /// Attention's scores, before the softmax.
    pub attention: bool,
    /// The output logits.
    pub logits: bool,
}

impl Softcap {
    /// Neither.
    pub const NONE: Softcap = Softcap {
        attention: false,
        logits: false,
    };
}

/// Layers whose attention sees only the last `tokens` keys (Mistral's and
/// Gemma 2's sliding window); the other layers attend to the whole context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SlidingWindow {
    /// Keys a query attends to, at most.
    pub tokens: u64,
    /// Layers with the window (at most `L`).
    pub layers: u64,
}

/// A transformer, by its dimensions (the spec's `L, D, F, N, K, H, V`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    /// Name (built-in name, or the file it came from).
    pub name: String,
    /// Family: `llama`, `mistral`, `mixtral`, `gemma`, `gpt2`, `bert` or `custom`.
    pub family: String,
    /// Layers `L`.
    pub layers: u64,
    /// Model width `D`.
    pub d_model: u64,
    /// MLP width `F` (per expert).
    pub d_ff: u64,
    /// Query heads `N`.
    pub heads: u64,
    /// Key/value heads `K` (`K = N` multi-head, `K = 1` multi-query).
    pub kv_heads: u64,
    /// Head width `H`.
    pub head_dim: u64,
    /// Vocabulary `V`.
    pub vocab: u64,
    /// The output projection shares the embedding's weights.
    pub tied_embedding: bool,
    /// Gated or plain MLP.
    pub mlp: Mlp,
    /// Sequential or parallel block.
    pub block: Block,
    /// RMSNorm or LayerNorm.
    pub norm: Norm,
    /// Which linear layers carry biases.
    pub biases: Biases,
    /// Q, K and V stored as one matrix (GPT-2's `c_attn`).
    pub fused_qkv: bool,
    /// The gate and up projections stored as one matrix (Phi-3's `gate_up_proj`,
    /// GPT-OSS's experts).
    pub fused_gate_up: bool,
    /// Norms after attention and after the MLP as well as before them (Gemma 2
    /// and 3: four per layer).
    pub post_norms: bool,
    /// RMSNorms of the queries and keys: over each head (Qwen3, Gemma 3) or over
    /// all of them (OLMo 2 and 3).
    pub qk_norm: QkNorm,
    /// A learned attention sink per head (GPT-OSS): a logit every softmax row adds.
    pub sinks: bool,
    /// Logits capped by `c·tanh(x/c)`: attention's scores, and the output's (Gemma 2's
    /// `attn_logit_softcapping` and `final_logit_softcapping`).
    pub softcap: Softcap,
    /// The layers with a sliding window, if any.
    pub window: Option<SlidingWindow>,
    /// Learned position embeddings (GPT-2, BERT); 0 with rotary embeddings.
    pub positions: u64,
    /// Token-type embeddings (BERT); 0 otherwise.
    pub token_types: u64,
    /// A pooler (`D×D` and a bias) on the first token (BERT).
    pub pooler: bool,
    /// A norm after the last layer.
    pub final_norm: bool,
    /// A norm after the embedding (BERT).
    pub embedding_norm: bool,
    /// Experts of the MLP per layer (1 = dense).
    pub experts: u64,
    /// Experts active per token.
    pub experts_active: u64,
    /// Decoder (causal, with an output projection and a KV cache) or encoder.
    pub decoder: bool,
}

/// Layers that attend to the same number of keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AttentionSpan {
    /// Layers.
    pub layers: u64,
    /// Keys a query attends to in each.
    pub keys: u64,
    /// The keys are capped by a sliding window.
    pub capped: bool,
}

/// The dimensions that set a model's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    /// Layers `L`.
    pub layers: u64,
    /// Width `D`.
    pub d_model: u64,
    /// MLP width `F`.
    pub d_ff: u64,
    /// Query heads `N`.
    pub heads: u64,
    /// Key/value heads `K`.
    pub kv_heads: u64,
    /// Head width `H`.
    pub head_dim: u64,
    /// Vocabulary `V`.
    pub vocab: u64,
}

impl Model {
    /// A dense decoder of these dimensions with LLaMA's choices: gated MLP,
    /// RMSNorm, rotary positions, no biases, untied embedding, a final norm.
    pub fn decoder(name: &str, family: &str, d: Dims) -> Model {
        Model {
            name: name.into(),
            family: family.into(),
            layers: d.layers,
            d_model: d.d_model,
            d_ff: d.d_ff,
            heads: d.heads,
            kv_heads: d.kv_heads,
            head_dim: d.head_dim,
            vocab: d.vocab,
            tied_embedding: false,
            mlp: Mlp::Gated,
            block: Block::Sequential,
            norm: Norm::Rms,
            biases: Biases::NONE,
            fused_qkv: false,
            fused_gate_up: false,
            post_norms: false,
            qk_norm: QkNorm::None,
            sinks: false,
            softcap: Softcap::NONE,
            window: None,
            positions: 0,
            token_types: 0,
            pooler: false,
            final_norm: true,
            embedding_norm: false,
            experts: 1,
            experts_active: 1,
            decoder: true,
        }
    }

    /// GPT-2's choices on the same dimensions: plain MLP, LayerNorm, biases,
    /// `positions` learned positions, tied embedding.
    pub fn gpt2_style(self, positions: u64) -> Model {
        Model {
            tied_embedding: true,
            mlp: Mlp::Plain,
            norm: Norm::Layer,
            biases: Biases::ALL,
            fused_qkv: true,
            positions,
            ..self
        }
    }

    /// BERT's: GPT-2's, plus `token_types` token-type embeddings, a norm after the
    /// embedding instead of after the last layer, a pooler, and no decoder.
    pub fn bert_style(self, positions: u64, token_types: u64) -> Model {
        Model {
            token_types,
            pooler: true,
            final_norm: false,
            embedding_norm: true,
            decoder: false,
            ..self.gpt2_style(positions)
        }
    }
}

/// One weight tensor: its name and dimensions, as a JAX or PyTorch model stores it
/// (matrices `[in, out]`, GPT-2's fused QKV, experts stacked `[E, in, out]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tensor {
    /// Name (`attn.qkv.w`, `mlp.up.w`, `embed`, …).
    pub name: String,
    /// Dimensions.
    pub dims: Vec<u64>,
}

impl Tensor {
    fn new(name: &str, dims: &[u64]) -> Tensor {
        Tensor {
            name: name.into(),
            dims: dims.to_vec(),
        }
    }

    /// Elements.
    pub fn elements(&self) -> u64 {
        self.dims.iter().product()
    }
}

impl Model {
    fn norm_tensors(&self, name: &str, out: &mut Vec<Tensor>) {
        out.push(Tensor::new(&format!("{name}.g"), &[self.d_model]));
        if self.norm == Norm::Layer {
            out.push(Tensor::new(&format!("{name}.b"), &[self.d_model]));
        }
    }

    fn linear(
        &self,
        name: &str,
        stack: &[u64],
        (inp, out_dim): (u64, u64),
        bias: bool,
        out: &mut Vec<Tensor>,
    ) {
        out.push(Tensor::new(
            &format!("{name}.w"),
            &[stack, &[inp, out_dim]].concat(),
        ));
        if bias {
            out.push(Tensor::new(
                &format!("{name}.b"),
                &[stack, &[out_dim]].concat(),
            ));
        }
    }

    /// The weight tensors of one layer.
    pub fn layer_tensors(&self) -> Vec<Tensor> {
        let (d, h, f) = (self.d_model, self.head_dim, self.d_ff);
        let mut t = Vec::new();
        let b = self.biases;
        self.norm_tensors("ln_1", &mut t);
        if self.fused_qkv {
            let qkv = (self.heads + 2 * self.kv_heads) * h;
            self.linear("attn.qkv", &[], (d, qkv), b.qkv, &mut t);
        } else {
            self.linear("attn.q", &[], (d, self.heads * h), b.qkv, &mut t);
            self.linear("attn.k", &[], (d, self.kv_heads * h), b.qkv, &mut t);
            self.linear("attn.v", &[], (d, self.kv_heads * h), b.qkv, &mut t);
        }
        if self.qk_norm != QkNorm::None {
            let (q, k) = self.qk_norm_sizes();
            t.push(Tensor::new("attn.q_norm.g", &[q]));
            t.push(Tensor::new("attn.k_norm.g", &[k]));
        }
        if self.sinks {
            t.push(Tensor::new("attn.sinks", &[self.heads]));
        }
        self.linear("attn.o", &[], (self.heads * h, d), b.out, &mut t);
        if self.post_norms {
            self.norm_tensors("ln_attn_post", &mut t);
        }
        if self.block == Block::Sequential {
            self.norm_tensors("ln_2", &mut t);
        }
        let stack: &[u64] = if self.experts > 1 {
            &[self.experts]
        } else {
            &[]
        };
        if self.experts > 1 {
            t.push(Tensor::new("mlp.router.w", &[d, self.experts]));
            if b.router {
                t.push(Tensor::new("mlp.router.b", &[self.experts]));
            }
        }
        match self.mlp {
            Mlp::Gated if self.fused_gate_up => {
                self.linear("mlp.gate_up", stack, (d, 2 * f), b.mlp, &mut t)
            }
            Mlp::Gated => {
                self.linear("mlp.gate", stack, (d, f), b.mlp, &mut t);
                self.linear("mlp.up", stack, (d, f), b.mlp, &mut t);
            }
            Mlp::Plain => self.linear("mlp.up", stack, (d, f), b.mlp, &mut t),
        }
        self.linear("mlp.down", stack, (f, d), b.mlp, &mut t);
        if self.post_norms {
            self.norm_tensors("ln_mlp_post", &mut t);
        }
        t
    }

    /// The weight tensors outside the layers: embeddings, final and embedding norms,
    /// the untied output projection, the pooler.
    pub fn outer_tensors(&self) -> Vec<Tensor> {
        let d = self.d_model;
        let mut t = vec![Tensor::new("embed", &[self.vocab, d])];
        if self.positions > 0 {
            t.push(Tensor::new("embed_positions", &[self.positions, d]));
        }
        if self.token_types > 0 {
            t.push(Tensor::new("embed_token_types", &[self.token_types, d]));
        }
        if self.embedding_norm {
            self.norm_tensors("ln_embed", &mut t);
        }
        if self.final_norm {
            self.norm_tensors("ln_f", &mut t);
        }
        if !self.tied_embedding {
            t.push(Tensor::new("lm_head.w", &[d, self.vocab]));
        }
        if self.pooler {
            t.push(Tensor::new("pooler.w", &[d, d]));
            t.push(Tensor::new("pooler.b", &[d]));
        }
        t
    }
}

/// Parameters by part (the JSON fields of `tpusim llm show`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ParamCounts {
    /// All parameters.
    pub params: u64,
    /// Attention: Q, K, V and O (with their biases and Q/K norms), all layers.
    pub params_attention: u64,
    /// MLP: every expert's matrices (and biases) and the router, all layers.
    pub params_mlp: u64,
    /// Token embedding, the untied output projection, position and token-type embeddings.
    pub params_embedding: u64,
    /// Norms (layers, final, embedding).
    pub params_norms: u64,
    /// Anything else (BERT's pooler).
    pub params_other: u64,
    /// Parameters one token touches (MoE: `experts_active` experts of each MLP).
    pub params_active: u64,
}

impl Model {
    /// Q, K, V and O of one layer: `D·H·(2N + 2K)`, plus biases, the norms of Q
    /// and K and the sinks (`N`).
    pub fn attention_per_layer(&self) -> u64 {
        let (d, h) = (self.d_model, self.head_dim);
        let w = d * h * (2 * self.heads + 2 * self.kv_heads);
        let qkv_bias = u64::from(self.biases.qkv) * h * (self.heads + 2 * self.kv_heads);
        let out_bias = u64::from(self.biases.out) * d;
        let (q, k) = self.qk_norm_sizes();
        let sinks = u64::from(self.sinks) * self.heads;
        w + qkv_bias + out_bias + q + k + sinks
    }

    /// Weights of the query norm and the key norm: `H` each over each head, `N·H`
    /// and `K·H` over all heads, none without.
    pub fn qk_norm_sizes(&self) -> (u64, u64) {
        let h = self.head_dim;
        match self.qk_norm {
            QkNorm::None => (0, 0),
            QkNorm::PerHead => (h, h),
            QkNorm::Whole => (self.heads * h, self.kv_heads * h),
        }
    }

    /// Matrices of one MLP (one expert): 3 gated, 2 plain.
    pub fn mlp_matrices(&self) -> u64 {
        match self.mlp {
            Mlp::Gated => 3,
            Mlp::Plain => 2,
        }
    }

    /// One expert's MLP: `3·D·F` gated or `2·D·F` plain, plus biases.
    pub fn mlp_per_expert(&self) -> u64 {
        let m = self.mlp_matrices();
        let w = m * self.d_model * self.d_ff;
        let b = if self.biases.mlp {
            (m - 1) * self.d_ff + self.d_model
        } else {
            0
        };
        w + b
    }

    /// The router of an MoE layer: `D·E`, plus `E` with a bias (none when dense).
    pub fn router_per_layer(&self) -> u64 {
        if self.experts > 1 {
            (self.d_model + u64::from(self.biases.router)) * self.experts
        } else {
            0
        }
    }

    /// Experts of one MoE layer that `tokens` tokens touch on average, each choosing
    /// `experts_active` of the `experts` with uniform routing: `E·(1 − (1 − k/E)^t)`
    /// (`k` for one token, all `E` once `t` is large); 1 for a dense MLP.
    pub fn experts_touched(&self, tokens: f64) -> f64 {
        if self.experts <= 1 {
            return 1.0;
        }
        let (e, k) = (
            self.experts as f64,
            self.experts_active.min(self.experts) as f64,
        );
        e * (1.0 - (1.0 - k / e).powf(tokens.max(0.0)))
    }

    /// Parameters a step of `tokens` tokens reads: all of a dense model's; of an MoE
    /// model's experts only those touched ([`Model::experts_touched`]).
    pub fn params_read(&self, tokens: f64) -> f64 {
        self.params_with_experts(self.experts_touched(tokens))
    }

    /// Parameters when `experts` of each MoE layer's experts are counted (all of a
    /// dense model's).
    fn params_with_experts(&self, experts: f64) -> f64 {
        let all = self.params().params as f64;
        if self.experts <= 1 {
            return all;
        }
        all - self.layers as f64 * (self.experts as f64 - experts) * self.mlp_per_expert() as f64
    }

    /// Matrix parameters of one expert, `m·D·F` without its biases: what an MoE
    /// checkpoint quantises apart (GPT-OSS's MXFP4 experts).
    pub fn expert_matrix_params(&self) -> u64 {
        self.mlp_matrices() * self.d_model * self.d_ff
    }

    /// Bytes of the weights when `experts` of each MoE layer's experts are counted
    /// (`self.experts` for the whole model, [`Model::experts_touched`] for a step): the
    /// experts' matrices at `expert`, every other parameter at `rest`. A dense model
    /// has no experts apart, so all of it is at `rest`.
    pub fn weight_bytes(&self, experts: f64, rest: Precision, expert: Precision) -> f64 {
        let counted = self.params_with_experts(experts);
        if self.experts <= 1 {
            return counted * rest.bytes();
        }
        let matrices = self.layers as f64 * experts * self.expert_matrix_params() as f64;
        (counted - matrices) * rest.bytes() + matrices * expert.bytes()
    }

    /// Refuses a precision for the experts apart (`--expert-weights`) on a model
    /// without experts.
    pub fn check_expert_precision(&self, expert: Option<Precision>) -> Result<()> {
        match expert {
            Some(p) if self.experts <= 1 => Err(bad(
                "--expert-weights",
                p.name(),
                format!(
                    "{} has no experts (a dense MLP); give its precision with --weights",
                    self.name
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Parameters of one norm.
    pub fn norm_size(&self) -> u64 {
        match self.norm {
            Norm::Rms => self.d_model,
            Norm::Layer => 2 * self.d_model,
        }
    }

    /// Norms of width `D` per layer: two in a sequential block, one in a parallel
    /// block, and two more after attention and the MLP where the model has them.
    pub fn norms_per_layer(&self) -> u64 {
        let pre = match self.block {
            Block::Sequential => 2,
            Block::Parallel => 1,
        };
        pre + 2 * u64::from(self.post_norms)
    }

    /// Parameters by part; the totals are exact.
    pub fn params(&self) -> ParamCounts {
        let l = self.layers;
        let attention = l * self.attention_per_layer();
        let mlp_all = l * (self.experts * self.mlp_per_expert() + self.router_per_layer());
        let mlp_active =
            l * (self.experts_active * self.mlp_per_expert() + self.router_per_layer());
        let tables = if self.tied_embedding { 1 } else { 2 };
        let embedding = self.vocab * self.d_model * tables
            + self.positions * self.d_model
            + self.token_types * self.d_model;
        let norms = l * self.norms_per_layer() * self.norm_size()
            + u64::from(self.final_norm) * self.norm_size()
            + u64::from(self.embedding_norm) * self.norm_size();
        let other = if self.pooler {
            self.d_model * self.d_model + self.d_model
        } else {
            0
        };
        let params = attention + mlp_all + embedding + norms + other;
        ParamCounts {
            params,
            params_attention: attention,
            params_mlp: mlp_all,
            params_embedding: embedding,
            params_norms: norms,
            params_other: other,
            params_active: params - mlp_all + mlp_active,
        }
    }

    /// Weights a token multiplies by (matmuls only): attention, the active experts'
    /// MLPs and router, and the output projection of a decoder. The embedding lookup
    /// is not a matmul.
    pub fn matmul_params_per_token(&self) -> u64 {
        let per_layer = self.d_model * self.head_dim * (2 * self.heads + 2 * self.kv_heads)
            + self.experts_active * self.mlp_matrices() * self.d_model * self.d_ff
            + self.router_per_layer();
        let head = if self.decoder {
            self.vocab * self.d_model
        } else {
            0
        };
        self.layers * per_layer + head
    }

    /// Layers with a sliding window (0 without one).
    pub fn windowed_layers(&self) -> u64 {
        self.window.map_or(0, |w| w.layers.min(self.layers))
    }

    /// The layers by the keys a query attends to when `t` keys precede it (itself
    /// included): one span of all `L` layers seeing `t`, or, where a window caps
    /// it, the windowed layers apart (`capped`) from the others.
    pub fn attention_spans(&self, t: u64) -> Vec<AttentionSpan> {
        let capped = self.window.filter(|w| w.tokens < t && w.layers > 0);
        let Some(w) = capped else {
            return vec![AttentionSpan {
                layers: self.layers,
                keys: t,
                capped: false,
            }];
        };
        let windowed = self.windowed_layers();
        let spans = [
            AttentionSpan {
                layers: self.layers - windowed,
                keys: t,
                capped: false,
            },
            AttentionSpan {
                layers: windowed,
                keys: w.tokens,
                capped: true,
            },
        ];
        spans.into_iter().filter(|s| s.layers > 0).collect()
    }

    /// Keys attended over all layers by a query with `t` keys before it: `L·t`
    /// without a window.
    fn keys_over_layers(&self, t: f64) -> f64 {
        let windowed = self.windowed_layers() as f64;
        let seen = self.window.map_or(t, |w| t.min(w.tokens as f64));
        (self.layers as f64 - windowed) * t + windowed * seen
    }

    /// Attention's own forward FLOPs for one token at context `t` (scores and
    /// values): `4·t·N·H` per layer, `t` capped by the window in windowed layers.
    pub fn attention_flops_per_token(&self, t: f64) -> f64 {
        4.0 * (self.heads * self.head_dim) as f64 * self.keys_over_layers(t)
    }

    /// Attention's forward FLOPs per token of a causal prompt of `p` tokens, on
    /// average over its tokens: `attention_flops_per_token(p / 2)` without a
    /// window; in a window of `w < p` a query sees on average `w − w²/2p` keys.
    pub fn causal_attention_flops_per_token(&self, p: f64) -> f64 {
        let windowed = self.windowed_layers() as f64;
        let mean_in_window = match self.window {
            Some(w) if (w.tokens as f64) < p => {
                let wt = w.tokens as f64;
                wt - wt * wt / (2.0 * p)
            }
            _ => p / 2.0,
        };
        let keys = (self.layers as f64 - windowed) * p / 2.0 + windowed * mean_in_window;
        4.0 * (self.heads * self.head_dim) as f64 * keys
    }

    /// Forward FLOPs of one token at context `t`: `2 ×` the matmul weights it
    /// touches plus attention.
    pub fn forward_flops_per_token(&self, t: f64) -> f64 {
        2.0 * self.matmul_params_per_token() as f64 + self.attention_flops_per_token(t)
    }

    /// KV-cache bytes per token: `2·L·K·H·bytes` (keys and values).
    pub fn kv_bytes_per_token(&self, kv: Precision) -> f64 {
        2.0 * (self.layers * self.kv_heads * self.head_dim) as f64 * kv.bytes()
    }

    /// KV-cache bytes of one sequence of `context` tokens: `context ·
    /// kv_bytes_per_token` without a window; a windowed layer keeps only the last
    /// window of keys and values (a rolling cache).
    pub fn kv_bytes_for_context(&self, context: f64, kv: Precision) -> f64 {
        2.0 * (self.kv_heads * self.head_dim) as f64 * kv.bytes() * self.keys_over_layers(context)
    }

    /// A summary of the model for `tpusim llm show`, its weights in bf16.
    pub fn summary(&self, kv: Precision) -> ModelSummary {
        self.summary_of_weights(kv, Precision::Bf16, None)
    }

    /// [`Model::summary`] with the weights at `weights`, an MoE model's experts'
    /// matrices at `expert` when given (checked by [`Model::check_expert_precision`]).
    pub fn summary_with(
        &self,
        kv: Precision,
        weights: Precision,
        expert: Option<Precision>,
    ) -> Result<ModelSummary> {
        self.check_expert_precision(expert)?;
        Ok(self.summary_of_weights(kv, weights, expert))
    }

    fn summary_of_weights(
        &self,
        kv: Precision,
        weights: Precision,
        expert: Option<Precision>,
    ) -> ModelSummary {
        let counts = self.params();
        ModelSummary {
            model: self.clone(),
            counts,
            flops_per_token: 2.0 * counts.params_active as f64,
            forward_flops_per_token_matmul: 2.0 * self.matmul_params_per_token() as f64,
            kv_dtype: kv,
            kv_bytes_per_token: self.kv_bytes_per_token(kv),
            weights_dtype: weights,
            expert_weights_dtype: expert,
            weights_bytes: self.weight_bytes(
                self.experts as f64,
                weights,
                expert.unwrap_or(weights),
            ),
        }
    }
}

/// What `tpusim llm show` prints (its JSON field names are a contract).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSummary {
    /// The dimensions.
    pub model: Model,
    /// Parameters by part (flattened: `params`, `params_attention`, …).
    #[serde(flatten)]
    pub counts: ParamCounts,
    /// Forward FLOPs per token by the book's rule, `2 × params_active` (attention
    /// excluded; add `4·T·N·H·L` at context `T`).
    pub flops_per_token: f64,
    /// Forward FLOPs per token of the matmuls alone (no embedding lookup).
    pub forward_flops_per_token_matmul: f64,
    /// KV-cache precision.
    pub kv_dtype: Precision,
    /// KV-cache bytes per token at `kv_dtype`.
    pub kv_bytes_per_token: f64,
    /// Weight precision.
    pub weights_dtype: Precision,
    /// The experts' matrices' precision, when given apart.
    pub expert_weights_dtype: Option<Precision>,
    /// Bytes of all the weights at those precisions: the size of a checkpoint stored so.
    pub weights_bytes: f64,
}

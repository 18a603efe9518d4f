//! The per-operation transformer model against independent counts: FLOPs from the
//! parameter formulas, KV-cache traffic from `kv_bytes_per_token`, weight traffic from
//! the parameter counts, and the bound where the roofline puts it.

use tpusim_llm::ops::{ops, Phase, Workload};
use tpusim_llm::tpu::report;
use tpusim_llm::{zoo, Precision};

fn wl(phase: Phase, batch: u64, seq: u64, context: u64) -> Workload {
    Workload {
        phase,
        batch,
        seq,
        context,
        weights: Precision::Bf16,
        kv: Precision::Bf16,
    }
}

#[test]
fn flops_equal_the_parameter_formula_plus_attention() {
    for name in [
        "llama-3-8b",
        "gpt2",
        "gemma-2b",
        "mixtral-8x7b",
        "llama-2-13b",
    ] {
        let m = zoo::lookup(name).unwrap();
        for w in [wl(Phase::Prefill, 2, 512, 0), wl(Phase::Decode, 4, 0, 1000)] {
            let all = ops(&m, &w).unwrap();
            let sum = |names: &[&str]| -> f64 {
                all.iter()
                    .filter(|o| names.contains(&o.name.as_str()))
                    .map(|o| o.count as f64 * o.flops)
                    .sum()
            };
            let t = (w.batch * w.new_tokens()) as f64;
            // Weights a token multiplies by, without the output projection (logits of
            // the last token of each sequence only).
            let head = (m.vocab * m.d_model) as f64;
            let layer_weights = m.matmul_params_per_token() as f64 - head;
            let want = 2.0 * layer_weights * t + 2.0 * head * w.batch as f64;
            let got = sum(&["qkv", "attn_out", "router", "mlp_up", "mlp_down", "logits"]);
            assert!(
                (got / want - 1.0).abs() < 1e-12,
                "{name} {:?}: {got} vs {want}",
                w.phase
            );
            let att = 4.0 * t * (w.attended() * m.heads * m.head_dim * m.layers) as f64;
            assert!(
                (sum(&["scores", "attn_values"]) / att - 1.0).abs() < 1e-12,
                "{name}"
            );
        }
    }
}

#[test]
fn decode_reads_every_cache_and_every_weight_once() {
    let m = zoo::lookup("llama-3-70b").unwrap();
    let w = Workload {
        kv: Precision::Int8,
        ..wl(Phase::Decode, 16, 0, 8191)
    };
    let r = report(&m, &tpusim_chip::lookup("v5p").unwrap(), &w).unwrap();
    let kv = 16.0 * 8192.0 * m.kv_bytes_per_token(Precision::Int8);
    assert!((r.totals.kv_cache_bytes_read / kv - 1.0).abs() < 1e-12);
    assert_eq!(
        r.totals.kv_cache_bytes_written,
        16.0 * m.kv_bytes_per_token(Precision::Int8)
    );
    // Every weight but the embedding table (16 rows of it are gathered) and the norms.
    let c = m.params();
    let read = (c.params - c.params_norms - m.vocab * m.d_model) as f64 * 2.0 + 16.0 * 8192.0 * 2.0;
    assert!(
        (r.totals.weight_bytes_read / read - 1.0).abs() < 1e-12,
        "{} vs {read}",
        r.totals.weight_bytes_read
    );
    assert_eq!(r.totals.bound, "hbm");
    assert!(r.totals.total_time_s >= r.totals.roofline_lower_bound_s);
}

#[test]
fn long_prefill_is_compute_bound_and_pads_to_the_mxu() {
    let m = zoo::lookup("llama-3-8b").unwrap();
    let v5e = tpusim_chip::lookup("v5e").unwrap();
    let r = report(&m, &v5e, &wl(Phase::Prefill, 4, 4096, 0)).unwrap();
    assert_eq!(r.totals.bound, "compute");
    // Gemma's 256-wide heads and LLaMA's 128 fill the 128-wide MXU; GPT-2's 64-wide
    // heads are padded to 128 in the attention matmuls.
    let g = report(
        &zoo::lookup("gpt2").unwrap(),
        &v5e,
        &wl(Phase::Prefill, 1, 1024, 0),
    )
    .unwrap();
    let scores = g.ops.iter().find(|o| o.op.name == "attn_values").unwrap();
    assert_eq!(scores.executed_flops, 2.0 * scores.op.flops);
    let l = r.ops.iter().find(|o| o.op.name == "attn_values").unwrap();
    assert_eq!(l.executed_flops, l.op.flops);
}

#[test]
fn encoders_have_no_decode_and_no_cache() {
    let bert = zoo::lookup("bert-base").unwrap();
    let e = ops(&bert, &wl(Phase::Decode, 1, 0, 10))
        .unwrap_err()
        .to_string();
    assert!(e.contains("encoder"), "{e}");
    let p = ops(&bert, &wl(Phase::Prefill, 1, 128, 0)).unwrap();
    assert!(p
        .iter()
        .all(|o| o.kv_bytes_written == 0.0 && o.name != "logits"));
}

/// A sliding window on every layer (Mistral 7B v0.1's 4,096 tokens): a decode step
/// at any longer context is the step of the same model without a window at the
/// context that fills the window, op for op and byte for byte.
#[test]
fn a_full_window_caps_attention_and_the_cache_at_its_size() {
    let m = zoo::lookup("mistral-7b").unwrap();
    let w = m.window.expect("mistral-7b v0.1 has a 4,096-token window");
    assert_eq!((w.tokens, w.layers), (4096, m.layers));
    let open = tpusim_llm::Model {
        window: None,
        ..m.clone()
    };
    let v5e = tpusim_chip::lookup("v5e").unwrap();
    let long = report(&m, &v5e, &wl(Phase::Decode, 8, 0, 30_000)).unwrap();
    let filled = report(&open, &v5e, &wl(Phase::Decode, 8, 0, 4095)).unwrap();
    assert_eq!(long.totals, filled.totals);
    let names = |r: &tpusim_llm::tpu::TransformerReport| -> Vec<String> {
        r.ops
            .iter()
            .map(|o| o.op.name.replace("_window", ""))
            .collect()
    };
    assert_eq!(names(&long), names(&filled));
    // Below the window it changes nothing.
    let short = report(&m, &v5e, &wl(Phase::Decode, 8, 0, 1000)).unwrap();
    let open_short = report(&open, &v5e, &wl(Phase::Decode, 8, 0, 1000)).unwrap();
    assert_eq!(short.totals, open_short.totals);
}

/// Gemma 2: a window on every other layer. Attention's FLOPs and the cache read are
/// the full layers' at the whole context plus the windowed layers' at the window,
/// counted here layer by layer.
#[test]
fn a_window_on_some_layers_splits_attention_between_them() {
    let m = zoo::lookup("gemma-2-9b").unwrap();
    let win = m.window.unwrap();
    let w = wl(Phase::Decode, 4, 0, 20_000);
    let all = ops(&m, &w).unwrap();
    let (mut flops, mut kv) = (0.0, 0.0);
    for layer in 0..m.layers {
        // Hugging Face's Gemma 2: the first, third, … layers slide.
        let keys = if layer % 2 == 0 {
            w.attended().min(win.tokens)
        } else {
            w.attended()
        };
        flops += 4.0 * 4.0 * (keys * m.heads * m.head_dim) as f64;
        kv += 4.0 * 2.0 * (keys * m.kv_heads * m.head_dim) as f64 * 2.0;
    }
    let attention: Vec<_> = all
        .iter()
        .filter(|o| o.name.starts_with("scores") || o.name.starts_with("attn_values"))
        .collect();
    assert_eq!(attention.len(), 4, "full and windowed scores and values");
    let got: f64 = attention.iter().map(|o| o.count as f64 * o.flops).sum();
    assert!((got / flops - 1.0).abs() < 1e-12, "{got} vs {flops}");
    let read: f64 = attention
        .iter()
        .map(|o| o.count as f64 * o.kv_bytes_read)
        .sum();
    // Scores and values each read the cache's keys or values: half of it each.
    assert!((read / kv - 1.0).abs() < 1e-12, "{read} vs {kv}");
}

/// Attention FLOPs of a causal prompt with a window against a naive sum over the
/// prompt's tokens (a query at position x sees min(x, window) keys, integrated).
#[test]
fn causal_window_flops_equal_a_naive_sum() {
    let m = zoo::lookup("gemma-2-2b").unwrap();
    let win = m.window.unwrap();
    for p in [100.0, 4096.0, 5000.0, 65_536.0] {
        let steps = 200_000;
        let dx = p / steps as f64;
        let mut keys = 0.0;
        for i in 0..steps {
            let x = (i as f64 + 0.5) * dx;
            let full = (m.layers - win.layers) as f64 * x;
            let windowed = win.layers as f64 * x.min(win.tokens as f64);
            keys += (full + windowed) * dx;
        }
        let want = 4.0 * (m.heads * m.head_dim) as f64 * keys / p;
        let got = m.causal_attention_flops_per_token(p);
        assert!((got / want - 1.0).abs() < 1e-6, "p={p}: {got} vs {want}");
    }
}

/// Gemma 2's soft-capping: `c·tanh(x/c)` over every attention score (beside each
/// softmax, over as many elements) and over the output logits.
#[test]
fn soft_capping_runs_over_every_score_and_logit() {
    let m = zoo::lookup("gemma-2-2b").unwrap();
    let w = wl(Phase::Decode, 4, 0, 9000);
    let all = ops(&m, &w).unwrap();
    let named = |n: &str| all.iter().find(|o| o.name == n).unwrap();
    for suffix in ["", "_window"] {
        let cap = named(&format!("softcap{suffix}"));
        let softmax = named(&format!("softmax{suffix}"));
        assert_eq!(
            (cap.count, cap.act_bytes_out),
            (softmax.count, softmax.act_bytes_out)
        );
    }
    let logits = named("softcap_logits");
    assert_eq!(logits.act_bytes_out, (4 * m.vocab) as f64 * 2.0);
    let plain = zoo::lookup("gemma-2b").unwrap();
    assert!(ops(&plain, &w)
        .unwrap()
        .iter()
        .all(|o| !o.name.starts_with("softcap")));
}

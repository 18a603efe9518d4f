//! A decode step exported by torch.onnx.export's dynamo exporter, its KV caches graph
//! inputs (`past_key_<layer>`, `past_value_<layer>`) and outputs (`present_…`):
//! `tpusim report` counts their reads and writes as KV-cache traffic and holds the
//! caches in HBM (`../graph/tests/data/nd/make_dynamo_exports.py`).

use tpusim_graph::nd::{import_onnx, Bind};
use tpusim_llm::tpu::graph_report;
use tpusim_llm::Precision;

#[test]
fn a_decode_graphs_caches_are_kv_traffic() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../graph/tests/data/nd/dyn_llama_decode.onnx"
    );
    let bytes = std::fs::read(path).unwrap();
    let chip = tpusim_chip::lookup("v5e").unwrap();
    // two layers, two KV heads of 8, bf16 activations
    let (layers, kv_heads, head, heads) = (2u64, 2u64, 8u64, 4u64);
    for (batch, past) in [(2u64, 16u64), (3, 40)] {
        let bind = Bind {
            batch,
            seq: 1,
            past,
        };
        let g = import_onnx(&bytes, &bind).unwrap();
        let r = graph_report(&g, &chip, Precision::Bf16).unwrap();
        let cache = |len: u64| (2 * layers * batch * kv_heads * len * head * 2) as f64;
        assert_eq!(r.totals.kv_cache_bytes_read, cache(past), "{batch}x{past}");
        assert_eq!(r.totals.kv_cache_bytes_written, cache(past + 1));
        assert_eq!(r.memory.kv_cache_bytes, cache(past));
        // the scores and values of one new token over past + 1 keys, every head
        let attention: f64 = r
            .ops
            .iter()
            .filter(|o| o.op.gemm.is_some_and(|g| g.m == 1 && g.k > 1))
            .map(|o| o.op.flops)
            .sum();
        assert_eq!(
            attention,
            (layers * 4 * batch * heads * (past + 1) * head) as f64
        );
    }
}

/// optimum's `text-generation-with-past` graph serves prefill (no past) and decode: its
/// mask spans `past_sequence_length + sequence_length`, bound to their sum, and its
/// caches are read at the past length and written one step longer.
#[test]
fn optimums_graph_with_past_binds_prefill_and_decode() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../graph/tests/data/nd/opt_llama_with_past.onnx"
    );
    let bytes = std::fs::read(path).unwrap();
    let chip = tpusim_chip::lookup("v5e").unwrap();
    let (layers, kv_heads, head, heads) = (2u64, 2u64, 8u64, 4u64);
    for (batch, seq, past) in [(2u64, 16u64, 0u64), (2, 1, 32), (3, 4, 20)] {
        let g = import_onnx(&bytes, &Bind { batch, seq, past }).unwrap();
        let mask = g
            .inputs
            .iter()
            .find(|i| i.name == "attention_mask")
            .unwrap();
        assert_eq!(mask.dims, vec![batch, past + seq]);
        let r = graph_report(&g, &chip, Precision::Bf16).unwrap();
        let cache = |len: u64| (2 * layers * batch * kv_heads * len * head * 2) as f64;
        assert_eq!(
            r.totals.kv_cache_bytes_read,
            cache(past),
            "{batch}x{seq}+{past}"
        );
        assert_eq!(r.totals.kv_cache_bytes_written, cache(past + seq));
        // scores and values of every new token over past + seq keys, every head
        let attention: f64 = r
            .ops
            .iter()
            .filter(|o| {
                o.op.gemm
                    .is_some_and(|g| g.batch == batch * heads && g.k > 1)
            })
            .map(|o| o.op.flops)
            .sum();
        let want = layers * 4 * batch * heads * seq * (past + seq) * head;
        assert_eq!(attention, want as f64, "{batch}x{seq}+{past}");
    }
}

/// A graph without caches holds none and moves none: zeros, not the -0.0 an empty f64
/// sum gives (it printed "KV cache read -0 B").
#[test]
fn a_graph_without_caches_reports_plain_zeros() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../graph/tests/data/nd/dyn_llama_sdpa.onnx"
    );
    let bytes = std::fs::read(path).unwrap();
    let bind = Bind {
        batch: 2,
        seq: 16,
        past: 0,
    };
    let g = import_onnx(&bytes, &bind).unwrap();
    let chip = tpusim_chip::lookup("v5e").unwrap();
    let r = graph_report(&g, &chip, Precision::Bf16).unwrap();
    for v in [
        r.memory.kv_cache_bytes,
        r.totals.kv_cache_bytes_read,
        r.totals.kv_cache_bytes_written,
    ] {
        assert!(v == 0.0 && v.is_sign_positive(), "{v}");
    }
}

//! A decode step exported by torch.onnx.export's dynamo exporter, its KV caches graph
//! inputs (`past_key_<layer>`, `past_value_<layer>`) and outputs (`present_…`):
//! `tpusim report` counts their reads and writes as KV-cache traffic and holds the
//! caches in HBM (`../graph/tests/data/nd/make_dynamo_exports.py`).

use tpusim_graph::nd::{import_onnx, Bind, NdGraph};
use tpusim_llm::tpu::{graph_report, GraphReport};
use tpusim_llm::Precision;

/// The tiny LLaMA of every graph here: two layers, four heads of 8 over two KV heads.
const LAYERS: u64 = 2;
const HEADS: u64 = 4;
const KV_HEADS: u64 = 2;
const HEAD: u64 = 8;

/// `tests/data/nd/NAME.onnx` of the graph crate imported at `bind` and reported on a
/// v5e in bf16.
fn imported(name: &str, bind: Bind) -> (NdGraph, GraphReport) {
    let path = format!(
        "{}/../graph/tests/data/nd/{name}.onnx",
        env!("CARGO_MANIFEST_DIR")
    );
    let g = import_onnx(&std::fs::read(path).unwrap(), &bind).unwrap();
    let chip = tpusim_chip::lookup("v5e").unwrap();
    let r = graph_report(&g, &chip, Precision::Bf16).unwrap();
    (g, r)
}

/// Bytes of every layer's K and V caches of `len` tokens for `batch` sequences, bf16.
fn cache(batch: u64, len: u64) -> f64 {
    (2 * LAYERS * batch * KV_HEADS * len * HEAD * 2) as f64
}

/// FLOPs of the attention matmuls of `r` whose batch is `batch` sequences' heads.
fn attention_flops(r: &GraphReport, batch: u64) -> f64 {
    r.ops
        .iter()
        .filter(|o| {
            o.op.gemm
                .is_some_and(|g| g.batch == batch * HEADS && g.k > 1)
        })
        .map(|o| o.op.flops)
        .sum()
}

#[test]
fn a_decode_graphs_caches_are_kv_traffic() {
    for (batch, past) in [(2u64, 16u64), (3, 40)] {
        let bind = Bind {
            batch,
            seq: 1,
            past,
        };
        let (_, r) = imported("dyn_llama_decode", bind);
        assert_eq!(
            r.totals.kv_cache_bytes_read,
            cache(batch, past),
            "{batch}x{past}"
        );
        assert_eq!(r.totals.kv_cache_bytes_written, cache(batch, past + 1));
        assert_eq!(r.memory.kv_cache_bytes, cache(batch, past));
        // the scores and values of one new token over past + 1 keys, every head
        assert_eq!(
            attention_flops(&r, batch),
            (LAYERS * 4 * batch * HEADS * (past + 1) * HEAD) as f64
        );
    }
}

/// optimum's `text-generation-with-past` graph serves prefill (no past) and decode: its
/// mask spans `past_sequence_length + sequence_length`, bound to their sum, and its
/// caches are read at the past length and written one step longer.
#[test]
fn optimums_graph_with_past_binds_prefill_and_decode() {
    for (batch, seq, past) in [(2u64, 16u64, 0u64), (2, 1, 32), (3, 4, 20)] {
        let (g, r) = imported("opt_llama_with_past", Bind { batch, seq, past });
        let mask = g
            .inputs
            .iter()
            .find(|i| i.name == "attention_mask")
            .unwrap();
        assert_eq!(mask.dims, vec![batch, past + seq]);
        let case = format!("{batch}x{seq}+{past}");
        assert_eq!(r.totals.kv_cache_bytes_read, cache(batch, past), "{case}");
        assert_eq!(r.totals.kv_cache_bytes_written, cache(batch, past + seq));
        // scores and values of every new token over past + seq keys, every head
        let want = LAYERS * 4 * batch * HEADS * seq * (past + seq) * HEAD;
        assert_eq!(attention_flops(&r, batch), want as f64, "{case}");
    }
}

/// A graph without caches holds none and moves none: zeros, not the -0.0 an empty f64
/// sum gives (it printed "KV cache read -0 B").
#[test]
fn a_graph_without_caches_reports_plain_zeros() {
    let bind = Bind {
        batch: 2,
        seq: 16,
        past: 0,
    };
    let (_, r) = imported("dyn_llama_sdpa", bind);
    for v in [
        r.memory.kv_cache_bytes,
        r.totals.kv_cache_bytes_read,
        r.totals.kv_cache_bytes_written,
    ] {
        assert!(v == 0.0 && v.is_sign_positive(), "{v}");
    }
}

//! Hugging Face models as users export them today: transformers 5 through
//! torch.onnx.export's default (dynamo) exporter (`tests/data/nd/make_dynamo_exports.py`).
//! Their masks are built with CumSum, GatherND and IsNaN, BERT's token types with
//! GatherElements, and the weights live in external data files. Each imports at any
//! batch and sequence, and its matmuls are the architecture's count.

use serde_json::Value;
use tpusim_graph::nd::{import_onnx, is_transformer_onnx, Bind, NdGraph, Work};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nd");

fn load(name: &str, batch: u64, seq: u64) -> NdGraph {
    let bytes = std::fs::read(format!("{DIR}/{name}.onnx")).unwrap();
    assert!(is_transformer_onnx(&bytes), "{name}");
    let bind = Bind {
        batch,
        seq,
        past: 0,
    };
    import_onnx(&bytes, &bind).unwrap_or_else(|e| panic!("{name} at {batch}x{seq}: {e}"))
}

fn config(family: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/dyn_{family}.json")).unwrap())
        .unwrap()
}

/// FLOPs of the matmuls that contract over more than one element (the rotary tables'
/// outer products `inv_freq × positions` contract over one).
fn matmul_flops(g: &NdGraph) -> u64 {
    g.nodes
        .iter()
        .map(|n| match n.work {
            Work::Matmul { batch, m, k, n, .. } if k > 1 => 2 * batch * m * k * n,
            _ => 0,
        })
        .sum()
}

struct Arch {
    layers: u64,
    d: u64,
    heads: u64,
    head_dim: u64,
    /// Weights of the matmuls of one layer.
    layer_weights: u64,
    /// The logits' matrix (0 for an encoder's hidden states).
    logits: u64,
}

fn arch(family: &str) -> Arch {
    let c = config(family);
    let u = |k: &str| c[k].as_u64().unwrap();
    if family == "gpt2" {
        let d = u("n_embd");
        return Arch {
            layers: u("n_layer"),
            d,
            heads: u("n_head"),
            head_dim: d / u("n_head"),
            layer_weights: 4 * d * d + 8 * d * d,
            logits: d * u("vocab_size"),
        };
    }
    let (d, f, n) = (
        u("hidden_size"),
        u("intermediate_size"),
        u("num_attention_heads"),
    );
    let h = c["head_dim"].as_u64().unwrap_or(d / n);
    if family == "bert" {
        return Arch {
            layers: u("num_hidden_layers"),
            d,
            heads: n,
            head_dim: h,
            layer_weights: 4 * d * d + 2 * d * f,
            logits: 0,
        };
    }
    let k = u("num_key_value_heads");
    Arch {
        layers: u("num_hidden_layers"),
        d,
        heads: n,
        head_dim: h,
        layer_weights: d * h * (2 * n + 2 * k) + 3 * d * f,
        logits: d * u("vocab_size"),
    }
}

const GRAPHS: [(&str, &str); 5] = [
    ("llama", "dyn_llama_sdpa"),
    ("qwen3", "dyn_qwen3_sdpa"),
    ("gemma3_text", "dyn_gemma3_text_eager"),
    ("gpt2", "dyn_gpt2_sdpa"),
    ("bert", "dyn_bert_eager"),
];

/// 2·tokens·(weights) + 4·B·S²·heads·head_dim a layer (scores and values over every
/// key: the exporters mask the scores, they do not skip them).
#[test]
fn dynamo_exports_import_with_the_architectures_matmuls() {
    for (family, file) in GRAPHS {
        let a = arch(family);
        // small enough for the masks to fold, and long enough that they do not
        for (b, s) in [(2, 16), (3, 12), (4, 64)] {
            let g = load(file, b, s);
            assert_eq!(g.inputs[0].dims, vec![b, s], "{file}");
            let out = &g.nodes.last().unwrap().out_dims;
            let width = if a.logits > 0 { a.logits / a.d } else { a.d };
            assert_eq!(out, &vec![b, s, width], "{file}");
            let weights = a.layers * a.layer_weights + a.logits;
            let attention = a.layers * 4 * b * s * s * a.heads * a.head_dim;
            assert_eq!(
                matmul_flops(&g),
                2 * b * s * weights + attention,
                "{file} {b}x{s}"
            );
        }
    }
}

/// The masks are computed at run time (from a CumSum of the padding mask), so their
/// gathers are data movement of the shapes ONNX defines.
#[test]
fn their_masks_index_with_gather_nd_and_gather_elements() {
    let nodes = |file: &str, b: u64, s: u64, op: &str| -> Vec<(Work, Vec<u64>)> {
        load(file, b, s)
            .nodes
            .into_iter()
            .filter(|n| n.op_type == op)
            .map(|n| (n.work, n.out_dims))
            .collect()
    };
    for (b, s) in [(2, 16), (4, 64)] {
        let nd = nodes("dyn_llama_sdpa", b, s, "GatherND");
        assert_eq!(nd.len(), 4);
        for (work, dims) in &nd {
            assert_eq!(*work, Work::Move);
            assert!(
                dims == &vec![b, 1, s, 1] || dims == &vec![b, 1, 1, s],
                "{dims:?}"
            );
        }
        let nan = nodes("dyn_llama_sdpa", b, s, "IsNaN");
        let scores = (b * 4 * s * s) as f64; // 4 heads
        assert!(nan
            .iter()
            .all(|(w, _)| *w == Work::Vector { flops: scores }));
        let el = nodes("dyn_bert_eager", b, s, "GatherElements");
        assert_eq!(el, vec![(Work::Move, vec![1, s])]);
    }
}

//! The N-D importer on transformer graphs written as exporters write them
//! (`tests/data/nd/make_transformers.py`): shape subgraphs fold, dynamic axes bind,
//! parameters and FLOPs equal the architecture's counts, external weights are never
//! read, and what it cannot import is named with a hint.

use tpusim_graph::nd::{import_onnx, is_transformer_onnx, Bind, NdGraph, Work};

fn load(name: &str, batch: u64, seq: u64) -> NdGraph {
    let path = format!("{}/tests/data/nd/{name}.onnx", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(path).unwrap();
    assert!(is_transformer_onnx(&bytes), "{name}");
    import_onnx(
        &bytes,
        &Bind {
            batch,
            seq,
            past: 0,
        },
    )
    .unwrap()
}

fn matmul_flops(g: &NdGraph) -> f64 {
    g.nodes
        .iter()
        .map(|n| match n.work {
            Work::Matmul { batch, m, k, n, .. } => 2.0 * (batch * m * k * n) as f64,
            _ => 0.0,
        })
        .sum()
}

/// 2·tokens·(matmul weights) + 4·B·S²·d per layer (scores and values).
fn expected(b: u64, s: u64, layers: u64, d: u64, weights: u64) -> f64 {
    let t = (b * s) as f64;
    2.0 * t * weights as f64 + layers as f64 * 4.0 * (b * s * s * d) as f64
}

#[test]
fn gpt2_imports_with_its_shapes_folded() {
    let (d, v, p) = (32u64, 64u64, 64u64);
    let g = load("gpt2_tiny", 2, 16);
    assert_eq!(g.inputs[0].dims, vec![2, 16]);
    assert_eq!(g.nodes.last().unwrap().out_dims, vec![2, 16, v]);
    // wte, wpe, two layers (2 LN, c_attn, c_proj, fc, proj with biases), ln_f
    let layer = 4 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d);
    assert_eq!(g.parameters, v * d + p * d + 2 * layer + 2 * d);
    let weights = 2 * (3 * d * d + d * d + 8 * d * d) + v * d; // layers + tied logits
    assert_eq!(matmul_flops(&g), expected(2, 16, 2, d, weights));
}

#[test]
fn bert_and_llama_import() {
    let d = 32u64;
    let bert = load("bert_tiny", 3, 10);
    assert_eq!(bert.nodes.last().unwrap().out_dims, vec![3, 10, d]);
    assert_eq!(matmul_flops(&bert), expected(3, 10, 2, d, 2 * 12 * d * d));
    let llama = load("llama_tiny", 1, 24);
    assert_eq!(llama.nodes.last().unwrap().out_dims, vec![1, 24, 64]);
    // q (d·d), k and v (d·d/2 each: two of four heads), o, gate/up/down (3·d·80), lm_head
    let weights = 2 * (d * d + d * d + d * d + 3 * d * 80) + d * 64;
    assert_eq!(matmul_flops(&llama), expected(1, 24, 2, d, weights));
}

#[test]
fn external_weights_are_never_read() {
    // Its weights lived in llama_external.onnx.data, which the generator deleted.
    let g = load("llama_external", 2, 8);
    let tiny = load("llama_tiny", 2, 8);
    assert_eq!(g.parameters, tiny.parameters);
    assert_eq!(matmul_flops(&g), matmul_flops(&tiny));
}

#[test]
fn what_does_not_import_says_why() {
    let path = format!(
        "{}/tests/data/nd/fused_attention.onnx",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(path).unwrap();
    let e = import_onnx(
        &bytes,
        &Bind {
            batch: 1,
            seq: 8,
            past: 0,
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("com.microsoft.Attention") && e.contains("optimum"),
        "{e}"
    );
}

#[test]
fn slim_bytes_import_to_the_same_graph() {
    for name in ["gpt2_tiny", "bert_tiny", "llama_tiny"] {
        let path = format!("{}/tests/data/nd/{name}.onnx", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(path).unwrap();
        let slim = tpusim_graph::nd::slim_onnx(&bytes).unwrap();
        assert!(
            slim.len() * 4 < bytes.len(),
            "{name}: {} of {}",
            slim.len(),
            bytes.len()
        );
        let bind = Bind {
            batch: 2,
            seq: 8,
            past: 0,
        };
        assert_eq!(
            import_onnx(&slim, &bind).unwrap(),
            import_onnx(&bytes, &bind).unwrap(),
            "{name}"
        );
    }
    assert!(tpusim_graph::nd::slim_onnx(&[0x0a, 0xff]).is_none());
}

/// `fuzz/regressions/nd_onnx/FILE` (a hand-written graph that replays a fuzz
/// finding) through the N-D importer.
fn regression_import(file: &str) -> tpusim_graph::Result<NdGraph> {
    let path = format!(
        "{}/../../fuzz/regressions/nd_onnx/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(path).unwrap();
    let bind = Bind {
        batch: 1,
        seq: 8,
        past: 0,
    };
    import_onnx(&bytes, &bind)
}

/// The N-D importer's error on `fuzz/regressions/nd_onnx/FILE`.
fn regression_error(file: &str) -> String {
    regression_import(file).unwrap_err().to_string()
}

#[test]
fn ops_along_an_axis_of_a_scalar_are_refused_not_a_panic() {
    // fuzz/regressions/nd_onnx/*_of_a_scalar: Split of a scalar indexed its dims at the
    // axis (the nd_onnx fuzzer, twenty-second session); Concat, Gather, TopK and Slice
    // did the same. An axis of a rank-0 tensor is now an error naming the axis
    for (file, op) in [
        ("split_of_a_scalar", "Split"),
        ("concat_of_scalars", "Concat"),
        ("gather_from_a_scalar", "Gather"),
        ("topk_of_a_scalar", "TopK"),
        ("slice_of_a_scalar", "Slice"),
    ] {
        let e = regression_error(file);
        assert!(e.contains(op) && e.contains("rank-0"), "{file}: {e}");
    }
}

#[test]
fn a_matmul_of_a_scalar_is_refused_not_a_panic() {
    // fuzz/regressions/nd_onnx/matmul_of_a_scalar: MatMul(x [2, 3], s []); the shape
    // arithmetic took the last two dims of a scalar (a subtraction overflow)
    let e = regression_error("matmul_of_a_scalar");
    assert!(e.contains("MatMul") && e.contains("scalar"), "{e}");
}

#[test]
fn a_binary_op_of_one_input_is_refused_not_a_panic() {
    // fuzz/regressions/nd_onnx/add_of_one_input: Add(c) of one constant was folded as a
    // one-input op and indexed its second operand (the nd_onnx fuzzer, forty-sixth
    // session, from a mutant of a dynamo export: crash-c0931e37…)
    let e = regression_error("add_of_one_input");
    assert!(e.contains("Add needs 2 inputs"), "{e}");
    // Max and Min are variadic: one input is the result itself, folded
    let g = regression_import("max_of_one_input").unwrap();
    assert_eq!(g.nodes.last().unwrap().out_dims, vec![2, 4]);
}

//! ONNX import on real files made by the `onnx` Python package (`tests/data/make_onnx.py`):
//! every value's shape must equal what ONNX's own shape inference gives (and onnxruntime
//! confirmed when the files were made), recorded in `<name>.shapes.json`.

use std::collections::HashMap;

use proptest::prelude::*;
use tpusim_graph::onnx::{from_onnx_bytes, OnnxOptions};
use tpusim_graph::{fuse::fuse, validate::validate, Activation, Graph, GraphError, OpKind, Shape4};

fn data(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn expected(name: &str) -> HashMap<String, Shape4> {
    let text = String::from_utf8(data(&format!("{name}.shapes.json"))).unwrap();
    let v: HashMap<String, Vec<serde_json::Value>> = serde_json::from_str(&text).unwrap();
    v.into_iter()
        .map(|(k, dims)| {
            let d: Vec<u64> = dims.iter().map(|x| x.as_u64().unwrap_or(1)).collect();
            let s = match d[..] {
                [n, k] => Shape4::new(n, k, 1, 1),
                [n, c, h] => Shape4::new(n, c, h, 1),
                [n, c, h, w] => Shape4::new(n, c, h, w),
                _ => panic!("rank {}", d.len()),
            };
            (k, s)
        })
        .collect()
}

/// Compares every activation of `g` named like an ONNX value; returns how many matched.
fn compare(g: &Graph, want: &HashMap<String, Shape4>) -> usize {
    let mut n = 0;
    for t in &g.tensors {
        if let Some(s) = want.get(&t.name) {
            assert_eq!(t.shape, *s, "value '{}'", t.name);
            n += 1;
        }
    }
    n
}

#[test]
fn small_cnn_shapes_match_onnx_inference() {
    let g = from_onnx_bytes(&data("small_cnn.onnx"), &OnnxOptions::default()).unwrap();
    validate(&g).unwrap();
    let want = expected("small_cnn");
    // 28 nodes; Dropout and Identity pass values through, Constant-free.
    assert_eq!(compare(&g, &want), 27);
    assert_eq!(g.tensors[g.outputs[0]].shape, want["y"]);
    let kinds: Vec<&str> = g.ops.iter().map(|o| o.kind.name()).collect();
    for k in [
        "conv",
        "batchnorm",
        "add",
        "concat",
        "deconv",
        "upsample",
        "gemm",
        "avgpool",
        "reshape",
        "mul",
    ] {
        assert!(kinds.contains(&k), "{k} missing from {kinds:?}");
    }
    // Initializers become weights under their ONNX names; Gemm's transB is undone.
    let fc = g.ops.iter().find(|o| o.name == "fc").unwrap();
    assert_eq!(g.tensors[fc.weights[0]].shape, Shape4::new(4, 10, 1, 1));
    assert_eq!(g.tensors[fc.weights[0]].name, "fc.w");
    let dil = g.ops.iter().find(|o| o.name == "dil_group").unwrap();
    assert!(matches!(dil.kind, OpKind::Conv(p) if p.groups == 2 && p.dilation == [2, 2]));
    let clip = g.ops.iter().find(|o| o.name == "relu6").unwrap();
    assert_eq!(clip.kind, OpKind::Act(Activation::Relu6));
}

#[test]
fn small_cnn_fuses_like_tpu_mlir() {
    let g =
        fuse(&from_onnx_bytes(&data("small_cnn.onnx"), &OnnxOptions::default()).unwrap()).unwrap();
    let conv1 = g.ops.iter().find(|o| o.name == "conv1").unwrap();
    assert_eq!(conv1.fused_act, Some(Activation::Relu));
    assert_eq!(g.tensors[conv1.weights[1]].name, "bn1.b");
    let add = g.ops.iter().find(|o| o.name == "residual").unwrap();
    assert_eq!(add.fused_act, Some(Activation::Relu6));
    assert!(!g.ops.iter().any(|o| o.kind == OpKind::BatchNorm));
}

#[test]
fn batch_and_resolution_overrides() {
    // value_info present with a symbolic batch: cross-checked, batch defaults to 1.
    let g = from_onnx_bytes(&data("small_cnn_dynamic.onnx"), &OnnxOptions::default()).unwrap();
    assert_eq!(compare(&g, &expected("small_cnn")), 27);
    let opts = OnnxOptions {
        batch: Some(4),
        resolution: Some((32, 24)),
    };
    let g = from_onnx_bytes(&data("small_cnn_dynamic.onnx"), &opts).unwrap();
    let by_name = |n: &str| g.tensors.iter().find(|t| t.name == n).unwrap().shape;
    assert_eq!(by_name("x"), Shape4::new(4, 3, 32, 24));
    assert_eq!(by_name("up2"), Shape4::new(4, 6, 64, 48));
    assert_eq!(g.tensors[g.outputs[0]].shape, Shape4::new(4, 2, 3, 1));
}

#[test]
fn opset9_upsample_and_clip_attributes() {
    let g = from_onnx_bytes(&data("upsample_v9.onnx"), &OnnxOptions::default()).unwrap();
    assert_eq!(compare(&g, &expected("upsample_v9")), 5); // x, c, r, u, y
    assert!(g.ops.iter().any(|o| o.kind
        == OpKind::Upsample {
            scale_h: 3,
            scale_w: 2
        }));
    assert!(g
        .ops
        .iter()
        .any(|o| o.kind == OpKind::Act(Activation::Relu6)));
}

#[test]
fn attribute_variants() {
    // SAME_UPPER/SAME_LOWER, ConvTranspose output_shape, asymmetric pads and
    // count_include_pad on an average pool, SE-style Mul of
    // two activations, Resize by sizes, Concat axis -3, Flatten axis 2, Reshape with -1.
    let g = from_onnx_bytes(&data("variants.onnx"), &OnnxOptions::default()).unwrap();
    validate(&g).unwrap();
    assert_eq!(compare(&g, &expected("variants")), 13);
    let mul = g.ops.iter().find(|o| o.name == "se_scale").unwrap();
    assert_eq!(
        g.tensors[mul.inputs[0]].name, "ap",
        "full-shape operand first"
    );
    assert!(g.ops.iter().any(|o| o.kind
        == OpKind::Upsample {
            scale_h: 2,
            scale_w: 2
        }));
    let d = g.ops.iter().find(|o| o.name == "deconv_shape").unwrap();
    let OpKind::Deconv { params, .. } = d.kind else {
        panic!()
    };
    // ONNX spec: total pad 1 per axis; without SAME_UPPER the odd row goes at the start.
    assert_eq!(params.pad, [1, 1, 0, 0]);
    // count_include_pad is read (the cost model corrects padded windows without it)
    let ap = g.ops.iter().find(|o| o.name == "avg_pad").unwrap();
    assert!(matches!(ap.kind, OpKind::AvgPool(p) if p.count_include_pad && p.pad == [1, 0, 1, 2]));
}

#[test]
fn unsupported_op_is_named() {
    let e = from_onnx_bytes(&data("unsupported.onnx"), &OnnxOptions::default()).unwrap_err();
    assert_eq!(
        e,
        GraphError::OnnxUnsupported {
            op_type: "Softmax".into(),
            node: "prob".into()
        }
    );
    assert_eq!(e.to_string(), "unsupported ONNX op 'Softmax' (node 'prob')");
}

#[test]
fn garbage_is_a_decode_error() {
    let e =
        from_onnx_bytes(b"definitely not protobuf \xff\xff", &OnnxOptions::default()).unwrap_err();
    assert!(matches!(e, GraphError::OnnxDecode(_)), "{e}");
    assert!(from_onnx_bytes(&[], &OnnxOptions::default()).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    /// Truncated or corrupted files give an error or a valid graph, never a panic.
    #[test]
    fn corrupted_files_never_panic(cut in 0usize..10354, flips in proptest::collection::vec((0usize..10354, any::<u8>()), 0..4)) {
        let mut b = data("small_cnn.onnx");
        for (i, x) in flips {
            let i = i % b.len();
            b[i] ^= x;
        }
        b.truncate(cut.min(b.len()));
        if let Ok(g) = from_onnx_bytes(&b, &OnnxOptions::default()) {
            prop_assert!(validate(&g).is_ok());
        }
    }
}

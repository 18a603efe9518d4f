//! Built-in models against the published torchvision figures: parameter counts are exact
//! (torchvision's `sum(p.numel() for p in model.parameters())`), MACs (conv + linear, what
//! torchvision's model docs list as GFLOPS) within 1% of the quoted figure.

use tpusim_graph::cost::graph_cost;
use tpusim_graph::{load, models, validate::validate, OpKind, Shape4};

fn check(name: &str, params: u64, gmacs: f64) {
    let g = load(name, 1, (224, 224)).unwrap();
    validate(&g).unwrap();
    let c = graph_cost(&g).unwrap();
    assert_eq!(c.weight_elements, params, "{name} params");
    let got = c.macs as f64 / 1e9;
    assert!(
        (got - gmacs).abs() / gmacs < 0.01,
        "{name}: {got} GMACs vs {gmacs}"
    );
    let out = g.tensors[g.outputs[0]].shape;
    assert_eq!(out, Shape4::new(1, 1000, 1, 1), "{name} logits");
}

#[test]
fn resnet18_matches_torchvision() {
    // torchvision: 11,689,512 params, 1.814 GMACs ("1.81 GFLOPS"; thop/ptflops 1.82 G).
    check("resnet18", 11_689_512, 1.814);
    let g = load("resnet18", 1, (224, 224)).unwrap();
    let convs = g
        .ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Conv(_)))
        .count();
    assert_eq!(convs, 20); // 17 3x3/7x7 + 3 downsample
}

#[test]
fn resnet50_matches_torchvision() {
    // 25,557,032 params, 4.09 GMACs.
    check("resnet50", 25_557_032, 4.09);
    // 53 convs + 53 BNs + 49 ReLUs + maxpool + 16 adds + avgpool + flatten + fc
    assert_eq!(load("resnet50", 1, (224, 224)).unwrap().ops.len(), 175);
}

#[test]
fn mobilenetv2_matches_torchvision() {
    // 3,504,872 params, 0.30 GMACs (300.8 M).
    check("mobilenetv2", 3_504_872, 0.3008);
}

#[test]
fn vgg16_matches_torchvision() {
    // 138,357,544 params, 15.47 GMACs.
    check("vgg16", 138_357_544, 15.47);
}

#[test]
fn batch_and_resolution_scale_costs() {
    for (name, _) in models::list() {
        let a = graph_cost(&load(name, 1, (224, 224)).unwrap()).unwrap();
        let b = graph_cost(&load(name, 4, (224, 224)).unwrap()).unwrap();
        assert_eq!(b.macs, 4 * a.macs, "{name}");
        assert_eq!(b.weight_elements, a.weight_elements, "{name}");
        let res = if name == "vgg16" {
            (448, 224)
        } else {
            (448, 320)
        };
        let g = load(name, 2, res).unwrap();
        validate(&g).unwrap();
        assert_eq!(
            g.tensors[g.inputs[0]].shape,
            Shape4::new(2, 3, res.0, res.1)
        );
    }
}

#[test]
fn bad_options_are_clear_errors() {
    let e = load("resnet19", 1, (224, 224)).unwrap_err().to_string();
    assert!(e.contains("resnet19") && e.contains("resnet18"), "{e}");
    assert!(load("resnet18", 0, (224, 224))
        .unwrap_err()
        .to_string()
        .contains("batch"));
    assert!(load("resnet18", 1, (0, 224))
        .unwrap_err()
        .to_string()
        .contains("resolution"));
    let e = load("vgg16", 1, (16, 16))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("resolution 16x16") && e.contains("features.30"),
        "{e}"
    );
    let e = load("vgg16", 1, (160, 160))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("7x7") || e.contains("multiple"), "{e}");
    // vgg16 at 32x32 (1x1 final map) replicates to 7x7 like torchvision's adaptive pool.
    let g = load("vgg16", 1, (32, 32)).unwrap();
    assert_eq!(graph_cost(&g).unwrap().weight_elements, 138_357_544);
}

#[test]
fn fused_models_keep_macs_and_fold_every_bn_and_relu() {
    for (name, _) in models::list() {
        let g = load(name, 1, (224, 224)).unwrap();
        let f = tpusim_graph::fuse::fuse(&g).unwrap();
        let (a, b) = (graph_cost(&g).unwrap(), graph_cost(&f).unwrap());
        // MobileNetV2's two linear 1×1 convs read by a 1×1 conv alone merge into it (as
        // TPU-MLIR does): 32→16→96 on 112² becomes 32→96 (+1,024 MACs and +1,008
        // weights: 3,072 + 96 bias for 512 + 16 + 1,536 + 96), and 960→320→1280 on 7²
        // becomes 960→1280 (+512,000 MACs per position, +511,680 weights)
        let (more_macs, more_weights) = if name == "mobilenetv2" {
            (1_024 * 112 * 112 + 512_000 * 7 * 7, 1_008 + 511_680)
        } else {
            (0, 0)
        };
        assert_eq!(a.macs + more_macs, b.macs, "{name}");
        // Every BN follows a conv in these models: its 2c parameters become a c-bias.
        let bn_channels: u64 = g
            .ops
            .iter()
            .filter(|o| o.kind == OpKind::BatchNorm)
            .map(|o| g.tensors[o.outputs[0]].shape.c)
            .sum();
        assert_eq!(
            b.weight_elements,
            a.weight_elements - bn_channels + more_weights,
            "{name}"
        );
        assert!(
            f.ops
                .iter()
                .all(|o| !matches!(o.kind, OpKind::BatchNorm | OpKind::Act(_))),
            "{name}: unfused BN/activation left"
        );
    }
    let f = tpusim_graph::fuse::fuse(&load("resnet18", 1, (224, 224)).unwrap()).unwrap();
    // 20 convs, maxpool, 8 adds, avgpool, flatten, fc
    assert_eq!(f.ops.len(), 32);
}

#[test]
fn graphs_round_trip_through_json() {
    let g = tpusim_graph::fuse::fuse(&load("mobilenetv2", 2, (160, 160)).unwrap()).unwrap();
    let text = serde_json::to_string(&g).unwrap();
    let back: tpusim_graph::Graph = serde_json::from_str(&text).unwrap();
    assert_eq!(back, g);
    validate(&back).unwrap();
}

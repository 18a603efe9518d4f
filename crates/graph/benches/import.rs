//! Import and IR pass speed: building the built-in ResNet-50, fusing it, validating it,
//! and importing torchvision's ResNet-50 ONNX export (weights stripped). The Python
//! baseline (`onnx.load` + `onnx.shape_inference.infer_shapes` on the same file) is run
//! by `bench/graph-import.sh`.

use criterion::{criterion_group, criterion_main, Criterion};
use tpusim_graph::{
    fuse::fuse, load, onnx::from_onnx_bytes, onnx::OnnxOptions, validate::validate,
};

fn benches(c: &mut Criterion) {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tv_resnet50.onnx"
    ))
    .unwrap();
    c.bench_function("build_resnet50", |b| {
        b.iter(|| load("resnet50", 1, (224, 224)).unwrap())
    });
    let g = load("resnet50", 1, (224, 224)).unwrap();
    c.bench_function("fuse_resnet50", |b| b.iter(|| fuse(&g).unwrap()));
    c.bench_function("validate_resnet50", |b| b.iter(|| validate(&g).unwrap()));
    c.bench_function("onnx_import_resnet50", |b| {
        b.iter(|| from_onnx_bytes(&bytes, &OnnxOptions::default()).unwrap())
    });
}

criterion_group! {
    name = group;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2));
    targets = benches
}
criterion_main!(group);

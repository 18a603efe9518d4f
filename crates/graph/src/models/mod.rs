//! Built-in models: exact torchvision architectures written as [`GraphBuilder`] code,
//! with batch-norm and activations as separate ops (as an ONNX export has them; run
//! [`crate::fuse::fuse`] to get the inference form TPU-MLIR plans). Names of ops and
//! weights follow torchvision's module names (`layer1.0.conv1`, `fc.weight`, …).

mod mobilenet;
mod resnet;
mod vgg;

use crate::builder::GraphBuilder;
use crate::error::{GraphError, Result};
use crate::ir::{Graph, Shape4, TensorId};

/// Built-in models as `(name, description)`, in the order `tpusim plan --list` shows them.
pub fn list() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "resnet18",
            "ResNet-18 (torchvision): 11.69M params, 1.82 GMACs at 224x224",
        ),
        (
            "resnet50",
            "ResNet-50 v1.5 (torchvision): 25.56M params, 4.1 GMACs at 224x224",
        ),
        (
            "mobilenetv2",
            "MobileNetV2 (torchvision): 3.50M params, 0.30 GMACs at 224x224",
        ),
        (
            "vgg16",
            "VGG-16 (torchvision, no BN): 138.4M params, 15.5 GMACs at 224x224",
        ),
    ]
}

/// Builds the built-in model `name` for `batch` images of `resolution = (H, W)` pixels
/// (3 channels). Errors for an unknown name, a zero batch or resolution, or a resolution
/// too small for the network.
pub fn build(name: &str, batch: u64, resolution: (u64, u64)) -> Result<Graph> {
    let (h, w) = resolution;
    if batch == 0 {
        return Err(GraphError::BadOption(format!(
            "batch size must be positive, got {batch}"
        )));
    }
    if h == 0 || w == 0 {
        return Err(GraphError::BadOption(format!(
            "resolution must be positive, got {h}x{w}"
        )));
    }
    let mut b = GraphBuilder::new(name);
    let x = b.input("input", Shape4::new(batch, 3, h, w));
    let out = match name {
        "resnet18" => resnet::resnet(&mut b, x, resnet::Block::Basic, [2, 2, 2, 2]),
        "resnet50" => resnet::resnet(&mut b, x, resnet::Block::Bottleneck, [3, 4, 6, 3]),
        "mobilenetv2" => mobilenet::mobilenet_v2(&mut b, x),
        "vgg16" => vgg::vgg16(&mut b, x),
        _ => {
            let known: Vec<_> = list().iter().map(|(n, _)| *n).collect();
            return Err(GraphError::UnknownModel {
                name: name.to_string(),
                known: known.join(", "),
            });
        }
    }
    .map_err(|e| match e {
        GraphError::Shape { op, reason, .. } => GraphError::BadOption(format!(
            "{name} cannot take resolution {h}x{w}: op '{op}': {reason}"
        )),
        other => other,
    })?;
    b.output(out);
    b.finish()
}

/// Shorthand used by the model files: conv (no bias) + batch-norm + optional activation,
/// named `<conv>`, `<bn>`, `<act>`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_bn(
    b: &mut GraphBuilder,
    x: TensorId,
    names: (&str, &str, Option<(&str, crate::ir::Activation)>),
    c_out: u64,
    k: u64,
    s: u64,
    p: u64,
    groups: u64,
) -> Result<TensorId> {
    let y = b.conv(names.0, x, c_out, k, s, p, groups, false)?;
    let y = b.batchnorm(names.1, y)?;
    match names.2 {
        Some((an, a)) => b.act(an, y, a),
        None => Ok(y),
    }
}

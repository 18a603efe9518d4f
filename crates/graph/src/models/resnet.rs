//! ResNet-18/34 (basic blocks) and ResNet-50/101/152 (bottleneck blocks, v1.5: the stride
//! sits on the 3×3 conv) exactly as torchvision builds them.

use super::conv_bn;
use crate::builder::GraphBuilder;
use crate::error::Result;
use crate::ir::{Activation, OpKind, TensorId};

/// Residual block type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Block {
    /// Two 3×3 convs (expansion 1).
    Basic,
    /// 1×1, 3×3, 1×1 convs (expansion 4).
    Bottleneck,
}

/// The whole network on input `x`; `layers` = blocks per stage.
pub(crate) fn resnet(
    b: &mut GraphBuilder,
    x: TensorId,
    block: Block,
    layers: [u64; 4],
) -> Result<TensorId> {
    let relu = Activation::Relu;
    let mut y = conv_bn(b, x, ("conv1", "bn1", Some(("relu", relu))), 64, 7, 2, 3, 1)?;
    y = b.maxpool("maxpool", y, 3, 2, 1)?;
    let expansion = match block {
        Block::Basic => 1,
        Block::Bottleneck => 4,
    };
    let mut inplanes = 64;
    for (stage, (&n, planes)) in layers.iter().zip([64u64, 128, 256, 512]).enumerate() {
        for i in 0..n {
            let stride = if stage > 0 && i == 0 { 2 } else { 1 };
            let p = format!("layer{}.{}", stage + 1, i);
            let identity = y;
            let out = match block {
                Block::Basic => {
                    let t = conv_bn(
                        b,
                        y,
                        (
                            &format!("{p}.conv1"),
                            &format!("{p}.bn1"),
                            Some((&format!("{p}.relu1"), relu)),
                        ),
                        planes,
                        3,
                        stride,
                        1,
                        1,
                    )?;
                    conv_bn(
                        b,
                        t,
                        (&format!("{p}.conv2"), &format!("{p}.bn2"), None),
                        planes,
                        3,
                        1,
                        1,
                        1,
                    )?
                }
                Block::Bottleneck => {
                    let t = conv_bn(
                        b,
                        y,
                        (
                            &format!("{p}.conv1"),
                            &format!("{p}.bn1"),
                            Some((&format!("{p}.relu1"), relu)),
                        ),
                        planes,
                        1,
                        1,
                        0,
                        1,
                    )?;
                    let t = conv_bn(
                        b,
                        t,
                        (
                            &format!("{p}.conv2"),
                            &format!("{p}.bn2"),
                            Some((&format!("{p}.relu2"), relu)),
                        ),
                        planes,
                        3,
                        stride,
                        1,
                        1,
                    )?;
                    conv_bn(
                        b,
                        t,
                        (&format!("{p}.conv3"), &format!("{p}.bn3"), None),
                        planes * expansion,
                        1,
                        1,
                        0,
                        1,
                    )?
                }
            };
            let shortcut = if stride != 1 || inplanes != planes * expansion {
                conv_bn(
                    b,
                    identity,
                    (
                        &format!("{p}.downsample.0"),
                        &format!("{p}.downsample.1"),
                        None,
                    ),
                    planes * expansion,
                    1,
                    stride,
                    0,
                    1,
                )?
            } else {
                identity
            };
            let s = b.add_op(&format!("{p}.add"), OpKind::Add, &[out, shortcut], &[])?;
            y = b.act(&format!("{p}.relu"), s, relu)?;
            inplanes = planes * expansion;
        }
    }
    y = b.add_op("avgpool", OpKind::GlobalAvgPool, &[y], &[])?;
    y = b.add_op("flatten", OpKind::Flatten, &[y], &[])?;
    b.gemm("fc", y, 1000, true)
}

//! MobileNetV2 (width 1.0) exactly as torchvision builds it: inverted residual blocks
//! with ReLU6, a linear bottleneck, and a 1280-wide last conv.

use super::conv_bn;
use crate::builder::GraphBuilder;
use crate::error::Result;
use crate::ir::{Activation, OpKind, TensorId};

/// `(expansion t, channels c, repeats n, first stride s)` per stage (torchvision's table).
const SETTINGS: [(u64, u64, u64, u64); 7] = [
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
];

/// The whole network on input `x`.
pub(crate) fn mobilenet_v2(b: &mut GraphBuilder, x: TensorId) -> Result<TensorId> {
    let r6 = Activation::Relu6;
    let mut y = conv_bn(
        b,
        x,
        ("features.0.0", "features.0.1", Some(("features.0.2", r6))),
        32,
        3,
        2,
        1,
        1,
    )?;
    let mut c_in = 32;
    let mut idx = 1;
    for (t, c, n, s) in SETTINGS {
        for i in 0..n {
            let stride = if i == 0 { s } else { 1 };
            let p = format!("features.{idx}.conv");
            let hidden = c_in * t;
            let mut h = y;
            let mut j = 0;
            if t != 1 {
                h = conv_bn(
                    b,
                    h,
                    (
                        &format!("{p}.{j}.0"),
                        &format!("{p}.{j}.1"),
                        Some((&format!("{p}.{j}.2"), r6)),
                    ),
                    hidden,
                    1,
                    1,
                    0,
                    1,
                )?;
                j += 1;
            }
            h = conv_bn(
                b,
                h,
                (
                    &format!("{p}.{j}.0"),
                    &format!("{p}.{j}.1"),
                    Some((&format!("{p}.{j}.2"), r6)),
                ),
                hidden,
                3,
                stride,
                1,
                hidden,
            )?;
            j += 1;
            h = conv_bn(
                b,
                h,
                (&format!("{p}.{j}"), &format!("{p}.{}", j + 1), None),
                c,
                1,
                1,
                0,
                1,
            )?;
            y = if stride == 1 && c_in == c {
                b.add_op(&format!("features.{idx}.add"), OpKind::Add, &[y, h], &[])?
            } else {
                h
            };
            c_in = c;
            idx += 1;
        }
    }
    let p = format!("features.{idx}");
    y = conv_bn(
        b,
        y,
        (
            &format!("{p}.0"),
            &format!("{p}.1"),
            Some((&format!("{p}.2"), r6)),
        ),
        1280,
        1,
        1,
        0,
        1,
    )?;
    y = b.add_op("avgpool", OpKind::GlobalAvgPool, &[y], &[])?;
    y = b.add_op("flatten", OpKind::Flatten, &[y], &[])?;
    b.gemm("classifier.1", y, 1000, true)
}

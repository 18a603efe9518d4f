//! VGG-16 (configuration "D", no batch-norm) exactly as torchvision builds it, including
//! the adaptive 7×7 average pool before the classifier.

use crate::builder::GraphBuilder;
use crate::error::{GraphError, Result};
use crate::ir::{Activation, OpKind, PoolParams, TensorId};

/// Output channels per conv; 0 = 2×2 max pool.
const CFG: [u64; 18] = [
    64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0,
];

/// The whole network on input `x`.
pub(crate) fn vgg16(b: &mut GraphBuilder, x: TensorId) -> Result<TensorId> {
    let relu = Activation::Relu;
    let mut y = x;
    // torchvision's module index: a conv and its ReLU take one index each.
    let mut i = 0;
    for &c in &CFG {
        if c == 0 {
            y = b.maxpool(&format!("features.{i}"), y, 2, 2, 0)?;
            i += 1;
        } else {
            y = b.conv(&format!("features.{i}"), y, c, 3, 1, 1, 1, true)?;
            y = b.act(&format!("features.{}", i + 1), y, relu)?;
            i += 2;
        }
    }
    y = adaptive_avgpool_7x7(b, y)?;
    y = b.add_op("flatten", OpKind::Flatten, &[y], &[])?;
    y = b.gemm("classifier.0", y, 4096, true)?;
    y = b.act("classifier.1", y, relu)?;
    y = b.gemm("classifier.3", y, 4096, true)?;
    y = b.act("classifier.4", y, relu)?;
    b.gemm("classifier.6", y, 1000, true)
}

/// torchvision's `AdaptiveAvgPool2d((7, 7))`: nothing at 7×7 (224² input); an exact
/// average pool when the map is a multiple of 7; nearest replication (each output bin
/// averages one input element) when 7 is a multiple of the map. Other sizes have uneven
/// bins, which the IR cannot express: error.
fn adaptive_avgpool_7x7(b: &mut GraphBuilder, y: TensorId) -> Result<TensorId> {
    let s = b.shape(y);
    if s.h == 7 && s.w == 7 {
        return Ok(y);
    }
    if s.h % 7 == 0 && s.w % 7 == 0 {
        let k = [s.h / 7, s.w / 7];
        let p = PoolParams {
            kernel: k,
            stride: k,
            pad: [0; 4],
            ceil_mode: false,
            count_include_pad: false,
        };
        return b.add_op("avgpool", OpKind::AvgPool(p), &[y], &[]);
    }
    if 7 % s.h == 0 && 7 % s.w == 0 {
        return b.add_op(
            "avgpool",
            OpKind::Upsample {
                scale_h: 7 / s.h,
                scale_w: 7 / s.w,
            },
            &[y],
            &[],
        );
    }
    Err(GraphError::BadOption(format!(
        "vgg16's adaptive 7x7 pool needs a final feature map (input/32) that is a multiple or divisor of 7, got {}x{}",
        s.h, s.w
    )))
}

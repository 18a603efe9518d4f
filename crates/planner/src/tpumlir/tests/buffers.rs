//! Op buffers against TPU-MLIR 1.30.2: every conv of its own layer groups for which its
//! final MLIR records a `buffer_size` (ResNet-18 b1/b4 and a mini MobileNetV2, F16, on
//! bm1684x and bm1688; `grep buffer_size <model>_<chip>_f16_final.mlir` in the runs of
//! `tests/data/README.md`), with the largest input and output slice of that group.

use crate::timestep::buffer_size;
use crate::NpuChip;
use tpusim_graph::{ConvParams, OpKind};
use tpusim_layout::ElementType;

fn conv(k: u64, s: u64, groups: u64) -> OpKind {
    OpKind::Conv(ConvParams {
        kernel: [k, k],
        stride: [s, s],
        pad: [k / 2; 4],
        dilation: [1, 1],
        groups,
    })
}

type Nchw = (u64, u64, u64, u64);

#[test]
fn conv_buffers_are_tpu_mlirs() {
    // (chip, kernel, stride, groups, largest input slice, largest output slice, bytes)
    let cases: [(&str, u64, u64, u64, Nchw, Nchw, u64); 16] = [
        // ResNet conv1, 3 channels, 7x7/2: kernel rows folded into channels
        (
            "bm1684x",
            7,
            2,
            1,
            (1, 3, 229, 224),
            (1, 64, 112, 112),
            50_368,
        ),
        (
            "bm1684x",
            7,
            2,
            1,
            (1, 3, 119, 224),
            (1, 64, 57, 112),
            25_728,
        ),
        ("bm1688", 7, 2, 1, (1, 3, 63, 224), (1, 64, 29, 112), 13_040),
        // MobileNetV2's first conv, 3x3/2: rows and columns folded on bm1684x
        (
            "bm1684x",
            3,
            2,
            1,
            (1, 3, 224, 224),
            (1, 32, 112, 112),
            25_280,
        ),
        ("bm1688", 3, 2, 1, (1, 3, 63, 224), (1, 32, 31, 112), 13_936),
        // depthwise 3x3
        (
            "bm1684x",
            3,
            1,
            192,
            (1, 192, 28, 28),
            (1, 192, 28, 28),
            11_231,
        ),
        (
            "bm1684x",
            3,
            2,
            144,
            (1, 144, 56, 56),
            (1, 144, 28, 28),
            15_903,
        ),
        (
            "bm1684x",
            3,
            2,
            192,
            (1, 192, 28, 28),
            (1, 192, 14, 14),
            4_319,
        ),
        (
            "bm1684x",
            3,
            1,
            144,
            (1, 144, 56, 56),
            (1, 144, 56, 56),
            43_935,
        ),
        (
            "bm1684x",
            3,
            2,
            96,
            (1, 96, 112, 112),
            (1, 96, 56, 56),
            50_198,
        ),
        (
            "bm1688",
            3,
            2,
            144,
            (1, 144, 29, 56),
            (1, 144, 14, 28),
            11_137,
        ),
        (
            "bm1688",
            3,
            2,
            96,
            (1, 96, 29, 112),
            (1, 96, 14, 56),
            15_935,
        ),
        (
            "bm1688",
            3,
            1,
            32,
            (1, 32, 31, 112),
            (1, 32, 29, 112),
            19_949,
        ),
        (
            "bm1688",
            3,
            1,
            192,
            (1, 192, 28, 28),
            (1, 192, 28, 28),
            20_442,
        ),
        (
            "bm1688",
            3,
            1,
            144,
            (1, 144, 30, 56),
            (1, 144, 29, 56),
            35_889,
        ),
        (
            "bm1688",
            3,
            2,
            192,
            (1, 192, 28, 28),
            (1, 192, 14, 14),
            6_426,
        ),
    ];
    for (chip, k, s, g, x, y, want) in cases {
        let c = NpuChip::preset(chip).unwrap();
        let ic_parallel = c.timing_at(ElementType::F16).unwrap().ic_parallel;
        let got = buffer_size(
            &c.geometry,
            ElementType::F16,
            &conv(k, s, g),
            x,
            y,
            ic_parallel,
        )
        .unwrap();
        assert_eq!(
            got,
            Some(want),
            "{chip} {k}x{k}/{s} groups {g} {x:?} -> {y:?}"
        );
    }
    // a dense conv on many channels needs none (ResNet's 3x3 convs: buffer_size = 0)
    let c = NpuChip::preset("bm1684x").unwrap();
    let dense = buffer_size(
        &c.geometry,
        ElementType::F16,
        &conv(3, 1, 1),
        (1, 64, 56, 56),
        (1, 64, 56, 56),
        64,
    );
    assert_eq!(dense.unwrap(), None);
}

#[test]
fn a_batch_norm_alone_has_a_depthwise_buffer_when_its_channels_fill_the_lanes() {
    // The zoo's U-Net (a BN after each ReLU), TPU-MLIR's own groups, unsliced: it
    // lowers such a BN to a 1×1 conv, depthwise (with a buffer) from as many channels
    // as lanes, dense (none) below: `buffer_size` of its final MLIR.
    // (chip, channels, H = W, bytes)
    let cases: [(&str, u64, u64, Option<u64>); 6] = [
        ("bm1688", 32, 64, Some(24_581)),
        ("bm1688", 64, 32, Some(10_246)),
        ("bm1688", 16, 128, None),
        ("bm1684x", 64, 32, Some(6_149)),
        ("bm1684x", 32, 64, None),
        ("bm1684x", 16, 128, None),
    ];
    for (chip, c, hw, want) in cases {
        let g = NpuChip::preset(chip).unwrap().geometry;
        let x = (1, c, hw, hw);
        let got = buffer_size(&g, ElementType::F16, &OpKind::BatchNorm, x, x, 64).unwrap();
        assert_eq!(got, want, "{chip} BN on {c} channels of {hw}x{hw}");
    }
}

#!/usr/bin/env python3
"""The zoo of generated ONNX CNNs that tpusim's TPU-MLIR export is checked on (issue 19).

Each network covers some of the op kinds tpusim's CNN importer accepts (Conv, grouped and
depthwise and dilated, ConvTranspose, Max/AveragePool, GlobalAverage/MaxPool,
BatchNormalization, Relu/LeakyRelu/Sigmoid/Tanh/HardSigmoid/HardSwish/Clip, Add and Mul,
Concat, Resize, Gemm/MatMul, Flatten, Reshape, Identity/Dropout), with different
branchings, resolutions, batches 1-8 and some odd channel counts. Weights are random.

HELD_OUT names the networks kept out of every fix and fit: their figures are the ones
BENCHMARKS.md reports. They were chosen before any of the zoo was compiled.

Usage: python bench/tpumlir_zoo.py OUTDIR [--stripped]
  writes OUTDIR/<name>.onnx and OUTDIR/zoo.json ({name: {"input_shape": [...],
  "held_out": bool}}); with --stripped the initializers keep their dims but not their
  data, but for constants of 16 elements or fewer (what the tests commit: the importer
  reads only shapes and such constants).
Needs the `onnx` and `numpy` packages.
"""
import argparse
import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

HELD_OUT = {"densenet_like", "fpn_like", "resnext_b4", "yolo_tiny", "dilated_seg_b2"}
# Round 2 (twenty-eighth session): seven networks written, all held out, before any of them
# was compiled or planned; their figures are reported apart from the first round's.
HELD_OUT_2 = {"efficient_like", "preact_resnet_b3", "hourglass_b2", "pool_mix_b6",
              "deep_narrow_160", "ghost_like_99", "wide_1x1_b8"}
HELD_OUT |= HELD_OUT_2
# Round 3 (thirty-third session): six more, all held out, written after that session's
# planner changes and before any of them was planned or compiled; their first compile is
# the unseen figure of that build.
HELD_OUT_3 = {"mobile_v1_b2", "bottleneck_b4", "unet_deep_b2", "tanh_gates_77",
              "aspp_like", "grouped_leaky_b7"}
HELD_OUT |= HELD_OUT_3
# Round 4 (thirty-fourth session): six more, all held out, written after that session's
# margins rule and before any of them was planned or compiled.
HELD_OUT_4 = {"inception_pool_b3", "dilated_res_64", "deconv_skip_b2", "hswish_se_90",
              "wide_shallow_224", "dense_avg_b5"}
HELD_OUT |= HELD_OUT_4
# Round 5 (thirty-fifth session): six more, all held out, written after that session's
# small-C and global element-wise rules and before any of them was planned or compiled.
HELD_OUT_5 = {"res_gmp_b6", "sigmoid_seg_160", "leaky_pyramid_b3", "clip6_dw_b2",
              "tanh_deconv_b4", "bn_odd_1x1_128"}
HELD_OUT |= HELD_OUT_5
# Round 6 (thirty-sixth session): six more, all held out, written before any of them was
# planned or compiled: asymmetric kernels, ceil-mode pools, 3x3 transposed convs with
# output padding, GLU-style gates, 4x upsampling, batch-8 depthwise 5x5.
HELD_OUT_6 = {"factorized_b2", "deconv3_op_b3", "ceil_stem_57", "glu_gates_b4",
              "resize4_fpn_192", "dw5_se_b8"}
HELD_OUT |= HELD_OUT_6
# Round 7 (thirty-sixth session): six more, all held out, written after that session's
# pool-cast, activation-row and global-conv changes and before any was planned or
# compiled: both global pools concatenated, 4x4 transposed convs, dilation 3, tiny
# depthwise channels, a 7x7 head at batch 4, a three-level top-down sum.
HELD_OUT_7 = {"dual_pool_head_b3", "deconv4_gan_b2", "dil3_gate_48", "tiny_dw_66",
              "wide_head_7_b4", "topdown_tanh_b2"}
HELD_OUT |= HELD_OUT_7
# Round 8 (thirty-seventh session): six more, all held out, written after that session's
# few-row fully connected kernels and before any was planned or compiled: an inverted-
# residual tail with a 1280-wide head at batch 2, a 4x4/4 patch stem, SPPF-style
# stride-1 max pools, 5x5 convs on an odd map, two Gemms in a row at batch 6, a
# depthwise stride-2 down path with its transposed-conv way back.
HELD_OUT_8 = {"mbv2_tail_b2", "patch4_mlp_128", "sppf_b5", "k5_odd_45", "fc_chain_b6",
              "dw_updown_b3"}
HELD_OUT |= HELD_OUT_8
# Round 9 (thirty-seventh session): six more, all held out, written after that session's
# MM2-row and filter-layout rules and before any was planned or compiled: a VGG-style
# head of two Gemms at batch 2, odd channel counts through 1x1 chains, a 3x3 stride-2
# pyramid with concatenated upsampled levels, grouped convs of 4 groups at batch 3,
# a wide-then-narrow 1x1 bottleneck at 7x7, a hard-sigmoid-gated U at 56x56.
HELD_OUT_9 = {"vgg_head_b2", "odd_1x1_chain_60", "concat_pyramid_96", "group4_b3",
              "narrow_7x7_b4", "hsig_u_56"}
HELD_OUT |= HELD_OUT_9
# Round 10 (forty-seventh session): six more, all held out, written before any was
# planned or compiled: a CSP split with leaky residual blocks at batch 2, BN + ReLU6
# inverted residuals on an odd 63x63 map, stride-1 3x3 average-pool branches at batch 4,
# a top-down resize-add with tanh and a max-pooled head at batch 3, parallel dilations
# 1/2/4 of odd widths concatenated, hard-swish SE blocks at batch 6.
HELD_OUT_10 = {"csp_leaky_b2", "bn_relu6_ir_63", "avg3_branch_b4", "tanh_topdown_gmp_b3",
               "dil124_odd_72", "se_hswish_b6"}
HELD_OUT |= HELD_OUT_10
# Round 11 (forty-ninth session): six more, all held out, written before any was planned
# or compiled: BN after ReLU (a per-channel scale and bias) at batch 3 on odd widths, a
# pyramid-pooling head (average pools of 4 and 8 and a global one, resized back by 4, 8
# and 16, concatenated), ResNet-D shortcuts through a 2x2 average pool at batch 7,
# ConvNeXt-style 7x7 depthwise blocks on an odd 81x81 map, a 3x3 stride-3 stem and a
# stride-3 max pool at batch 5, grouped convs of 2 groups of 18 at batch 2.
HELD_OUT_11 = {"bn_after_relu_b3", "psp_pool_64", "resnetd_avg_b7", "convnext_dw7_81",
               "stem_s3_b5", "group2_odd_b2"}
HELD_OUT |= HELD_OUT_11
# Round 12 (forty-ninth session, after its two model changes): six more, all held out,
# written before any was planned or compiled: dilation-2 convs of a segmentation head
# at batch 3 resized back, LeakyReLU convs and two fully connected layers at batch 8,
# 5x5 and 3x3 average pools around tanh convs on an odd 75x75 map, a hard-swish U-Net
# at batch 2, 1x1 to 7x7 branches added (not concatenated) at batch 3, and explicit
# BN with ReLU6 around a stride-2 depthwise conv of 56 channels at batch 5.
HELD_OUT_12 = {"dil2_seg_b3", "leaky_fc2_b8", "avg5_tanh_75", "hswish_unet_b2",
               "mixed_k_add_b3", "convbn_relu6_dw_b5"}
HELD_OUT |= HELD_OUT_12


class Net:
    """An ONNX graph under construction; every op returns its output name."""

    def __init__(self, seed):
        self.nodes, self.inits, self.k = [], [], 0
        self.rng = np.random.default_rng(seed)

    def name(self, p):
        self.k += 1
        return f"{p}{self.k}"

    def weight(self, shape, scale):
        w = self.name("w")
        self.inits.append(numpy_helper.from_array((self.rng.standard_normal(shape) * scale).astype(np.float32), w))
        return w

    def node(self, op, inputs, prefix, **attrs):
        y = self.name(prefix)
        self.nodes.append(helper.make_node(op, inputs, [y], **attrs))
        return y

    def conv(self, x, cin, cout, k, s=1, p=None, group=1, dil=1, bias=True, act="relu"):
        p = dil * (k // 2) if p is None else p
        ins = [x, self.weight((cout, cin // group, k, k), np.sqrt(2.0 / (cin // group * k * k)))]
        if bias:
            ins.append(self.weight((cout,), 0.01))
        y = self.node("Conv", ins, "conv", kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
                      group=group, dilations=[dil, dil])
        return self.act(y, act)

    def bn(self, x, c):
        scale = self.name("bns")
        self.inits.append(numpy_helper.from_array((1 + 0.1 * self.rng.standard_normal(c)).astype(np.float32), scale))
        bias = self.weight((c,), 0.1)
        mean = self.weight((c,), 0.1)
        var = self.name("bnv")
        self.inits.append(numpy_helper.from_array((1 + 0.1 * np.abs(self.rng.standard_normal(c))).astype(np.float32), var))
        return self.node("BatchNormalization", [x, scale, bias, mean, var], "bn", epsilon=1e-5)

    def conv_bn(self, x, cin, cout, k, s=1, p=None, group=1, act="relu"):
        """Conv without bias, BatchNormalization, then the activation (torch's training-mode export)."""
        return self.act(self.bn(self.conv(x, cin, cout, k, s, p, group, bias=False, act=None), cout), act)

    def act(self, x, act):
        if act is None:
            return x
        if act == "relu6":
            lo, hi = self.name("lo"), self.name("hi")
            self.inits += [numpy_helper.from_array(np.array(0, np.float32), lo),
                           numpy_helper.from_array(np.array(6, np.float32), hi)]
            return self.node("Clip", [x, lo, hi], "clip")
        op = {"relu": "Relu", "leaky": "LeakyRelu", "sigmoid": "Sigmoid", "tanh": "Tanh",
              "hsigmoid": "HardSigmoid", "hswish": "HardSwish"}[act]
        attrs = {"alpha": 0.1} if act == "leaky" else {}
        return self.node(op, [x], op.lower(), **attrs)

    def deconv(self, x, cin, cout, k=2, s=2, act="relu"):
        ins = [x, self.weight((cin, cout, k, k), np.sqrt(1.0 / (cin * k * k))), self.weight((cout,), 0.01)]
        return self.act(self.node("ConvTranspose", ins, "deconv", kernel_shape=[k, k], strides=[s, s]), act)

    def maxpool(self, x, k, s, p=0):
        return self.node("MaxPool", [x], "maxpool", kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)

    def avgpool(self, x, k, s, p=0):
        return self.node("AveragePool", [x], "avgpool", kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)

    def gap(self, x):
        return self.node("GlobalAveragePool", [x], "gap")

    def gmp(self, x):
        return self.node("GlobalMaxPool", [x], "gmp")

    def add(self, a, b):
        return self.node("Add", [a, b], "add")

    def mul(self, a, b):
        return self.node("Mul", [a, b], "mul")

    def concat(self, xs):
        return self.node("Concat", xs, "concat", axis=1)

    def resize(self, x, scale=2):
        roi, sc = self.name("roi"), self.name("scales")
        self.inits += [numpy_helper.from_array(np.zeros(0, np.float32), roi),
                       numpy_helper.from_array(np.array([1, 1, scale, scale], np.float32), sc)]
        return self.node("Resize", [x, roi, sc], "resize", mode="nearest")

    def flatten(self, x):
        return self.node("Flatten", [x], "flat", axis=1)

    def gemm(self, x, cin, cout):
        return self.node("Gemm", [x, self.weight((cout, cin), 0.02), self.weight((cout,), 0.01)], "fc", transB=1)

    def se(self, x, c, r=4, gate="sigmoid"):
        """Squeeze-and-excitation: global pool, 1x1 down, ReLU, 1x1 up, gate, multiply."""
        s = self.gap(x)
        s = self.conv(s, c, max(c // r, 8), 1, p=0)
        s = self.conv(s, max(c // r, 8), c, 1, p=0, act=gate)
        return self.mul(x, s)

    def classifier(self, x, c, classes):
        return self.gemm(self.flatten(self.gap(x)), c, classes)

    def save(self, path, name, input_shape, out, stripped):
        g = helper.make_graph(self.nodes, name,
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, input_shape)],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], self.inits)
        opset = 14 if any(x.op_type == "HardSwish" for x in self.nodes) else 13  # HardSwish is opset 14
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="tpusim-bench")
        m.ir_version = 8
        inferred = shape_inference.infer_shapes(m, strict_mode=True)
        dims = {v.name: v for v in inferred.graph.value_info}
        dims.update({v.name: v for v in inferred.graph.output})
        m.graph.output[0].CopyFrom(dims[out])
        onnx.checker.check_model(m)
        if stripped:  # weights only: small constants (Resize scales, shapes, Clip bounds) are read
            for t in m.graph.initializer:
                if np.prod(t.dims) > 16:
                    t.ClearField("raw_data")
                    t.ClearField("float_data")
        onnx.save(m, path)


# ---- the networks: each takes a Net and returns (output name) ----

def small_cnn(n):
    x = n.conv("input", 3, 16, 3, 2)
    x = n.maxpool(x, 2, 2)
    x = n.conv(x, 16, 32, 3)
    x = n.conv(x, 32, 64, 3, 2)
    return n.classifier(x, 64, 10)


def unet_small(n):
    """Encoder-decoder: BN after ReLU, max pools down, Resize up, skip concats, average pool, sigmoid."""
    def block(x, cin, cout):
        x = n.bn(n.conv(x, cin, cout, 3), cout)
        return n.bn(n.conv(x, cout, cout, 3), cout)
    e1 = block("input", 3, 16)
    e2 = block(n.maxpool(e1, 2, 2), 16, 32)
    e3 = block(n.maxpool(e2, 2, 2), 32, 64)
    d2 = block(n.concat([n.resize(e3), e2]), 96, 32)
    d1 = block(n.concat([n.resize(d2), e1]), 48, 16)
    y = n.avgpool(d1, 3, 1, 1)
    return n.conv(y, 16, 1, 1, p=0, act="sigmoid")


def squeeze_like(n):
    """Fire modules (1x1 squeeze, 1x1 and 3x3 expand, concat) and a conv classifier."""
    def fire(x, cin, s, e):
        q = n.conv(x, cin, s, 1, p=0)
        return n.concat([n.conv(q, s, e, 1, p=0), n.conv(q, s, e, 3)])
    x = n.maxpool(n.conv("input", 3, 64, 3, 2, 0), 3, 2)
    x = fire(x, 64, 16, 64)
    x = fire(x, 128, 16, 64)
    x = n.maxpool(x, 3, 2)
    x = fire(x, 128, 32, 128)
    x = fire(x, 256, 48, 192)
    x = n.conv(x, 384, 10, 1, p=0)
    return n.flatten(n.gap(x))


def inception(n):
    """Inception-style branches: 1x1, 1x1-3x3, 1x1-5x5, maxpool-1x1, concatenated."""
    def module(x, cin, c1, c3r, c3, c5r, c5, cp):
        b1 = n.conv(x, cin, c1, 1, p=0)
        b2 = n.conv(n.conv(x, cin, c3r, 1, p=0), c3r, c3, 3)
        b3 = n.conv(n.conv(x, cin, c5r, 1, p=0), c5r, c5, 5)
        b4 = n.conv(n.maxpool(x, 3, 1, 1), cin, cp, 1, p=0)
        return n.concat([b1, b2, b3, b4]), c1 + c3 + c5 + cp
    x = n.maxpool(n.conv("input", 3, 32, 3, 2), 3, 2, 1)
    x, c = module(x, 32, 16, 24, 32, 4, 8, 8)
    x, c = module(x, c, 32, 32, 48, 8, 24, 16)
    x = n.maxpool(x, 3, 2, 1)
    x, c = module(x, c, 48, 24, 52, 4, 12, 16)
    return n.classifier(x, c, 100)


def resnet34_bn(n):
    """ResNet-34 with explicit BatchNormalization (Conv without bias, BN, then ReLU or the add)."""
    x = n.maxpool(n.conv_bn("input", 3, 64, 7, 2, 3), 3, 2, 1)
    cin = 64
    for cout, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for b in range(blocks):
            s = stride if b == 0 else 1
            y = n.conv_bn(x, cin, cout, 3, s)
            y = n.conv_bn(y, cout, cout, 3, 1, act=None)
            sc = n.conv_bn(x, cin, cout, 1, s, 0, act=None) if (s != 1 or cin != cout) else x
            x = n.act(n.add(y, sc), "relu")
            cin = cout
    return n.classifier(x, 512, 1000)


def se_net(n):
    x = n.conv("input", 3, 32, 3, 2)
    for cin, cout, s in [(32, 48, 2), (48, 96, 2), (96, 160, 2)]:
        x = n.conv(x, cin, cout, 3, s)
        x = n.se(x, cout)
    return n.classifier(x, 160, 20)


def mbv3_like(n):
    """MobileNetV3-style: HardSwish, depthwise, SE with HardSigmoid, ReLU6 (Clip), odd widths."""
    x = n.conv("input", 3, 16, 3, 2, act="hswish")
    cin = 16
    for exp, cout, s, act, se in [(48, 24, 2, "relu6", False), (72, 40, 2, "hswish", True),
                                  (120, 40, 1, "hswish", True), (200, 81, 2, "hswish", False)]:
        y = n.conv(x, cin, exp, 1, p=0, act=act)
        y = n.conv(y, exp, exp, 3, s, group=exp, act=act)
        if se:
            y = n.se(y, exp, gate="hsigmoid")
        y = n.conv(y, exp, cout, 1, p=0, act=None)
        x = n.add(x, y) if (s == 1 and cin == cout) else y
        cin = cout
    return n.classifier(n.conv(x, cin, 320, 1, p=0, act="hswish"), 320, 10)


def deconv_decoder_b2(n):
    """An autoencoder: strided convs down with LeakyReLU, ConvTranspose up, Tanh out."""
    x = n.conv("input", 3, 24, 3, 2, act="leaky")
    x = n.conv(x, 24, 48, 3, 2, act="leaky")
    x = n.conv(x, 48, 96, 3, 2, act="leaky")
    x = n.deconv(x, 96, 48)
    x = n.deconv(x, 48, 24)
    x = n.deconv(x, 24, 12)
    return n.conv(x, 12, 3, 3, act="tanh")


def vgg_tiny_b8(n):
    """VGG-style at batch 8: conv pairs, max pools, flatten, two Gemms with Dropout between."""
    x, cin = "input", 3
    for cout in [16, 32, 64]:
        x = n.maxpool(n.conv(n.conv(x, cin, cout, 3), cout, cout, 3), 2, 2)
        cin = cout
    x = n.flatten(x)
    x = n.act(n.gemm(x, 64 * 4 * 4, 128), "relu")
    x = n.node("Dropout", [x], "drop")
    return n.gemm(x, 128, 10)


def odd_channels_b3(n):
    """Odd channel counts and resolution: 3->13->27->51, padded average pool, global max pool, Reshape, MatMul."""
    x = n.conv("input", 3, 13, 3, 2)
    x = n.conv(x, 13, 27, 5, 1, act="tanh")
    x = n.avgpool(x, 3, 2, 1)
    x = n.conv(x, 27, 51, 3, 2, act="sigmoid")
    x = n.gmp(x)
    shp = n.name("shape")
    n.inits.append(numpy_helper.from_array(np.array([3, 51], np.int64), shp))
    x = n.node("Reshape", [x, shp], "reshape")
    return n.node("MatMul", [x, n.weight((51, 7), 0.05)], "matmul")


def densenet_like(n):
    """Dense blocks (BN-ReLU-Conv, concat growth) with average-pool transitions."""
    x = n.conv("input", 3, 24, 3, 2)
    c = 24
    for block in range(3):
        for _ in range(3):
            y = n.conv(n.act(n.bn(x, c), "relu"), c, 12, 3)
            x, c = n.concat([x, y]), c + 12
        if block < 2:
            x = n.avgpool(n.conv(x, c, c // 2, 1, p=0), 2, 2)
            c //= 2
    return n.classifier(x, c, 10)


def fpn_like(n):
    """A feature pyramid: bottom-up strided convs, top-down Resize + lateral 1x1 adds, heads."""
    c1 = n.conv("input", 3, 32, 3, 2)
    c2 = n.conv(c1, 32, 64, 3, 2)
    c3 = n.conv(c2, 64, 128, 3, 2)
    p3 = n.conv(c3, 128, 64, 1, p=0, act=None)
    p2 = n.add(n.resize(p3), n.conv(c2, 64, 64, 1, p=0, act=None))
    p1 = n.add(n.resize(p2), n.conv(c1, 32, 64, 1, p=0, act=None))
    return n.conv(p1, 64, 5, 3, act=None)


def yolo_tiny(n):
    """YOLOv3-tiny-like: conv-BN-LeakyReLU, max pools, a route with upsample and concat."""
    def cbl(x, cin, cout, k=3):
        return n.conv_bn(x, cin, cout, k, p=k // 2, act="leaky")
    x = n.maxpool(cbl("input", 3, 16), 2, 2)
    x = n.maxpool(cbl(x, 16, 32), 2, 2)
    x = n.maxpool(cbl(x, 32, 64), 2, 2)
    route = cbl(x, 64, 128)
    x = n.maxpool(route, 2, 2)
    x = cbl(x, 128, 256)
    x = cbl(x, 256, 64, 1)
    up = n.resize(cbl(x, 64, 32, 1))
    x = cbl(n.concat([up, route]), 160, 128)
    return n.conv(x, 128, 27, 1, p=0, act=None)


def dilated_seg_b2(n):
    """Dilated convolutions with a sigmoid attention gate (activation times activation)."""
    x = n.conv("input", 3, 32, 3, 2)
    x = n.conv(x, 32, 32, 3, dil=2)
    x = n.conv(x, 32, 48, 3, dil=4)
    gate = n.conv(x, 48, 48, 1, p=0, act="sigmoid")
    x = n.mul(x, gate)
    return n.conv(x, 48, 6, 1, p=0, act=None)


def resnext_b4(n):
    """ResNeXt-style blocks at batch 4: grouped 3x3 (32 groups), BN explicit, residual adds."""
    x = n.conv_bn("input", 3, 64, 3, 2)
    cin = 64
    for width, cout, s in [(64, 128, 1), (128, 256, 2)]:
        y = n.conv_bn(x, cin, width, 1, p=0)
        y = n.conv_bn(y, width, width, 3, s, group=32)
        y = n.conv_bn(y, width, cout, 1, p=0, act=None)
        sc = n.conv_bn(x, cin, cout, 1, s, 0, act=None)
        x = n.act(n.add(y, sc), "relu")
        cin = cout
    return n.classifier(x, cout, 10)


def wide_stem_b5(n):
    """Batch 5, a 7x7 stride-2 stem with odd width 45, BN after an add, global max pool head."""
    x = n.maxpool(n.conv("input", 3, 45, 7, 2, 3), 3, 2, 1)
    y = n.conv(x, 45, 45, 3, act=None)
    x = n.act(n.bn(n.add(x, y), 45), "relu")
    x = n.conv(x, 45, 90, 3, 2)
    return n.gemm(n.flatten(n.gmp(x)), 90, 12)


def grouped_b2(n):
    """Grouped convolutions of 2 to 16 groups, 3x3 and 1x1, strides 1 and 2, no BN, at
    batch 2 (added after the first compile, to fit grouped convs on without ResNeXt)."""
    x = n.conv("input", 3, 32, 3, 2)
    x = n.conv(x, 32, 64, 3, 1, group=4)
    x = n.conv(x, 64, 96, 3, 2, group=8)
    x = n.conv(x, 96, 128, 1, p=0, group=2)
    x = n.conv(x, 128, 128, 3, 1, group=16)
    x = n.conv(x, 128, 160, 3, 2, group=32, act=None)
    return n.classifier(x, 160, 10)


# ---- round 2 (twenty-eighth session): all held out, written before any was compiled ----

def efficient_like(n):
    """EfficientNet-style MBConv: swish as x·sigmoid(x), depthwise 5x5, SE, odd widths 21 and 43."""
    def swish(x):
        return n.mul(x, n.act(x, "sigmoid"))
    x = swish(n.conv("input", 3, 21, 3, 2, act=None))
    cin = 21
    for exp, cout, k, s in [(63, 27, 3, 2), (81, 43, 5, 2), (129, 43, 5, 1)]:
        y = swish(n.conv(x, cin, exp, 1, p=0, act=None))
        y = swish(n.conv(y, exp, exp, k, s, group=exp, act=None))
        y = n.se(y, exp)
        y = n.conv(y, exp, cout, 1, p=0, act=None)
        x = n.add(x, y) if (s == 1 and cin == cout) else y
        cin = cout
    return n.classifier(x, cin, 10)


def preact_resnet_b3(n):
    """Pre-activation residual blocks (BN, ReLU, Conv) at batch 3, a 1x1 stride-2 shortcut."""
    x = n.conv("input", 3, 32, 3, 1)
    cin = 32
    for cout, s in [(32, 1), (64, 2), (64, 1), (128, 2)]:
        a = n.act(n.bn(x, cin), "relu")
        y = n.conv(a, cin, cout, 3, s)
        y = n.conv(n.act(n.bn(y, cout), "relu"), cout, cout, 3, 1, act=None)
        sc = x if (s == 1 and cin == cout) else n.conv(a, cin, cout, 1, s, p=0, act=None)
        x, cin = n.add(y, sc), cout
    return n.classifier(n.act(n.bn(x, cin), "relu"), cin, 10)


def hourglass_b2(n):
    """An hourglass at batch 2: strided convs down, ConvTranspose up with residual adds, 1x1 heads."""
    d1 = n.conv("input", 3, 24, 3, 2)
    d2 = n.conv(d1, 24, 48, 3, 2)
    d3 = n.conv(d2, 48, 96, 3, 2)
    u2 = n.add(n.deconv(d3, 96, 48, act=None), d2)
    u1 = n.add(n.deconv(n.act(u2, "relu"), 48, 24, act=None), d1)
    return n.conv(n.act(u1, "relu"), 24, 7, 1, p=0, act=None)


def pool_mix_b6(n):
    """Batch 6 at 48x48: parallel max and average pools concatenated, HardSwish, ReLU6."""
    x = n.conv("input", 3, 20, 3, 1, act="hswish")
    a = n.maxpool(x, 3, 1, 1)
    b = n.avgpool(x, 3, 1, 1)
    x = n.concat([a, b, x])
    x = n.conv(x, 60, 40, 3, 2, act="relu6")
    x = n.maxpool(x, 2, 2)
    x = n.conv(x, 40, 80, 3, 1, act="hswish")
    return n.classifier(x, 80, 16)


def deep_narrow_160(n):
    """Ten 3x3 convs of 8 to 24 channels at 160x160, ReLU6, one stride 2: long groups at high resolution."""
    x, cin = "input", 3
    for i, cout in enumerate([8, 8, 12, 12, 16, 16, 20, 20, 24, 24]):
        x = n.conv(x, cin, cout, 3, 2 if i == 4 else 1, act="relu6")
        cin = cout
    return n.conv(x, cin, 2, 1, p=0, act="sigmoid")


def ghost_like_99(n):
    """Ghost modules (a conv, a cheap depthwise conv of it, concatenated) at an odd 99x99, LeakyReLU."""
    def ghost(x, cin, cout):
        half = cout // 2
        p = n.conv(x, cin, half, 1, p=0, act="leaky")
        c = n.conv(p, half, half, 3, 1, group=half, act="leaky")
        return n.concat([p, c])
    x = n.conv("input", 3, 16, 3, 2)
    x = n.add(x, ghost(x, 16, 16))
    x = ghost(n.conv(x, 16, 32, 3, 2), 32, 48)
    x = n.maxpool(ghost(x, 48, 64), 2, 2)
    return n.classifier(x, 64, 5)


def wide_1x1_b8(n):
    """Batch 8 at 14x14, wide 1x1 convs (256 to 512 channels) and a Gemm head."""
    x = n.conv("input", 64, 256, 1, p=0)
    y = n.conv(x, 256, 512, 1, p=0)
    y = n.conv(y, 512, 256, 1, p=0, act=None)
    x = n.act(n.add(x, y), "relu")
    x = n.conv(x, 256, 384, 3, 2)
    return n.classifier(x, 384, 100)


def mobile_v1_b2(n):
    """MobileNetV1-style depthwise-separable blocks at batch 2, 112x112, ReLU6, stride-2 depthwise convs."""
    x = n.conv("input", 3, 32, 3, 2, act="relu6")
    cin = 32
    for cout, s in [(64, 1), (128, 2), (128, 1), (256, 2)]:
        x = n.conv(x, cin, cin, 3, s, group=cin, act="relu6")
        x = n.conv(x, cin, cout, 1, p=0, act="relu6")
        cin = cout
    return n.classifier(x, cin, 20)


def bottleneck_b4(n):
    """ResNet-50-style bottlenecks (1x1, 3x3, 1x1 at 4x expansion) with BatchNormalization, batch 4 at 64x64."""
    x = n.maxpool(n.conv_bn("input", 3, 32, 7, 2, p=3), 3, 2, 1)
    cin = 32
    for mid, s in [(16, 1), (32, 2)]:
        cout = 4 * mid
        y = n.conv_bn(x, cin, mid, 1, p=0)
        y = n.conv_bn(y, mid, mid, 3, s)
        y = n.conv_bn(y, mid, cout, 1, p=0, act=None)
        sc = n.conv_bn(x, cin, cout, 1, s, p=0, act=None)
        x, cin = n.act(n.add(y, sc), "relu"), cout
    return n.classifier(x, cin, 10)


def unet_deep_b2(n):
    """A three-level U-Net at batch 2, 96x96: max pools down, nearest resize up, concatenated skips, a sigmoid map."""
    e1 = n.conv(n.conv("input", 3, 16, 3), 16, 16, 3)
    e2 = n.conv(n.maxpool(e1, 2, 2), 16, 32, 3)
    e3 = n.conv(n.maxpool(e2, 2, 2), 32, 64, 3)
    d2 = n.conv(n.concat([n.resize(e3), e2]), 96, 32, 3)
    d1 = n.conv(n.concat([n.resize(d2), e1]), 48, 16, 3)
    return n.conv(d1, 16, 1, 1, p=0, act="sigmoid")


def tanh_gates_77(n):
    """An odd 77x77: tanh and hard-sigmoid gates multiplied in, a 3x3/2 average pool, a global max pool head."""
    x = n.conv("input", 3, 24, 3, 2, act="tanh")
    g = n.conv(x, 24, 24, 1, p=0, act="hsigmoid")
    x = n.mul(x, g)
    x = n.avgpool(n.conv(x, 24, 40, 3, 1, act="tanh"), 3, 2, 1)
    x = n.conv(x, 40, 56, 3, 1)
    return n.gemm(n.flatten(n.gmp(x)), 56, 12)


def aspp_like(n):
    """ASPP-style parallel dilated 3x3 convs (dilation 1, 2, 4) and a 1x1 branch concatenated, at 80x80."""
    x = n.conv(n.conv("input", 3, 32, 3, 2), 32, 48, 3)
    branches = [n.conv(x, 48, 24, 3, dil=d) for d in (1, 2, 4)] + [n.conv(x, 48, 24, 1, p=0)]
    x = n.conv(n.concat(branches), 96, 48, 1, p=0)
    return n.conv(n.resize(x), 48, 5, 1, p=0, act=None)


def grouped_leaky_b7(n):
    """Batch 7 (odd) at 40x40: grouped convs of 4 groups, LeakyReLU, max pools and a Gemm head."""
    x = n.conv("input", 3, 32, 3, 1, act="leaky")
    x = n.conv(x, 32, 64, 3, 1, group=4, act="leaky")
    x = n.maxpool(x, 2, 2)
    x = n.conv(x, 64, 64, 3, 1, group=4, act="leaky")
    x = n.conv(n.maxpool(x, 2, 2), 64, 96, 1, p=0, act="leaky")
    return n.classifier(x, 96, 8)


def inception_pool_b3(n):
    """Inception-v1 modules at batch 3 (112x112 in, 28x28 inside): 1x1, 3x3 and 5x5 branches and a 3x3 max pool then 1x1, from one input."""
    def module(x, cin, c1, c3, c5, cp):
        a = n.conv(x, cin, c1, 1, p=0)
        b = n.conv(n.conv(x, cin, c3 // 2, 1, p=0), c3 // 2, c3, 3)
        c = n.conv(n.conv(x, cin, c5 // 2, 1, p=0), c5 // 2, c5, 5)
        d = n.conv(n.maxpool(x, 3, 1, 1), cin, cp, 1, p=0)
        return n.concat([a, b, c, d])
    x = n.maxpool(n.conv("input", 3, 32, 3, 2), 3, 2, 1)
    x = module(x, 32, 16, 32, 8, 8)
    x = module(x, 64, 32, 48, 16, 16)
    return n.classifier(x, 112, 10)


def dilated_res_64(n):
    """Residual blocks of dilated 3x3 convs (dilation 2, then 4) added to their input, at 64x64, then a 1x1 head."""
    x = n.conv(n.conv("input", 3, 24, 3, 2), 24, 32, 3)
    for d in (2, 2, 4):
        y = n.conv(n.conv(x, 32, 32, 3, dil=d), 32, 32, 3, dil=d, act=None)
        x = n.act(n.add(x, y), "relu")
    return n.conv(x, 32, 6, 1, p=0, act=None)


def deconv_skip_b2(n):
    """Batch 2 at 96x96: stride-2 convs down, 2x2 transposed convs up, skips added, a tanh map out."""
    e1 = n.conv("input", 3, 16, 3)
    e2 = n.conv(e1, 16, 32, 3, 2)
    e3 = n.conv(e2, 32, 64, 3, 2)
    d2 = n.add(n.deconv(e3, 64, 32), e2)
    d1 = n.add(n.deconv(n.conv(d2, 32, 32, 3), 32, 16), e1)
    return n.conv(d1, 16, 3, 3, act="tanh")


def hswish_se_90(n):
    """MobileNetV3-style inverted residuals at 90x90: 1x1 expand, depthwise 3x3 or 5x5, SE with a hard-sigmoid gate, HardSwish."""
    x = n.conv("input", 3, 16, 3, 2, act="hswish")
    cin = 16
    for cout, k, s, exp, se in [(16, 3, 1, 32, False), (24, 5, 2, 64, True), (24, 3, 1, 72, True)]:
        y = n.conv(x, cin, exp, 1, p=0, act="hswish")
        y = n.conv(y, exp, exp, k, s, group=exp, act="hswish")
        if se:
            y = n.se(y, exp, gate="hsigmoid")
        y = n.conv(y, exp, cout, 1, p=0, act=None)
        x = n.add(x, y) if s == 1 and cin == cout else y
        cin = cout
    return n.classifier(x, cin, 7)


def wide_shallow_224(n):
    """A large 224x224 input with few channels: 5x5 convs, a stride-2 conv, 2x2 average pools, a sigmoid map."""
    x = n.conv("input", 3, 8, 5)
    x = n.conv(x, 8, 12, 5, 2)
    x = n.avgpool(n.conv(x, 12, 16, 3), 2, 2)
    x = n.conv(x, 16, 16, 5)
    return n.conv(n.avgpool(x, 2, 2), 16, 1, 1, p=0, act="sigmoid")


def dense_avg_b5(n):
    """Batch 5 at 40x40: dense blocks (each layer's output concatenated to its input) with BN-ReLU-conv and 2x2 average pool transitions."""
    def layer(x, cin, g):
        y = n.act(n.bn(x, cin), "relu")
        return n.concat([x, n.conv(y, cin, g, 3)])
    x, c = n.conv("input", 3, 16, 3), 16
    for block in range(2):
        for _ in range(3):
            x, c = layer(x, c, 8), c + 8
        if block == 0:
            x = n.avgpool(n.conv(x, c, c // 2, 1, p=0), 2, 2)
            c //= 2
    return n.classifier(x, c, 10)


def res_gmp_b6(n):
    """Batch 6 at 56x56: basic residual blocks of 40 and 80 channels (a strided 1x1 shortcut), a global max pool classifier."""
    def block(x, cin, cout, s):
        y = n.conv(n.conv(x, cin, cout, 3, s), cout, cout, 3, act=None)
        short = x if s == 1 and cin == cout else n.conv(x, cin, cout, 1, s, p=0, act=None)
        return n.act(n.add(y, short), "relu")
    x = n.conv("input", 3, 40, 3)
    x = block(block(x, 40, 40, 1), 40, 80, 2)
    return n.gemm(n.flatten(n.gmp(block(x, 80, 80, 1))), 80, 12)


def sigmoid_seg_160(n):
    """A 160x160 segmentation net: two stride-2 stages, nearest upsampling with concatenated skips, a 2-channel sigmoid map out."""
    e1 = n.conv(n.conv("input", 3, 12, 3), 12, 12, 3)
    e2 = n.conv(e1, 12, 24, 3, 2)
    e3 = n.conv(e2, 24, 48, 3, 2)
    d2 = n.conv(n.concat([n.resize(e3), e2]), 72, 24, 3)
    d1 = n.conv(n.concat([n.resize(d2), e1]), 36, 12, 3)
    return n.conv(d1, 12, 2, 1, p=0, act="sigmoid")


def leaky_pyramid_b3(n):
    """Batch 3 at 72x72: pairs of 3x3 convs with leaky ReLU, 2x2 max pools between, 24, 48 and 96 channels, a 1x1 head."""
    x, c = "input", 3
    for cout in (24, 48, 96):
        x = n.conv(n.conv(x, c, cout, 3, act="leaky"), cout, cout, 3, act="leaky")
        if cout != 96:
            x = n.maxpool(x, 2, 2)
        c = cout
    return n.conv(x, 96, 10, 1, p=0, act=None)


def clip6_dw_b2(n):
    """MobileNetV2 inverted residuals with ReLU6 (Clip) at batch 2, 96x96: expand 1x1, depthwise 3x3 (stride 2 twice), project, residual adds."""
    x = n.conv("input", 3, 16, 3, 2, act="relu6")
    cin = 16
    for cout, s, t in [(16, 1, 4), (24, 2, 4), (24, 1, 4), (40, 2, 6), (40, 1, 6)]:
        e = cin * t
        y = n.conv(x, cin, e, 1, p=0, act="relu6")
        y = n.conv(y, e, e, 3, s, group=e, act="relu6")
        y = n.conv(y, e, cout, 1, p=0, act=None)
        x = n.add(x, y) if s == 1 and cin == cout else y
        cin = cout
    return n.classifier(x, cin, 10)


def tanh_deconv_b4(n):
    """Batch 4 at 48x48: a strided encoder, 2x2 transposed convs back up with BN, a 3-channel tanh image out."""
    x = n.conv(n.conv("input", 3, 32, 3, 2), 32, 64, 3, 2)
    x = n.act(n.bn(n.deconv(x, 64, 32, act=None), 32), "relu")
    x = n.act(n.bn(n.deconv(x, 32, 16, act=None), 16), "relu")
    return n.conv(x, 16, 3, 3, act="tanh")


def bn_odd_1x1_128(n):
    """Conv-BN-ReLU (training-mode export) at 128x128 with odd channels (27, 54, 81): 1x1 and 3x3 alternating, one stride-2 step, a classifier."""
    x = n.conv_bn("input", 3, 27, 3, 2)
    x = n.conv_bn(n.conv_bn(x, 27, 54, 1, p=0), 54, 54, 3)
    x = n.conv_bn(n.conv_bn(x, 54, 81, 1, p=0), 81, 81, 3, 2)
    return n.classifier(n.conv_bn(x, 81, 27, 1, p=0), 27, 5)


def conv_hw(n, x, cin, cout, kh, kw, act="relu"):
    """A kh x kw conv, stride 1, padded to keep the size (Inception-v3's factorised 1x7 and 7x1)."""
    w = n.weight((cout, cin, kh, kw), np.sqrt(2.0 / (cin * kh * kw)))
    y = n.node("Conv", [x, w, n.weight((cout,), 0.01)], "conv", kernel_shape=[kh, kw],
               pads=[kh // 2, kw // 2, kh // 2, kw // 2])
    return n.act(y, act)


def factorized_b2(n):
    """Batch 2 at 64x64: Inception-v3 factorised branches (1x7 then 7x1, 1x3 then 3x1), a 3x3/1 average pool branch, concatenated, twice."""
    x = n.conv("input", 3, 32, 3, 2)
    for c in (32, 48):
        a = n.conv(x, c, 16, 1, p=0)
        b = conv_hw(n, conv_hw(n, n.conv(x, c, 16, 1, p=0), 16, 16, 1, 7), 16, 16, 7, 1)
        d = conv_hw(n, conv_hw(n, n.conv(x, c, 8, 1, p=0), 8, 8, 1, 3), 8, 8, 3, 1)
        e = n.conv(n.avgpool(x, 3, 1, 1), c, 8, 1, p=0)
        x = n.concat([a, b, d, e])
    return n.conv(x, 48, 6, 1, p=0, act=None)


def deconv3_op_b3(n):
    """Batch 3 at 32x32: 3x3 stride-2 transposed convs with padding 1 and output padding 1 (torch's exact 2x), ReLU, a sigmoid map."""
    x = n.conv(n.conv("input", 3, 24, 3, 2), 24, 48, 3, 2)
    for cin, cout in ((48, 24), (24, 12)):
        w = n.weight((cin, cout, 3, 3), np.sqrt(1.0 / (cin * 9)))
        x = n.node("ConvTranspose", [x, w, n.weight((cout,), 0.01)], "deconv", kernel_shape=[3, 3],
                   strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])
        x = n.act(x, "relu")
    return n.conv(x, 12, 1, 3, act="sigmoid")


def ceil_stem_57(n):
    """An odd 57x57: a 7x7/2 stem, a 3x3/2 ceil-mode max pool, basic residual blocks, a 2x2/2 ceil-mode average pool, a Gemm head."""
    x = n.conv("input", 3, 32, 7, 2, p=3)
    x = n.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    for _ in range(2):
        x = n.act(n.add(n.conv(n.conv(x, 32, 32, 3), 32, 32, 3, act=None), x), "relu")
    x = n.node("AveragePool", [x], "avgpool", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    return n.classifier(x, 32, 20)


def glu_gates_b4(n):
    """Batch 4 at 28x28, 96 to 128 channels: GLU-style gates (a conv times the sigmoid of another), concatenated, HardSwish, a residual add, a global max pool and MatMul head."""
    x = n.conv("input", 3, 64, 3)
    for c in (64, 64):
        g1 = n.mul(n.conv(x, c, 48, 3, act=None), n.conv(x, c, 48, 3, act="sigmoid"))
        g2 = n.mul(n.conv(x, c, 16, 1, p=0, act=None), n.conv(x, c, 16, 1, p=0, act="tanh"))
        y = n.conv(n.concat([g1, g2]), 64, 64, 1, p=0, act="hswish")
        x = n.add(x, y)
    shape = n.name("shape")
    n.inits.append(numpy_helper.from_array(np.array([4, 64], np.int64), shape))
    flat = n.node("Reshape", [n.gmp(x), shape], "reshape")
    return n.node("MatMul", [flat, n.weight((64, 9), 0.05)], "matmul")


def resize4_fpn_192(n):
    """A 192x192 feature pyramid: three stride-2 stages, the deepest upsampled 4x and the middle 2x onto the shallowest, 1x1 laterals added, LeakyReLU."""
    c1 = n.conv(n.conv("input", 3, 16, 3, 2, act="leaky"), 16, 16, 3, act="leaky")
    c2 = n.conv(c1, 16, 32, 3, 2, act="leaky")
    c3 = n.conv(c2, 32, 64, 3, 2, act="leaky")
    p = n.add(n.conv(c1, 16, 24, 1, p=0, act=None), n.resize(n.conv(c3, 64, 24, 1, p=0, act=None), 4))
    p = n.add(p, n.resize(n.conv(c2, 32, 24, 1, p=0, act=None), 2))
    return n.conv(p, 24, 4, 3, act=None)


def dw5_se_b8(n):
    """Batch 8 at 28x28: depthwise 5x5 stride-1 blocks with a hard-sigmoid SE, ReLU6, 1x1 projections, residual adds, a classifier."""
    x, cin = n.conv("input", 3, 24, 3, act="relu6"), 24
    for cout in (24, 40, 40):
        e = x if cout == cin else n.conv(x, cin, cout, 1, p=0, act="relu6")
        y = n.conv(e, cout, cout, 5, group=cout, act="relu6")
        y = n.conv(n.se(y, cout, gate="hsigmoid"), cout, cout, 1, p=0, act=None)
        x, cin = n.add(e, y), cout
    return n.classifier(x, 40, 10)


def dual_pool_head_b3(n):
    """Batch 3 at 64x64: conv stages, a 3x3/2 average pool counting its padding, then the global max and average pools concatenated into a Gemm head."""
    x = n.conv(n.conv("input", 3, 24, 3), 24, 48, 3, 2)
    x = n.node("AveragePool", [x], "avgpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
               count_include_pad=1)
    x = n.conv(x, 48, 64, 3)
    return n.gemm(n.flatten(n.concat([n.gmp(x), n.gap(x)])), 128, 7)


def deconv4_gan_b2(n):
    """A DCGAN-style generator at batch 2: 4x4 stride-2 transposed convs with padding 1, BN and LeakyReLU, 8x8 up to 64x64, a tanh image."""
    x = n.conv("input", 16, 64, 1, p=0, act="leaky")
    for cin, cout in ((64, 32), (32, 16)):
        w = n.weight((cin, cout, 4, 4), np.sqrt(1.0 / (cin * 16)))
        x = n.node("ConvTranspose", [x, w], "deconv", kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1])
        x = n.act(n.bn(x, cout), "leaky")
    w = n.weight((16, 3, 4, 4), np.sqrt(1.0 / (16 * 16)))
    x = n.node("ConvTranspose", [x, w], "deconv", kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1])
    return n.act(x, "tanh")


def dil3_gate_48(n):
    """At 48x48: dilation-3 and dilation-1 3x3 branches beside a 1x1, concatenated, gated by a sigmoid of a 1x1 conv, a 1x1 head."""
    x = n.conv("input", 3, 32, 3)
    a = n.conv(x, 32, 16, 3, dil=3)
    b = n.conv(x, 32, 16, 3)
    c = n.conv(x, 32, 16, 1, p=0)
    y = n.concat([a, b, c])
    gate = n.conv(y, 48, 48, 1, p=0, act="sigmoid")
    return n.conv(n.mul(y, gate), 48, 5, 1, p=0, act=None)


def tiny_dw_66(n):
    """At 66x66: depthwise 3x3 on 8 and 12 channels (stride 1 and 2), 1x1 projections, HardSwish, a global average pool head."""
    x = n.conv("input", 3, 8, 3, act="hswish")
    for cin, cout, s in ((8, 12, 1), (12, 16, 2), (16, 16, 1)):
        y = n.conv(x, cin, cin, 3, s, group=cin, act="hswish")
        y = n.conv(y, cin, cout, 1, p=0, act=None)
        x = n.add(x, y) if cin == cout and s == 1 else y
    return n.classifier(x, 16, 3)


def wide_head_7_b4(n):
    """Batch 4 at 28x28 down to 7x7: 256-channel 1x1 and 3x3 convs on the 7x7 map, a residual add, a 1000-way Gemm head."""
    x = n.conv(n.conv("input", 3, 64, 3, 2), 64, 128, 3, 2)
    x = n.conv(x, 128, 256, 1, p=0)
    y = n.conv(n.conv(x, 256, 64, 1, p=0), 64, 256, 3, act=None)
    return n.classifier(n.act(n.add(x, y), "relu"), 256, 1000)


def topdown_tanh_b2(n):
    """Batch 2 at 80x80: three strided levels, each deeper one resized 2x and summed into the one above through 1x1 laterals, a tanh map."""
    c1 = n.conv("input", 3, 16, 3, 2)
    c2 = n.conv(c1, 16, 32, 3, 2)
    c3 = n.conv(c2, 32, 64, 3, 2)
    p2 = n.add(n.conv(c2, 32, 32, 1, p=0, act=None), n.resize(n.conv(c3, 64, 32, 1, p=0, act=None)))
    p1 = n.add(n.conv(c1, 16, 32, 1, p=0, act=None), n.resize(p2))
    return n.conv(n.act(p1, "relu"), 32, 2, 3, act="tanh")


def mbv2_tail_b2(n):
    """Batch 2 at 96x96: inverted residuals (1x1 expand by 6, ReLU6, depthwise 3x3, 1x1 project), two of them stride 2, a 1x1 to 1280 and a 1000-way Gemm head."""
    x, cin = n.conv("input", 3, 16, 3, 2, act="relu6"), 16
    for cout, s in ((24, 2), (24, 1), (32, 2), (32, 1)):
        e = n.conv(x, cin, cin * 6, 1, p=0, act="relu6")
        e = n.conv(e, cin * 6, cin * 6, 3, s, group=cin * 6, act="relu6")
        y = n.conv(e, cin * 6, cout, 1, p=0, act=None)
        x, cin = (n.add(x, y) if s == 1 and cin == cout else y), cout
    return n.classifier(n.conv(x, 32, 1280, 1, p=0, act="relu6"), 1280, 1000)


def patch4_mlp_128(n):
    """At 128x128: a 4x4 stride-4 patch stem with BatchNormalization, then channel MLPs (1x1 up by 4, HardSwish, 1x1 down) with residual adds, a 3x3 depthwise mixer, a classifier."""
    x = n.act(n.bn(n.conv("input", 3, 48, 4, 4, p=0, act=None), 48), "relu")
    for _ in range(2):
        x = n.add(x, n.conv(x, 48, 48, 3, group=48, act=None))
        y = n.conv(n.conv(x, 48, 192, 1, p=0, act="hswish"), 192, 48, 1, p=0, act=None)
        x = n.add(x, y)
    return n.classifier(x, 48, 10)


def sppf_b5(n):
    """Batch 5 at 40x40: a conv trunk, then SPPF: three 5x5 stride-1 max pools in a row, all four maps concatenated, a 1x1 fuse, a sigmoid map."""
    x = n.conv(n.conv("input", 3, 32, 3, 2, act="leaky"), 32, 64, 3, act="leaky")
    x = n.conv(x, 64, 32, 1, p=0, act="leaky")
    p1 = n.maxpool(x, 5, 1, 2)
    p2 = n.maxpool(p1, 5, 1, 2)
    p3 = n.maxpool(p2, 5, 1, 2)
    y = n.conv(n.concat([x, p1, p2, p3]), 128, 64, 1, p=0, act="leaky")
    return n.conv(y, 64, 3, 1, p=0, act="sigmoid")


def k5_odd_45(n):
    """At 45x45: 5x5 convs on 20 and 36 channels, a 3x3/2 max pool, a tanh gate multiplying its own map, a residual add, a classifier."""
    x = n.conv(n.conv("input", 3, 20, 5), 20, 36, 5)
    x = n.maxpool(x, 3, 2)
    g = n.conv(x, 36, 36, 1, p=0, act="tanh")
    x = n.add(x, n.mul(n.conv(x, 36, 36, 5, act=None), g))
    return n.classifier(n.act(x, "relu"), 36, 6)


def fc_chain_b6(n):
    """Batch 6 at 32x32: a conv trunk down to 4x4x32, flattened into two Gemms in a row (512 to 256 with ReLU, 256 to 100)."""
    x = n.conv(n.conv("input", 3, 16, 3, 2), 16, 32, 3, 2)
    x = n.maxpool(n.conv(x, 32, 32, 3), 2, 2)
    h = n.act(n.gemm(n.flatten(x), 512, 256), "relu")
    return n.gemm(h, 256, 100)


def dw_updown_b3(n):
    """Batch 3 at 64x64: depthwise 3x3 stride-2 steps down (each with a 1x1), then 2x2 transposed convs back up, skips added, a 1x1 head."""
    s1 = n.conv("input", 3, 24, 3)
    d1 = n.conv(n.conv(s1, 24, 24, 3, 2, group=24, act="relu"), 24, 40, 1, p=0)
    d2 = n.conv(n.conv(d1, 40, 40, 3, 2, group=40, act="relu"), 40, 64, 1, p=0)
    u1 = n.add(n.deconv(d2, 64, 40), d1)
    u0 = n.add(n.deconv(u1, 40, 24), s1)
    return n.conv(u0, 24, 2, 1, p=0, act=None)


def vgg_head_b2(n):
    """Batch 2 at 32x32: two 3x3 conv pairs with max pools, flattened 8x8x32 into a 2048 -> 512 Gemm with ReLU and a 512 -> 10 Gemm."""
    x = n.maxpool(n.conv(n.conv("input", 3, 16, 3), 16, 16, 3), 2, 2)
    x = n.maxpool(n.conv(n.conv(x, 16, 32, 3), 32, 32, 3), 2, 2)
    h = n.act(n.gemm(n.flatten(x), 2048, 512), "relu")
    return n.gemm(h, 512, 10)


def odd_1x1_chain_60(n):
    """At 60x60: a stride-2 stem, then 1x1 chains through odd widths (21, 45, 13, 37) with residual adds where widths match, a 3x3 between, a classifier."""
    x = n.conv("input", 3, 21, 3, 2)
    y = n.conv(n.conv(x, 21, 45, 1, p=0), 45, 21, 1, p=0, act=None)
    x = n.act(n.add(x, y), "relu")
    x = n.conv(x, 21, 13, 3)
    y = n.conv(n.conv(x, 13, 37, 1, p=0), 37, 13, 1, p=0, act=None)
    x = n.act(n.add(x, y), "relu")
    return n.classifier(x, 13, 5)


def concat_pyramid_96(n):
    """At 96x96: three 3x3 stride-2 levels, the deeper two resized 2x and 4x and concatenated with the shallowest, a 1x1 fuse and a sigmoid map."""
    c1 = n.conv("input", 3, 16, 3, 2)
    c2 = n.conv(c1, 16, 24, 3, 2)
    c3 = n.conv(c2, 24, 32, 3, 2)
    y = n.concat([c1, n.resize(c2, 2), n.resize(c3, 4)])
    return n.conv(y, 72, 1, 1, p=0, act="sigmoid")


def group4_b3(n):
    """Batch 3 at 48x48: 3x3 convs of 4 groups on 32 and 64 channels with channel-mixing 1x1s, a max pool, residual adds, a classifier."""
    x = n.conv("input", 3, 32, 3)
    y = n.conv(n.conv(x, 32, 32, 3, group=4), 32, 32, 1, p=0, act=None)
    x = n.maxpool(n.act(n.add(x, y), "relu"), 2, 2)
    x = n.conv(x, 32, 64, 1, p=0)
    y = n.conv(n.conv(x, 64, 64, 3, group=4), 64, 64, 1, p=0, act=None)
    return n.classifier(n.act(n.add(x, y), "relu"), 64, 12)


def narrow_7x7_b4(n):
    """Batch 4 at 56x56 down to 7x7: 1x1 bottlenecks 256 -> 32 -> 256 with a 3x3 in between on the 7x7 map, two of them, a global average pool and a Gemm."""
    x = n.conv(n.conv(n.conv("input", 3, 32, 3, 2), 32, 64, 3, 2), 64, 128, 3, 2)
    x = n.conv(x, 128, 256, 1, p=0)
    for _ in range(2):
        y = n.conv(n.conv(n.conv(x, 256, 32, 1, p=0), 32, 32, 3), 32, 256, 1, p=0, act=None)
        x = n.act(n.add(x, y), "relu")
    return n.classifier(x, 256, 100)


def hsig_u_56(n):
    """At 56x56: a two-level U (stride-2 convs down, 2x2 transposed convs up) whose skips are gated by hard sigmoids of 1x1 convs, a 1x1 head."""
    s1 = n.conv("input", 3, 16, 3)
    s2 = n.conv(s1, 16, 32, 3, 2)
    b = n.conv(s2, 32, 48, 3, 2)
    u2 = n.deconv(b, 48, 32)
    u2 = n.add(u2, n.mul(s2, n.conv(s2, 32, 32, 1, p=0, act="hsigmoid")))
    u1 = n.deconv(u2, 32, 16)
    u1 = n.add(u1, n.mul(s1, n.conv(s1, 16, 16, 1, p=0, act="hsigmoid")))
    return n.conv(u1, 16, 3, 1, p=0, act=None)


def csp_leaky_b2(n):
    """CSP stages: a stride-2 conv, two 1x1 halves, one through leaky residual blocks, concatenated and fused by a 1x1."""
    x = n.conv("input", 3, 24, 3, 2, act="leaky")
    for cin, cout in [(24, 48), (48, 96)]:
        x = n.conv(x, cin, cout, 3, 2, act="leaky")
        a = n.conv(x, cout, cout // 2, 1, p=0, act="leaky")
        b = n.conv(x, cout, cout // 2, 1, p=0, act="leaky")
        for _ in range(2):
            y = n.conv(n.conv(b, cout // 2, cout // 2, 1, p=0, act="leaky"), cout // 2, cout // 2, 3, act=None)
            b = n.act(n.add(b, y), "leaky")
        x = n.conv(n.concat([a, b]), cout, cout, 1, p=0, act="leaky")
    return n.classifier(x, 96, 20)


def bn_relu6_ir_63(n):
    """On an odd 63x63 map: inverted residuals with explicit BN and ReLU6 (expand 1x1, depthwise 3x3, project 1x1), stride-2 depthwise between."""
    x = n.conv_bn("input", 3, 16, 3, 2, act="relu6")
    for cin, cout, s in [(16, 24, 2), (24, 24, 1), (24, 40, 2), (40, 40, 1)]:
        e = cin * 4
        y = n.conv_bn(x, cin, e, 1, p=0, act="relu6")
        y = n.conv_bn(y, e, e, 3, s, group=e, act="relu6")
        y = n.conv_bn(y, e, cout, 1, p=0, act=None)
        x = n.add(x, y) if (s == 1 and cin == cout) else y
    return n.classifier(x, 40, 10)


def avg3_branch_b4(n):
    """At batch 4: blocks of a 1x1, a 3x3 and a stride-1 padded 3x3 average pool + 1x1 branch, concatenated; max pools between."""
    x = n.conv("input", 3, 32, 3)
    for cin, c in [(32, 16), (48, 24)]:
        a = n.conv(x, cin, c, 1, p=0)
        b = n.conv(n.conv(x, cin, c, 1, p=0), c, c, 3)
        d = n.conv(n.avgpool(x, 3, 1, 1), cin, c, 1, p=0)
        x = n.maxpool(n.concat([a, b, d]), 2, 2)
        if cin == 32:
            x = n.conv(x, 3 * c, 48, 1, p=0)
    return n.classifier(x, 72, 12)


def tanh_topdown_gmp_b3(n):
    """At batch 3: three stride-2 levels, a top-down path (nearest 2x resize, add the lateral 1x1, tanh), a global max pool head."""
    c1 = n.conv("input", 3, 16, 3, 2)
    c2 = n.conv(c1, 16, 32, 3, 2)
    c3 = n.conv(c2, 32, 64, 3, 2)
    p3 = n.conv(c3, 64, 32, 1, p=0, act="tanh")
    p2 = n.act(n.add(n.resize(p3), n.conv(c2, 32, 32, 1, p=0, act=None)), "tanh")
    p1 = n.act(n.add(n.resize(n.conv(p2, 32, 16, 1, p=0, act=None)), n.conv(c1, 16, 16, 1, p=0, act=None)), "tanh")
    h = n.conv(p1, 16, 24, 3, 2)
    return n.gemm(n.flatten(n.gmp(h)), 24, 7)


def dil124_odd_72(n):
    """At 72x72: parallel 3x3 convs of dilation 1, 2 and 4 with 19, 23 and 29 channels, concatenated, twice."""
    x = n.conv("input", 3, 21, 3, 2)
    cin = 21
    for _ in range(2):
        bs = [n.conv(x, cin, c, 3, dil=d) for c, d in [(19, 1), (23, 2), (29, 4)]]
        x = n.conv(n.concat(bs), 71, 37, 1, p=0)
        cin = 37
    return n.conv(x, 37, 5, 1, p=0, act=None)


def se_hswish_b6(n):
    """At batch 6 on 28x28: hard-swish convs and depthwise convs with hard-sigmoid SE gates, odd widths 40 and 72."""
    x = n.conv("input", 3, 40, 3, act="hswish")
    for cin, cout in [(40, 40), (40, 72)]:
        y = n.conv(x, cin, cin, 3, group=cin, act="hswish")
        y = n.se(y, cin, gate="hsigmoid")
        y = n.conv(y, cin, cout, 1, p=0, act=None)
        x = n.add(x, y) if cin == cout else n.maxpool(y, 2, 2)
    return n.classifier(x, 72, 10)


def bn_after_relu_b3(n):
    """At batch 3 on 52x52: conv, ReLU, then BN (a per-channel scale and bias) at widths 20, 36 and 52, stride-2 between."""
    x = n.bn(n.conv("input", 3, 20, 3), 20)
    for cin, cout in [(20, 36), (36, 52)]:
        x = n.bn(n.conv(x, cin, cout, 3, 2), cout)
        x = n.bn(n.conv(x, cout, cout, 3), cout)
    return n.classifier(x, 52, 9)


def psp_pool_64(n):
    """A pyramid-pooling head on a 16x16 map: average pools of 4 and 8 and a global pool, 1x1 convs, nearest resizes by 4, 8 and 16, concatenated."""
    x = n.conv("input", 3, 24, 3, 2)
    x = n.conv(x, 24, 48, 3, 2)
    x = n.conv(x, 48, 64, 3, 2)
    b = [x]
    for k in (4, 8):
        b.append(n.resize(n.conv(n.avgpool(x, k, k), 64, 16, 1, p=0), k))
    b.append(n.resize(n.conv(n.gap(x), 64, 16, 1, p=0), 16))
    return n.conv(n.concat(b), 112, 6, 1, p=0, act=None)


def resnetd_avg_b7(n):
    """At batch 7: ResNet-D blocks whose stride-2 shortcut is a 2x2 average pool then a 1x1 conv."""
    x = n.conv("input", 3, 32, 3)
    for cin, cout in [(32, 48), (48, 80)]:
        y = n.conv(n.conv(x, cin, cout, 3, 2), cout, cout, 3, act=None)
        s = n.conv(n.avgpool(x, 2, 2), cin, cout, 1, p=0, act=None)
        x = n.act(n.add(y, s), "relu")
    return n.classifier(x, 80, 11)


def convnext_dw7_81(n):
    """On an odd 81x81 map: a 3x3/3 patch stem, then ConvNeXt-style blocks (7x7 depthwise, BN, 1x1 up by 4, ReLU, 1x1 down, residual add)."""
    x = n.conv("input", 3, 32, 3, 3, p=0, act=None)
    for _ in range(2):
        y = n.bn(n.conv(x, 32, 32, 7, group=32, act=None), 32)
        y = n.conv(n.conv(y, 32, 128, 1, p=0), 128, 32, 1, p=0, act=None)
        x = n.add(x, y)
    return n.classifier(x, 32, 10)


def stem_s3_b5(n):
    """At batch 5 on 60x60: a 3x3 stride-3 stem, a 3x3 stride-3 max pool, then 3x3 convs of 40 and 56 channels."""
    x = n.conv("input", 3, 24, 3, 3, p=0)
    x = n.maxpool(x, 3, 3)
    x = n.conv(x, 24, 40, 3)
    x = n.conv(x, 40, 56, 3)
    return n.classifier(x, 56, 8)


def group2_odd_b2(n):
    """At batch 2 on 70x70: grouped 3x3 convs of 2 groups of 18 and 5x5 convs, a sigmoid map out."""
    x = n.conv("input", 3, 36, 5, 2)
    for _ in range(2):
        y = n.conv(x, 36, 36, 3, group=2)
        x = n.add(x, n.conv(y, 36, 36, 5, act=None))
    return n.conv(x, 36, 1, 1, p=0, act="sigmoid")


def dil2_seg_b3(n):
    """At batch 3 on 40x40: a stride-2 stem, two dilation-2 3x3 convs, a 1x1 head of 2 channels through a sigmoid, resized back by 2."""
    x = n.conv("input", 3, 32, 3, 2)
    x = n.conv(x, 32, 32, 3, dil=2)
    x = n.conv(x, 32, 48, 3, dil=2)
    return n.resize(n.conv(x, 48, 2, 1, p=0, act="sigmoid"), 2)


def leaky_fc2_b8(n):
    """At batch 8 on 32x32: LeakyReLU convs of 24 and 48, a max pool, a global pool, then two fully connected layers with a ReLU between."""
    x = n.conv("input", 3, 24, 3, act="leaky")
    x = n.maxpool(n.conv(x, 24, 48, 3, 2, act="leaky"), 2, 2)
    x = n.act(n.gemm(n.flatten(n.gap(x)), 48, 64), "relu")
    return n.gemm(x, 64, 10)


def avg5_tanh_75(n):
    """On an odd 75x75 map: tanh convs around a 5x5 stride-1 average pool and a 3x3 stride-2 one."""
    x = n.conv("input", 3, 28, 3, 2, act="tanh")
    x = n.avgpool(x, 5, 1, 2)
    x = n.conv(x, 28, 44, 3, 2, act="tanh")
    x = n.avgpool(x, 3, 2, 1)
    return n.classifier(x, 44, 12)


def hswish_unet_b2(n):
    """At batch 2 on 64x64: a two-level U-Net with hard-swish convs, max pools down, nearest resizes up and skip concats, a 1x1 head."""
    e1 = n.conv(n.conv("input", 3, 16, 3, act="hswish"), 16, 16, 3, act="hswish")
    e2 = n.conv(n.maxpool(e1, 2, 2), 16, 32, 3, act="hswish")
    b = n.conv(n.maxpool(e2, 2, 2), 32, 48, 3, act="hswish")
    d2 = n.conv(n.concat([n.resize(b), e2]), 80, 32, 3, act="hswish")
    d1 = n.conv(n.concat([n.resize(d2), e1]), 48, 16, 3, act="hswish")
    return n.conv(d1, 16, 3, 1, p=0, act=None)


def mixed_k_add_b3(n):
    """At batch 3 on 48x48: 1x1, 3x3, 5x5 and 7x7 branches of 24 channels summed, a ReLU, a stride-2 conv of 40."""
    x = n.conv("input", 3, 24, 3)
    b = [n.conv(x, 24, 24, k, act=None) for k in (1, 3, 5, 7)]
    x = n.act(n.add(n.add(b[0], b[1]), n.add(b[2], b[3])), "relu")
    x = n.conv(x, 24, 40, 3, 2)
    return n.classifier(x, 40, 10)


def convbn_relu6_dw_b5(n):
    """At batch 5 on 44x44: conv-BN-ReLU6 blocks (torch's export) around a stride-2 depthwise conv of 56 channels, a 1x1 down to 32."""
    x = n.conv_bn("input", 3, 24, 3, 2, act="relu6")
    x = n.conv_bn(x, 24, 56, 1, p=0, act="relu6")
    x = n.conv_bn(x, 56, 56, 3, 2, group=56, act="relu6")
    x = n.conv_bn(x, 56, 32, 1, p=0, act=None)
    return n.classifier(x, 32, 10)


ZOO = {
    # name: (builder, input shape N, C, H, W)
    "small_cnn": (small_cnn, [1, 3, 64, 64]),
    "unet_small": (unet_small, [1, 3, 128, 128]),
    "squeeze_like": (squeeze_like, [1, 3, 128, 128]),
    "inception_b2": (inception, [2, 3, 96, 96]),
    "inception_b4": (inception, [4, 3, 96, 96]),
    "resnet34_bn": (resnet34_bn, [1, 3, 224, 224]),
    "se_net": (se_net, [1, 3, 112, 112]),
    "mbv3_like": (mbv3_like, [1, 3, 128, 128]),
    "deconv_decoder_b2": (deconv_decoder_b2, [2, 3, 64, 64]),
    "vgg_tiny_b8": (vgg_tiny_b8, [8, 3, 32, 32]),
    "odd_channels_b3": (odd_channels_b3, [3, 3, 75, 75]),
    "densenet_like": (densenet_like, [1, 3, 96, 96]),
    "fpn_like": (fpn_like, [1, 3, 128, 128]),
    "yolo_tiny": (yolo_tiny, [1, 3, 160, 160]),
    "dilated_seg_b2": (dilated_seg_b2, [2, 3, 96, 96]),
    "resnext_b4": (resnext_b4, [4, 3, 64, 64]),
    "wide_stem_b5": (wide_stem_b5, [5, 3, 96, 96]),
    "grouped_b2": (grouped_b2, [2, 3, 80, 80]),
    # round 2
    "efficient_like": (efficient_like, [1, 3, 112, 112]),
    "preact_resnet_b3": (preact_resnet_b3, [3, 3, 64, 64]),
    "hourglass_b2": (hourglass_b2, [2, 3, 96, 96]),
    "pool_mix_b6": (pool_mix_b6, [6, 3, 48, 48]),
    "deep_narrow_160": (deep_narrow_160, [1, 3, 160, 160]),
    "ghost_like_99": (ghost_like_99, [1, 3, 99, 99]),
    "wide_1x1_b8": (wide_1x1_b8, [8, 64, 14, 14]),
    # round 3
    "mobile_v1_b2": (mobile_v1_b2, [2, 3, 112, 112]),
    "bottleneck_b4": (bottleneck_b4, [4, 3, 64, 64]),
    "unet_deep_b2": (unet_deep_b2, [2, 3, 96, 96]),
    "tanh_gates_77": (tanh_gates_77, [1, 3, 77, 77]),
    "aspp_like": (aspp_like, [1, 3, 80, 80]),
    "grouped_leaky_b7": (grouped_leaky_b7, [7, 3, 40, 40]),
    # round 4
    "inception_pool_b3": (inception_pool_b3, [3, 3, 112, 112]),
    "dilated_res_64": (dilated_res_64, [1, 3, 128, 128]),
    "deconv_skip_b2": (deconv_skip_b2, [2, 3, 96, 96]),
    "hswish_se_90": (hswish_se_90, [1, 3, 90, 90]),
    "wide_shallow_224": (wide_shallow_224, [1, 3, 224, 224]),
    "dense_avg_b5": (dense_avg_b5, [5, 3, 40, 40]),
    # round 5
    "res_gmp_b6": (res_gmp_b6, [6, 3, 56, 56]),
    "sigmoid_seg_160": (sigmoid_seg_160, [1, 3, 160, 160]),
    "leaky_pyramid_b3": (leaky_pyramid_b3, [3, 3, 72, 72]),
    "clip6_dw_b2": (clip6_dw_b2, [2, 3, 96, 96]),
    "tanh_deconv_b4": (tanh_deconv_b4, [4, 3, 48, 48]),
    "bn_odd_1x1_128": (bn_odd_1x1_128, [1, 3, 128, 128]),
    # round 6
    "factorized_b2": (factorized_b2, [2, 3, 64, 64]),
    "deconv3_op_b3": (deconv3_op_b3, [3, 3, 32, 32]),
    "ceil_stem_57": (ceil_stem_57, [1, 3, 57, 57]),
    "glu_gates_b4": (glu_gates_b4, [4, 3, 28, 28]),
    "resize4_fpn_192": (resize4_fpn_192, [1, 3, 192, 192]),
    "dw5_se_b8": (dw5_se_b8, [8, 3, 28, 28]),
    # round 7
    "dual_pool_head_b3": (dual_pool_head_b3, [3, 3, 64, 64]),
    "deconv4_gan_b2": (deconv4_gan_b2, [2, 16, 8, 8]),
    "dil3_gate_48": (dil3_gate_48, [1, 3, 48, 48]),
    "tiny_dw_66": (tiny_dw_66, [1, 3, 66, 66]),
    "wide_head_7_b4": (wide_head_7_b4, [4, 3, 28, 28]),
    "topdown_tanh_b2": (topdown_tanh_b2, [2, 3, 80, 80]),
    # round 8
    "mbv2_tail_b2": (mbv2_tail_b2, [2, 3, 96, 96]),
    "patch4_mlp_128": (patch4_mlp_128, [1, 3, 128, 128]),
    "sppf_b5": (sppf_b5, [5, 3, 40, 40]),
    "k5_odd_45": (k5_odd_45, [1, 3, 45, 45]),
    "fc_chain_b6": (fc_chain_b6, [6, 3, 32, 32]),
    "dw_updown_b3": (dw_updown_b3, [3, 3, 64, 64]),
    # round 9
    "vgg_head_b2": (vgg_head_b2, [2, 3, 32, 32]),
    "odd_1x1_chain_60": (odd_1x1_chain_60, [1, 3, 60, 60]),
    "concat_pyramid_96": (concat_pyramid_96, [1, 3, 96, 96]),
    "group4_b3": (group4_b3, [3, 3, 48, 48]),
    "narrow_7x7_b4": (narrow_7x7_b4, [4, 3, 56, 56]),
    "hsig_u_56": (hsig_u_56, [1, 3, 56, 56]),
    # round 10
    "csp_leaky_b2": (csp_leaky_b2, [2, 3, 64, 64]),
    "bn_relu6_ir_63": (bn_relu6_ir_63, [1, 3, 63, 63]),
    "avg3_branch_b4": (avg3_branch_b4, [4, 3, 40, 40]),
    "tanh_topdown_gmp_b3": (tanh_topdown_gmp_b3, [3, 3, 48, 48]),
    "dil124_odd_72": (dil124_odd_72, [1, 3, 72, 72]),
    "se_hswish_b6": (se_hswish_b6, [6, 3, 28, 28]),
    # round 11: held out
    "bn_after_relu_b3": (bn_after_relu_b3, [3, 3, 52, 52]),
    "psp_pool_64": (psp_pool_64, [1, 3, 128, 128]),
    "resnetd_avg_b7": (resnetd_avg_b7, [7, 3, 36, 36]),
    "convnext_dw7_81": (convnext_dw7_81, [1, 3, 81, 81]),
    "stem_s3_b5": (stem_s3_b5, [5, 3, 60, 60]),
    "group2_odd_b2": (group2_odd_b2, [2, 3, 70, 70]),
    # round 12: held out
    "dil2_seg_b3": (dil2_seg_b3, [3, 3, 40, 40]),
    "leaky_fc2_b8": (leaky_fc2_b8, [8, 3, 32, 32]),
    "avg5_tanh_75": (avg5_tanh_75, [1, 3, 75, 75]),
    "hswish_unet_b2": (hswish_unet_b2, [2, 3, 64, 64]),
    "mixed_k_add_b3": (mixed_k_add_b3, [3, 3, 48, 48]),
    "convbn_relu6_dw_b5": (convbn_relu6_dw_b5, [5, 3, 44, 44]),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", help="folder to write <name>.onnx and zoo.json into")
    ap.add_argument("--stripped", action="store_true",
                    help="keep the initializers' dims, drop their data (but constants of 16 elements or fewer)")
    a = ap.parse_args()
    write_zoo(ZOO, a.outdir, a.stripped, HELD_OUT, seed0=0)


def write_zoo(nets, out, stripped, held_out, seed0):
    """Write `nets` ({name: (builder, input shape)}) to OUT/<name>.onnx, network i seeded
    `seed0 + i`, and their index to OUT/zoo.json."""
    index = {}
    for i, (name, (build, shape)) in enumerate(nets.items()):
        n = Net(seed=seed0 + i)
        y = build(n)
        n.save(f"{out}/{name}.onnx", name, shape, y, stripped)
        index[name] = {"input_shape": shape, "held_out": name in held_out}
    with open(f"{out}/zoo.json", "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    print(f"wrote {len(index)} networks to {out}")


if __name__ == "__main__":
    main()

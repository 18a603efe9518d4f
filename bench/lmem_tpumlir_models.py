#!/usr/bin/env python3
"""Build the ONNX models used to compare tpusim against TPU-MLIR (random weights).

  resnet18.onnx   ResNet-18 (conv+bias, BN folded as torch's eval export does), 1x3x224x224
  mini_mbv2.onnx  a small MobileNetV2-like net (inverted residuals, depthwise), 1x3x224x224
  resnet50.onnx   ResNet-50 (bottlenecks, stride on the 3x3 as torchvision), 1x3x224x224
  mobilenetv2.onnx MobileNetV2 1.0 (ReLU for ReLU6), 1x3x224x224

Usage: python bench/lmem_tpumlir_models.py OUTDIR   (needs the `onnx` and `numpy` packages)
"""
import sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

rng = np.random.default_rng(0)


class Net:
    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def name(self, p):
        self.k += 1
        return f"{p}{self.k}"

    def conv(self, x, cin, cout, k, s=1, p=None, group=1, relu=True):
        p = k // 2 if p is None else p
        w = self.name("w")
        b = self.name("b")
        fan_in = cin // group * k * k
        self.inits.append(numpy_helper.from_array(
            (rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in)).astype(np.float32), w))
        self.inits.append(numpy_helper.from_array((rng.standard_normal(cout) * 0.01).astype(np.float32), b))
        y = self.name("conv")
        self.nodes.append(helper.make_node("Conv", [x, w, b], [y], kernel_shape=[k, k], strides=[s, s],
                                           pads=[p, p, p, p], group=group))
        return self.relu(y) if relu else y

    def relu(self, x):
        y = self.name("relu")
        self.nodes.append(helper.make_node("Relu", [x], [y]))
        return y

    def add(self, a, b):
        y = self.name("add")
        self.nodes.append(helper.make_node("Add", [a, b], [y]))
        return y

    def maxpool(self, x, k, s, p):
        y = self.name("pool")
        self.nodes.append(helper.make_node("MaxPool", [x], [y], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4))
        return y

    def head(self, x, cin, classes, out="output"):
        g = self.name("gap")
        self.nodes.append(helper.make_node("GlobalAveragePool", [x], [g]))
        f = self.name("flat")
        self.nodes.append(helper.make_node("Flatten", [g], [f], axis=1))
        w, b = self.name("fcw"), self.name("fcb")
        self.inits.append(numpy_helper.from_array((rng.standard_normal((classes, cin)) * 0.01).astype(np.float32), w))
        self.inits.append(numpy_helper.from_array(np.zeros(classes, np.float32), b))
        self.nodes.append(helper.make_node("Gemm", [f, w, b], [out], transB=1))
        return out

    def save(self, path, name, classes):
        g = helper.make_graph(self.nodes, name,
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, classes])],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="tpusim-bench")
        m.ir_version = 8
        onnx.checker.check_model(m)
        onnx.save(m, path)


def resnet18(path):
    n = Net()
    x = n.conv("input", 3, 64, 7, 2, 3)
    x = n.maxpool(x, 3, 2, 1)
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for blk in range(2):
            s = stride if blk == 0 else 1
            y = n.conv(x, cin, cout, 3, s)
            y = n.conv(y, cout, cout, 3, 1, relu=False)
            sc = n.conv(x, cin, cout, 1, s, 0, relu=False) if (s != 1 or cin != cout) else x
            x = n.relu(n.add(y, sc))
            cin = cout
    n.head(x, 512, 1000)
    n.save(path, "resnet18", 1000)


def inverted_residuals(n, x, cin, settings):
    """MobileNetV2 blocks: (expansion t, out channels c, repeats, first stride) each."""
    for t, c, reps, s in settings:
        for i in range(reps):
            stride = s if i == 0 else 1
            hid = cin * t
            y = n.conv(x, cin, hid, 1, 1, 0) if t != 1 else x
            y = n.conv(y, hid, hid, 3, stride, 1, group=hid)
            y = n.conv(y, hid, c, 1, 1, 0, relu=False)
            x = n.add(x, y) if (stride == 1 and cin == c) else y
            cin = c
    return x, cin


def mini_mbv2(path):
    n = Net()
    x = n.conv("input", 3, 32, 3, 2)
    x, cin = inverted_residuals(n, x, 32, [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 2, 2), (6, 64, 1, 2)])
    x = n.conv(x, cin, 256, 1, 1, 0)
    n.head(x, 256, 10)
    n.save(path, "mini_mbv2", 10)


def resnet50(path):
    n = Net()
    x = n.conv("input", 3, 64, 7, 2, 3)
    x = n.maxpool(x, 3, 2, 1)
    cin = 64
    for mid, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for blk in range(blocks):
            s = stride if blk == 0 else 1
            y = n.conv(x, cin, mid, 1, 1, 0)
            y = n.conv(y, mid, mid, 3, s)
            y = n.conv(y, mid, 4 * mid, 1, 1, 0, relu=False)
            sc = n.conv(x, cin, 4 * mid, 1, s, 0, relu=False) if (s != 1 or cin != 4 * mid) else x
            x = n.relu(n.add(y, sc))
            cin = 4 * mid
    n.head(x, 2048, 1000)
    n.save(path, "resnet50", 1000)


def mobilenetv2(path):
    n = Net()
    x = n.conv("input", 3, 32, 3, 2)
    x, cin = inverted_residuals(n, x, 32, [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                                           (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)])
    x = n.conv(x, cin, 1280, 1, 1, 0)
    n.head(x, 1280, 1000)
    n.save(path, "mobilenetv2", 1000)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    resnet18(f"{out}/resnet18.onnx")
    mini_mbv2(f"{out}/mini_mbv2.onnx")
    resnet50(f"{out}/resnet50.onnx")
    mobilenetv2(f"{out}/mobilenetv2.onnx")
    print("wrote", out)

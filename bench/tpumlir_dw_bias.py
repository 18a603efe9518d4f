#!/usr/bin/env python3
"""The element type TPU-MLIR 1.30.2 holds a bias in, F16 (the rule in
crates/planner/src/timestep.rs `wide_bias`).

Writes small ONNX probes into TPUMLIR_WORK: a depthwise 3×3 conv of 8, 16, 24, 40 and 96
channels, a dense 3×3 conv of 96, and a batch-norm no conv absorbs (after a ReLU) of 16
and 96 channels. After `bench/tpumlir_zoo_run.sh` has run TPU-MLIR's own flow on them,
`measure` reads every grouped load of a [1, C, 1, 1] weight (a bias) from the final MLIR,
with the op that reads it and its element type, one JSON line each.

Usage:
  TPUMLIR_WORK=DIR python3 bench/tpumlir_dw_bias.py write      (needs onnx, numpy)
  TPUMLIR_VENV=VENV TPUMLIR_WORK=DIR bench/tpumlir_zoo_run.sh
  TPUMLIR_WORK=DIR python3 bench/tpumlir_dw_bias.py measure \\
      > crates/planner/tests/data/tpumlir_dw_bias.jsonl
"""
import json
import os
import re
import sys

HW = 32
CHIPS = ["bm1684x", "bm1688"]
W = os.environ.get("TPUMLIR_WORK")
# (name, channels, kind)
CASES = [(f"dw_c{c}", c, "dw") for c in (8, 16, 24, 40, 96)] + [("dense_c96", 96, "dense")] + \
    [(f"bn_c{c}", c, "bn") for c in (16, 96)]


def network(name, c, kind):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(c)
    init, nodes = [], []

    def weight(n, shape):
        init.append(numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, n))
        return n
    if kind == "bn":
        nodes.append(helper.make_node("Relu", ["input"], ["relu1"], name="relu1"))
        bn = [weight(f"bn_{p}", [c]) for p in ("scale", "bias", "mean")]
        init.append(numpy_helper.from_array(np.ones(c, np.float32), "bn_var"))
        nodes.append(helper.make_node("BatchNormalization", ["relu1"] + bn + ["bn_var"], ["bn2"], name="bn2"))
        out = "bn2"
    else:
        groups = c if kind == "dw" else 1
        w = weight("w", [c, c // groups, 3, 3])
        b = weight("b", [c])
        nodes.append(helper.make_node("Conv", ["input", w, b], ["conv1"], name="conv1", group=groups,
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        out = "conv1"
    shape = [1, c, HW, HW]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, shape)], init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def write():
    import onnx
    index = {}
    for name, c, kind in CASES:
        onnx.save(network(name, c, kind), f"{W}/{name}.onnx")
        index[name] = {"input_shape": [1, c, HW, HW], "held_out": False}
    with open(f"{W}/zoo.json", "w") as f:
        json.dump(index, f, indent=1)


LOAD = re.compile(r'(%\d+) = "tpu.Load"\(%\w+\).*: \(tensor<1x(\d+)x1x1x(\w+)[,>]')
USE = re.compile(r'= "(tpu\.\w+)"\(([^)]*)\)')


def bias_loads(mlir):
    """{reader op type, channels, element type} of every load of a [1, C, 1, 1] weight."""
    loads, rows = {}, []
    for line in open(mlir):
        m = LOAD.search(line)
        if m:
            loads[m.group(1)] = (int(m.group(2)), m.group(3))
            continue
        u = USE.search(line)
        if not u:
            continue
        for operand in re.findall(r"%\d+", u.group(2)):
            if operand in loads:
                c, dtype = loads[operand]
                rows.append({"reader": u.group(1), "channels": c, "dtype": dtype})
    return rows


def measure():
    for name, c, kind in CASES:
        for chip in CHIPS:
            mlir = f"{W}/{name}/{chip}_lg/{name}_{chip}_f16_final.mlir"
            if not os.path.exists(mlir):
                sys.exit(f"{name} {chip}: no {mlir} (run bench/tpumlir_zoo_run.sh first)")
            for row in bias_loads(mlir):
                print(json.dumps({"net": name, "chip": chip, "kind": kind, **row}))


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("write", "measure") or not W:
        sys.exit(__doc__)
    {"write": write, "measure": measure}[sys.argv[1]]()

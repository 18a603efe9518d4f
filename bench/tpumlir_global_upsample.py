#!/usr/bin/env python3
"""Global nearest upsamples as TPU-MLIR 1.30.2 compiles them (the rule in
crates/planner/src/global_upsample.rs).

Writes 8 single-Resize ONNX networks (3 to 96 channels, 10² to 64², ×2, ×3, ×4) into
TPUMLIR_WORK, then, after `bench/tpumlir_zoo_run.sh` has run TPU-MLIR's own flow on them
(which groups the resize with its casts), compiles each with every op forced global
(LOAD_TPU_GROUP=1, bench/tpumlir_zoo_compare.py's flow) and reads the upsample's
commands from codegen's profile: its load, its copy passes and its store.

Usage:
  TPUMLIR_WORK=DIR python3 bench/tpumlir_global_upsample.py write      (needs onnx, numpy)
  TPUMLIR_VENV=VENV TPUMLIR_WORK=DIR bench/tpumlir_zoo_run.sh
  TPUMLIR_VENV=VENV TPUMLIR_WORK=DIR python3 bench/tpumlir_global_upsample.py measure \\
      > crates/planner/tests/data/tpumlir_global_upsample.jsonl
(`measure` runs tpuc-opt, so TPUMLIR_VENV's bin must be on PATH.)
"""
import json
import os
import re
import sys

CASES = [(16, 12, 2), (32, 12, 4), (64, 24, 2), (8, 40, 2), (48, 20, 3), (24, 16, 4), (96, 10, 2), (3, 64, 2)]
CHIPS = ["bm1684x", "bm1688"]
W = os.environ.get("TPUMLIR_WORK")


def name_of(c, h, s):
    return f"up_c{c}_h{h}_x{s}"


def write():
    import numpy as np
    from onnx import helper, numpy_helper
    index = {}
    for c, h, s in CASES:
        name = name_of(c, h, s)
        roi = numpy_helper.from_array(np.zeros(0, np.float32), "roi")
        scales = numpy_helper.from_array(np.array([1, 1, s, s], np.float32), "scales")
        node = helper.make_node("Resize", ["input", "roi", "scales"], ["resize1"], mode="nearest", name="resize1")
        save_one_node(name, node, [1, c, h, h], [1, c, h * s, h * s], [roi, scales])
        index[name] = {"input_shape": [1, c, h, h], "held_out": False}
    write_zoo(index)


def write_zoo(index):
    """W/zoo.json: the probes' index, as bench/tpumlir_zoo_run.sh reads it."""
    with open(f"{W}/zoo.json", "w") as f:
        json.dump(index, f, indent=1)


def save_one_node(name, node, input_shapes, output_shape, initializers=()):
    """W/<name>.onnx: `node` alone, its first inputs graph inputs of `input_shapes` (one
    shape, or a list of shapes) and its one output, all f32, opset 13."""
    import onnx
    from onnx import TensorProto, helper
    if not isinstance(input_shapes[0], list):
        input_shapes = [input_shapes]
    inputs = [helper.make_tensor_value_info(i, TensorProto.FLOAT, shape)
              for i, shape in zip(node.input, input_shapes)]
    g = helper.make_graph([node], name, inputs,
                          [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, output_shape)],
                          list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, f"{W}/{name}.onnx")


def all_global(cache):
    """TPU-MLIR's cache with every grouped op listed as a global layer instead."""
    sub = cache["subfunc_0"]
    locs = [l for g in sub["GroupLayer"] for l in g["locs"]]
    sub["GroupLayer"] = []
    sub["GlobalLayer"] = [{"index": i, "func_idx": i, "group_cost": 0, "loc": l} for i, l in enumerate(locs)]
    sub["GlobalLayer"].append({"index": len(locs), "func_idx": len(locs), "group_cost": 0, "loc": "func.return"})
    sub.pop("CyclePrefixSum", None)
    return cache


def upsample_commands(profile):
    """(kind, start, end, cycles, direction) of every command codegen names Upsample_*."""
    out = []
    for line in open(profile):
        for m in re.finditer(r"(Upsample_\d+)\|([A-Z_]+)\|s:(\d+)\|[^ ]*?\|e:(\d+)\|t:(\d+)(\|dr:\d)?", line):
            out.append((m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5)), m.group(6) or ""))
    return out


def compiled_all_global(name, chip):
    """The profile of `name` compiled for `chip` with every op global (TPU-MLIR's own
    cache, after bench/tpumlir_zoo_run.sh, rewritten by `all_global`)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tpumlir_zoo_compare as zc
    zc.W = W
    own = json.load(open(f"{W}/{name}/{chip}_lg/{name}_{chip}_f16.layer_group_cache.json"))
    r = zc.compile_with_cache(name, chip, "global", json.dumps(all_global(own)))
    if "cycles" not in r:
        sys.exit(f"{name} {chip}: {r}")
    return f"{W}/{name}/{chip}_global/compiler_profile_0.txt"


def measure():
    for c, h, s in CASES:
        name = name_of(c, h, s)
        for chip in CHIPS:
            cmds = upsample_commands(compiled_all_global(name, chip))
            dma = lambda d: sum(x[3] for x in cmds if x[4] == d)
            row = {"net": name, "chip": chip, "c": c, "h": h, "scale": s,
                   "load": dma("|dr:0"), "copies": sum(x[3] for x in cmds if not x[4]),
                   "store": dma("|dr:1"), "span": max(x[2] for x in cmds) - min(x[1] for x in cmds) + 1}
            print(json.dumps(row))


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("write", "measure") or not W:
        sys.exit(__doc__)
    {"write": write, "measure": measure}[sys.argv[1]]()

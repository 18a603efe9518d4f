#!/usr/bin/env python3
"""Global fully connected layers of few rows in TPU-MLIR 1.30.2 against tpusim's plan
(issue 19; a classifier head at batch 1 to 6).

Each probe is one Gemm [M, K]·[K, N] + bias on an f32 input, M in 1, 2, 4, 6, K in 256
and 512, N in 256 and 1000. TPU-MLIR compiles it with its own grouping (F16): an input
cast, the global matmul and an output cast. The script writes the probes, compiles
them (bench/tpumlir_zoo_run.sh), and prints beside each one:
- the matmul's commands in codegen's profile: MM2, MM (vector products), AR, and the
  GDMA commands;
- the compiled total and `tpusim plan --json`'s.

Usage: TPUMLIR_VENV=VENV python3 bench/tpumlir_global_fc.py WORKDIR [--chip C]
           [--no-compile] [--tpusim BIN]
Needs `onnx` and `numpy`.
"""
import argparse
import collections
import json
import os
import re
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = [(m, k, n) for m in (1, 2, 4, 6) for k in (256, 512) for n in (256, 1000)]


def write_probes(work):
    rng = np.random.default_rng(3)
    index = {}
    for m, k, n in SHAPES:
        name = f"fc_m{m}_k{k}_n{n}"
        w = numpy_helper.from_array((rng.standard_normal((n, k)) * 0.02).astype(np.float32), "w")
        b = numpy_helper.from_array(np.zeros(n, np.float32), "b")
        node = helper.make_node("Gemm", ["input", "w", "b"], ["y"], transB=1)
        g = helper.make_graph([node], name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [m, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [w, b])
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, f"{work}/{name}.onnx")
        index[name] = {"input_shape": [m, k], "held_out": False}
    with open(f"{work}/zoo.json", "w") as f:
        json.dump(index, f, indent=1)


def commands(profile):
    """The matmul's commands in a codegen profile: kind (GDMA ones by direction) ->
    (count, cycles)."""
    seen = collections.defaultdict(lambda: [0, 0])
    pattern = r"(\w+)_\d+\|(\w+)\|s:\d+\|b:\d+\|g:\d+\|e:\d+\|t:(\d+)(?:\|dr:(\d))?"
    for m in re.finditer(pattern, profile):
        if m.group(1) not in ("MatMul", "FullyConnected"):
            continue
        kind = m.group(2) + ("" if m.group(4) is None else (" in" if m.group(4) == "0" else " out"))
        seen[kind][0] += 1
        seen[kind][1] += int(m.group(3))
    return dict(seen)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work")
    ap.add_argument("--chip", default="bm1688")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--tpusim", default=f"{R}/target/release/tpusim")
    a = ap.parse_args()
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    if not a.no_compile:
        write_probes(work)
        env = dict(os.environ, TPUMLIR_WORK=work, CHIPS=a.chip)
        subprocess.run(["bash", f"{R}/bench/tpumlir_zoo_run.sh"], env=env, check=True)
    for m, k, n in SHAPES:
        name = f"fc_m{m}_k{k}_n{n}"
        profile = open(f"{work}/{name}/{a.chip}_lg/compiler_profile_0.txt").read()
        total = int(re.search(r"total_cycle:(\d+)", profile).group(1))
        plan = subprocess.run([a.tpusim, "plan", f"{work}/{name}.onnx", "--chip", a.chip, "--dtype", "f16",
                               "--batch", str(m), "--json"], capture_output=True, text=True, check=True)
        ours = json.loads(plan.stdout)["cycles"]
        cmds = ", ".join(f"{kind} {c}x {t}" for kind, (c, t) in sorted(commands(profile).items()))
        print(f"{name:18} compiled {total:6}  ours {ours:6} ({ours / total:.3f})  {cmds}")


if __name__ == "__main__":
    main()

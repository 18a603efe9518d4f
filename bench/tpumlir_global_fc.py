#!/usr/bin/env python3
"""Global fully connected layers of few rows in TPU-MLIR 1.30.2 against tpusim's plan
(issue 19; a classifier head at batch 1 to 6).

Each probe is one Gemm [M, K]·[K, N] + bias on an f32 input, on one of four grids
(`--grid`; the first: M in 1, 2, 4, 6, K in 256 and 512, N in 256 and 1000). TPU-MLIR
compiles it with its own grouping (F16): an input
cast, the global matmul and an output cast. The script writes the probes, compiles
them (bench/tpumlir_zoo_run.sh), and prints beside each one:
- the matmul's commands in codegen's profile: MM2, MM (vector products), AR, and the
  GDMA commands;
- the compiled total and `tpusim plan --json`'s;
and with `--csv`, appends each probe's command (MM2 or MM), the rows of K in a vector
product's chunk, the matmul's span and the compiled total to a CSV
(crates/planner/tests/data/tpumlir_global_fc.csv: `--grid first`, `wide`, `check` and
`edge` on both chips).

Usage: TPUMLIR_VENV=VENV python3 bench/tpumlir_global_fc.py WORKDIR [--chip C]
           [--grid first|wide|check|edge|cap|chunks] [--no-compile] [--tpusim BIN] [--csv OUT]
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
# a second grid (`--grid wide`): more rows, narrower and wider outputs, and deeper inputs
WIDE = [(m, k, n) for m in (1, 2, 3, 4, 5, 8) for k in (384, 2048) for n in (128, 512, 2048)]
# a third grid (`--grid check`), written and compiled after the model of the first two and
# kept out of it: the held-out figures
CHECK = [(m, k, n) for m in (1, 3, 6, 7) for k in (640, 1536) for n in (96, 320, 768, 1500)]
# a fourth (`--grid edge`), after the check: where bm1688 turns from vector products to MM2
EDGE = [(m, 512, n) for m in (4, 5, 6, 7) for n in (384, 448, 640, 896)]
# a fifth (`--grid cap`, thirty-eighth session): wide outputs at 8 rows and more, after
# held-out gpt2_d640_s1_b8's [8, 640]·[640, 2560] ran as vector products on bm1684x
CAP = [(m, 640, n) for m in (8, 12, 16, 32) for n in (2304, 2560, 4096, 8192)]
# a sixth (`--grid chunks`, forty-first session): one row slice, weights over half the
# local memory, to find how a weight is cut into chunks (gpt2_d1024_s16_b2's
# [32, 1024]·[1024, 4096] on bm1684x loads 3,264 columns and then 832)
CHUNKS = [(32, k, n) for k in (512, 768, 1024, 1280, 1536, 2048) for n in (4096, 6144)]
GRIDS = {"first": SHAPES, "wide": WIDE, "check": CHECK, "edge": EDGE, "cap": CAP, "chunks": CHUNKS}


def write_probes(work, shapes):
    rng = np.random.default_rng(3)
    index = {}
    for m, k, n in shapes:
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


def matmul_span(profile):
    """Cycles from the matmul's first command's start to its last one's end."""
    pattern = r"(?:MatMul|FullyConnected)_\d+\|\w+\|s:(\d+)\|b:\d+\|g:\d+\|e:(\d+)"
    spans = [(int(s), int(e)) for s, e in re.findall(pattern, profile)]
    return max(e for _, e in spans) - min(s for s, _ in spans) + 1


def chunk_rows(profile, n):
    """Rows of K in the first chunk of a matmul run as vector products (its second
    GDMA_MATRIX load is that chunk's weight, [rows, N] in f16), or 0."""
    loads = re.findall(r"(?:MatMul|FullyConnected)_\d+\|GDMA_MATRIX\|[^ ]*?dr:0\|sz:(\d+)", profile)
    return int(loads[1]) // (2 * n) if len(loads) > 1 else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work")
    ap.add_argument("--chip", default="bm1688")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--tpusim", default=f"{R}/target/release/tpusim")
    ap.add_argument("--csv", help="append each probe's figures to this CSV (header written if new)")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="first",
                    help="the first grid (M 1-6, K 256/512, N 256/1000), the wide one (M 1-8, "
                    "K 384/2048, N 128-2048), the held-out check (M 1-7, K 640/1536, N 96-1500) or the "
                    "edge (M 4-7, K 512, N 384-896) or the cap (M 8-32, K 640, N 2304-8192)")
    a = ap.parse_args()
    shapes = GRIDS[a.grid]
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    if not a.no_compile:
        write_probes(work, shapes)
        env = dict(os.environ, TPUMLIR_WORK=work, CHIPS=a.chip)
        subprocess.run(["bash", f"{R}/bench/tpumlir_zoo_run.sh"], env=env, check=True)
    for m, k, n in shapes:
        name = f"fc_m{m}_k{k}_n{n}"
        profile = open(f"{work}/{name}/{a.chip}_lg/compiler_profile_0.txt").read()
        total = int(re.search(r"total_cycle:(\d+)", profile).group(1))
        plan = subprocess.run([a.tpusim, "plan", f"{work}/{name}.onnx", "--chip", a.chip, "--dtype", "f16",
                               "--batch", str(m), "--json"], capture_output=True, text=True, check=True)
        ours = json.loads(plan.stdout)["cycles"]
        seen = commands(profile)
        cmds = ", ".join(f"{kind} {c}x {t}" for kind, (c, t) in sorted(seen.items()))
        print(f"{name:18} compiled {total:6}  ours {ours:6} ({ours / total:.3f})  {cmds}")
        if a.csv:
            new = not os.path.exists(a.csv)
            with open(a.csv, "a") as f:
                if new:
                    f.write("grid,chip,m,k,n,command,chunk_rows,matmul_cycles,total_cycles\n")
                command = "MM2" if "MM2" in seen else "MM"
                f.write(f"{a.grid},{a.chip},{m},{k},{n},{command},{chunk_rows(profile, n) if command == 'MM' else 0},"
                        f"{matmul_span(profile)},{total}\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How TPU-MLIR 1.30.2 moves a cut group's slices of a 4-D activation: along the batch
(N) or along H, with one sequence a slice or several (issue 20).

Each probe is x [N, C, H, W] (f16 in the graph) times a constant plus a constant,
scaled once more: three element-wise layers TPU-MLIR groups, loading x and storing the
result. The probe is compiled by TPU-MLIR with its own grouping (bench/tpumlir_zoo_run.sh),
then again with that group forced (LOAD_TPU_GROUP=1, as bench/tpumlir_zoo_compare.py
forces a cache) into 2 N slices, 2 H slices, or 2 N x 2 H slices. Every GDMA command of
the group's load and store is read off the final MLIR and codegen's profile: its slice
[n, c, h, w], its bytes and cycles, and its rate against the chip's plain rate
(`gdma_bytes_per_s`, `gdma_store_bytes_per_s` in data/lmem/<chip>.toml).

The question it answers: does a slice move as a tensor of its own shape, whatever the axis
it was cut along? llama_d288_s96_b5's scores [5, 6, 96, 96] in our bm1684x plan, cut in 2
H slices of all 5 sequences, loaded at 0.75 of the plain rate (6,824 cycles for 276,480
bytes) and stored at 0.75 (8,996), where TPU-MLIR's own 3 N slices of the same tensor
moved at the plain rate. Three grids (--grid): `first`, rows of 64 to 256 elements, all
at the plain rates; `short`, written after it, rows of 16 to 64 elements, where bm1684x's
H slices moved at 1/2 and 3/4 of them; `planes`, written after that, one sequence of 64
channels, planes of 4.5 to 40 KiB cut in 3 and 4 H slices, at 1/4 to all of them.

Usage: TPUMLIR_VENV=VENV python3 bench/tpumlir_slice_transfers.py WORKDIR [--chip C]
           [--grid first|short] [--no-compile] [--csv FILE]
  --csv appends every distinct command read (chip, cut, dir, n, c, h, w, bytes, cycles,
  grid; n, c, h, w its slice), as committed in crates/planner/tests/data/tpumlir_slice_transfers.csv
  and checked by crates/planner/src/tpumlir/tests/gdma.rs.
Needs `onnx` and `numpy`.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRIDS = {
    # the first grid: rows of 64 to 256 elements (256 to 1,024 bytes in f32)
    "first": [(n, c, h, w) for n in (1, 2, 4) for c in (6, 64) for (h, w) in ((96, 96), (64, 128), (64, 256), (128, 64))],
    # written after it: rows of 16 to 64 elements (64 to 256 bytes)
    "short": [(n, c, h, w) for n in (1, 3) for c in (6, 64) for (h, w) in ((64, 16), (64, 32), (96, 48), (56, 56), (64, 64))],
    # written after the short grid: one sequence, 64 channels, planes of 4.5 to 40 KiB
    # cut in 3 and 4 H slices
    "planes": [(1, 64, h, w) for h in (48, 64, 96, 128) for w in (24, 40, 64, 80)],
}
# shape_secs: [n, c, d, h, w]
CUTS = {"n2": [2, 1, 1, 1, 1], "h2": [1, 1, 1, 2, 1], "n2h2": [2, 1, 1, 2, 1],
        "h3": [1, 1, 1, 3, 1], "h4": [1, 1, 1, 4, 1]}
CMD = re.compile(r"(Load|Store)_(\d+)\|GDMA_TENSOR\|s:\d+\|b:\d+\|g:\d+\|e:\d+\|t:(\d+)\|dr:\d+\|sz:(\d+)")
LIST = {k: re.compile(k + r" = \[([0-9, ]*)\]") for k in ("n_slice", "c_slice", "h_slice", "w_slice")}
TYPE = re.compile(r"tensor<([0-9x]+)x(f16|f32)")


def rates(chip):
    """The chip preset's plain load and store rates, bytes a cycle (read without tomllib:
    TPU-MLIR's venv runs Python 3.10)."""
    with open(f"{R}/data/lmem/{chip}.toml") as f:
        text = f.read()

    def num(key):
        m = re.search(rf"^{key}\s*=\s*([0-9.e+]+)", text, re.M)
        return float(m.group(1)) if m else 0.0
    clock = num("clock_hz")
    load = num("gdma_bytes_per_s") / clock
    return {"load": load, "store": (num("gdma_store_bytes_per_s") / clock) or load}


def write_probes(work, grid):
    index = {}
    for n, c, h, w in GRIDS[grid]:
        name = f"sl_n{n}_c{c}_h{h}_w{w}"
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [n, c, h, w])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, [n, c, h, w])
        consts = [numpy_helper.from_array(np.array(v, dtype=np.float16), k)
                  for k, v in (("a", 0.5), ("b", 1.0), ("d", 0.25))]
        nodes = [helper.make_node("Mul", ["x", "a"], ["t0"]),
                 helper.make_node("Add", ["t0", "b"], ["t1"]),
                 helper.make_node("Mul", ["t1", "d"], ["y"])]
        g = helper.make_graph(nodes, name, [x], [y], consts)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.save(m, f"{work}/{name}.onnx")
        index[name] = {"input_shape": [n, c, h, w], "held_out": False}
    with open(f"{work}/zoo.json", "w") as f:
        json.dump(index, f, indent=1)
    return index


def forced(cache, secs):
    """`cache` with its one group's shape_secs set to `secs`."""
    subs = [v for k, v in cache.items() if k.startswith("subfunc_")] or [cache]
    for s in subs:
        for grp in s.get("GroupLayer", []):
            grp["shape_secs"] = secs
    return json.dumps(cache)


def commands(d, base):
    """(dir, global shape, [n, c, h, w] of the slice, bytes, cycles) of each GDMA_TENSOR
    command of a group load or store in folder `d`."""
    ops = {}
    with open(f"{d}/{base}_final.mlir") as f:
        for i, line in enumerate(f, 1):
            if '"tpu.Load"' not in line and '"tpu.Store"' not in line:
                continue
            m = TYPE.findall(line[line.rfind(": ("):])
            if not m:
                continue
            lists = {}
            for k, rx in LIST.items():
                hit = rx.search(line)
                lists[k] = [int(v) for v in hit.group(1).split(",")] if hit and hit.group(1).strip() else []
            ops[i] = ([int(v) for v in m[0][0].split("x")], lists)
    seen = {}
    out = []
    with open(f"{d}/compiler_profile_0.txt") as f:
        for line in f:
            for m in CMD.finditer(line):
                kind, at, t, sz = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
                if at not in ops:
                    continue
                shape, lists = ops[at]
                k = seen.get(at, 0)
                seen[at] = k + 1
                ns, hs = lists["n_slice"] or [shape[0]], lists["h_slice"] or [shape[2]]
                # TPU-MLIR walks the n slices outside the h slices
                piece = [ns[(k // len(hs)) % len(ns)], shape[1], hs[k % len(hs)], shape[3]]
                out.append((kind.lower(), shape, piece, sz, t))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("--chip", default="bm1684x")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--csv")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="first")
    a = ap.parse_args()
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    zoo = write_probes(work, a.grid)
    if not a.no_compile:
        env = dict(os.environ, TPUMLIR_WORK=work, CHIPS=a.chip)
        subprocess.run(["bash", f"{R}/bench/tpumlir_zoo_run.sh"], env=env, check=True)
    os.environ["TPUMLIR_WORK"] = work
    sys.path.insert(0, os.path.join(R, "bench"))
    import tpumlir_zoo_compare as zc
    plain = rates(a.chip)
    rows = []
    for net in zoo:
        lg = f"{work}/{net}/{a.chip}_lg"
        caches = [f for f in os.listdir(lg) if f.endswith(".layer_group_cache.json")] if os.path.isdir(lg) else []
        if not caches:
            print(f"{net}: no TPU-MLIR run")
            continue
        base = f"{net}_{a.chip}_f16"
        for cut, secs in CUTS.items():
            if secs[0] > zoo[net]["input_shape"][0] or (secs[3] > 2) != (a.grid == "planes"):
                continue
            d = f"{work}/{net}/{a.chip}_{cut}"
            if not a.no_compile or not os.path.exists(f"{d}/compiler_profile_0.txt"):
                cache = json.load(open(f"{lg}/{caches[0]}"))
                r = zc.compile_with_cache(net, a.chip, cut, forced(cache, secs))
                if "error" in r:
                    print(f"{net} {cut}: {r['error']}")
                    continue
            for kind, shape, piece, sz, t in commands(d, base):
                rate = plain[kind]
                rows.append((a.chip, cut, kind, *piece, sz, t, a.grid))
                print(f"{net:24} {cut:5} {kind:5} slice {piece} {sz:8} B {t:7} cycles "
                      f"{sz / t:6.1f} B/cycle ({sz / t / rate:.2f} of the rate)")
    if a.csv:
        new = not os.path.exists(a.csv)
        with open(a.csv, "a") as f:
            if new:
                f.write("chip,cut,dir,n,c,h,w,bytes,cycles,grid\n")
            for r in sorted(set(rows), key=rows.index):
                f.write(",".join(map(str, r)) + "\n")


if __name__ == "__main__":
    main()

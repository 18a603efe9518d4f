#!/usr/bin/env python3
"""Transfers of TPU-MLIR 1.30.2's GROUP_SMALL_C groups (element-wise ops alone), measured
(issue 19).

Each probe is a network of element-wise ops on one map [n, c, h, w]: a sigmoid and a
tanh of the input (f32 in and out), or a 1x1 conv and a tanh (the F16 conv's output cast
to f32 for the tanh: f16 in, f32 out). Forced into a group of their own, TPU-MLIR holds
the element-wise ops in the GROUP_SMALL_C layout (`getNCHW`: the n·c·h rows of w over the
lanes, NPU_NUM a lane row when they divide evenly, else n·c rows of h). The script
compiles each probe (bench/tpumlir_zoo_run.sh), forces the element-wise ops into one group held
whole (TPU-MLIR's own grouping leaves some of them global), reads the group's loads and
stores from the final MLIR and their cycles from codegen's
compiler_profile_0.txt, and prints them beside the planner's rule
(crates/planner/src/cost.rs `act_dma_cycles`, restated in `rule` below from the chip
preset).

The probes are split before anything is read: FIT probes are the ones a figure may be
chosen on, HELD_OUT ones are only reported. The rule uses the preset's small-plane
figures as they were, so nothing was fitted; the F16 probes were written after the rule
was chosen, and are a third, unseen split. `--csv` writes every whole transfer for
crates/planner/tests/data/tpumlir_small_c.csv.

Usage: TPUMLIR_VENV=VENV python3 bench/tpumlir_small_c.py WORKDIR --chip CHIP [--small-rows B] [--csv F]
"""
import argparse
import glob
import json
import math
import os
import re
import statistics
import subprocess
import sys

import tpumlir_zoo_compare
from plan_tpumlir_tx_ops import spans_of
from tpumlir_small_planes import predicted, preset

R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ELEM = {"f16": 2, "f32": 4}
TYPE = re.compile(r"tensor<([0-9x]+)x(f16|f32)")

# name: [n, c, h, w]. Chosen so that NPU_NUM (64 on bm1684x, 32 on bm1688) mostly does
# not divide n·c·h, with h (the lane rows of that layout) below, near and above it.
FIT = {
    "m1x1x28x28": [1, 1, 28, 28], "m1x1x20x40": [1, 1, 20, 40], "m1x1x50x16": [1, 1, 50, 16],
    "m1x1x100x24": [1, 1, 100, 24], "m1x2x36x36": [1, 2, 36, 36], "m2x1x12x80": [2, 1, 12, 80],
    "m1x1x64x48": [1, 1, 64, 48], "m1x3x10x32": [1, 3, 10, 32],
}
HELD_OUT = {
    "m1x1x40x20": [1, 1, 40, 20], "m1x1x63x32": [1, 1, 63, 32], "m1x1x70x30": [1, 1, 70, 30],
    "m3x1x30x30": [3, 1, 30, 30], "m1x2x24x60": [1, 2, 24, 60], "m1x1x7x112": [1, 1, 7, 112],
    "m1x1x128x40": [1, 1, 128, 40], "m2x2x18x18": [2, 2, 18, 18],
}
# a 1x1 conv and a tanh: the group is the tanh's input cast and the tanh
F16 = {
    "h1x3x16x64": [1, 3, 16, 64], "h1x1x64x48": [1, 1, 64, 48], "h1x1x28x28": [1, 1, 28, 28],
    "h1x1x70x30": [1, 1, 70, 30], "h1x2x36x36": [1, 2, 36, 36], "h1x3x10x32": [1, 3, 10, 32],
    "h1x4x16x16": [1, 4, 16, 16], "h1x1x20x40": [1, 1, 20, 40],
}
ALL = {**FIT, **HELD_OUT, **F16}


def split_of(net):
    return "fit" if net in FIT else "held_out" if net in HELD_OUT else "unseen_f16"


def write_nets(work):
    import onnx
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    np.random.seed(0)
    zoo = {}
    for name, shape in ALL.items():
        inits = []
        if name in F16:
            w = np.random.rand(shape[1], shape[1], 1, 1).astype(np.float32)
            inits.append(numpy_helper.from_array(w, "w"))
            nodes = [helper.make_node("Conv", ["input", "w"], ["x"], kernel_shape=[1, 1]),
                     helper.make_node("Tanh", ["x"], ["y"])]
        else:
            nodes = [helper.make_node("Sigmoid", ["input"], ["s"]), helper.make_node("Tanh", ["s"], ["y"])]
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{work}/{name}.onnx")
        zoo[name] = {"input_shape": shape, "held_out": name not in FIT}
    with open(f"{work}/zoo.json", "w") as f:
        json.dump(zoo, f)


def group(i, start, locs):
    return {"base_group_idx": i, "start_idx": start, "end_idx": start + len(locs) - 1,
            "func_start_idx": start, "func_end_idx": start + len(locs) - 1, "group_cost": 1000,
            "index": i, "locs": locs, "shape_secs": [1, 1, 1, 1, 1]}


def force_group(net, chip):
    """Compile `net` with its element-wise ops forced into one group held whole (an F16
    probe's input cast and conv in a group before it)."""
    if net in F16:
        groups = [group(0, 0, ["inputx_Conv_f16", "x_Conv"]), group(1, 2, ["x_Convy_Tanh_f32", "y_Tanh"])]
    else:
        groups = [group(0, 0, ["s_Sigmoid", "y_Tanh"])]
    end = groups[-1]["end_idx"] + 1
    cache = {"opt": 2, "total subfunc": 1, "subfunc_0": {
        "subfunc idx": 0, "CyclePrefixSum": [], "GroupLayer": groups,
        "GlobalLayer": [{"func_idx": end, "group_cost": 0, "index": len(groups), "loc": "func.return"}]}}
    return tpumlir_zoo_compare.compile_with_cache(net, chip, "small_c", json.dumps(cache, indent=1))


def transfers(work, net, chip):
    """The group's loads and stores: kind, the [n, c, h, w] moved, bytes, cycles."""
    d = f"{work}/{net}/{chip}_small_c"
    finals = glob.glob(f"{d}/*_final.mlir")
    if not finals:
        return []
    span = spans_of(f"{d}/compiler_profile_0.txt")
    out = []
    for i, line in enumerate(open(finals[0]), 1):
        kind = "load" if '"tpu.Load"' in line else "store" if '"tpu.Store"' in line else None
        if not kind or i not in span:
            continue
        dims, dtype = TYPE.findall(line)[-1]
        slices = {k: re.search(k + r"_slice = \[([0-9, ]*)\]", line) for k in "nchw"}
        counts = [len(m.group(1).split(",")) if m and m.group(1).strip() else 1 for m in slices.values()]
        s, e = span[i]
        out.append({"net": net, "kind": kind, "shape": [int(x) for x in dims.split("x")],
                    "dtype": dtype, "slices": counts, "cycles": e - s + 1})
    return out


def rule(p, t, lanes, row_bytes=None, old=False):
    """The planner's cycles for one whole transfer of a small-C group's map
    (crates/planner/src/cost.rs `act_dma_cycles`): n·c·h small planes, priced as
    bench/tpumlir_small_planes.py prices them, in rows of `row_bytes` (the preset's when
    None). `old`: the rule before the thirty-fifth session, n·c rows on every lane unless
    the lanes divide n·c·h."""
    n, c, h, w = t["shape"]
    nbytes = n * c * h * w * ELEM[t["dtype"]]
    k = t["kind"]
    if old:
        rows = n * c * h
        units = rows if rows % lanes == 0 else n * c * lanes
        return p["setup"][k] + max(nbytes / p["rate"][k], units * p["floor"][k])
    rows_of = dict(p, row_bytes=row_bytes or p["row_bytes"])
    return predicted({"bytes": nbytes, "planes": n * c * h, "kind": k}, rows_of)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work")
    ap.add_argument("--chip", default="bm1684x")
    ap.add_argument("--small-rows", type=float, help="rows of this many bytes (default: the preset's)")
    ap.add_argument("--old", action="store_true", help="the rule before (n·c rows on every lane)")
    ap.add_argument("--no-compile", action="store_true", help="read the compiles already in WORKDIR")
    ap.add_argument("--csv", help="write the whole transfers here")
    a = ap.parse_args()
    lanes = {"bm1684x": 64, "bm1688": 32}[a.chip]
    os.makedirs(a.work, exist_ok=True)
    if not a.no_compile:
        VENV = os.environ.get("TPUMLIR_VENV") or sys.exit("set TPUMLIR_VENV")
        write_nets(a.work)
        env = dict(os.environ, TPUMLIR_WORK=os.path.abspath(a.work), CHIPS=a.chip, TPUMLIR_VENV=VENV)
        subprocess.run(["bash", f"{R}/bench/tpumlir_zoo_run.sh"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        tpumlir_zoo_compare.VENV, tpumlir_zoo_compare.W = VENV, os.path.abspath(a.work)
        for net in ALL:
            r = force_group(net, a.chip)
            if "error" in r:
                print(f"{net}: {r['error']}")
    p = preset(a.chip)
    errs = {"fit": [], "held_out": [], "unseen_f16": []}
    rows = ["chip,split,net,kind,dtype,n,c,h,w,cycles"]
    for net in ALL:
        # an F16 probe's conv group comes first: its element-wise group is the last two
        seen = transfers(a.work, net, a.chip)
        for t in seen[-2:] if net in F16 else seen:
            if t["slices"] != [1, 1, 1, 1]:
                print(f"{net:12} {t['kind']:5} sliced {t['slices']}: skipped")
                continue
            ours = rule(p, t, lanes, a.small_rows, a.old)
            split = split_of(net)
            errs[split].append(ours / t["cycles"] - 1)
            n, c, h, w = t["shape"]
            rows.append(f"{a.chip},{split},{net},{t['kind']},{t['dtype']},{n},{c},{h},{w},{t['cycles']}")
            print(f"{net:12} {split:10} {t['kind']:5} {t['dtype']} {t['shape']} "
                  f"{t['cycles']:6} cycles, rule {ours:7.0f} ({ours / t['cycles'] - 1:+.1%}); "
                  f"floor units {t['cycles'] / p['floor'][t['kind']]:.0f}, n·c·h {n * c * h}")
    for split, e in errs.items():
        if e:
            print(f"{split:10} {len(e):3} transfers: median |error| "
                  f"{statistics.median(map(abs, e)):.1%}, worst {max(map(abs, e)):.1%}, "
                  f"within 5 %: {sum(abs(x) < 0.05 for x in e)}")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()

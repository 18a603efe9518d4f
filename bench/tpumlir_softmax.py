#!/usr/bin/env python3
"""The TIU cycles of TPU-MLIR 1.30.2's local softmax, measured on probes apart from the
transformer zoo (issue 20).

Each probe is one attention head block as exporters write it: Q [b, sq, heads, d], K
and V [b, sk, heads, d], transposed, Q·Kᵀ, Softmax over the last axis, ·V, transposed
back. TPU-MLIR keeps the scores in its [b, sq, heads, sk] layout (sq on the lanes, the
heads and keys along each lane) and groups the softmax with the matmuls, slicing where
local memory asks (its own grouping: nothing forced). The script compiles each probe
on both chips (bench/tpumlir_zoo_run.sh), reads the softmax's commands from codegen's
compiler_profile_0.txt by the op's line in the final MLIR, and prints, per command kind
(AR, SFU, pooling and depthwise, static broadcast), the cycles, beside the planner's rule
(`tpusim_planner::nd_plan::local_softmax`, restated in `rule` below from the chip files'
`local_softmax_*` figures), and per chip and split the median and worst error.

The probes are split before anything is compiled: FIT probes are the ones the rule's
figures may be chosen on, HELD_OUT ones are only reported. `--csv` writes every
softmax's slices and cycles for crates/planner/tests/data/tpumlir_softmax.csv, which a
planner test reads.

Usage: TPUMLIR_VENV=VENV python3 bench/tpumlir_softmax.py WORKDIR [--no-compile] [--csv F]
"""
import argparse
import collections
import functools
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tomllib

R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHIPS = ("bm1684x", "bm1688")
HEAD_DIM = 32
# name: [b, sq, sk, heads]
FIT = {
    "a1x64x16x4": [1, 64, 16, 4], "a1x64x32x4": [1, 64, 32, 4], "a1x64x128x4": [1, 64, 128, 4],
    "a1x64x256x2": [1, 64, 256, 2], "a1x128x64x2": [1, 128, 64, 2], "a1x32x512x1": [1, 32, 512, 1],
    "a2x64x64x2": [2, 64, 64, 2], "a1x64x8x8": [1, 64, 8, 8], "a1x64x24x4": [1, 64, 24, 4],
    "a1x100x100x2": [1, 100, 100, 2], "a3x32x48x2": [3, 32, 48, 2], "a1x16x200x4": [1, 16, 200, 4],
    "a1x64x384x1": [1, 64, 384, 1], "a4x16x16x4": [4, 16, 16, 4], "a1x200x40x1": [1, 200, 40, 1],
}
HELD_OUT = {
    "a1x64x48x4": [1, 64, 48, 4], "a1x96x96x3": [1, 96, 96, 3], "a2x32x160x2": [2, 32, 160, 2],
    "a1x128x256x1": [1, 128, 256, 1], "a1x64x12x6": [1, 64, 12, 6], "a1x48x320x2": [1, 48, 320, 2],
    "a1x80x80x5": [1, 80, 80, 5], "a2x50x72x3": [2, 50, 72, 3], "a1x256x128x1": [1, 256, 128, 1],
    "a6x8x8x2": [6, 8, 8, 2],
}
ALL = {**FIT, **HELD_OUT}
CMD = re.compile(r'(\w+?)_(\d+)\|(\w+)\|s:(\d+)\|b:\d+\|g:\d+\|e:(\d+)\|t:(\d+)')
SLICES = ("n_slice", "c_slice", "h_slice", "w_slice")


def write_nets(work):
    import onnx
    from onnx import TensorProto, helper
    zoo = {}
    for name, (b, sq, sk, heads) in ALL.items():
        nodes = [helper.make_node("Transpose", ["q"], ["qt"], perm=[0, 2, 1, 3]),
                 helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 3, 1]),
                 helper.make_node("MatMul", ["qt", "kt"], ["s"]),
                 helper.make_node("Softmax", ["s"], ["p"], axis=3),
                 helper.make_node("Transpose", ["v"], ["vt"], perm=[0, 2, 1, 3]),
                 helper.make_node("MatMul", ["p", "vt"], ["o"]),
                 helper.make_node("Transpose", ["o"], ["y"], perm=[0, 2, 1, 3])]
        shapes = [[b, sq, heads, HEAD_DIM], [b, sk, heads, HEAD_DIM], [b, sk, heads, HEAD_DIM]]
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip("qkv", shapes)]
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT, shapes[0])
        g = helper.make_graph(nodes, name, ins, [out])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{work}/{name}.onnx")
        zoo[name] = {"input_shape": shapes, "held_out": name in HELD_OUT}
    with open(f"{work}/zoo.json", "w") as f:
        json.dump(zoo, f)


def softmaxes(work, net, chip):
    """Every grouped softmax of one compile: its slices and its TIU cycles and commands by kind."""
    d = f"{work}/{net}/{chip}_lg"
    finals = glob.glob(f"{d}/*_final.mlir")
    if not finals:
        return
    lines = open(finals[0]).read().split("\n")
    cycles, count = collections.defaultdict(collections.Counter), collections.defaultdict(collections.Counter)
    for text in open(f"{d}/compiler_profile_0.txt"):
        for m in CMD.finditer(text):
            if "GDMA" not in m.group(3):
                cycles[int(m.group(2))][m.group(3)] += int(m.group(6))
                count[int(m.group(2))][m.group(3)] += 1
    for line_no in sorted(cycles):
        text = lines[line_no - 1]
        ginfo = re.search(r"ginfo = #tpu.lg<([^>]*)>", text)
        if '"tpu.Softmax"' not in text or not ginfo:
            continue
        sl = {k: [int(x) for x in re.search(k + r" = \[([^\]]*)\]", ginfo.group(1)).group(1).split(",")
                  if x.strip()] for k in SLICES}
        dims = [int(x) for x in re.findall(r"tensor<([0-9x]+)x(?:f16|f32)", text)[-1].split("x")]
        yield {"net": net, "chip": chip, "shape": dims, **sl,
               "cycles": dict(cycles[line_no]), "commands": dict(count[line_no])}


@functools.lru_cache(maxsize=None)
def figures(chip):
    """The chip file's local softmax figures, its lanes and its EU width at f16."""
    with open(f"{R}/data/lmem/{chip}.toml", "rb") as f:
        t = tomllib.load(f)
    eu = t["eu_bytes"] // 2
    return t["npu_num"], eu, t["local_softmax_pass_cycles"], t["local_softmax_row_pass_cycles"], \
        t["local_softmax_exp_cycles"], t.get("local_pool_row_pieces", False)


def rule(chip, c, h, w):
    """The planner's cycles for one plane of a slice (nd_plan::local_softmax::LocalSoftmax)."""
    lanes, eu, pass_c, row_c, exp_c, pieces = figures(chip)
    lane_rows = -(-c // lanes)
    cycles = lane_rows * -(-(h * w) // eu) * (pass_c + exp_c) + lane_rows * -(-h // (eu // 2)) * row_c
    for width in (eu, eu // 2):
        rows = lane_rows * h
        fold = rows * -(-w // width) if w > width else 0
        window = min(w, width)
        piece = h // -(-h // width) if pieces else 1
        cycles += fold + rows * window * -(-(piece * window) // width)
    return cycles


def planes(s):
    """Every plane of every slice of softmax record `s`: [c, h, w]."""
    return [(c, h, w) for n in s["n_slice"] for c in s["c_slice"] for h in s["h_slice"] for w in s["w_slice"]
            for _ in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work")
    ap.add_argument("--no-compile", action="store_true", help="read the compiles already in WORKDIR")
    ap.add_argument("--csv", help="write every softmax's slices and cycles here")
    ap.add_argument("--zoo", nargs="*", default=[], metavar="ZOO_DIR",
                    help="also read the grouped softmaxes of TPU-MLIR's own compiles of these transformer zoo "
                         "folders (bench/tpumlir_tx_zoo.py), as split `zoo`")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    if not a.no_compile:
        venv = os.environ.get("TPUMLIR_VENV") or sys.exit("set TPUMLIR_VENV")
        write_nets(a.work)
        env = dict(os.environ, TPUMLIR_WORK=os.path.abspath(a.work), TPUMLIR_VENV=venv)
        subprocess.run(["bash", f"{R}/bench/tpumlir_zoo_run.sh"], env=env, check=True)
    errors = collections.defaultdict(list)
    rows = ["chip,split,net,n_slices,c_slices,h_slices,w_slices,ar,sfu,pord,static_bc,other,ar_cmds,pord_cmds"]
    runs = [(a.work, net, "held_out" if net in HELD_OUT else "fit") for net in ALL]
    seen = set(ALL)
    for root in a.zoo:
        for net in json.load(open(f"{root}/zoo.json")):
            if net not in seen and os.path.isdir(f"{root}/{net}"):
                seen.add(net)
                runs.append((root, net, "zoo"))
    for root, net, split in runs:
        for chip in CHIPS:
            for s in softmaxes(root, net, chip):
                c, k = s["cycles"], s["commands"]
                known = c.get("AR", 0) + c.get("SFU", 0) + c.get("PorD", 0) + c.get("STATIC_BC", 0)
                fmt = lambda xs: " ".join(map(str, xs))
                rows.append(f"{chip},{split},{net},{fmt(s['n_slice'])},{fmt(s['c_slice'])},{fmt(s['h_slice'])},"
                            f"{fmt(s['w_slice'])},{c.get('AR', 0)},{c.get('SFU', 0)},{c.get('PorD', 0)},"
                            f"{c.get('STATIC_BC', 0)},{sum(c.values()) - known},{k.get('AR', 0)},{k.get('PorD', 0)}")
                ours = sum(rule(chip, *p) for p in planes(s))
                errors[(chip, split)].append(ours / sum(c.values()) - 1)
                print(f"{chip:8} {split:8} {net:18} n{s['n_slice']} c{s['c_slice']} h{s['h_slice']} "
                      f"w{s['w_slice']} {sum(c.values()):7} cycles, rule {ours:7.0f} "
                      f"({ours / sum(c.values()) - 1:+.1%}) {c}")
    for (chip, split), e in sorted(errors.items()):
        print(f"{chip:8} {split:8} {len(e):3} softmaxes: median |error| {statistics.median(map(abs, e)):.1%}, "
              f"worst {max(map(abs, e)):.1%}, within 5 %: {sum(abs(x) < 0.05 for x in e)}")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Activation transfers of small maps in TPU-MLIR 1.30.2, against the chip presets' rule
(issue 19): `cost::act_plane_cycles`.

Each probe is a 1x1 conv, a ReLU and a 3x3/1 average pool on a 1 x C x S x S f32 input,
compiled by TPU-MLIR with its own grouping (F16): one layer group that loads the f32
input and stores the pool's f32 output, one GDMA command each. C runs over 8 to 96
channels, S over 5 to 24 (planes of 100 to 2,304 bytes, transfers of 800 bytes to
36 KiB). The script writes the probes, compiles them (bench/tpumlir_zoo_run.sh), reads
each load and store from the final MLIR and codegen's profile, and prints the plain
model (set-up + max(bytes / rate, planes x floor)) and the preset's rule beside them.

On bm1684x small transfers take up to 4x the plain figure: a row's planes each take
the small-plane factor times the longer of the floor and their bytes at the rate, the
planes moving in ceil(bytes / gdma_act_row_bytes) rows. On bm1688 the plain figures
hold (the preset has no gdma_act_row_bytes).

Usage: TPUMLIR_VENV=VENV python3 bench/tpumlir_act_rows.py WORKDIR [--chip C]
           [--no-compile] [--csv FILE]
  --csv writes every transfer (chip, dir, c, h, w, bytes, cycles), as committed in
  crates/planner/tests/data/tpumlir_act_rows.csv and checked by
  crates/planner/src/tpumlir/tests/gdma.rs.
Needs `onnx` and `numpy`.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tpumlir_small_planes import one_command_transfers, preset

R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRID = [(c, s) for c in (8, 16, 24, 32, 40, 48, 64, 96) for s in (5, 7, 9)] + \
       [(c, s) for c in (8, 16, 32, 64) for s in (10, 12, 14, 16, 20, 24)]


def write_probes(work):
    """The probes' ONNX files and the zoo.json bench/tpumlir_zoo_run.sh reads."""
    rng = np.random.default_rng(7)
    index = {}
    for c, s in GRID:
        name = f"act_c{c}_{s}"
        w = numpy_helper.from_array((rng.standard_normal((c, c, 1, 1)) * 0.1).astype(np.float32), "w")
        b = numpy_helper.from_array(np.zeros(c, np.float32), "b")
        nodes = [helper.make_node("Conv", ["input", "w", "b"], ["conv"], kernel_shape=[1, 1]),
                 helper.make_node("Relu", ["conv"], ["relu"]),
                 helper.make_node("AveragePool", ["relu"], ["avg"], kernel_shape=[3, 3],
                                  strides=[1, 1], pads=[1, 1, 1, 1])]
        shape = [1, c, s, s]
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("avg", TensorProto.FLOAT, shape)], [w, b])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save(m, f"{work}/{name}.onnx")
        index[name] = {"input_shape": shape, "held_out": False}
    with open(f"{work}/zoo.json", "w") as f:
        json.dump(index, f, indent=1)


def transfers(work, chip):
    """Every one-command group load and store of the probes' own compiles."""
    for _, _, kind, _, (_, c, h, w), cycles in one_command_transfers(work, chip):
        if h > 1:  # not a weight
            yield {"chip": chip, "dir": kind, "c": c, "h": h, "w": w, "bytes": c * h * w * 4, "cycles": cycles}


def plain(t, p):
    k = t["dir"]
    return p["setup"][k] + max(t["bytes"] / p["rate"][k], t["c"] * p["floor"][k])


def rule(t, p, act_rows):
    """The preset's rule (crates/planner/src/cost.rs `act_plane_cycles`)."""
    if not act_rows:
        return plain(t, p)
    k = t["dir"]
    rows = max(1, math.ceil(t["bytes"] / act_rows))
    plane = p["factor"] * max(p["floor"][k], t["bytes"] / t["c"] / p["rate"][k])
    return max(plain(t, p), p["setup"][k] + t["c"] / rows * plane)


def act_row_bytes(chip):
    import tomllib
    with open(f"{R}/data/lmem/{chip}.toml", "rb") as f:
        return float(tomllib.load(f).get("gdma_act_row_bytes", 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work")
    ap.add_argument("--chip", default="bm1684x")
    ap.add_argument("--no-compile", action="store_true", help="read the compiles already in WORK")
    ap.add_argument("--csv", help="write every transfer here")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    if not a.no_compile:
        write_probes(a.work)
        env = dict(os.environ, TPUMLIR_WORK=os.path.abspath(a.work), CHIPS=a.chip)
        subprocess.run(["bash", f"{R}/bench/tpumlir_zoo_run.sh"], env=env, check=True)
    p, rows = preset(a.chip), act_row_bytes(a.chip)
    seen = list(transfers(a.work, a.chip))
    if not seen:
        sys.exit(f"no transfers of {a.chip} under {a.work}")
    for name, f in (("plain", plain), (f"rule (rows of {rows:.0f} B)", lambda t, p: rule(t, p, rows))):
        errs = [abs(f(t, p) / t["cycles"] - 1) for t in seen]
        print(f"{a.chip} {name:22} {len(errs)} transfers: median |error| {statistics.median(errs) * 100:.1f} %, "
              f"worst {max(errs) * 100:.1f} %, within 5 %: {sum(e < 0.05 for e in errs)}")
    for t in sorted(seen, key=lambda t: -abs(rule(t, p, rows) / t["cycles"] - 1))[:8]:
        print(f"  {t['dir']:5} {t['c']:3} x {t['h']}x{t['w']} f32 ({t['bytes']:6} B): {t['cycles']:5} cycles, "
              f"plain {plain(t, p):6.0f}, rule {rule(t, p, rows):6.0f}")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("chip,dir,c,h,w,bytes,cycles\n")
            for t in sorted(seen, key=lambda t: (t["dir"], t["c"], t["h"])):
                f.write(f"{t['chip']},{t['dir']},{t['c']},{t['h']},{t['w']},{t['bytes']},{t['cycles']}\n")


if __name__ == "__main__":
    main()

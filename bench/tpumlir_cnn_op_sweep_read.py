#!/usr/bin/env python3
"""Each op under study of bench/tpumlir_cnn_op_sweep.py's networks, as TPU-MLIR 1.30.2
compiled them: its TIU commands' cycles from the codegen profile and its local buffer and
`use_3ic_optimize` from the final MLIR, one JSON object per (network, chip).

Usage: python bench/tpumlir_cnn_op_sweep_read.py SWEEP_DIR > tests/data/cnn_op_sweep.jsonl
"""
import collections
import json
import os
import re
import sys


def op_commands(profile, kind):
    """The first op of `kind` (Conv2D, Add, Pool2D) in a profile: {command: cycles}."""
    first, cmds = None, collections.Counter()
    for line in open(profile):
        m = re.match(r"(\w+?)\|(\w+)\|.*\|t:(\d+)", line[:88].strip())
        if not m or not m.group(1).startswith(kind + "_"):
            continue
        first = first or m.group(1)
        if m.group(1) == first:
            cmds[m.group(2)] += int(m.group(3))
    return dict(cmds)


def final_attrs(mlir, kind):
    """`buffer_size` and `use_3ic_optimize` of the first `tpu.<kind>` op of a final MLIR."""
    for line in open(mlir):
        if f'"tpu.{kind}"' in line:
            buf = re.search(r"buffer_size = (\d+)", line)
            tri = re.search(r"use_3ic_optimize = (\d+)", line)
            return (int(buf.group(1)) if buf else None, int(tri.group(1)) if tri else None)
    return (None, None)


def main():
    w = sys.argv[1]
    index = json.load(open(f"{w}/zoo.json"))
    for net, v in index.items():
        kind = {"dw": "Conv2D", "fused": "Conv2D", "add": "Add"}.get(net.split("_")[0], "Pool2D")
        for chip in ["bm1684x", "bm1688"]:
            lg = f"{w}/{net}/{chip}_lg"
            if not os.path.exists(f"{lg}/compiler_profile_0.txt"):
                continue
            cmds = op_commands(f"{lg}/compiler_profile_0.txt", kind)
            buf, tri = final_attrs(f"{lg}/{net}_{chip}_f16_final.mlir", kind)
            print(json.dumps({"net": net, "chip": chip, "input_shape": v["input_shape"],
                              "op": kind, "cycles": sum(cmds.values()), "commands": cmds,
                              "buffer_size": buf, "use_3ic_optimize": tri}))


if __name__ == "__main__":
    main()

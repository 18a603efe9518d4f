#!/usr/bin/env python3
"""Global binary layers with a broadcast operand as TPU-MLIR 1.30.2 compiles them: the
scores [N, H, S, T] plus a mask of one head [N, 1, S, T], as LLaMA-style exports add
their causal mask (the rule in crates/planner/src/nd_global.rs, `broadcast_binary_compute`).

Writes one-Add ONNX networks (both operands graph inputs) into TPUMLIR_WORK, then, after
`bench/tpumlir_zoo_run.sh` has run TPU-MLIR's own flow on them, compiles each with every
op forced global (bench/tpumlir_global_upsample.py's `compiled_all_global`) and prints the
Add's commands from codegen's profile: its transfers, its lane broadcast (LANE_BC) and
its arithmetic passes (AR). HELD_OUT was chosen before any case was compiled.

Usage:
  TPUMLIR_WORK=DIR python3 bench/tpumlir_global_broadcast.py write      (needs onnx)
  TPUMLIR_VENV=VENV TPUMLIR_WORK=DIR bench/tpumlir_zoo_run.sh
  TPUMLIR_VENV=VENV TPUMLIR_WORK=DIR python3 bench/tpumlir_global_broadcast.py measure \\
      > crates/planner/tests/data/tpumlir_global_broadcast.jsonl
"""
import json
import os
import re
import sys

# (batch, heads, rows, columns)
CASES = [(1, 4, 64, 64), (1, 8, 32, 128), (2, 6, 48, 48), (1, 12, 16, 64), (3, 2, 40, 40),
         (1, 16, 64, 32)]
HELD_OUT = [(3, 2, 40, 40), (1, 16, 64, 32)]
CHIPS = ["bm1684x", "bm1688"]
W = os.environ.get("TPUMLIR_WORK")

# the one-node networks and all-global compiles these probes share, in the same work dir
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tpumlir_global_upsample as gu  # noqa: E402

gu.W = W


def name_of(n, h, s, t):
    return f"bcast_n{n}_h{h}_s{s}_t{t}"


def write():
    from onnx import helper
    index = {}
    for n, h, s, t in CASES:
        name = name_of(n, h, s, t)
        node = helper.make_node("Add", ["scores", "mask"], ["masked"], name="add1")
        gu.save_one_node(name, node, [[n, h, s, t], [n, 1, s, t]], [n, h, s, t])
        index[name] = {"input_shape": [[n, h, s, t], [n, 1, s, t]], "held_out": (n, h, s, t) in HELD_OUT}
    gu.write_zoo(index)


def add_commands(profile):
    """(kind, cycles) of every command codegen names Add_*."""
    out = []
    for line in open(profile):
        for m in re.finditer(r"Add_\d+\|([A-Z_0-9]+)\|[^ ]*?\|t:(\d+)", line):
            out.append((m.group(1), int(m.group(2))))
    return out


def measure():
    for n, h, s, t in CASES:
        name = name_of(n, h, s, t)
        for chip in CHIPS:
            cmds = add_commands(gu.compiled_all_global(name, chip))
            kinds = {k: sum(c for kk, c in cmds if kk == k) for k, _ in cmds}
            row = {"net": name, "chip": chip, "shape": [n, h, s, t], "held_out": (n, h, s, t) in HELD_OUT,
                   "commands": kinds, "cycles": sum(c for _, c in cmds)}
            print(json.dumps(row))


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("write", "measure") or not W:
        sys.exit(__doc__)
    {"write": write, "measure": measure}[sys.argv[1]]()

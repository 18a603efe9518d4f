#!/usr/bin/env python3
"""Global permutes (0, 2, 1, 3) as TPU-MLIR 1.30.2 compiles them: the heads of a
[batch, seq, heads, head_dim] tensor to the front, as LLaMA-style exports write before
the rotary embedding (the rule in crates/planner/src/nd_global.rs, `permute_cycles`).

Writes single-Transpose ONNX networks into TPUMLIR_WORK, then, after
`bench/tpumlir_zoo_run.sh` has run TPU-MLIR's own flow on them, compiles each with every
op forced global (LOAD_TPU_GROUP=1, bench/tpumlir_zoo_compare.py's flow) and reads the
permute's GDMA commands from codegen's profile. HELD_OUT was chosen before any case was
compiled and is kept out of every fit.

Usage:
  TPUMLIR_WORK=DIR python3 bench/tpumlir_global_permute.py write      (needs onnx, numpy)
  TPUMLIR_VENV=VENV TPUMLIR_WORK=DIR bench/tpumlir_zoo_run.sh
  TPUMLIR_VENV=VENV TPUMLIR_WORK=DIR python3 bench/tpumlir_global_permute.py measure \\
      > crates/planner/tests/data/tpumlir_global_permute.jsonl
"""
import json
import os
import re
import sys

# (seq, heads, head_dim)
CASES = [(64, 4, 4), (64, 4, 8), (64, 4, 16), (64, 4, 32), (64, 4, 64), (64, 4, 128),
         (32, 8, 8), (128, 4, 16), (64, 8, 32), (96, 6, 96), (128, 2, 8), (64, 2, 16),
         (48, 12, 24), (80, 5, 12)]
HELD_OUT = [(128, 2, 8), (64, 2, 16), (48, 12, 24), (80, 5, 12)]
CHIPS = ["bm1684x", "bm1688"]
W = os.environ.get("TPUMLIR_WORK")

# the one-node networks and all-global compiles these probes share, in the same work dir
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tpumlir_global_upsample as gu  # noqa: E402

gu.W = W


def name_of(s, h, d):
    return f"perm_s{s}_h{h}_d{d}"


def write():
    from onnx import helper
    index = {}
    for s, h, d in CASES:
        name = name_of(s, h, d)
        node = helper.make_node("Transpose", ["input"], ["permuted"], perm=[0, 2, 1, 3], name="permute1")
        gu.save_one_node(name, node, [1, s, h, d], [1, h, s, d])
        index[name] = {"input_shape": [1, s, h, d], "held_out": (s, h, d) in HELD_OUT}
    gu.write_zoo(index)


def permute_commands(profile):
    """(cycles, bytes) of every GDMA command codegen names Permute_*."""
    out = []
    for line in open(profile):
        for m in re.finditer(r"Permute_\d+\|GDMA[A-Z_]*\|[^ ]*?\|t:(\d+)\|dr:\d+\|sz:(\d+)", line):
            out.append((int(m.group(1)), int(m.group(2))))
    return out


def measure():
    for s, h, d in CASES:
        name = name_of(s, h, d)
        for chip in CHIPS:
            cmds = permute_commands(gu.compiled_all_global(name, chip))
            row = {"net": name, "chip": chip, "seq": s, "heads": h, "head_dim": d,
                   "held_out": (s, h, d) in HELD_OUT, "commands": cmds,
                   "cycles": sum(c for c, _ in cmds)}
            print(json.dumps(row))


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("write", "measure") or not W:
        sys.exit(__doc__)
    {"write": write, "measure": measure}[sys.argv[1]]()

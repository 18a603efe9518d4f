#!/usr/bin/env python3
"""A/B of two builds of the relayout kernel, alternating, in memory.

    python3 bench/layout_kernel_ab.py OLD/relayout_time NEW/relayout_time [PAIRS]

Each binary is `crates/layout/examples/relayout_time` built from one revision (e.g. the
old one from a `git worktree` with its own CARGO_TARGET_DIR). For f32[8192,8192] to and
from {1,0:T(8,128)} and bf16[8192,8192] to and from {1,0:T(8,128)(2,1)}, PAIRS times
(default 10): run OLD then NEW (each the best of 5 conversions into a pre-faulted
buffer) and take the ratio within the pair, so the VM's bandwidth drift cancels. Prints
the median times and the median (min..max) of the per-pair ratios old / new
(> 1: NEW is faster).
"""
import json, os, statistics, subprocess, sys, time

OLD, NEW = sys.argv[1], sys.argv[2]
PAIRS = int(sys.argv[3]) if len(sys.argv) > 3 else 10
CASES = [
    ("f32 to tiled", "f32[8192,8192]", "f32[8192,8192]{1,0:T(8,128)}"),
    ("f32 from tiled", "f32[8192,8192]{1,0:T(8,128)}", "f32[8192,8192]"),
    ("bf16 to tiled", "bf16[8192,8192]", "bf16[8192,8192]{1,0:T(8,128)(2,1)}"),
    ("bf16 from tiled", "bf16[8192,8192]{1,0:T(8,128)(2,1)}", "bf16[8192,8192]"),
]

def ms(binary, frm, to):
    out = subprocess.run([binary, frm, to, "5"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["prefaulted_seconds"] * 1e3

print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()}, {PAIRS} pairs")
print("| case | old ms (median) | new ms (median) | old / new per pair: median (min..max) |")
print("|---|---|---|---|")
for name, frm, to in CASES:
    old, new = [], []
    for _ in range(PAIRS):
        old.append(ms(OLD, frm, to))
        new.append(ms(NEW, frm, to))
    r = [a / b for a, b in zip(old, new)]
    print(f"| {name} | {statistics.median(old):.1f} | {statistics.median(new):.1f} "
          f"| **{statistics.median(r):.2f}** ({min(r):.2f}..{max(r):.2f}) |", flush=True)

#!/usr/bin/env python3
"""TPU-MLIR's own cycle estimates of every transfer of its layer groups, as CSV.

Input: the dbg.log of `bench/plan-tpumlir-debug.sh MODEL CHIP CACHE OUTDIR estimates`
(lines "action = timestep_cycle; timestep = T; timestep_type = layer|gdma; ...;
tensor_name = NAME; cycle = C[; buffer_size = B]"). The lines of one group run from
timestep 0 up; a new group starts where the timestep falls back. A transfer is a store
if a layer of the same group produces its tensor, else a load.
Output (stdout): model,dir,tensor,buffer_size,cycles — buffer_size in bytes per lane as
TPU-MLIR logs it; one row per distinct (dir, tensor, buffer_size, cycles) of a model (its
pass logs the same group more than once).
Usage: bench/plan_tpumlir_estimates.py MODEL DBG.LOG [MODEL DBG.LOG ...]
Made crates/planner/tests/data/tpumlir_dma_estimates_bm1688.csv from TPU-MLIR 1.30.2's
own groupings of resnet18, resnet50 and mini_mbv2 on bm1688 (F16, batch 1)."""
import re
import sys

args = sys.argv[1:]
if not args or len(args) % 2:
    sys.exit(__doc__)
print("model,dir,tensor,buffer_size,cycles")
for model, path in zip(args[::2], args[1::2]):
    groups, cur, last_ts = [], None, None
    for line in open(path):
        if "action = timestep_cycle;" not in line:
            continue
        f = dict(re.findall(r"(\w+) = ([^;]+?)\s*(?:;|$)", line.split("action = timestep_cycle;", 1)[1]))
        ts = int(f["timestep"])
        if cur is None or ts < last_ts:
            cur = {"layers": set(), "gdma": []}
            groups.append(cur)
        last_ts = ts
        if f["timestep_type"] == "layer":
            cur["layers"].add(f["tensor_name"])
        else:
            cur["gdma"].append((f["tensor_name"], int(f["buffer_size"]), int(f["cycle"])))
    seen = set()
    for g in groups:
        for name, size, cyc in g["gdma"]:
            row = ("store" if name in g["layers"] else "load", name, size, cyc)
            if row not in seen:
                seen.add(row)
                print(f"{model},{','.join(map(str, row))}")

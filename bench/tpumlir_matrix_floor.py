#!/usr/bin/env python3
"""The per-plane floor of TPU-MLIR 1.30.2's GDMA_MATRIX transfers (issue 19).

A global cast or element-wise op moves its operands as flat matrices (GDMA_MATRIX). A
small one pays a floor per plane, where its planes are the lanes its elements spread
over: E elements split evenly, ceil(E / lanes) a lane, on ceil(E / ceil(E / lanes))
lanes (bm1684x: a [1, 10] cast loads its 20 bytes in 44 cycles, 10 planes; a [8, 10]
its 160 in 176, 80 elements 2 a lane on 40 lanes; a [8, 100] its 1,600 in 271, 13 a lane
on 62 lanes). This reads every GDMA_MATRIX transfer of the global casts and activations
in TPU-MLIR's own compiles of the zoo (bench/tpumlir_zoo_run.sh, and optionally the probes
of bench/tpumlir_small_c.py, whose sigmoids and tanhs TPU-MLIR leaves global),
fits the floor (the median of (cycles - set-up) / planes over the tuned networks'
transfers whose floor exceeds their bytes at the matrix rate), and prints the rule's
error on the tuned and held-out networks apart, with the chip preset's figure if it has
one.

With --any-op, it instead checks the preset's floor on every GDMA_MATRIX transfer of
any element-wise op of ZOO_DIR's compiles (the transformer zoo's, bench/tpumlir_tx_zoo.py;
Where's masks left out, they move as one row), each transfer taken alone as 16-bit
elements, where the floor exceeds the bytes at the matrix rate: nothing is fitted.

Usage: python3 bench/tpumlir_matrix_floor.py ZOO_DIR CHIP [PROBE_DIR] [--any-op]
"""
import glob
import json
import math
import re
import statistics
import sys

from tpumlir_small_planes import preset, R

LANES = {"bm1684x": 64, "bm1688": 32}
# a profile's GDMA_MATRIX command: op type, op index, cycles, direction, bytes
XFER = re.compile(r"(\w+)_(\d+)\|GDMA_MATRIX\|s:\d+\|b:\d+\|g:\d+\|e:\d+\|t:(\d+)\|dr:(\d)\|sz:(\d+)")


def transfers(root, chip, held_out):
    for d in sorted(glob.glob(f"{root}/*/{chip}_lg")):
        net = d.split("/")[-2]
        ops = {}
        for m in XFER.finditer(open(f"{d}/compiler_profile_0.txt").read()):
            if m.group(1) in ("Cast", "Active"):
                ops.setdefault(m.group(1) + m.group(2), []).append(
                    (int(m.group(4)), int(m.group(5)), int(m.group(3))))
        for op, xs in ops.items():
            if len(xs) != 2:
                continue  # moved in chunks: bound by its bytes
            # a cast's 16-bit side, an activation's f32 elements
            elements = min(x[1] for x in xs) // 2 if op.startswith("Cast") else xs[0][1] // 4
            for direction, size, cycles in xs:
                yield {"net": net, "op": op, "kind": ("load", "store")[direction], "bytes": size,
                       "elements": elements, "cycles": cycles, "held_out": held_out(net)}


NOT_ELEMENT_WISE = {"MatMul", "Softmax", "Permute", "Conv2D", "Reshape", "Where"}


def any_op_check(root, chip, p, rate, floor):
    """The preset's floor against every element-wise op's matrix transfers under root."""
    lanes, errs, plain = LANES[chip], [], []
    for d in sorted(glob.glob(f"{root}/*/{chip}_lg")):
        for m in XFER.finditer(open(f"{d}/compiler_profile_0.txt").read()):
            op, cycles, direction, size = m.group(1), int(m.group(3)), int(m.group(4)), int(m.group(5))
            kind = ("load", "store")[direction]
            if op in NOT_ELEMENT_WISE or cycles == 0:
                continue
            bare = p["setup"][kind] + size / rate[kind]
            ours = p["setup"][kind] + max(size / rate[kind], planes(size // 2, lanes) * floor[kind])
            if ours > 1.01 * bare:
                errs.append(ours / cycles - 1)
                plain.append(bare / cycles - 1)
    if not errs:
        sys.exit(f"no floor-bound transfers of {chip} under {root}")
    for name, e in (("with the floor", errs), ("without", plain)):
        print(f"  {name:14} {len(e):4} floor-bound transfers: median |error| "
              f"{statistics.median(map(abs, e)):.1%}, worst {max(map(abs, e)):.1%}")


def planes(elements, lanes):
    per_lane = max(1, math.ceil(elements / lanes))
    return math.ceil(elements / per_lane)


def main():
    args = [a for a in sys.argv[1:] if a != "--any-op"]
    if len(args) < 2:
        sys.exit(__doc__)
    zoo_dir, chip = args[0], args[1]
    zoo = json.load(open(f"{zoo_dir}/zoo.json"))
    seen = list(transfers(zoo_dir, chip, lambda n: zoo.get(n, {}).get("held_out", True)))
    for probe_dir in args[2:]:
        seen += list(transfers(probe_dir, chip, lambda n: True))
    p = preset(chip)
    with open(f"{R}/data/lmem/{chip}.toml", "rb") as f:
        import tomllib
        toml = tomllib.load(f)
    clock = toml["clock_hz"]
    # as crates/planner/src/timing.rs reads them
    load_rate = toml.get("gdma_matrix_bytes_per_s", toml["gdma_bytes_per_s"])
    store_rate = toml.get("gdma_matrix_store_bytes_per_s", toml.get("gdma_matrix_bytes_per_s",
                          toml.get("gdma_store_bytes_per_s", toml["gdma_bytes_per_s"])))
    rate = {"load": load_rate / clock, "store": store_rate / clock}
    shipped = {"load": toml.get("gdma_matrix_load_cycles_per_plane"),
               "store": toml.get("gdma_matrix_store_cycles_per_plane")}
    if "--any-op" in sys.argv:
        return any_op_check(zoo_dir, chip, p, rate, shipped)
    lanes = LANES[chip]
    fitted = {}
    for kind in ("load", "store"):
        per_plane = [(t["cycles"] - p["setup"][kind]) / planes(t["elements"], lanes) for t in seen
                     if t["kind"] == kind and not t["held_out"]
                     and t["cycles"] - p["setup"][kind] > 1.2 * t["bytes"] / rate[kind]]
        fitted[kind] = statistics.median(per_plane)
        print(f"{chip} {kind}: fitted floor {fitted[kind]:.2f} cycles a plane on {len(per_plane)} tuned "
              f"transfers (preset: {shipped[kind]})")
    for name, floor in (("fitted", fitted), ("preset", shipped), ("no floor", {"load": 0, "store": 0})):
        if None in floor.values():
            continue
        for held in (False, True):
            errs = [(p["setup"][t["kind"]] + max(t["bytes"] / rate[t["kind"]],
                     planes(t["elements"], lanes) * floor[t["kind"]])) / t["cycles"] - 1
                    for t in seen if t["held_out"] == held]
            if errs:
                print(f"  {name:8} {'held out' if held else 'tuned':8} {len(errs):3} transfers: median |error| "
                      f"{statistics.median(map(abs, errs)):.1%}, worst {max(map(abs, errs)):.1%}, "
                      f"within 5 %: {sum(abs(e) < .05 for e in errs)}")


if __name__ == "__main__":
    main()

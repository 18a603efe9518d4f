#!/usr/bin/env python3
"""Small-plane transfers in TPU-MLIR 1.30.2's own compiles of the zoo, against the chip
presets' small-plane rule (issue 19).

A layer group's load or store whose (n, c) planes hold fewer bytes than EU_BYTES (bias
vectors, a global pool's 1x1 output) pays more than the plain per-plane floor. The
presets say how much (`gdma_small_plane_factor`, `gdma_small_row_bytes`, read by
crates/planner/src/cost.rs `small_plane_units`): the planes move in rows of at most that
many bytes, each row's planes at the factor times the floor, never below the floor.

This reads every such transfer issued as one command (a group not sliced along the
transfer) from the final MLIR and codegen's compiler_profile_0.txt of each network's own
compile (bench/tpumlir_zoo_run.sh), and prints the rule's error on the zoo's tuned and
held-out networks apart, with the worst transfers.

Usage: python3 bench/tpumlir_small_planes.py ZOO_DIR CHIP [--factor F --row-bytes B]
  (the preset's figures unless given: to try others against the same transfers)
"""
import argparse
import glob
import json
import math
import os
import re
import statistics
import sys
import tomllib

from plan_tpumlir_tx_ops import spans_of

R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ELEM = {"f16": 2, "bf16": 2, "f32": 4, "si8": 1, "ui8": 1, "i8": 1, "si16": 2, "i16": 2, "si32": 4, "i32": 4}
TYPE = re.compile(r"tensor<[0-9x]+x(f16|f32|bf16|si8|ui8|i8|si16|i16|si32|i32)")


def preset(chip):
    with open(f"{R}/data/lmem/{chip}.toml", "rb") as f:
        toml = tomllib.load(f)

    def num(key, default=0.0):
        return float(toml.get(key, default))
    return {
        "eu_bytes": num("eu_bytes"),
        "setup": {"load": num("gdma_load_setup_cycles"), "store": num("gdma_store_setup_cycles")},
        "rate": {"load": num("gdma_bytes_per_s") / num("clock_hz"),
                 "store": (num("gdma_store_bytes_per_s") or num("gdma_bytes_per_s")) / num("clock_hz")},
        "floor": {"load": num("gdma_load_cycles_per_plane"), "store": num("gdma_store_cycles_per_plane")},
        "factor": num("gdma_small_plane_factor", 1.0),
        "row_bytes": num("gdma_small_row_bytes"),
    }


def one_command_transfers(work, chip):
    """Every group load and store of the TPU-MLIR runs in WORK (`<net>/<chip>_lg`, as
    bench/tpumlir_zoo_run.sh leaves them) issued as one command (no slice loop: its
    profile span is that command): (net, its zoo.json entry, "load" or "store", the
    final MLIR line, (n, c, h, w), cycles)."""
    zoo = json.load(open(f"{work}/zoo.json"))
    for net, info in zoo.items():
        d = f"{work}/{net}/{chip}_lg"
        finals = glob.glob(f"{d}/*_final.mlir")
        if not finals:
            continue
        span = spans_of(f"{d}/compiler_profile_0.txt")
        for i, line in enumerate(open(finals[0]), 1):
            kind = "load" if '"tpu.Load"' in line else "store" if '"tpu.Store"' in line else None
            if not kind or i not in span:
                continue
            parts = {k: [int(x) for x in re.search(k + r"_slice = \[([0-9, ]*)\]", line).group(1).split(",")
                         if x.strip()] for k in "nchw"}
            if any(len(p) > 1 for p in parts.values()):
                continue  # issued once a slice: the span covers several commands
            dims = tuple(p[0] if p else 1 for p in (parts[k] for k in "nchw"))
            s, e = span[i]
            yield net, info, kind, line, dims, e - s + 1


def transfers(zoo_dir, chip, eu_bytes):
    """Every one-command group load or store of small planes in the zoo's own compiles."""
    for net, info, kind, line, (n, c, h, w), cycles in one_command_transfers(zoo_dir, chip):
        types = TYPE.findall(line)
        plane = h * w * ELEM[types[-1] if types else "f16"]
        if plane < eu_bytes:
            yield {"net": net, "held_out": info["held_out"], "kind": kind, "planes": n * c,
                   "bytes": n * c * plane, "cycles": cycles}


def predicted(t, p):
    rows = max(1, math.ceil(t["bytes"] / p["row_bytes"])) if p["row_bytes"] > 0 else 1
    units = max(t["planes"], math.ceil(t["planes"] / rows) * p["factor"])
    k = t["kind"]
    return p["setup"][k] + max(t["bytes"] / p["rate"][k], units * p["floor"][k])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("zoo_dir")
    ap.add_argument("chip")
    ap.add_argument("--factor", type=float)
    ap.add_argument("--row-bytes", type=float)
    a = ap.parse_args()
    p = preset(a.chip)
    if a.factor is not None:
        p["factor"] = a.factor
    if a.row_bytes is not None:
        p["row_bytes"] = a.row_bytes
    seen = list(transfers(a.zoo_dir, a.chip, p["eu_bytes"]))
    if not seen:
        sys.exit(f"no small-plane transfers of {a.chip} under {a.zoo_dir}")
    print(f"{a.chip}: factor {p['factor']}, rows of {p['row_bytes']:.0f} bytes")
    for held_out in (False, True):
        errs = [predicted(t, p) / t["cycles"] - 1 for t in seen if t["held_out"] == held_out]
        if errs:
            print(f"  {'held out' if held_out else 'tuned':8} {len(errs):4} transfers: median |error| "
                  f"{statistics.median(map(abs, errs)) * 100:.1f} %, worst {max(map(abs, errs)) * 100:.1f} %, "
                  f"within 5 %: {sum(abs(e) < 0.05 for e in errs)}")
    for t in sorted(seen, key=lambda t: -abs(predicted(t, p) / t["cycles"] - 1))[:5]:
        print(f"  {t['net']:18} {t['kind']:5} {t['planes']:5} planes {t['bytes']:6} B: "
              f"{t['cycles']:6} cycles, rule {predicted(t, p):8.0f}")


if __name__ == "__main__":
    main()

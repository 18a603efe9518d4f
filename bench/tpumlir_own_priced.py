#!/usr/bin/env python3
"""TPU-MLIR 1.30.2's own grouping of every transformer-zoo network, priced by tpusim,
against its compiled total: how well the model prices a grouping it did not choose.

    python3 bench/tpumlir_own_priced.py [TPUSIM] [--each]

Reads only committed data: each network's static graph and TPU-MLIR cache in
crates/planner/tests/data/tx_zoo/ (`<net>_<chip>.tpumlir_cache.json`) and TPU-MLIR's
compiled total from the `compiled*.jsonl` rows there (`theirs_reload.cycles`). Runs
`TPUSIM plan <net>_static.onnx --chip C --import-tpu-mlir CACHE --json` (TPUSIM defaults
to target/release/tpusim) and prints, per chip and split (held out or tuned), the median
and worst |error| and how many are within 5 %; with --each, every network's ratio.
"""
import glob
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "crates", "planner", "tests", "data", "tx_zoo")


def rows():
    """The last compiled row of each (network, chip) with TPU-MLIR's own total."""
    out = {}
    for f in sorted(glob.glob(os.path.join(DATA, "compiled*.jsonl"))):
        for line in open(f):
            r = json.loads(line)
            if r.get("theirs_reload", {}).get("cycles"):
                out[(r["net"], r["chip"])] = r
    return out


def priced(tpusim, net, chip):
    cache = os.path.join(DATA, f"{net}_{chip}.tpumlir_cache.json")
    graph = os.path.join(DATA, f"{net}_static.onnx")
    run = subprocess.run([tpusim, "plan", graph, "--chip", chip, "--import-tpu-mlir", cache, "--json"],
                         capture_output=True, text=True)
    return json.loads(run.stdout)["plan"]["cycles"] if run.returncode == 0 else None


def main():
    args = [a for a in sys.argv[1:] if a != "--each"]
    tpusim = args[0] if args else os.path.join(HERE, "..", "target", "release", "tpusim")
    res = {}
    for (net, chip), r in sorted(rows().items()):
        c = priced(tpusim, net, chip)
        if c is not None:
            res.setdefault(chip, []).append((c / r["theirs_reload"]["cycles"], net, bool(r.get("held_out"))))
    for chip, v in sorted(res.items()):
        for split in (True, False):
            e = [abs(x - 1) for x, _, h in v if h == split]
            if e:
                print(f"{chip} {'held out' if split else 'tuned'} {len(e)}: median {100 * statistics.median(e):.1f} %, "
                      f"worst {100 * max(e):.1f} %, within 5 % {sum(x <= 0.05 for x in e)}")
        if "--each" in sys.argv:
            for x, net, _ in sorted(v):
                print(f"    {net} {x:.3f}")


if __name__ == "__main__":
    main()

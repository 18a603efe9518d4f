#!/usr/bin/env python3
"""tpusim's NPU timing of the transformer zoo against TPU-MLIR 1.30.2's compiled cycles.

    python3 bench/tpumlir_tx_compare.py ZOO_DIR [--chip bm1684x] [--out FILE.jsonl]

ZOO_DIR is the folder of bench/tpumlir_tx_zoo.py, compiled by bench/tpumlir_zoo_run.sh
(ONNX_SUFFIX=_static CHIPS=bm1684x). For each network, `tpusim report <net>.onnx --chip
CHIP --batch B --seq S --json` of the static graph TPU-MLIR compiled (--graph dynamic:
the exporter's graph) is set beside codegen's total_cycle. Prints one line per network and the median and worst
absolute error of the held-out part; --out keeps the rows.
TPUSIM: the binary (default target/release/tpusim).
"""
import argparse
import json
import os
import re
import statistics
import subprocess

R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zoo")
    ap.add_argument("--chip", default="bm1684x")
    ap.add_argument("--out")
    ap.add_argument("--graph", choices=["static", "dynamic"], default="static",
                    help="plan <net>_static.onnx, the graph TPU-MLIR compiles (default), or the exporter's <net>.onnx")
    a = ap.parse_args()
    tpusim = os.environ.get("TPUSIM", os.path.join(R, "target", "release", "tpusim"))
    zoo = json.load(open(os.path.join(a.zoo, "zoo.json")))
    rows = []
    for net, info in zoo.items():
        prof = os.path.join(a.zoo, net, f"{a.chip}_lg", "compiler_profile_0.txt")
        if not os.path.exists(prof):
            print(f"{net}: no TPU-MLIR run")
            continue
        theirs = int(re.search(r"total_cycle:(\d+)", open(prof).read()).group(1))
        out = subprocess.run([tpusim, "report", os.path.join(a.zoo, net + ("_static" if a.graph == "static" else "") + ".onnx"), "--chip", a.chip,
                              "--batch", str(info["batch"]), "--seq", str(info["seq"]), "--json"],
                             capture_output=True, text=True, check=True)
        npu = json.loads(out.stdout)["plan"]
        row = {"net": net, "held_out": info["held_out"], "chip": a.chip, "tpumlir_cycles": theirs,
               "tpusim_cycles": npu["cycles"], "ratio": round(npu["cycles"] / theirs, 4)}
        rows.append(row)
        print(f"{net:20s} {'held out' if info['held_out'] else 'tuned   '} TPU-MLIR {theirs:9d}  tpusim {npu['cycles']:9d}  ratio {row['ratio']:.3f}")
    for part, keep in (("held out", True), ("tuned", False)):
        errs = [abs(r["ratio"] - 1) for r in rows if r["held_out"] == keep]
        if errs:
            print(f"{part}: {len(errs)} networks, median |error| {100 * statistics.median(errs):.1f} %, worst {100 * max(errs):.1f} %")
    if a.out:
        with open(a.out, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()

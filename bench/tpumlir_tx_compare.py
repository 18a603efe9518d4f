#!/usr/bin/env python3
"""tpusim's NPU timing of the transformer zoo against TPU-MLIR 1.30.2's compiled cycles.

    python3 bench/tpumlir_tx_compare.py ZOO_DIR [--chip bm1684x] [--out FILE.jsonl] [--compile]

ZOO_DIR is the folder of bench/tpumlir_tx_zoo.py, compiled by bench/tpumlir_zoo_run.sh
(ONNX_SUFFIX=_static CHIPS=bm1684x). For each network, `tpusim report <net>.onnx --chip
CHIP --batch B --seq S --json` of the static graph TPU-MLIR compiled (--graph dynamic:
the exporter's graph) is set beside codegen's total_cycle. With --compile (TPUMLIR_VENV
set to TPU-MLIR 1.30.2's venv), our plan's groups are exported (`plan --export-tpu-mlir`)
and compiled by TPU-MLIR with LOAD_TPU_GROUP=1, beside its own cache compiled the same
way (bench/tpumlir_zoo_compare.py's flow). With --verify too, both bmodels run in TPU-MLIR's
cmodel (model_runner.py) on one random input and their outputs are compared: a grouping
TPU-MLIR compiles into a wrong program (it may go on after a group fails to allocate)
is an error, whatever its cycles. Prints one line per network and the median and worst
absolute error of the held-out part; --out keeps the rows.
TPUSIM: the binary (default target/release/tpusim).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zoo")
    ap.add_argument("--chip", default="bm1684x")
    ap.add_argument("--out")
    ap.add_argument("--compile", action="store_true", help="compile our exported grouping and TPU-MLIR's own cache")
    ap.add_argument("--verify", action="store_true",
                    help="with --compile, run both bmodels in TPU-MLIR's cmodel and compare their outputs")
    ap.add_argument("--graph", choices=["static", "dynamic"], default="static",
                    help="plan <net>_static.onnx, the graph TPU-MLIR compiles (default), or the exporter's <net>.onnx")
    a = ap.parse_args()
    tpusim = os.environ.get("TPUSIM", os.path.join(R, "target", "release", "tpusim"))
    zc = None
    if a.compile:
        os.environ["TPUMLIR_WORK"] = os.path.abspath(a.zoo)
        sys.path.insert(0, os.path.join(R, "bench"))
        import tpumlir_zoo_compare as zc  # needs TPUMLIR_VENV
    zoo = json.load(open(os.path.join(a.zoo, "zoo.json")))
    rows = []
    for net, info in zoo.items():
        prof = os.path.join(a.zoo, net, f"{a.chip}_lg", "compiler_profile_0.txt")
        if not os.path.exists(prof):
            print(f"{net}: no TPU-MLIR run")
            continue
        theirs = int(re.search(r"total_cycle:(\d+)", open(prof).read()).group(1))
        cache = os.path.join(a.zoo, net, f"{a.chip}_ours.layer_group_cache.json")
        out = subprocess.run([tpusim, "plan", os.path.join(a.zoo, net + ("_static" if a.graph == "static" else "") + ".onnx"), "--chip", a.chip,
                              "--batch", str(info["batch"]), "--seq", str(info["seq"]), "--json", "--export-tpu-mlir", cache],
                             capture_output=True, text=True, check=True)
        npu = json.loads(out.stdout)["plan"]
        row = {"net": net, "held_out": info["held_out"], "chip": a.chip, "tpumlir_cycles": theirs,
               "tpusim_cycles": npu["cycles"], "ratio": round(npu["cycles"] / theirs, 4)}
        line = f"{net:20s} {'held out' if info['held_out'] else 'tuned   '} TPU-MLIR {theirs:9d}  tpusim {npu['cycles']:9d}  ratio {row['ratio']:.3f}"
        if zc:
            own = os.path.join(a.zoo, net, f"{a.chip}_lg", f"{net}_{a.chip}_f16.layer_group_cache.json")
            row["theirs_reload"] = zc.compile_with_cache(net, a.chip, "theirs_reload", open(own).read())
            row["ours_compiled"] = zc.compile_with_cache(net, a.chip, "ours", open(cache).read())
            if a.verify and "cycles" in row["ours_compiled"] and "cycles" in row["theirs_reload"]:
                wrong = outputs_differ(a.zoo, net, a.chip, a.graph)
                if wrong == UNVERIFIABLE:
                    row["verified"] = False
                elif wrong:
                    row["ours_compiled"] = {"error": wrong}
                else:
                    row["verified"] = True
            ours, base = row["ours_compiled"].get("cycles"), row["theirs_reload"].get("cycles")
            if ours and base:
                row["ours_vs_theirs"] = round(ours / base, 4)
                row["predicted_vs_compiled"] = round(npu["cycles"] / ours, 4)
                line += f" | compiled: ours {ours} theirs {base} ({row['ours_vs_theirs']:.3f}), predicted/compiled {row['predicted_vs_compiled']:.3f}"
            else:
                line += f" | compiled: ours {row['ours_compiled']} theirs {row['theirs_reload']}"
        rows.append(row)
        print(line)
    for part, keep in (("held out", True), ("tuned", False)):
        errs = [abs(r["ratio"] - 1) for r in rows if r["held_out"] == keep]
        if errs:
            print(f"{part}: {len(errs)} networks, predicted against TPU-MLIR's own: median |error| {100 * statistics.median(errs):.1f} %, worst {100 * max(errs):.1f} %")
        comp = [r for r in rows if r["held_out"] == keep and "ours_vs_theirs" in r]
        if comp:
            errs = [abs(r["predicted_vs_compiled"] - 1) for r in comp]
            print(f"  compiled: {len(comp)} of {sum(r['held_out'] == keep for r in rows)} compile, "
                  f"{sum(r['ours_vs_theirs'] <= 1 for r in comp)} as fast as TPU-MLIR's own or faster; "
                  f"predicted against our compiled: median |error| {100 * statistics.median(errs):.1f} %, worst {100 * max(errs):.1f} %")
    if a.out:
        with open(a.out, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


VERIFY = r"""
import sys, numpy as np, onnx
graph, out, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(seed)
inputs = {}
for i in onnx.load(graph, load_external_data=False).graph.input:
    dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
    if "mask" in i.name:
        inputs[i.name] = np.ones(dims, np.float32 if i.type.tensor_type.elem_type == 1 else np.int32)
    elif i.type.tensor_type.elem_type == 1:  # float: an activation (tests/data/tx_fusion's blocks)
        inputs[i.name] = rng.standard_normal(dims).astype(np.float32)
    else:  # token ids
        inputs[i.name] = rng.integers(0, 256, dims).astype(np.int32)
np.savez(out, **inputs)
"""

COMPARE = r"""
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
for k in b.files:
    x, y = a[k].astype(np.float64), b[k].astype(np.float64)
    scale = max(np.abs(y).max(), 1e-30)
    if x.shape != y.shape or np.abs(x - y).max() > 0.05 * scale:
        print(f"{k}: max |ours - theirs| {np.abs(x - y).max():.3g} of {scale:.3g}")
"""


UNVERIFIABLE = "TPU-MLIR's own bmodel does not run in its cmodel"


def outputs_differ(zoo, net, chip, graph="static"):
    """Both bmodels of `net` run in TPU-MLIR's cmodel on one random input: a line naming
    the output that differs by more than 5 % of its largest value, or None, or
    UNVERIFIABLE where TPU-MLIR's own bmodel does not run there either (bm1684x's
    llama_d320_s256 and llama_d1024_s256: the cmodel stops on `scatter_data: src_offset
    < (1<<18)` for the bmodel model_deploy itself wrote)."""
    venv = os.environ["TPUMLIR_VENV"]
    d = os.path.join(os.path.abspath(zoo), net)
    inp = os.path.join(d, "verify_in.npz")

    def py(code, *args):
        return subprocess.run([os.path.join(venv, "bin", "python3"), "-c", code, *args],
                              capture_output=True, text=True)

    suffix = "_static" if graph == "static" else ""
    py(VERIFY, os.path.join(os.path.abspath(zoo), net + suffix + ".onnx"), inp, "0")
    outs = []
    for kind in ("theirs_reload", "ours"):
        out = os.path.join(d, f"{chip}_{kind}", "verify_out.npz")
        run = subprocess.run(["bash", "-c", f". {venv}/bin/activate && model_runner.py --input {inp} "
                              f"--model {d}/{chip}_{kind}/{net}.bmodel --output {out}"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            return UNVERIFIABLE if kind == "theirs_reload" else "cmodel run of ours failed"
        outs.append(out)
    diff = py(COMPARE, outs[1], outs[0]).stdout.strip()
    return f"wrong output: {diff}" if diff else None


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`--scalesim-compat` on large layers whose operands exceed half their SRAM: time and
exactness against SCALE-Sim 3.0.0, side by side in one run.

Usage (from the repository root, tpusim built; SCALESIM_VENV: a virtualenv with `pip install scalesim==3.0.0`):
    $SCALESIM_VENV/bin/python bench/systolic_compat_bench.py \
        --tpusim $CARGO_TARGET_DIR/debug/tpusim [--layers 128ws,32ws]

Config: the golden cases' template (64 kB IFMAP and FILTER SRAM, 32 kB OFMAP, CALC),
so both operands of a 512×1024×768 GEMM are refetched. SCALE-Sim runs once through its
Python API (no trace files); tpusim best of 3 (wall time of the whole CLI process,
including start-up and writing the three reports). Prints one markdown table row per
layer and whether all three reports are byte-identical.
"""
import argparse, os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from systolic_make_goldens import cfg_text  # noqa: E402

REPORTS = ("COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv", "DETAILED_ACCESS_REPORT.csv")
M, N, K = 512, 1024, 768


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tpusim", required=True)
    ap.add_argument("--layers", default="128ws,32ws")
    a = ap.parse_args()
    from scalesim.scale_sim import scalesim
    print("| GEMM M×N×K | array | df | SCALE-Sim s | tpusim compat s | × | Total Cycles | DRAM IFMAP / FILTER reads | reports identical |")
    print("|---|---|---|---|---|---|---|---|---|")
    for spec in a.layers.split(","):
        arr, df = int(spec[:-2]), spec[-2:]
        with tempfile.TemporaryDirectory() as d:
            name = f"big_{arr}_{df}"
            open(os.path.join(d, "c.cfg"), "w").write(cfg_text(name, arr, arr, df, "CALC", 10, (64, 64, 32)))
            open(os.path.join(d, "t.csv"), "w").write(f"Layer,M,N,K,\nl,{M},{N},{K},\n")
            open(os.path.join(d, "l.csv"), "w").write("Layer name,a,\n")
            t0 = time.time()
            s = scalesim(save_disk_space=True, verbose=False, config=os.path.join(d, "c.cfg"),
                         topology=os.path.join(d, "t.csv"), layout=os.path.join(d, "l.csv"),
                         input_type_gemm=True)
            s.run_scale(top_path=os.path.join(d, "ss"))
            t_ss = time.time() - t0
            best = float("inf")
            for _ in range(3):
                t0 = time.time()
                subprocess.run([a.tpusim, "systolic", "run", "--config", os.path.join(d, "c.cfg"),
                                "--topology", os.path.join(d, "t.csv"), "--out", os.path.join(d, "us"),
                                "--scalesim-compat"], check=True, capture_output=True)
                best = min(best, time.time() - t0)
            same = all(open(os.path.join(d, "ss", name, r)).read() == open(os.path.join(d, "us", name, r)).read()
                       for r in REPORTS)
            comp = open(os.path.join(d, "ss", name, "COMPUTE_REPORT.csv")).read().splitlines()[1].split(",")
            det = open(os.path.join(d, "ss", name, "DETAILED_ACCESS_REPORT.csv")).read().splitlines()[1].split(",")
            print(f"| {M}×{N}×{K} | {arr}×{arr} | {df} | {t_ss:.1f} | {best:.3f} | {t_ss / best:.0f}× | "
                  f"{comp[2].strip()} | {det[12].strip()} / {det[15].strip()} | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()

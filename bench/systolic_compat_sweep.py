#!/usr/bin/env python3
"""Random-case check of `tpusim systolic run --scalesim-compat` against SCALE-Sim 3.0.0.

Usage (SCALESIM_VENV: a virtualenv with `pip install scalesim==3.0.0`; tpusim built):
    $SCALESIM_VENV/bin/python bench/systolic_compat_sweep.py \
        --tpusim $CARGO_TARGET_DIR/debug/tpusim [--seed 1] [--cases 60] [--wide]

Each case is a random small topology (two GEMM or two conv layers) on a random array
(2..32, or up to 64×128 with --wide) with random dataflow, CALC or USER mode, tiny
SRAMs (1..4 kB, so operands exceed half their SRAM: refetches and stalls) and random
interface bandwidths. SCALE-Sim runs through its Python API (no trace files) with a
60 s limit per case; our three reports must equal its reports byte for byte. Nothing
is written to the repository (cases live in a temporary directory, kept with --keep).
"""
import argparse, os, random, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import systolic_make_goldens as g  # noqa: E402

REPORTS = ("COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv", "DETAILED_ACCESS_REPORT.csv")

RUN = r"""
import os, shutil, sys, tempfile
from scalesim.scale_sim import scalesim
d, name, gemm = sys.argv[1], sys.argv[2], sys.argv[3] == "gemm"
with tempfile.TemporaryDirectory() as tmp:
    s = scalesim(save_disk_space=True, verbose=False, config=os.path.join(d, "scale.cfg"),
                 topology=os.path.join(d, "topology.csv"), layout=os.path.join(d, "layout.csv"),
                 input_type_gemm=gemm)
    s.run_scale(top_path=tmp)
    for rep in ("COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv", "DETAILED_ACCESS_REPORT.csv"):
        shutil.copy(os.path.join(tmp, name, rep), os.path.join(d, rep))
"""


def make_case(rng, d, name, wide):
    sizes = [3, 8, 16, 64] if wide else [2, 4, 8, 16, 32]
    r = rng.choice(sizes)
    c = rng.choice([5, 32, 64, 128] if wide else sizes)
    df = rng.choice(["ws", "os", "is"])
    mode = rng.choice(["CALC", "USER"])
    sram = (rng.randint(1, 4), rng.randint(1, 4), 1 if wide else rng.randint(1, 3))
    bw = rng.choice([1, 2, 4, 8, 16])
    ibw, fbw = rng.choice([1, 2, 5, 10]), rng.choice([1, 2, 5, 10])
    t = g.cfg_text(name, r, c, df, mode, bw, sram)
    t = t.replace("IfmapSRAMBankBandwidth: 10\nIfmapSRAMBankNum: 10",
                  f"IfmapSRAMBankBandwidth: {ibw}\nIfmapSRAMBankNum: {ibw}")
    t = t.replace("FilterSRAMBankBandwidth: 10\nFilterSRAMBankNum: 10",
                  f"FilterSRAMBankBandwidth: {fbw}\nFilterSRAMBankNum: {fbw}")
    if rng.random() < 0.5:
        kind = "gemm"
        mx = (150, 200, 120) if wide else (80, 60, 80)
        rows = [(f"g{j}", rng.randint(1, mx[0]), rng.randint(1, mx[1]), rng.randint(1, mx[2]))
                for j in range(2)]
    else:
        kind = "conv"
        rows = []
        for j in range(2):
            f = rng.randint(1, 4)
            rows.append((f"c{j}", rng.randint(f, 16), rng.randint(f, 16), f, f,
                         rng.randint(1, 8), rng.randint(1, 24), rng.randint(1, 3)))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "scale.cfg"), "w") as fh:
        fh.write(t)
    with open(os.path.join(d, "topology.csv"), "w") as fh:
        fh.write(g.topo_text(kind, 8, rows))
    with open(os.path.join(d, "layout.csv"), "w") as fh:
        fh.write(g.LAYOUT)
    return kind


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tpusim", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--wide", action="store_true")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    top = tempfile.mkdtemp(prefix="systolic_sweep_")
    counts = {"exact": 0, "differ": 0, "refused": 0, "scalesim_failed": 0}
    layers = stalled = 0
    t_ss = t_us = 0.0
    for i in range(a.cases):
        name = f"s{a.seed}_{i}"
        d = os.path.join(top, name)
        kind = make_case(rng, d, name, a.wide)
        t0 = time.time()
        p = subprocess.run([sys.executable, "-c", RUN, d, name, kind],
                           capture_output=True, text=True, timeout=None)
        t_ss += time.time() - t0
        if p.returncode != 0:
            counts["scalesim_failed"] += 1
            print(f"{name}: SCALE-Sim failed: {p.stderr.strip().splitlines()[-1:]}")
            continue
        out = os.path.join(d, "ours")
        t0 = time.time()
        q = subprocess.run([a.tpusim, "systolic", "run", "--config", os.path.join(d, "scale.cfg"),
                            "--topology", os.path.join(d, "topology.csv"), "--out", out,
                            "--scalesim-compat"], capture_output=True, text=True)
        t_us += time.time() - t0
        if q.returncode != 0:
            counts["refused"] += 1
            print(f"{name}: refused: {q.stderr.strip()}")
            continue
        same = all(open(os.path.join(d, r)).read() == open(os.path.join(out, name, r)).read()
                   for r in REPORTS)
        counts["exact" if same else "differ"] += 1
        if not same:
            print(f"{name}: differs ({d})")
        for line in open(os.path.join(d, "COMPUTE_REPORT.csv")).read().splitlines()[1:]:
            layers += 1
            stalled += int(line.split(",")[3]) > 0
    print(f"seed {a.seed}, {a.cases} cases ({'wide' if a.wide else 'small'} arrays): {counts}; "
          f"{layers} layers, {stalled} with stalls; SCALE-Sim {t_ss:.1f} s, tpusim {t_us:.2f} s")
    if not a.keep:
        shutil.rmtree(top)
    else:
        print(f"cases kept in {top}")
    sys.exit(0 if counts["differ"] == 0 else 1)


if __name__ == "__main__":
    main()

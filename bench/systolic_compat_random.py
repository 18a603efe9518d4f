#!/usr/bin/env python3
"""Random small SCALE-Sim 3 runs with sparsity or custom layouts, through SCALE-Sim 3.0.0
and through `tpusim systolic run --scalesim-compat`: every report must be identical, and
every run SCALE-Sim crashes on must be refused.

Usage (SCALESIM_VENV as in bench/systolic_make_goldens.py):
    $SCALESIM_VENV/bin/python bench/systolic_compat_random.py SEED COUNT --tpusim PATH/TO/tpusim

Each case: an array of 3..12, ws/os/is, CALC or USER, 64 or 1-2 kB SRAMs, two GEMM or
conv layers with random N:M ratios; either sparsity (csr/csc/ellpack_block, optimized
mapping on or off, BlockSize 2/3/4/8 capped at the array) or custom layouts (IFMAP
and/or FILTER, 1-8 banks of 1-2 ports). Prints one line per difference and a summary.
"""
import argparse, contextlib, io, os, random, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import systolic_make_goldens as g


def random_case(rng):
    a = rng.choice([3, 4, 6, 8, 12])
    df = rng.choice(["ws", "os", "is"])
    mode = rng.choice(["CALC", "USER"])
    sram = rng.choice([(64, 64, 32), (1, 1, 1), (2, 1, 4)])
    kind = rng.choice(["gemm", "conv"])
    opts, layout = {}, g.LAYOUT
    if rng.random() < 0.5:
        opt = rng.random() < 0.5
        block = min(rng.choice([2, 3, 4, 8]), a) if opt else 8
        opts.update(g.sparse(rng.choice(["csr", "csc", "ellpack_block"]),
                             "true" if opt else "false", block, rng.randint(0, 1000)))
    else:
        ib = rng.choice([8, 16, 32])
        opts.update(g.banks(ib, rng.choice([1, 2, 4]), rng.choice([1, 2]), 16,
                            rng.choice([1, 2, 4, 8]), rng.choice([1, 2]),
                            ifmap=rng.random() < 0.7, filt=rng.random() < 0.7))
        if kind == "gemm":
            layout = g.GEMM_LAYOUT if ib >= 16 else g.layout_text(
                ("L0", 2, 4, 1, 8, 1, 2, 2, 1, 0, 5, 4, 3, 3, 0, 1, 2, 7, 4, 5, 6))
        else:
            layout = g.CONV_LAYOUT if ib >= 16 else g.layout_text(
                ("L0", 2, 1, 1, 1, 4, 4, 0, 1, 2, 4, 5, 3, 3, 2, 1, 0, 4, 5, 6, 7))

    def ratio():
        m = rng.choice([2, 4, 8])
        return f"{rng.randint(1, m)}:{m}"

    if kind == "gemm":
        rows = [(f"g{i}", rng.randint(1, 30), rng.randint(1, 30), rng.randint(1, 30), ratio())
                for i in range(2)]
    else:
        rows = []
        for i in range(2):
            f = rng.randint(1, 3)
            h = rng.randint(f, 10)
            rows.append((f"c{i}", h, h, f, f, rng.choice([1, 3, 4, 8]), rng.randint(1, 12),
                         rng.randint(1, 2), ratio()))
    return a, df, mode, sram, kind, rows, opts, layout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("seed", type=int)
    ap.add_argument("count", type=int)
    ap.add_argument("--tpusim", required=True)
    args = ap.parse_args()
    from scalesim.scale_sim import scalesim
    rng = random.Random(args.seed)
    same = differ = crashed = 0
    for it in range(args.count):
        a, df, mode, sram, kind, rows, opts, layout = random_case(rng)
        name = f"r{it}"
        d = tempfile.mkdtemp()
        for f, text in (("scale.cfg", g.cfg_text(name, a, a, df, mode, 4, sram, opts)),
                        ("topology.csv", g.topo_text(kind, a, rows)), ("layout.csv", layout)):
            with open(os.path.join(d, f), "w") as out:
                out.write(text)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                s = scalesim(save_disk_space=True, verbose=False, config=d + "/scale.cfg",
                             topology=d + "/topology.csv", layout=d + "/layout.csv",
                             input_type_gemm=(kind == "gemm"))
                s.run_scale(top_path=d + "/ss")
            failure = None
        except Exception as e:  # SCALE-Sim crashed: tpusim must refuse
            failure = f"{type(e).__name__}: {e}"[:150]
        p = subprocess.run([args.tpusim, "systolic", "run", "-c", d + "/scale.cfg", "-t",
                            d + "/topology.csv", "-l", d + "/layout.csv", "-p", d + "/ts",
                            "--scalesim-compat"], capture_output=True, text=True)
        if failure:
            crashed += 1
            if p.returncode == 0:
                print(f"{d}: SCALE-Sim failed ({failure}) but tpusim ran")
                differ += 1
            else:
                shutil.rmtree(d)
            continue
        if p.returncode != 0:
            print(f"{d}: tpusim refused: {p.stderr.strip()}")
            differ += 1
            continue
        bad = [r for r in os.listdir(f"{d}/ss/{name}")
               if open(f"{d}/ss/{name}/{r}").read() != open(f"{d}/ts/{name}/{r}").read()]
        if bad:
            print(f"{d}: differs in {bad}")
            differ += 1
        else:
            same += 1
            shutil.rmtree(d)
    print(f"identical {same}, different {differ}, SCALE-Sim crashed (all refused unless listed) {crashed}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()

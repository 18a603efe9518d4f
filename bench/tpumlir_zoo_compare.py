#!/usr/bin/env python3
"""Our exported grouping of each zoo network against TPU-MLIR 1.30.2's own, compiled by it.

For each network of the zoo (bench/tpumlir_zoo.py) and chip, after TPU-MLIR's own run
(bench/tpumlir_zoo_run.sh), this:
  1. re-compiles TPU-MLIR's own cache with LOAD_TPU_GROUP=1 (the baseline, same flow);
  2. plans the network with tpusim (F16), exports the plan as a layer-group cache and
     compiles it the same way;
  3. compares the op names: every name our export lists must be one TPU-MLIR's own cache
     lists (TPU-MLIR drops names it does not know without a word), and the other way;
  4. reads codegen's total_cycle of both, and our predicted cycles (`plan --json`).
It prints one JSON object per (network, chip) and a Markdown table, with the held-out
networks (tpumlir_zoo.HELD_OUT) summarised apart.

Usage: TPUMLIR_VENV=VENV TPUMLIR_WORK=DIR python3 bench/tpumlir_zoo_compare.py [--names-only] [--out FILE.jsonl] [NET...]
  --names-only: step 3 alone (no compile)
  TPUSIM: the binary (default target/release/tpusim); CHIPS: default "bm1684x bm1688".
"""
import json
import os
import re
import statistics
import subprocess
import sys

R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# read here, checked in main() (bench/tpumlir_margin_cases.py imports `force_cache`)
VENV = os.environ.get("TPUMLIR_VENV")
W = os.environ.get("TPUMLIR_WORK")
TPUSIM = os.environ.get("TPUSIM", os.path.join(os.environ.get("CARGO_TARGET_DIR", f"{R}/target"), "release/tpusim"))
CHIPS = os.environ.get("CHIPS", "bm1684x bm1688").split()
NAMES_ONLY = "--names-only" in sys.argv

LAYER_GROUP = ('--layer-group="opt=2 group_by_cores=auto compress_mode=none debugger=1 '
               'disable_group_overlap=false lgcache=true config_filename= enable_lghash=False lghash_dir="')


def sh(cmd, cwd, venv=None):
    return subprocess.run(["bash", "-c", f". {venv or VENV}/bin/activate && {cmd}"], cwd=cwd,
                          capture_output=True, text=True)


def force_cache(lg, d, base, cache_text, venv=None):
    """Run TPU-MLIR's layer-group passes on its optimised MLIR `base` (its own run in
    folder `lg`) in folder `d`, with `cache_text` forced through LOAD_TPU_GROUP=1; the
    finished tpuc-opt process (`d/{base}_final.mlir` when it succeeds)."""
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(lg):
        if f.endswith(".npz") or f in (f"{base}_tpu_opt.mlir", f"{base}.layer_group_config.json"):
            dst = f"{d}/{f}"
            if not os.path.lexists(dst):
                os.symlink(f"{lg}/{f}", dst)
    with open(f"{d}/{base}.layer_group_cache.json", "w") as f:
        f.write(cache_text)
    return sh(f"LOAD_TPU_GROUP=1 tpuc-opt {base}_tpu_opt.mlir --dev-parallel --weight-reorder "
              f'--subnet-divide="dynamic=False" --op-reorder --topo-sort {LAYER_GROUP} --affine-opt '
              f"--core-parallel --after-layergroup-weight-reorder --address-assign -o {base}_final.mlir",
              d, venv)


def compile_with_cache(net, chip, kind, cache_text):
    """Compile TPU-MLIR's optimised MLIR of `net` with `cache_text` forced; total_cycle or an error."""
    d = f"{W}/{net}/{chip}_{kind}"
    base = f"{net}_{chip}_f16"
    opt = force_cache(f"{W}/{net}/{chip}_lg", d, base, cache_text)
    log = opt.stdout + opt.stderr
    if opt.returncode != 0:
        err = next((l for l in log.splitlines() if "error" in l), "failed")
        return {"error": err.strip()[:200]}
    # TPU-MLIR may go on after a group fails to allocate and emit a program that computes
    # that group's first slice only (gpt2_d320_s80_b2 on bm1688, a group of 3 C slices
    # run once: rows 32-79 of its output wrong in TPU-MLIR's cmodel): such a compile is
    # a failure, whatever its cycles
    failed = next((l for l in log.splitlines() if "local memory allocate failed" in l), None)
    if failed:
        return {"error": failed.strip()[:200]}
    gen = sh(f'tpuc-opt {base}_final.mlir --codegen="model_file={net}.bmodel embed_debug_info=True '
             f'model_version=latest bmodel_only=False gdma_check=False rvti=False" -o /dev/null', d)
    if gen.returncode != 0:
        return {"error": "codegen failed"}
    with open(f"{d}/compiler_profile_0.txt") as f:
        m = re.search(r"total_cycle:(\d+)", f.read())
    with open(f"{d}/{base}_final.mlir") as f:
        groups = f.read().count("tpu.Group")
    return {"cycles": int(m.group(1)), "groups": groups}


def cache_locs(cache):
    subs = [v for k, v in cache.items() if k.startswith("subfunc_")] or [cache]
    locs = set()
    for s in subs:
        for g in s.get("GroupLayer", []):
            locs.update(g["locs"])
        for g in s.get("GlobalLayer", []):
            locs.add(g["loc"])
    return locs


def compare(net, chip, batch):
    base = f"{net}_{chip}_f16"
    theirs_path = f"{W}/{net}/{chip}_lg/{base}.layer_group_cache.json"
    if not os.path.exists(theirs_path):
        return {"net": net, "chip": chip, "error": "no TPU-MLIR run"}
    theirs_text = open(theirs_path).read()
    with open(f"{W}/{net}/{chip}_lg/compiler_profile_0.txt") as f:
        own_total = int(re.search(r"total_cycle:(\d+)", f.read()).group(1))
    ours_path = f"{W}/{net}/{base}.ours.json"
    plan = subprocess.run([TPUSIM, "plan", f"{W}/{net}.onnx", "--batch", str(batch), "--chip", chip,
                           "--dtype", "f16", "--export-tpu-mlir", ours_path, "--json"],
                          capture_output=True, text=True)
    if plan.returncode != 0:
        return {"net": net, "chip": chip, "error": plan.stderr.strip()}
    predicted = json.loads(plan.stdout)["cycles"]
    ours_text = open(ours_path).read()
    ours_locs, theirs_locs = cache_locs(json.loads(ours_text)), cache_locs(json.loads(theirs_text))
    row = {"net": net, "chip": chip, "tpu_mlir_own": own_total, "predicted": predicted,
           "names_unknown_to_tpu_mlir": sorted(ours_locs - theirs_locs),
           "names_we_leave_out": sorted(theirs_locs - ours_locs)}
    if NAMES_ONLY:
        return row
    row["theirs_reload"] = compile_with_cache(net, chip, "theirs_reload", theirs_text)
    row["ours"] = compile_with_cache(net, chip, "ours", ours_text)
    return row


def table(rows, held_out):
    print("\n| network | chip | TPU-MLIR's grouping | ours | ours / theirs | predicted / ours | names |")
    print("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        t, o = r.get("theirs_reload", {}), r.get("ours", {})
        name = r["net"] + (" (held out)" if r["net"] in held_out else "")
        if "cycles" not in o or "cycles" not in t:
            print(f"| {name} | {r['chip']} | {t.get('cycles', t.get('error', r.get('error')))} | "
                  f"{o.get('error', r.get('error'))} | | | |")
            continue
        names = "equal" if not (r["names_unknown_to_tpu_mlir"] or r["names_we_leave_out"]) else \
            f"+{len(r['names_unknown_to_tpu_mlir'])} / -{len(r['names_we_leave_out'])}"
        print(f"| {name} | {r['chip']} | {t['cycles']:,} | {o['cycles']:,} | {o['cycles'] / t['cycles']:.4f} | "
              f"{r['predicted'] / o['cycles']:.3f} | {names} |")
    for label, part in (("tuned", [r for r in rows if r["net"] not in held_out]),
                        ("held out", [r for r in rows if r["net"] in held_out])):
        ok = [r for r in part if "cycles" in r.get("ours", {}) and "cycles" in r.get("theirs_reload", {})]
        if not part:
            continue
        errs = [abs(r["predicted"] / r["ours"]["cycles"] - 1) for r in ok]
        slower = [r for r in ok if r["ours"]["cycles"] > r["theirs_reload"]["cycles"]]
        print(f"\n{label}: {len(ok)} of {len(part)} compile; {len(slower)} slower than TPU-MLIR's grouping; "
              f"|predicted/compiled - 1|: median {statistics.median(errs) * 100:.1f} %, "
              f"worst {max(errs) * 100:.1f} %" if errs else f"\n{label}: none compiled")


def main():
    if not VENV or not W:
        sys.exit("set TPUMLIR_VENV and TPUMLIR_WORK")
    args = [a for a in sys.argv[1:] if a != "--names-only"]
    out = None
    if "--out" in args:
        i = args.index("--out")
        out = args[i + 1]
        del args[i:i + 2]
    zoo = json.load(open(f"{W}/zoo.json"))
    held_out = {n for n, z in zoo.items() if z["held_out"]}
    rows = []
    for net in args or list(zoo):
        for chip in CHIPS:
            r = compare(net, chip, zoo[net]["input_shape"][0])
            rows.append(r)
            print(json.dumps(r), flush=True)
    if out:
        with open(out, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    table(rows, held_out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fit one chip's training fraction (`calib::chip_train_fraction`: the share of the
v5e-fitted training MXU rate the chip sustains) on that chip's fit rows of the shipped
measurements, and report the error of its held-out rows at the fitted figure.

The fit rows are those whose split is `fit_<chip>` (v6e: every LLaMA-3.1 8B row, chosen
before any v6e prediction with the figure was seen); the held-out rows, `held_out_<chip>`,
are never looked at by the search. The search is a grid of 0.005 from 0.40 to 1.00,
minimising the median |error| plus a quarter of the worst, as bench/llm-fit.py does.
Write the result into data/llm/chip-train-fractions.json by hand (with the rows' ids).

usage: bench/llm-fit-chip.py CHIP [path/to/tpusim]
"""
import json
import statistics
import subprocess
import sys

CHIP = sys.argv[1] if len(sys.argv) > 1 else "v6e"
TPUSIM = sys.argv[2] if len(sys.argv) > 2 else "target/release/tpusim"


def cases(fraction):
    args = [TPUSIM, "llm", "validate", "--json", "--calib", f"chip_train={fraction}"]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def errors(all_cases, split):
    return [c["error"] for c in all_cases if c["split"] == split and c["quantity"] == "train_step_s"]


def stats(errs):
    a = [abs(e) for e in errs]
    return statistics.median(a), max(a)


def main():
    grid = [round(0.40 + 0.005 * i, 3) for i in range(121)]
    best = None
    for f in grid:
        med, worst = stats(errors(cases(f), f"fit_{CHIP}"))
        score = med + 0.25 * worst
        if best is None or score < best[0]:
            best = (score, f)
    f = best[1]
    at = cases(f)
    fit, held = errors(at, f"fit_{CHIP}"), errors(at, f"held_out_{CHIP}")
    ids = [c["case"] for c in at if c["split"] == f"fit_{CHIP}"]
    print(json.dumps({"chip": CHIP, "fraction": f, "fit_rows": ids}, indent=1))
    for name, errs in (("fit", fit), ("held out", held)):
        med, worst = stats(errs)
        print(f"{name:>8}: {len(errs)} rows, median |error| {med:.1%}, worst {worst:.1%}; "
              f"signed {', '.join(f'{e:+.1%}' for e in errs)}")


if __name__ == "__main__":
    main()

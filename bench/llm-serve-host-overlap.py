#!/usr/bin/env python3
"""Does JetStream's host loop run beside the chips rather than after them? A test of a
different serving model against the shipped JetStream rows (data/llm/, v5e).

`tpusim llm validate` adds the host's cost to the chips' step (`add`: step = chips
+ per-step + per-token · batch). JetStream runs its detokenising thread beside the
generate thread, so the host might instead bound the step (`max`: step = the larger of
chips + per-step and per-token · batch). JetStream's code (orchestrator.py at the commit
the April 2024 rows used) puts the per-step cost on the host's side instead: the generate
thread dispatches a step and queues it for the detokenising thread (a queue of 8 steps)
without waiting for the chips, and both threads hold Python's GIL, so `host` is: step =
the larger of the chips and per-step + per-token · batch. Each model's four figures (HBM and MXU
fractions, per-step and per-token costs) are searched on the fit rows alone, as
bench/llm-fit.py does (median |error| plus a quarter of the worst); the held-out rows
(LLaMA-2 13B) are reported beside them.

usage: bench/llm-serve-host-overlap.py [path/to/tpusim]
"""
import itertools
import json
import os
import statistics
import subprocess
import sys

R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TPUSIM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(R, "target", "release", "tpusim")
NAMES = {"Llama 3 8B": "llama-3-8b", "Llama 2 7B": "llama-2-7b", "Llama 2 13B": "llama-2-13b",
         "Gemma 2B": "gemma-2b", "Gemma 7B": "gemma-7b"}
PROMPT, OUTPUT, OVERLAP = 161, 338.0, 0.8  # validate's ShareGPT means and `overlap`
GRID = {"hbm": [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0],
        "mxu": [0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0],
        "step": [0, 0.0005, 0.001, 0.002, 0.004],
        "token": [0, 2e-5, 4e-5, 6e-5, 8e-5, 9e-5, 1e-4, 1.1e-4, 1.2e-4, 1.3e-4, 1.5e-4]}


def raw_terms(row):
    """The chips' decode and prefill terms at peak rates, no host cost."""
    model = NAMES[row["model_name"]]
    dp = row["chips"] if model == "gemma-2b" and row["chips"] > 1 else 1
    p = "int8" if row["precision"] == "int8" else "bf16"
    args = [TPUSIM, "llm", "serve", model, "--chip", "v5e", "--slice", str(row["chips"]),
            "--batch", str(row["batch"]), "--context", str(row["cache_length"]), "--weights", p,
            "--kv-dtype", p, "--prefill-tokens", str(PROMPT), "--tp", str(row["chips"] // dp),
            "--dp", str(dp), "--json"]
    for k in ("hbm=1", "mxu_serve=1", "decode_step_overhead_s=0", "decode_token_overhead_s=0"):
        args += ["--calib", k]
    out = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    return {"id": row["id"], "batch": row["batch"], "dp": dp, "measured": row["throughput_tokens_per_s"],
            "held_out": model == "llama-2-13b", "decode": out["decode"], "prefill": out["prefill"]}


def tokens_per_s(r, model, hbm, mxu, step, token):
    def chips(t):
        terms = [t["hbm_s"] / hbm, t["math_s"] / mxu, t["ici_s"]]
        return max(terms) + (1 - OVERLAP) * (sum(terms) - max(terms))
    b = r["batch"]
    prefill = chips(r["prefill"]) * b / (r["dp"] * OUTPUT)
    device = chips(r["decode"]) + step + prefill
    if model == "add":
        t = device + token * b
    elif model == "max":
        t = max(device, token * b)
    else:  # host: the per-step cost is the generate thread's, beside the chips
        t = max(device - step, step + token * b)
    return b / t


def errors(rows, model, figures):
    return [(tokens_per_s(r, model, *figures) - r["measured"]) / r["measured"] for r in rows]


def main():
    rows = [raw_terms(json.loads(l)) for l in open(os.path.join(R, "data/llm/llm-validation-jetstream-v5e.jsonl"))]
    fit = [r for r in rows if not r["held_out"]]
    held = [r for r in rows if r["held_out"]]
    for model in ("add", "max", "host"):
        def score(f):
            e = [abs(x) for x in errors(fit, model, f)]
            return statistics.median(e) + 0.25 * max(e)
        best = min(itertools.product(*GRID.values()), key=score)
        f = [abs(x) for x in errors(fit, model, best)]
        h = [abs(x) for x in errors(held, model, best)]
        print(f"{model}: hbm {best[0]}, mxu {best[1]}, per step {best[2]} s, per token {best[3]} s; "
              f"fit median {100 * statistics.median(f):.1f} %, worst {100 * max(f):.1f} %; "
              f"held out median {100 * statistics.median(h):.1f} %, worst {100 * max(h):.1f} %")
        for r, e in zip(rows, errors(rows, model, best)):
            print(f"  {r['id']:62s} {r['measured']:8.0f} {100 * e:+6.1f} %{'  held out' if r['held_out'] else ''}")


if __name__ == "__main__":
    main()

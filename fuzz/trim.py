#!/usr/bin/env python3
"""Keep the committed corpora small: after `cargo fuzz cmin`, keep every seed (files
named seed_*) and then the smallest inputs, up to 300 per target and a byte budget for
the targets whose inputs are large. Usage: python3 fuzz/trim.py"""
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
BUDGET = {"plan_json": 1_500_000, "hlo": 800_000, "onnx": 1_200_000, "nd_onnx": 1_500_000, "llm_model": 600_000}
MAX_FILES = 300

for t in sorted(os.listdir(ROOT)):
    d = os.path.join(ROOT, t)
    names = [f for f in os.listdir(d) if not f.startswith(".")]
    keep = {f for f in names if f.startswith("seed_")}
    total = sum(os.path.getsize(os.path.join(d, f)) for f in keep)
    grown = sorted((os.path.getsize(os.path.join(d, f)), f) for f in names if f not in keep)
    for size, f in grown:
        if len(keep) >= MAX_FILES + len([k for k in keep if k.startswith("seed_")]):
            break
        if total + size > BUDGET.get(t, 1 << 40):
            break
        keep.add(f)
        total += size
    for f in names:
        if f not in keep:
            os.remove(os.path.join(d, f))
    print(f"{t}: {len(keep)} inputs, {total} bytes")

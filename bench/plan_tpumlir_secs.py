#!/usr/bin/env python3
"""Did TPU-MLIR keep the slicing of an exported layer-group cache? Compares each group's
shape_secs in the cache with the nsecs/hsecs of the tpu.Group ops in TPU-MLIR's final MLIR.
Usage: bench/plan_tpumlir_secs.py CACHE.json FINAL.mlir  (prints one line; exit 1 if changed)"""
import json, re, sys
cache = json.load(open(sys.argv[1]))
want = [(g['shape_secs'][0], g['shape_secs'][3]) for g in cache['subfunc_0']['GroupLayer'] if len(g['locs']) > 1]
txt = open(sys.argv[2]).read()
got = [(int(n), int(h)) for h, n in re.findall(r'\bhsecs = (\d+) : i64, nsecs = (\d+) : i64', txt)]
same = want == got
print(f"{'kept' if same else 'CHANGED'}: cache (nsecs, hsecs) {want} -> compiled {got}")
sys.exit(0 if same else 1)

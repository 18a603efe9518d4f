#!/usr/bin/env python3
"""Speed of the Python package against its baselines, each measured in the same run:

1. a small call (a shape's size) from Python vs the same call looped in Rust;
2. layout.convert from Python vs the in-memory Rust kernel on Rust-owned buffers;
3. analytic systolic configurations per second per core (the embedded sweep's engine,
   one thread);
4. a Ray sweep of cycle-accurate runs on 2 local workers vs 1 (separate processes, each
   starting its own local cluster).

Needs the release build installed: `pip install ./python` (or maturin build --release).
Prints one line per figure; bench/RESULTS-python.md records a run.
"""

import json
import os
import subprocess
import sys
import time
import timeit

import numpy as np


def small_call():
    import tpusim
    from tpusim import _native

    shape = "bf16[1,224,224,3]{2,1,3,0:T(8,128)(2,1)}"
    n = 200_000
    rust = min(_native.bench_layout_size(shape, n) for _ in range(5))
    py = min(timeit.repeat(lambda: tpusim.layout.size(shape), number=n, repeat=5)) / n
    print(f"small call   layout.size: Python {py * 1e6:.2f} µs, Rust {rust * 1e6:.2f} µs, overhead {(py - rust) * 1e6:.2f} µs")


def convert():
    import tpusim
    from tpusim import _native

    frm, to = "f32[4096,4096]{1,0}", "f32[4096,4096]{0,1:T(8,128)}"
    x = np.random.default_rng(0).standard_normal((4096, 4096)).astype(np.float32)
    out = np.empty(tpusim.layout.size(to), np.uint8)
    rust = _native.bench_layout_convert(frm, to, 7)
    py = min(timeit.repeat(lambda: tpusim.layout.convert(x, to=to, frm=frm, out=out), number=1, repeat=7))
    print(f"convert      64 MiB f32 transpose+tile: Python {py * 1e3:.1f} ms, Rust kernel {rust * 1e3:.1f} ms, ratio {py / rust:.3f}")


def analytic_per_core():
    import tpusim

    n = 1_000_000
    rng = np.random.default_rng(1)
    cols = [rng.integers(1, 4096, n, dtype=np.uint64) for _ in range(3)]
    arr = [rng.choice(np.array([8, 16, 32, 64, 128, 256], dtype=np.uint64), n) for _ in range(2)]
    best = min(timeit.repeat(lambda: tpusim.systolic.analytic_many(*cols, *arr), number=1, repeat=3))
    print(f"analytic     {n / best:,.0f} configurations/s on one thread ({n:,} in {best:.3f} s)")


RAY_CHILD = r"""
import json, sys, time, ray, tpusim
workers = int(sys.argv[1])
ray.init(num_cpus=workers, include_dashboard=False, runtime_env={"env_vars": {"RAYON_NUM_THREADS": "1"}})
space = {"m": [2000 + i for i in range(32)], "k": [1024], "n": [512], "rows": [64], "cols": [64], "mode": ["cycle"]}
tpusim.sweep({"m": [8], "k": [8], "n": [8], "rows": [4], "cols": [4], "mode": ["cycle"]}, backend="ray", progress=False)
t = time.perf_counter()
df = tpusim.sweep(space, backend="ray", chunk_size=2, progress=False)
print(json.dumps({"rows": len(df), "seconds": time.perf_counter() - t}))
"""


def ray_scaling():
    def run(w):
        out = subprocess.run([sys.executable, "-c", RAY_CHILD, str(w)], check=True, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    pairs = []
    for _ in range(2):  # alternate, the machine is noisy
        one, two = run(1), run(2)
        pairs.append(one["seconds"] / two["seconds"])
        print(f"ray          32 cycle-accurate GEMMs of 1 GMAC: 1 worker {one['seconds']:.2f} s, 2 workers {two['seconds']:.2f} s, speed-up {pairs[-1]:.2f}x")


if __name__ == "__main__":
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    for f in (small_call, convert, analytic_per_core, ray_scaling):
        if len(sys.argv) == 1 or f.__name__ in sys.argv[1:]:
            f()

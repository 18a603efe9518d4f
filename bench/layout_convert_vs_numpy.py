#!/usr/bin/env python3
"""tpusim's layout conversion vs numpy's pad -> reshape -> transpose, same arrays, same run.

    cargo build --release -p tpusim && cargo build --release -p tpusim-layout --example relayout_time
    python3 bench/layout_convert_vs_numpy.py [path/to/tpusim] [N] [ROUNDS]

Default N = 8192: f32[N,N] -> {1,0:T(8,128)} and bf16[N,N] (as uint16) ->
{1,0:T(8,128)(2,1)}, both directions; default 7 rounds. Two comparisons:

  in memory (the issue's target), interleaved: every round times, back to back on the same
  array, numpy's transform in three variants and tpusim's kernel, each the best of 3 runs
  (a numpy array allocated right after another process freed 768 MiB can take 3-10x its
  steady time, so single runs would flatter tpusim), and each ratio is taken within its
  round (this VM's memory bandwidth drifts 2x within a minute); the table gives the
  median of the per-round ratios and their range.
    numpy literal: exactly the pipeline the issue names, every step a fresh allocation:
                   np.pad (which always copies, even with zero pad widths) -> reshape ->
                   transpose -> np.ascontiguousarray (from tiled: reshape -> transpose ->
                   reshape -> slice off the padding -> np.ascontiguousarray; there is no
                   pad step in that direction);
    numpy fresh:   np.ascontiguousarray of the reshaped, transposed view (one strided copy
                   into a new array: numpy's best case when N is a multiple of the tile);
    numpy into:    np.copyto of the same view into a pre-faulted array (the same copy, no
                   page faults: numpy's strongest variant);
    numpy memcpy:  np.copyto of the contiguous array into a pre-faulted one (reference).
    (numpy allocates with MADV_HUGEPAGE, so its new arrays fault in 2 MiB pages.)
    tpusim:        `relayout_time` (crates/layout/examples, next to the tpusim binary under
                   examples/), one untimed warm-up then `Relayout::run` timed: "pre-faulted" into a buffer the caller owns (the library's use,
                   and the setup of the memcpy target), "fresh" into a new MADV_HUGEPAGE
                   mapping made and unmapped inside the clock, like a new numpy array.
  file to file: np.load + literal pipeline + tofile vs the whole `tpusim layout convert`
  process (best of 3), and tpusim's own `relayout_seconds` (kernel + faults of the new
  memory-mapped output file).
Needs numpy; writes scratch files (up to 768 MiB) to a temporary folder, removed at the end.
"""
import json, os, shutil, subprocess, sys, tempfile, time
import numpy as np

TPUSIM = sys.argv[1] if len(sys.argv) > 1 else "target/release/tpusim"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 7
BEST_OF = 3  # timed runs per variant per round, best taken (steady state for both sides)
RELAYOUT_TIME = os.path.join(os.path.dirname(TPUSIM), "examples", "relayout_time")

def tile(x, tr, tc, pack):
    r, c = x.shape
    pr, pc = -(-r // tr) * tr, -(-c // tc) * tc
    if (pr, pc) != (r, c):
        x = np.pad(x, ((0, pr - r), (0, pc - c)))
    t = x.reshape(pr // tr, tr, pc // tc, tc).transpose(0, 2, 1, 3)
    if pack > 1:
        t = t.reshape(pr // tr, pc // tc, tr // pack, pack, tc, 1).transpose(0, 1, 2, 4, 3, 5)
    return np.ascontiguousarray(t)

def tile_literal(x, tr, tc, pack):
    """The issue's pipeline verbatim: np.pad (always a copy) -> reshape -> transpose ->
    np.ascontiguousarray, with the (pack,1) sub-tile as a second reshape/transpose."""
    r, c = x.shape
    pr, pc = -(-r // tr) * tr, -(-c // tc) * tc
    x = np.pad(x, ((0, pr - r), (0, pc - c)))
    t = x.reshape(pr // tr, tr, pc // tc, tc).transpose(0, 2, 1, 3)
    if pack > 1:
        t = t.reshape(pr // tr, pc // tc, tr // pack, pack, tc, 1).transpose(0, 1, 2, 4, 3, 5)
    return np.ascontiguousarray(t)

def untile_literal(b, r, c, tr, tc, pack, dtype):
    """The inverse pipeline: reshape -> transpose -> reshape -> slice -> ascontiguousarray."""
    pr, pc = -(-r // tr) * tr, -(-c // tc) * tc
    t = np.frombuffer(b, dtype=dtype)
    if pack > 1:
        t = t.reshape(pr // tr, pc // tc, tr // pack, tc, pack, 1).transpose(0, 1, 2, 4, 3, 5)
    t = t.reshape(pr // tr, pc // tc, tr, tc).transpose(0, 2, 1, 3).reshape(pr, pc)
    return np.ascontiguousarray(t[:r, :c])

def tile_view(x, tr, tc, pack):
    r, c = x.shape
    t = x.reshape(r // tr, tr, c // tc, tc).transpose(0, 2, 1, 3)
    if pack > 1:
        t = t.reshape(r // tr, c // tc, tr // pack, pack, tc, 1).transpose(0, 1, 2, 4, 3, 5)
    return t

def untile(b, r, c, tr, tc, pack, dtype):
    t = np.frombuffer(b, dtype=dtype)
    if pack > 1:
        t = t.reshape(r // tr, c // tc, tr // pack, tc, pack, 1).transpose(0, 1, 2, 4, 3, 5)
    t = t.reshape(r // tr, c // tc, tr, tc).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(t.reshape(r, c))

def secs(f):
    t0 = time.perf_counter(); f(); return time.perf_counter() - t0

def best(f, n=3):
    return min(secs(f) for _ in range(n))

def median(v):
    v = sorted(v); return v[len(v) // 2]

def kernel(frm, to):
    """tpusim's in-memory kernel, best of BEST_OF timed runs after a warm-up."""
    out = subprocess.run([RELAYOUT_TIME, frm, to, str(BEST_OF)], check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    return j["prefaulted_seconds"], j["fresh_thp_seconds"]

def tpusim(frm, to, i, o):
    out = subprocess.run([TPUSIM, "layout", "convert", "--from", frm, "--to", to, i, o, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["relayout_seconds"]

def in_memory(name, direction, variants, frm, to):
    """ROUNDS interleaved rounds: each numpy variant (best of BEST_OF), then tpusim's
    kernel (the same); returns
    a table row of per-round ratio medians (and ranges) plus median seconds."""
    t = {k: [] for k in list(variants) + ["pre", "fresh"]}
    for _ in range(ROUNDS):
        for k, f in variants.items():
            t[k].append(best(f, BEST_OF))
        pre, fresh = kernel(frm, to)
        t["pre"].append(pre); t["fresh"].append(fresh)
    def ratio(a, b):
        r = [x / y for x, y in zip(t[a], t[b])]
        return f"**{median(r):.1f}x** ({min(r):.1f}..{max(r):.1f})"
    ms = lambda k: f"{median(t[k]) * 1e3:.1f}"
    return (f"| {name} | {direction} | {ms('literal')} | {ms('fresh_np')} | {ms('into')} | {ms('memcpy')} "
            f"| {ms('pre')} | {ms('fresh')} | {ratio('literal', 'pre')} | {ratio('into', 'pre')} "
            f"| {ratio('literal', 'fresh')} |")

def main():
    d = tempfile.mkdtemp(dir=os.environ.get("TMPDIR", "/tmp"))
    try:
        run(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)

def run(d):
    mem_rows, file_rows = [], []
    for name, dtype, xla, pack in [("f32", np.float32, "f32", 1), ("bf16", np.uint16, "bf16", 2)]:
        x = (np.arange(N * N, dtype=np.uint32) % 65521).astype(dtype).reshape(N, N)
        npy, raw, back = (os.path.join(d, f) for f in ("in.npy", "tiled.bin", "back.npy"))
        np.save(npy, x)
        lay = "{1,0:T(8,128)%s}" % ("(2,1)" if pack > 1 else "")
        frm, to = f"{xla}[{N},{N}]", f"{xla}[{N},{N}]{lay}"
        label = f"{name}[{N},{N}] ({x.nbytes / 2**20:.0f} MiB)"
        # correctness first: the CLI against numpy, numpy's variants against each other
        tpusim(frm, to, npy, raw)
        expect = tile(x, 8, 128, pack).tobytes()
        assert open(raw, "rb").read() == expect, "tpusim differs from numpy"
        assert tile_literal(x, 8, 128, pack).tobytes() == expect
        out = np.ones(x.size, dtype=dtype)  # pre-faulted
        v = tile_view(x, 8, 128, pack)
        np.copyto(out.reshape(v.shape), v)
        assert out.tobytes() == expect
        mem_rows.append(in_memory(label, "to tiled", {
            "literal": lambda: tile_literal(x, 8, 128, pack),
            "fresh_np": lambda: tile(x, 8, 128, pack),
            "into": lambda: np.copyto(out.reshape(v.shape), tile_view(x, 8, 128, pack)),
            "memcpy": lambda: np.copyto(out, x.reshape(-1)),
        }, frm, to))
        rawb = open(raw, "rb").read()
        assert untile_literal(rawb, N, N, 8, 128, pack, dtype).tobytes() == x.tobytes()
        flat = np.frombuffer(rawb, dtype=dtype)
        R, C = N // 8, N // 128
        if pack == 1:  # one strided copy: tiled (R,C,8,128) -> rows (R,8,C,128)
            back_arr = np.ones((R, 8, C, 128), dtype=dtype)
            tv = lambda: flat.reshape(R, C, 8, 128).transpose(0, 2, 1, 3)
        else:  # tiled (R,C,4,128,2) -> rows (R,4,2,C,128), also one strided copy
            back_arr = np.ones((R, 4, 2, C, 128), dtype=dtype)
            tv = lambda: flat.reshape(R, C, 4, 128, 2).transpose(0, 2, 4, 1, 3)
        np.copyto(back_arr, tv())
        assert back_arr.tobytes() == x.tobytes()
        mem_rows.append(in_memory(label, "from tiled", {
            "literal": lambda: untile_literal(rawb, N, N, 8, 128, pack, dtype),
            "fresh_np": lambda: untile(rawb, N, N, 8, 128, pack, dtype),
            "into": lambda: np.copyto(back_arr, tv()),
            "memcpy": lambda: np.copyto(out, x.reshape(-1)),
        }, to, frm))
        del rawb, flat, out, back_arr
        cli_to = min(tpusim(frm, to, npy, raw) for _ in range(3))
        cli_from = min(tpusim(to, frm, raw, back) for _ in range(3))
        np_f = best(lambda: tile_literal(np.load(npy), 8, 128, pack).tofile(raw))
        ts_f = best(lambda: subprocess.run([TPUSIM, "layout", "convert", "--from", frm, "--to", to, npy, raw],
                                           check=True, capture_output=True))
        file_rows.append(f"| {name}[{N},{N}] to tiled | {np_f:.3f} | {ts_f:.3f} | {np_f / ts_f:.1f}x "
                         f"| {cli_to:.3f} / {cli_from:.3f} |")
        print(f"{name} done", file=sys.stderr, flush=True)
    print(f"N={N}, {ROUNDS} rounds, tpusim={TPUSIM}, numpy {np.__version__}, "
          f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load average {os.getloadavg()}")
    print("In memory, interleaved rounds. Times: median ms over rounds. Speed-ups: median of the "
          "per-round ratios (min..max). numpy literal = np.pad -> reshape -> transpose -> "
          "ascontiguousarray (new arrays); fresh = without np.pad; into = np.copyto into a "
          "pre-faulted array; memcpy = np.copyto of the contiguous array (pre-faulted). tpusim "
          "pre-faulted = Relayout::run into the caller's buffer; fresh = into a new huge-page mapping.")
    print("| array | direction | numpy literal | numpy fresh | numpy into | numpy memcpy | tpusim pre-faulted "
          "| tpusim fresh | literal / tpusim (the target) | into / tpusim pre-faulted | literal / tpusim fresh |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in mem_rows:
        print(r)
    print("File to file, seconds (best of 3): np.load + literal pipeline + tofile vs the whole "
          "`tpusim layout convert` process; and the CLI's relayout_seconds (kernel + faults of the new "
          "memory-mapped output), to / from tiled.")
    print("| array | numpy | tpusim | speed-up | tpusim relayout_seconds to / from |")
    print("|---|---|---|---|---|")
    for r in file_rows:
        print(r)

if __name__ == "__main__":
    main()

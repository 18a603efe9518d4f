#!/usr/bin/env python3
"""tpusim layout convert vs numpy's pad -> reshape -> transpose, same arrays, same run.

    python3 bench/layout_convert_vs_numpy.py [path/to/tpusim] [N]

Default N = 8192: f32[N,N] -> {1,0:T(8,128)} and bf16[N,N] (as uint16) ->
{1,0:T(8,128)(2,1)}, both directions. Two comparisons:
  in-memory: numpy's transform, materialised, three ways, all timed and printed:
               literal: exactly the pipeline the issue names, every step a fresh
                      allocation: np.pad (which always copies, even with zero pad
                      widths) -> reshape -> transpose -> np.ascontiguousarray (from
                      tiled: reshape -> transpose -> reshape -> slice off the padding ->
                      np.ascontiguousarray; there is no pad step in that direction);
               fresh: np.ascontiguousarray of the (padded,) reshaped, transposed view
                      (one strided copy into a newly allocated array; np.pad is a
                      further full pass but is skipped when N is a multiple of the tile,
                      as it is for 8192 -- so numpy is given its best case);
               into:  np.copyto of the same view into a pre-faulted output array
                      (same copy, no page faults: numpy's strongest variant);
             (numpy allocates with MADV_HUGEPAGE, so its fresh arrays fault in 2 MiB
             pages), vs tpusim's kernel as timed by `tpusim layout convert --json`
             ("relayout_seconds": the kernel alone, writing a freshly created
             memory-mapped file, so it pays first-touch faults like numpy's "fresh"),
             and numpy's own memcpy of the same bytes (np.copyto of a contiguous array
             into a pre-faulted one) as a same-run reference;
  file to file: np.load + transform + tofile vs the whole `tpusim layout convert` process.
Each figure is the best of 3. Needs numpy; writes scratch files to a temporary folder.
"""
import json, os, subprocess, sys, tempfile, time
import numpy as np

TPUSIM = sys.argv[1] if len(sys.argv) > 1 else "target/release/tpusim"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 8192

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

def best(f, n=3):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return min(ts)

def tpusim(frm, to, i, o):
    out = subprocess.run([TPUSIM, "layout", "convert", "--from", frm, "--to", to, i, o, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["relayout_seconds"]

def main():
    d = tempfile.mkdtemp(dir=os.environ.get("TMPDIR", "/tmp"))
    rows = []
    for name, dtype, xla, pack in [("f32", np.float32, "f32", 1), ("bf16", np.uint16, "bf16", 2)]:
        x = (np.arange(N * N, dtype=np.uint32) % 65521).astype(dtype).reshape(N, N)
        npy, raw, back = (os.path.join(d, f) for f in ("in.npy", "tiled.bin", "back.npy"))
        np.save(npy, x)
        lay = "{1,0:T(8,128)%s}" % ("(2,1)" if pack > 1 else "")
        frm, to = f"{xla}[{N},{N}]", f"{xla}[{N},{N}]{lay}"
        # correctness first
        tpusim(frm, to, npy, raw)
        assert open(raw, "rb").read() == tile(x, 8, 128, pack).tobytes(), "tpusim differs from numpy"
        mb = x.nbytes / 2**20
        assert tile_literal(x, 8, 128, pack).tobytes() == tile(x, 8, 128, pack).tobytes()
        np_to_lit = best(lambda: tile_literal(x, 8, 128, pack))
        np_to_fresh = best(lambda: tile(x, 8, 128, pack))
        out = np.ones(x.size, dtype=dtype)  # pre-faulted
        v = tile_view(x, 8, 128, pack)
        np_to_into = best(lambda: np.copyto(out.reshape(v.shape), tile_view(x, 8, 128, pack)))
        assert out.tobytes() == tile(x, 8, 128, pack).tobytes()
        np_memcpy = best(lambda: np.copyto(out, x.reshape(-1)))
        np_memcpy_fresh = best(lambda: x.copy())
        ts_to = min(tpusim(frm, to, npy, raw) for _ in range(3))
        rawb = open(raw, "rb").read()
        assert untile_literal(rawb, N, N, 8, 128, pack, dtype).tobytes() == x.tobytes()
        np_from_lit = best(lambda: untile_literal(rawb, N, N, 8, 128, pack, dtype))
        np_from_fresh = best(lambda: untile(rawb, N, N, 8, 128, pack, dtype))
        flat = np.frombuffer(rawb, dtype=dtype)
        R, C = N // 8, N // 128
        if pack == 1:  # one strided copy: tiled (R,C,8,128) -> rows (R,8,C,128)
            back_arr = np.ones((R, 8, C, 128), dtype=dtype)
            tv = lambda: flat.reshape(R, C, 8, 128).transpose(0, 2, 1, 3)
        else:  # tiled (R,C,4,128,2) -> rows (R,4,2,C,128), also one strided copy
            back_arr = np.ones((R, 4, 2, C, 128), dtype=dtype)
            tv = lambda: flat.reshape(R, C, 4, 128, 2).transpose(0, 2, 4, 1, 3)
        np_from_into = best(lambda: np.copyto(back_arr, tv()))
        assert back_arr.tobytes() == x.tobytes()
        ts_from = min(tpusim(to, frm, raw, back) for _ in range(3))
        def np_file():
            tile_literal(np.load(npy), 8, 128, pack).tofile(raw)
        np_f = best(np_file)
        ts_f = best(lambda: subprocess.run([TPUSIM, "layout", "convert", "--from", frm, "--to", to, npy, raw], check=True, capture_output=True))
        rows.append((name, mb, np_to_lit, np_to_fresh, np_to_into, ts_to,
                     np_from_lit, np_from_fresh, np_from_into, ts_from, np_memcpy, np_memcpy_fresh, np_f, ts_f))
        print(f"{name}: numpy to tiled literal {np_to_lit:.3f} s, fresh {np_to_fresh:.3f} s, "
              f"into pre-faulted {np_to_into:.3f} s; from tiled literal {np_from_lit:.3f} s, "
              f"fresh {np_from_fresh:.3f} s, into {np_from_into:.3f} s; "
              f"numpy memcpy of the same bytes {np_memcpy:.3f} s (pre-faulted), {np_memcpy_fresh:.3f} s (x.copy(), fresh)", flush=True)
    print(f"N={N}, tpusim={TPUSIM}, numpy {np.__version__}, load average {os.getloadavg()}")
    print("In memory, seconds (best of 3). numpy: literal = np.pad -> reshape -> transpose -> "
          "ascontiguousarray (fresh arrays); fresh = the same without np.pad; into = np.copyto "
          "into a pre-faulted array; memcpy = np.copyto of the contiguous array (pre-faulted) / x.copy() (fresh). "
          "tpusim CLI = relayout_seconds, the kernel writing a fresh memory-mapped file.")
    print("| array | direction | numpy literal | numpy fresh | numpy into | numpy memcpy pre-faulted / fresh | tpusim CLI | literal / CLI |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, mb, tl, tf, ti, tt, fl, ff, fi, ft, mc, mcf, f, g) in rows:
        print(f"| {name}[{N},{N}] ({mb:.0f} MiB) | to tiled | {tl:.3f} | {tf:.3f} | {ti:.3f} | {mc:.3f} / {mcf:.3f} | {tt:.3f} | {tl/tt:.1f}x |")
        print(f"| {name}[{N},{N}] ({mb:.0f} MiB) | from tiled | {fl:.3f} | {ff:.3f} | {fi:.3f} | {mc:.3f} / {mcf:.3f} | {ft:.3f} | {fl/ft:.1f}x |")
    print("File to file, seconds (best of 3): np.load + literal pipeline + tofile vs the whole `tpusim layout convert` process.")
    print("| array | numpy | tpusim | speed-up |")
    print("|---|---|---|---|")
    for (name, mb, tl, tf, ti, tt, fl, ff, fi, ft, mc, mcf, f, g) in rows:
        print(f"| {name}[{N},{N}] to tiled | {f:.3f} | {g:.3f} | {f/g:.1f}x |")

if __name__ == "__main__":
    main()

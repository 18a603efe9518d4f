#!/usr/bin/env python3
"""One-off (not CI): convert an array larger than half the RAM to a tiled layout and back
with the CLI, check the round trip is bit-exact, and report wall time, peak RSS and
throughput.

    python3 bench/layout_huge_roundtrip.py path/to/tpusim [N] [DIR]

Default N = 81920: bf16[N,N] (stored as uint16) = 12.5 GiB, converted to
{1,0:T(8,128)(2,1)} and back. Files go to DIR (default: the current folder) and are
deleted at the end. Disk use never exceeds two copies of the array: the input .npy is
written without holding it in RAM (np.lib.format.open_memmap, band by band, from a
deterministic generator), converted to the tiled file, checked, then deleted before the
tiled file is converted back; the round trip is bit-exact when the data bytes of the
returned .npy have the same SHA-256 as the input's (computed in chunks) and every byte
of it equals the generator's value (compared band by band). A sample of tile-row bands
of the tiled file is also checked against numpy's reshape -> transpose of the same
band. Each CLI run is wrapped in /usr/bin/time -v for the peak RSS.
"""
import hashlib, json, os, re, subprocess, sys, time
import numpy as np

TPUSIM = sys.argv[1] if len(sys.argv) > 1 else "target/release/tpusim"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 81920
DIR = sys.argv[3] if len(sys.argv) > 3 else "."
BAND = 1024  # rows generated / checked at a time (N * BAND * 2 bytes = 160 MiB)


def gen(r0, r1):
    """Rows r0..r1 of the array: a multiplicative hash of the flat index, as uint16."""
    i = np.arange(r0 * N, r1 * N, dtype=np.uint64)
    return ((i * np.uint64(2654435761)) >> np.uint64(11)).astype(np.uint16).reshape(r1 - r0, N)


def data_sha(path):
    mm = np.load(path, mmap_mode="r")
    h = hashlib.sha256()
    for r in range(0, N, BAND):
        h.update(np.ascontiguousarray(mm[r:r + BAND]).data)
    return h.hexdigest()


def check_against_gen(path):
    mm = np.load(path, mmap_mode="r")
    assert mm.shape == (N, N) and mm.dtype == np.uint16, (mm.shape, mm.dtype)
    for r in range(0, N, BAND):
        if not np.array_equal(mm[r:r + BAND], gen(r, min(N, r + BAND))):
            raise SystemExit(f"{path}: rows {r}..{r + BAND} differ from the generator")


def run(frm, to, i, o):
    cmd = ["/usr/bin/time", "-v", TPUSIM, "layout", "convert", "--from", frm, "--to", to, i, o, "--json"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    rss_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    j = json.loads(p.stdout)
    return wall, rss_kib, j


def main():
    os.makedirs(DIR, exist_ok=True)
    npy, tiled, back = (os.path.join(DIR, f) for f in ("huge_in.npy", "huge_tiled.bin", "huge_back.npy"))
    nbytes = N * N * 2
    gib = nbytes / 2**30
    frm, to = f"bf16[{N},{N}]", f"bf16[{N},{N}]{{1,0:T(8,128)(2,1)}}"
    print(f"bf16[{N},{N}] = {gib:.2f} GiB; RAM {os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.1f} GiB",
          flush=True)
    try:
        t0 = time.perf_counter()
        mm = np.lib.format.open_memmap(npy, mode="w+", dtype=np.uint16, shape=(N, N))
        for r in range(0, N, BAND):
            mm[r:r + BAND] = gen(r, min(N, r + BAND))
            mm.flush()
        del mm
        print(f"wrote {npy} in {time.perf_counter() - t0:.1f} s", flush=True)
        sha_in = data_sha(npy)
        # Same-run disk baseline: a plain copy of the same file (read + write the same
        # bytes), then the copy is deleted at once (never more than two array files).
        t0 = time.perf_counter()
        subprocess.run(["cp", npy, back], check=True)
        os.sync()
        cp_s = time.perf_counter() - t0
        os.remove(back)
        print(f"cp + sync of the input: {cp_s:.1f} s ({gib / cp_s:.2f} GiB/s)", flush=True)
        rows = []
        w, rss, j = run(frm, to, npy, tiled)
        rows.append(("row-major .npy -> T(8,128)(2,1)", w, rss, j))
        print(f"to tiled: {w:.1f} s wall, peak RSS {rss / 2**20:.2f} GiB, {j}", flush=True)
        # Sample of tile-row bands checked against numpy reshape -> transpose.
        raw = np.memmap(tiled, dtype=np.uint16, mode="r")
        assert raw.size == N * N
        band = 8 * N
        for b in sorted({0, N // 8 - 1} | set(np.random.default_rng(0).integers(0, N // 8, 14).tolist())):
            x = gen(8 * b, 8 * b + 8)
            ref = x.reshape(1, 8, N // 128, 128).transpose(0, 2, 1, 3)
            ref = ref.reshape(1, N // 128, 4, 2, 128, 1).transpose(0, 1, 2, 4, 3, 5)
            if not np.array_equal(raw[b * band:(b + 1) * band], ref.reshape(-1)):
                raise SystemExit(f"tiled band {b} differs from numpy's reshape/transpose")
        del raw
        os.remove(npy)
        w, rss, j = run(to, frm, tiled, back)
        rows.append(("T(8,128)(2,1) -> row-major .npy", w, rss, j))
        print(f"from tiled: {w:.1f} s wall, peak RSS {rss / 2**20:.2f} GiB, {j}", flush=True)
        os.remove(tiled)
        sha_back = data_sha(back)
        if sha_back != sha_in:
            raise SystemExit(f"round trip differs: sha256 {sha_in} vs {sha_back}")
        check_against_gen(back)
        print(f"round trip bit-exact (data sha256 {sha_in[:16]}..., every band equals the generator)")
        print(f"load average {os.getloadavg()}")
        print("| direction | bytes | wall s (process) | seconds (json) | relayout_seconds | pieces | GiB/s (wall) | wall / (cp + sync) | peak RSS GiB |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(f"| cp + sync (baseline) | {nbytes} | {cp_s:.2f} | | | | {gib / cp_s:.2f} | 1.00 | |")
        for name, w, rss, j in rows:
            print(f"| {name} | {nbytes} | {w:.2f} | {j['seconds']:.2f} | {j['relayout_seconds']:.2f} | "
                  f"{j.get('pieces', 1)} | {gib / w:.2f} | {w / cp_s:.2f} | {rss / 2**20:.2f} |")
    finally:
        for f in (npy, tiled, back):
            if os.path.exists(f):
                os.remove(f)


if __name__ == "__main__":
    main()

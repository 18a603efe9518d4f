#!/usr/bin/env python3
"""Planning speed of two tpusim builds in the same run, alternating, so the machine's
noise falls on both alike.

Usage: bench/plan-speed-ab.py OLD_TPUSIM NEW_TPUSIM [REPS]
Times `tpusim plan MODEL --chip CHIP --json` for each case, REPS times per build
(default 7), and prints each build's median wall time and NEW / OLD."""
import statistics
import subprocess
import sys
import time

CASES = [("resnet50", "bm1684x", 1), ("resnet50", "bm1688", 1), ("resnet50", "bm1684x", 8),
         ("mobilenetv2", "bm1684x", 1)]


def once(exe: str, model: str, chip: str, batch: int) -> float:
    t = time.perf_counter()
    subprocess.run([exe, "plan", model, "--chip", chip, "--batch", str(batch), "--json"],
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    old, new = sys.argv[1], sys.argv[2]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    print(f"{'case':<28} {'old s':>8} {'new s':>8} {'new/old':>8}")
    for model, chip, batch in CASES:
        times = {old: [], new: []}
        for _ in range(reps):
            for exe in (old, new):
                times[exe].append(once(exe, model, chip, batch))
        a, b = statistics.median(times[old]), statistics.median(times[new])
        print(f"{model + ' ' + chip + ' b' + str(batch):<28} {a:8.3f} {b:8.3f} {b / a:8.3f}")


if __name__ == "__main__":
    main()

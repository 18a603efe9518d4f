#!/usr/bin/env bash
# Benchmarks of `tpusim report` (figures go to bench/RESULTS-report.md).
#
#  1. `tpusim report` (ResNet-50, batch 1, 224², v5e): median of N runs, with the
#     planner alone (`tpusim plan resnet50`, the largest part of the work) measured in
#     the same run as the baseline.
#  2. A sweep of 100 runs (bench/report-sweep.toml: 4 models × 5 chips × 5 batches) on
#     all cores, and the same sweep on one thread (RAYON_NUM_THREADS=1) as the baseline.
#
# usage: bench/report.sh [N]   (release binary: $TPUSIM, else $CARGO_TARGET_DIR/release/tpusim)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-5}"
bin="${TPUSIM:-${CARGO_TARGET_DIR:-target}/release/tpusim}"
[ -x "$bin" ] || { echo "build first: cargo build --release -p tpusim (looked for $bin)" >&2; exit 1; }

# median wall time in seconds of "$@" over $n runs
median() {
  local times=()
  for _ in $(seq "$n"); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    times+=("$(( t1 - t0 ))")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]/1e9}'
}

echo "machine: $(nproc) cores, $(uname -sr); binary: $bin; runs per figure: $n"
plan=$(median "$bin" plan resnet50)
rep=$(median "$bin" report)
echo "tpusim plan resnet50 (baseline)      : ${plan} s"
echo "tpusim report (resnet50 b1 224², v5e): ${rep} s  ($(awk -v a="$rep" -v b="$plan" 'BEGIN{printf "%.2f", a/b}')x the planner alone)"
rep_npu=$(median "$bin" report resnet50 --chip bm1684x)
echo "tpusim report resnet50 --chip bm1684x: ${rep_npu} s"

runs=$("$bin" report --sweep bench/report-sweep.toml 2>/dev/null | tail -n +2 | wc -l)
n=1
par=$(median "$bin" report --sweep bench/report-sweep.toml)
one=$(median env RAYON_NUM_THREADS=1 "$bin" report --sweep bench/report-sweep.toml)
echo "sweep of $runs runs, all cores       : ${par} s"
echo "sweep of $runs runs, 1 thread (base) : ${one} s  (parallel speedup $(awk -v a="$one" -v b="$par" 'BEGIN{printf "%.2f", a/b}')x)"

#!/bin/bash
# Planner benchmark: wall time of planning built-in models (release build), best of N,
# plus the search strategies compared (dp = TPU-MLIR-like baseline, best = default).
# Usage: bench/plan-bench.sh [REPS]     (writes nothing; paste the output into RESULTS-plan.md)
#   CARGO_TARGET_DIR: cargo's build folder; default the repository's target/
set -e
cd "$(dirname "$0")/.."
REPS=${1:-5}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p tpusim-planner --example plan_time
B=$CARGO_TARGET_DIR/release/examples/plan_time
for s in dp best; do
  $B resnet50 bm1684x 1 224 $s $REPS
done
$B resnet18 bm1684x 1 224 best $REPS
$B mobilenetv2 bm1684x 1 224 best $REPS
$B vgg16 bm1684x 1 224 best $REPS
$B resnet50 bm1688 1 224 best $REPS
$B resnet50 bm1684x 8 224 best 1

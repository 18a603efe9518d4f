#!/usr/bin/env bash
# Compare two tpusim builds on the outputs that must not change by accident: every
# built-in model's plan JSON and TPU-MLIR export on the NPU presets, reports, and the
# LLM training search and serving frontier.
# Usage: bench/compare_builds.sh OLD_TPUSIM NEW_TPUSIM [MODELS...]
# Prints one line per case (same / DIFFERENT) and exits 1 if any differ.
set -u
old=$1 new=$2; shift 2
models=${*:-resnet18 resnet50 mobilenetv2 vgg16}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name, then the arguments of one tpusim call: its stdout and the file OUT compared
  local name=$1; shift
  "$old" "${@//OUT/$tmp/old.out}" > "$tmp/old" 2>&1; local ro=$?
  "$new" "${@//OUT/$tmp/new.out}" > "$tmp/new" 2>&1; local rn=$?
  touch "$tmp/old.out" "$tmp/new.out"
  if [ $ro -eq $rn ] && cmp -s "$tmp/old" "$tmp/new" && cmp -s "$tmp/old.out" "$tmp/new.out"; then
    echo "same       $name"
  else
    echo "DIFFERENT  $name (exit $ro vs $rn)"; fail=1
  fi
  rm -f "$tmp/old.out" "$tmp/new.out"
}
for m in $models; do
  for chip in bm1684x bm1688 cv183x; do
    check "plan $m $chip" plan "$m" --chip "$chip" --json
    check "export $m $chip" plan "$m" --chip "$chip" --export-tpu-mlir OUT
  done
  check "plan $m bm1684x text" plan "$m" --chip bm1684x
  check "plan $m bm1684x batch 4" plan "$m" --chip bm1684x --batch 4 --json
  check "plan $m bm1688 allocator spec" plan "$m" --chip bm1688 --allocator spec --json
  check "report $m bm1684x" report "$m" --chip bm1684x --json
  check "report $m v5e" report "$m" --json
done
check "plan resnet18 from a chip file" plan resnet18 --chip-file data/lmem/bm1688.toml --json
check "report resnet18 from a chip file" report resnet18 --chip-file data/lmem/bm1684x.toml --json
check "report default summary" report --summary
check "llm train search" llm train llama-3-70b --chip v5p --slice 8x8x4 --json
check "llm serve" llm serve llama-3-8b --chip v5e --slice 4x2 --sweep-batch --json
exit $fail

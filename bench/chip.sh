#!/usr/bin/env bash
# Benchmarks of the chip model (criterion, low sample counts: about a minute once
# built). Each figure is paired with a baseline measured in the same run; the ratios
# go to bench/RESULTS-chip.md.
#   baseline "parse v5e TOML"      vs  "lookup v5e (cached database)"
#   baseline "BFS all pairs 16x16" vs  "closed-form all pairs 16x16"
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p tpusim-chip --bench chip -- --warm-up-time 1 --measurement-time 3 2>&1 |
  grep -E '^(baseline|lookup|closed-form)|time:'

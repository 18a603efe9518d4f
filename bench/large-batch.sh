#!/usr/bin/env bash
# Planning cost against batch and depth (issue 24, item 9): two tpusim builds, timed in
# alternating runs on the same machine, and their outputs compared.
# Usage: bench/large-batch.sh OLD_TPUSIM NEW_TPUSIM [BATCHES...]
# Prints a Markdown table: wall seconds and peak RSS per case, old and new, and whether
# the JSON reports are byte-identical. A case over 600 s is cut and shown as "> 600 s".
set -u
old=$1 new=$2; shift 2
batches=${*:-64 256 1024 4096}
root=$(cd "$(dirname "$0")/.." && pwd)
cnn=$root/crates/graph/tests/data/small_cnn.onnx
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
chain() { # a topology of N chained 3x3 convs, 18x18x8
  echo 'Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,'
  for ((i = 0; i < $1; i++)); do echo "conv$i, 18, 18, 3, 3, 8, 8, 1,"; done
}
run() { # build, output file, arguments: prints "seconds rss_mb"
  local bin=$1 out=$2; shift 2
  /usr/bin/time -f '%e %M' -o "$tmp/t" timeout 600 "$bin" "$@" > "$out" 2>/dev/null
  [ $? -eq 124 ] && { echo "> 600 -"; return; }
  awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$tmp/t"
}
row() { # label, then the arguments of one call
  local label=$1; shift
  read -r ot om < <(run "$old" "$tmp/old.json" "$@")
  read -r nt nm < <(run "$new" "$tmp/new.json" "$@")
  local same=differ
  cmp -s "$tmp/old.json" "$tmp/new.json" && same=same
  local ratio=-
  [[ $ot =~ ^[0-9.]+$ ]] && ratio=$(awk -v o="$ot" -v n="$nt" 'BEGIN { printf "%.2f", n / o }')
  echo "| $label | $ot s, $om MB | $nt s, $nm MB | $ratio | $same |"
}
echo "| case | old (wall, peak RSS) | new | new / old | JSON |"
echo "|---|---|---|---|---|"
for b in $batches; do
  row "report small_cnn.onnx --chip cv180x --batch $b" report "$cnn" --chip cv180x --batch "$b" --json
done
for n in 100 400; do
  chain "$n" > "$tmp/chain$n.csv"
  row "report (topology of $n chained convs) on v5e" report "$tmp/chain$n.csv" --json
done
row "plan resnet50 --chip bm1684x" plan resnet50 --chip bm1684x --json

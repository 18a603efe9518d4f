#!/usr/bin/env bash
# Fuzz smoke: every fuzz target replays its committed corpus, then fuzzes for a few
# seconds (libFuzzer via cargo-fuzz on the stable toolchain, RUSTC_BOOTSTRAP=1). Fails
# on any crash, panic, run over 10 s or allocation over 1 GiB (the long runs of
# fuzz/run.sh count a run over 1 s as a hang; CI machines vary too much for that).
#   .ci/fuzz-smoke.sh [SECONDS_PER_TARGET]      (default 5)
# Installs cargo-fuzz when missing. The corpus is not changed: new inputs go to a
# scratch folder.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-5}
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz-smoke: installing cargo-fuzz" >&2
  cargo install --locked cargo-fuzz@0.13.2 >/dev/null 2>&1
fi
export RUSTC_BOOTSTRAP=1
# cargo-fuzz's default build: optimised, with debug assertions and overflow checks, so
# an unchecked overflow is a crash. No AddressSanitizer here (the targets are safe Rust
# and the smoke is about panics, hangs and allocations); fuzz/run.sh uses it.
cargo fuzz build -s none >/dev/null
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
targets=$(sed -n 's/^name = "\(.*\)"/\1/p' Cargo.toml | grep -v '^tpusim-fuzz$')
n=0
for t in $targets; do
  mkdir -p "$scratch/$t"
  if ! cargo fuzz run -s none "$t" "$scratch/$t" "corpus/$t" -- -max_total_time="$secs" \
      -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=1024 -close_fd_mask=3 \
      -artifact_prefix="$scratch/" >"$scratch/$t.log" 2>&1; then
    echo "fuzz-smoke: $t FAILED"; grep -E 'ERROR|panicked|Test unit' "$scratch/$t.log" | head -5
    # the panic itself (the run above hides the target's stderr) and the input, so the
    # finding can be reproduced from the CI log: base64 -d > fuzz/regressions/$t/NAME
    for a in "$scratch"/crash-* "$scratch"/timeout-* "$scratch"/oom-*; do
      [ -e "$a" ] || continue
      "target/x86_64-unknown-linux-gnu/release/$t" "$a" 2>&1 | grep -A2 -m1 'panicked' || true
      echo "fuzz-smoke: input (base64): $(base64 -w0 "$a")"
    done
    exit 1
  fi
  n=$((n + 1))
done
echo "fuzz smoke: all $n targets ran clean"

#!/usr/bin/env bash
# Run every fuzz target (or the ones named) for SECONDS each on the machine's stable
# toolchain (cargo-fuzz's nightly flags through RUSTC_BOOTSTRAP=1), with the limits the
# project promises: a run over 1 s is a hang, an allocation over 1 GiB is a failure.
# The build is cargo-fuzz's default: optimised, with AddressSanitizer, debug assertions
# and overflow checks (an unchecked overflow is a crash).
#   fuzz/run.sh SECONDS [TARGET...]        e.g. fuzz/run.sh 600 shape onnx
# New inputs go to fuzz/corpus/TARGET (commit the ones worth keeping, after
# `cargo fuzz cmin`), crashes to fuzz/artifacts/TARGET. Exit status 1 if any crashed.
set -u
cd "$(dirname "$0")"
secs=${1:?seconds per target}; shift
targets=${*:-$(sed -n 's/^name = "\(.*\)"/\1/p' Cargo.toml | grep -v '^tpusim-fuzz$')}
export RUSTC_BOOTSTRAP=1
cargo fuzz build >/dev/null || exit 1
fail=0
for t in $targets; do
  mkdir -p "corpus/$t" "artifacts/$t"
  log=$(mktemp)
  cargo fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -timeout=1 -rss_limit_mb=1024 \
      -malloc_limit_mb=1024 -print_final_stats=1 -close_fd_mask=3 >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  echo "$t: exit $rc, executions ${execs:-?}, ${cov:-cov ?}"
  if [ $rc -ne 0 ]; then fail=1; grep -E 'ERROR|panicked|Test unit written' "$log" | head -5; fi
  rm -f "$log"
done
exit $fail

#!/usr/bin/env bash
# Fuzz smoke: every fuzz target replays its committed corpus, then fuzzes for a few
# seconds (libFuzzer via cargo-fuzz on the stable toolchain, RUSTC_BOOTSTRAP=1). Fails
# on any crash, panic, run over 10 s or allocation over 1 GiB (the long runs of
# fuzz/run.sh count a run over 1 s as a hang; CI machines vary too much for that).
#   .ci/fuzz-smoke.sh [SECONDS_PER_TARGET]      (default 5)
# Installs cargo-fuzz when missing. The corpus is not changed: new inputs go to a
# scratch folder. Runs two jobs at a time (FUZZ_JOBS): the replay in chunks of at most
# 100 inputs (nd_onnx's 889 take over 3 minutes alone), then each target's fuzzing,
# started from a sample of its corpus rather than all of it, which was just replayed.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-5}
jobs=${FUZZ_JOBS:-2}
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz-smoke: installing cargo-fuzz" >&2
  cargo install --locked cargo-fuzz@0.13.2 >/dev/null 2>&1
fi
export RUSTC_BOOTSTRAP=1
# cargo-fuzz's default build: optimised, with debug assertions and overflow checks, so
# an unchecked overflow is a crash. No AddressSanitizer here (the targets are safe Rust
# and the smoke is about panics, hangs and allocations); fuzz/run.sh uses it.
cargo fuzz build -s none >/dev/null
bin=target/x86_64-unknown-linux-gnu/release
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
targets=$(sed -n 's/^name = "\(.*\)"/\1/p' Cargo.toml | grep -v '^tpusim-fuzz$')
export bin scratch secs
export LIMITS="-timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=1024 -close_fd_mask=3"

# One job: `replay TARGET LIST` runs the inputs named in file LIST once each;
# `fuzz TARGET` fuzzes for $secs seconds from a sample of the corpus. Its log is kept
# under $scratch/logs/ when it fails.
job() {
  local kind=$1 t=$2 log
  log=$(mktemp "$scratch/log.XXXXXX")
  mkdir -p "$scratch/art/$t"
  if [[ $kind == replay ]]; then
    # shellcheck disable=SC2086
    xargs -a "$3" "$bin/$t" $LIMITS -artifact_prefix="$scratch/art/$t/" >"$log" 2>&1 && return 0
  else
    local seeds="$scratch/seeds/$t" grown="$scratch/grown/$t"
    mkdir -p "$seeds" "$grown"
    find "corpus/$t" -type f | sort | shuf -n 16 --random-source=<(yes) | xargs -r cp -t "$seeds"
    # shellcheck disable=SC2086
    "$bin/$t" "$grown" "$seeds" $LIMITS -max_total_time="$secs" \
      -artifact_prefix="$scratch/art/$t/" >"$log" 2>&1 && return 0
  fi
  mkdir -p "$scratch/logs"
  mv "$log" "$scratch/logs/$t.$kind.log"
  echo "fuzz-smoke: $t FAILED ($kind)"
  return 1
}
export -f job

# the replay: each corpus in chunks of at most 100 inputs
mkdir -p "$scratch/lists"
for t in $targets; do
  find "corpus/$t" -type f | sort | split -l 100 - "$scratch/lists/$t."
done
status=0
for l in "$scratch"/lists/*; do
  t=$(basename "$l"); echo "replay ${t%.*} $l"
done | xargs -P "$jobs" -L 1 bash -c 'job "$@"' _ || status=1
if ((status == 0)); then
  printf '%s\n' $targets | xargs -P "$jobs" -I{} bash -c 'job fuzz "$@"' _ {} || status=1
fi
if ((status != 0)); then
  for log in "$scratch"/logs/*.log; do
    [[ -e $log ]] || continue
    t=$(basename "$log"); t=${t%%.*}
    grep -E 'ERROR|panicked|Test unit' "$log" | head -5
    # the panic itself and the input, so the finding can be reproduced from the CI
    # log: base64 -d > fuzz/regressions/$t/NAME
    for a in "$scratch/art/$t"/*; do
      [[ -e $a ]] || continue
      "$bin/$t" "$a" 2>&1 | grep -A2 -m1 'panicked' || true
      echo "fuzz-smoke: $t input (base64): $(base64 -w0 "$a")"
    done
  done
  exit 1
fi
echo "fuzz smoke: all $(wc -w <<<"$targets") targets ran clean"

#!/usr/bin/env bash
# Whether every crate python/'s maturin build compiles gets the features `cargo test
# --workspace` gives it. Both share target/, and a crate whose features differ is
# compiled twice, with everything above it: every library crate, about 4 min on CI's
# 2 cores. Prints each crate whose features differ (none: silent) and exits 0; the
# features python/ adds for this are listed in python/Cargo.toml. `cargo tree` lists a
# crate built for the host and for the target once, so a difference between those two
# alone is not seen here.
#   .ci/feature-parity.sh
set -euo pipefail
cd "$(dirname "$0")/.."
features() {
  cargo tree --locked --prefix none -f '{p}|{f}' "$@" 2>/dev/null |
    sed 's/ (\*)$//; s/ (proc-macro)//' | sort -u
}
tests=$(mktemp); py=$(mktemp); trap 'rm -f "$tests" "$py"' EXIT
features --workspace -e normal,build,dev >"$tests"
features -p tpusim-python -e normal,build >"$py"
diff=$(join -t'|' "$py" "$tests" | awk -F'|' '$2 != $3 { print "  " $1 ": python/ [" $2 "], cargo test [" $3 "]" }')
if [[ -n $diff ]]; then
  echo "feature-parity: these crates are compiled twice (python/run-tests.sh rebuilds what depends on them):"
  echo "$diff"
fi

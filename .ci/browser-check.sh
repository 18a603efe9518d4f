#!/usr/bin/env bash
# Load `tpusim report --html` in a real headless Chromium (Debian's package) and check
# that the page loads with no console errors and shows the summary.
#
# usage: .ci/browser-check.sh [PAGE.html]
#   with no argument, renders the default report (ResNet-50 on the default chip) with
#   the tpusim binary ($TPUSIM, else $CARGO_TARGET_DIR/debug/tpusim, else `cargo run`).
# Also proves the check can fail: a page with a script error must be rejected.
# Writes a screenshot to ${BROWSER_CHECK_OUT:-/tmp/tpusim-browser-check}/report.png.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${BROWSER_CHECK_OUT:-/tmp/tpusim-browser-check}"
mkdir -p "$out"

if ! command -v chromium >/dev/null 2>&1; then
  echo "browser-check: installing chromium (apt-get)" >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

# run_chromium PAGE MODE ARG... : headless, offline, fresh profile; stderr to $out/log
run_chromium() {
  local page="$1"; shift
  local profile
  profile="$(mktemp -d)"
  # timeout: a hung browser must fail the check, not the CI run's clock
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 \
    "$@" "file://$page" 2>"$out/log" || { rm -rf "$profile"; return 1; }
  rm -rf "$profile"
}

# check_page PAGE: 0 when it loads with no console error and shows the summary
check_page() {
  local page="$1"
  if ! run_chromium "$page" --dump-dom >"$out/dom.html"; then
    echo "browser-check: chromium failed on $page" >&2; cat "$out/log" >&2; return 1
  fi
  # Chromium logs page console messages and uncaught exceptions as CONSOLE lines;
  # failed loads of resources show as "Failed to load" / net::ERR.
  if grep -E 'CONSOLE|Uncaught|Failed to load|net::ERR' "$out/log" | grep -viE 'DevTools listening' >"$out/errors"; then
    if [ -s "$out/errors" ]; then
      echo "browser-check: console errors on $page:" >&2; cat "$out/errors" >&2; return 1
    fi
  fi
  if ! grep -q 'id="summary"' "$out/dom.html" || ! grep -q 'Total time (planned)' "$out/dom.html"; then
    echo "browser-check: the summary is missing from the rendered page $page" >&2; return 1
  fi
  return 0
}

page="${1:-}"
if [ -z "$page" ]; then
  page="$out/report.html"
  if [ -n "${TPUSIM:-}" ]; then
    "$TPUSIM" report --html "$page" >/dev/null
  elif [ -x "${CARGO_TARGET_DIR:-target}/debug/tpusim" ]; then
    "${CARGO_TARGET_DIR:-target}/debug/tpusim" report --html "$page" >/dev/null
  else
    cargo run --quiet -p tpusim -- report --html "$page" >/dev/null
  fi
fi
page="$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"

# 1. the check must be able to fail: a page with a summary but a script error
bad="$out/bad.html"
printf '%s\n' '<!DOCTYPE html><html><head><meta charset="utf-8"><title>bad</title></head><body>' \
  '<section id="summary">Total time (planned)</section>' \
  '<script>console.error("deliberate error"); undefinedFunction();</script></body></html>' >"$bad"
if check_page "$bad" 2>/dev/null; then
  echo "browser-check: a page with a script error passed the check: the check is broken" >&2
  exit 1
fi

# 2. the real page
check_page "$page"
run_chromium "$page" --screenshot="$out/report.png" --window-size=1280,2400 --hide-scrollbars >/dev/null || true
echo "browser-check: ok ($page loads with no console errors and shows the summary; screenshot $out/report.png)"

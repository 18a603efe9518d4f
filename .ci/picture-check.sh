#!/usr/bin/env bash
# Render every picture tpusim draws in headless Chromium and fail on text that leaves its
# picture or overlaps other text (.ci/picture-check.js measures each <text>'s box).
#
# usage: .ci/picture-check.sh   (tpusim from $TPUSIM, else target/debug/tpusim)
# Proves it can fail: a picture with text past its edge and two texts on each other
# must be rejected. Needs chromium (.ci/browser-check.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${PICTURE_CHECK_OUT:-/tmp/tpusim-picture-check}")"
rm -rf "$out" && mkdir -p "$out"
t="${TPUSIM:-${CARGO_TARGET_DIR:-target}/debug/tpusim}"
[ -x "$t" ] || cargo build --quiet -p tpusim

# every writer, on cases with long names and crowded axes
"$t" report --html "$out/report-v5e.html" >/dev/null
"$t" report resnet18 --chip bm1684x --html "$out/report-bm1684x.html" >/dev/null
"$t" report crates/report/tests/data/tiny.csv --chip v6e --html "$out/report-tiny.html" >/dev/null
"$t" plan resnet18 --svg "$out/plan-resnet18.svg" >/dev/null
"$t" plan mobilenetv2 --chip bm1688 --batch 4 --svg "$out/plan-mobilenetv2.svg" >/dev/null
"$t" lmem map --chip bm1684x --shape 2,96,28,28 --svg "$out/lmem-map.svg" >/dev/null
"$t" roofline matmul --chip v5e --b 64 --d 4096 --f 4096 --svg "$out/roofline-matmul.svg" >/dev/null
"$t" layout map 'bf16[4,8]{1,0:T(2,4)(2,1)}' --svg "$out/layout-map.svg" >/dev/null
"$t" layout map 'f32[24,300]{1,0:T(8,128)}' --svg "$out/layout-map-wide.svg" >/dev/null
"$t" systolic gemm --m 6 --k 8 --n 8 --rows 4 --cols 4 --svg "$out/systolic.svg" >/dev/null
"$t" llm serve gemma-2-9b --chip v5e --slice 2x2 --batch 16 --context 16384 --svg "$out/llm-serve.svg" --html "$out/llm-serve.html" >/dev/null
"$t" llm train qwen3-8b --chip v5p --slice 4x4x4 --batch-tokens 4Mi --seq 8192 --svg "$out/llm-train.svg" >/dev/null
"$t" report gemma-2-2b --phase decode --context 16384 --batch 8 --html "$out/report-gemma2.html" >/dev/null
"$t" report crates/graph/tests/data/nd/hf_qwen2.onnx --seq 32 --batch 2 --html "$out/report-qwen2-onnx.html" >/dev/null
printf '%s\n' 'models = ["resnet18", "mobilenetv2"]' 'chips = ["v5e", "v6e", "bm1684x"]' 'batches = [1, 2, 4, 8]' >"$out/grid.toml"
"$t" report --sweep "$out/grid.toml" --resolution 64 --html "$out/sweep.html" --out "$out/sweep.csv" 2>/dev/null

# the check must fail on a bad picture
cat >"$out/bad.svg" <<'SVG'
<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40" aria-label="bad"><text x="60" y="20" font-size="12">far too long a title</text><text x="2" y="30" font-size="12">one</text><text x="4" y="31" font-size="12">two</text></svg>
SVG

check() { # FILE -> prints problems; returns 1 when there are any
  local f="$1" page="$out/$(basename "$1").check.html" profile
  if [[ $f == *.svg ]]; then
    { echo '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">'; cat "$f"; echo '<script>'; cat .ci/picture-check.js; echo '</script></body></html>'; } >"$page"
  else
    python3 - "$f" "$page" <<'PY'
import sys
html = open(sys.argv[1], encoding="utf-8").read()
js = open(".ci/picture-check.js", encoding="utf-8").read()
open(sys.argv[2], "w", encoding="utf-8").write(html.replace("</body>", "<script>" + js + "</script></body>"))
PY
  fi
  profile="$(mktemp -d)"
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --window-size=1400,1000 --dump-dom "file://$page" >"$page.dom" 2>/dev/null || true
  rm -rf "$profile"
  python3 - "$page.dom" "$f" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = list(re.finditer(r'<pre id="picture-check">(.*?)</pre>', dom, re.S))
m = m[-1] if m else None
if not m:
    print(f"picture-check: {sys.argv[2]}: the check did not run"); sys.exit(1)
r = json.loads(html.unescape(m.group(1)))
if r["svgs"] == 0:
    print(f"picture-check: {sys.argv[2]}: no picture found"); sys.exit(1)
for p in r["problems"]:
    print(f"picture-check: {sys.argv[2]}: {p['picture']}: {p['kind']}: {p['text']!r}" + (f" ({p['by']} px)" if "by" in p else ""))
sys.exit(1 if r["problems"] else 0)
PY
}

if check "$out/bad.svg" >"$out/bad.log"; then
  echo "picture-check: a picture with overflowing and overlapping text passed: the check is broken" >&2
  exit 1
fi
grep -q outside "$out/bad.log" && grep -q overlap "$out/bad.log" || { echo "picture-check: the bad picture was not flagged for both faults" >&2; cat "$out/bad.log" >&2; exit 1; }
rm "$out/bad.svg"

fail=0
for f in "$out"/*.svg "$out"/*.html; do
  [[ $f == *.check.html ]] && continue
  check "$f" || fail=1
done
if ((fail)); then
  echo "picture-check: text overflows or overlaps in the pictures above" >&2
  exit 1
fi
echo "picture-check: ok (every picture's text inside its box, none overlapping)"

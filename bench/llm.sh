#!/usr/bin/env bash
# tpusim llm: the sharding search's speed, the book's worked answers under --ideal,
# and the calibrated model's error on the shipped measurements (both splits).
#   bench/llm.sh [path/to/tpusim]      (default target/release/tpusim)
set -euo pipefail
cd "$(dirname "$0")/.."
T=${1:-target/release/tpusim}
now() { date +%s.%N; }
timed() { # median of 7 wall times of "$@"
  local ts=()
  for _ in 1 2 3 4 5 6 7; do
    local a; a=$(now); "$@" >/dev/null; ts+=("$(echo "$(now) - $a" | bc -l)")
  done
  printf '%s\n' "${ts[@]}" | sort -g | sed -n 4p
}
echo "## speed (median of 7, seconds; baseline: tpusim llm show, the same process start)"
base=$(timed "$T" llm show llama-3-8b --json)
search=$(timed "$T" llm train llama-3.1-405b --chip v5p --slice 16x20x28 --batch-tokens 16Mi --seq 8192 --json)
serve=$(timed "$T" llm serve llama-3-70b --chip v5e --slice 16x16 --batch 64 --context 8192 --sweep-batch --json)
printf 'baseline %.4f s; search 405B over a full v5p pod (16x20x28) %.4f s (%.2fx); serve 70B on 16x16 with frontier %.4f s (%.2fx)\n' \
  "$base" "$search" "$(echo "$search / $base" | bc -l)" "$serve" "$(echo "$serve / $base" | bc -l)"
gpt2=/tmp/tpusim-bench-gpt2-small.onnx
[[ -f $gpt2 ]] || python3 crates/graph/tests/data/nd/make_transformers.py --gpt2-small "$gpt2"
onnx=$(timed "$T" report "$gpt2" --seq 1024 --json)
l70=$(timed "$T" report llama-3-70b --seq 8192 --json)
printf 'import + report of a GPT-2-small ONNX export (124M parameters inline, %s bytes) %.4f s (%.2fx); report llama-3-70b prefill 8192 (80 layers) %.4f s (%.2fx)\n' \
  "$(stat -c %s "$gpt2")" "$onnx" "$(echo "$onnx / $base" | bc -l)" "$l70" "$(echo "$l70 / $base" | bc -l)"
echo "candidates evaluated for the 405B search: $("$T" llm train llama-3.1-405b --chip v5p --slice 16x20x28 --batch-tokens 16Mi --seq 8192 --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print(len(r["runners_up"]), "runners-up shown")')"
echo
echo "## the book's worked answers (--ideal)"
j() { "$T" "$@" --json; }
py() { python3 -c "import json,sys,types; r=json.load(sys.stdin, object_hook=lambda d: types.SimpleNamespace(**d)); $1"; }
j llm serve llama-2-13b --chip v5e --slice 4x2 --batch 1 --context 8192 --ideal | py 'print(f"13B b1:   {r.decode_step_s*1e3:.2f} ms (book 4.98), {r.decode_tokens_per_s:.1f} tok/s (book 200.61)")'
j llm serve llama-2-13b --chip v5e --slice 4x2 --batch 240 --context 8192 --ideal | py 'print(f"13B b240: {r.decode_step_s*1e3:.2f} ms (book 249.09), {r.decode_tokens_per_s:.1f} tok/s (book 963.53)")'
j llm serve llama-3-70b --chip v5e --slice 4x2 --batch 32 --context 8192 --weights int8 --kv-dtype int8 --ideal | py 'print(f"70B int8 b32 4x2: {r.decode_step_s*1e3:.2f} ms (book 17), {r.decode_tokens_per_s:.0f} tok/s (book 1882)")'
j llm serve llama-3-70b --chip v5e --slice 4x4 --batch 32 --context 8192 --weights int8 --kv-dtype int8 --ideal | py 'print(f"70B int8 b32 4x4: {r.decode_step_s*1e3:.2f} ms (book 8.5)")'
j llm serve llama-3-70b --chip v5e --slice 4x4 --batch 1 --context 8192 --prefill-tokens 8192 --mfu 0.4 --ideal | py 'print(f"70B prefill 8192 on 16 v5e at 40%: {r.prefill_s:.3f} s (book 0.91)")'
for w in bf16 int8 int4; do
  j llm serve llama-3-70b --chip v5e --slice 16x16 --batch 1 --context 8192 --weights $w --kv-dtype $w --ideal | py "print(f'70B $w min slice: {r.min_slice}')"
done
j llm train llama-3-70b --chip v5p --slice 16x20x28 --batch-tokens 4e6 --seq 8192 --tokens 15e12 --mfu 0.4 --checkpoints-per-layer 4 --ideal | py 'print(f"70B training: weights {r.weights_bytes/1e9:.0f} GB (book 140), optimizer {r.optimizer_bytes/1e9:.0f} GB (book 560), checkpoints {r.checkpoint_bytes/1e12:.1f} TB (book 20.9), {r.flops_total:.3g} FLOP (book 6.3e24), {r.total_s:.3g} s = {r.total_s/86400:.1f} days (book 3.8e6 s, 44 days); X_opt {r.thresholds.x_opt:.0f} (book 1618)")'
echo
echo "## validation (calibrated; figures fitted by bench/llm-fit.py on the fit split)"
"$T" llm validate | tail -7
echo
echo "## validation (--ideal)"
"$T" llm validate --ideal | tail -7
echo
echo "## refit"
python3 bench/llm-fit.py "$T"

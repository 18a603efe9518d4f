#!/usr/bin/env bash
# Copy the seed inputs from the repository's test data into fuzz/corpus/TARGET/seed_*
# (idempotent; run it after `cargo fuzz cmin`, which renames inputs to their hashes,
# and before trim.py, which keeps every seed_* file). Needs a built tpusim for the
# plan and cache seeds: TPUSIM=path (default ../target/release/tpusim).
set -euo pipefail
cd "$(dirname "$0")"
tpusim=${TPUSIM:-../target/release/tpusim}
c=corpus
mkdir -p $c/{shape,npy,hlo,onnx,scalesim_config,topology,chip_toml,lmem_toml,tpumlir_cache,plan_json,sweep_toml,llm_model,llm_measurements}
i=0
grep -v '^#' ../crates/layout/tests/data/xla_text_inputs.txt | while IFS= read -r l; do
  [ -n "$l" ] && printf '%s' "$l" > "$c/shape/seed_$(printf %03d $i)" && i=$((i + 1))
done
python3 - <<'PY'
def npy(descr, shape, data):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    while (10 + len(d) + 1) % 64:
        d += ' '
    d += '\n'
    return b'\x93NUMPY\x01\x00' + len(d).to_bytes(2, 'little') + d.encode() + data
open('corpus/npy/seed_f32', 'wb').write(b'f32[3,5]\n' + npy('<f4', '(3, 5)', bytes(60)))
open('corpus/npy/seed_bf16', 'wb').write(b'bf16[2,3]\n' + npy('<u2', '(2, 3)', bytes(12)))
open('corpus/npy/seed_f16_as_bf16', 'wb').write(b'bf16[2,3]\n' + npy('<f2', '(2, 3)', bytes(12)))
PY
cp ../crates/layout/tests/data/tpu_v5e_mlp.hlo.txt $c/hlo/seed_tpu_v5e_mlp.hlo.txt
for f in small_cnn upsample_v9 unsupported variants tv_resnet18; do
  cp ../crates/graph/tests/data/$f.onnx $c/onnx/seed_$f.onnx
done
for d in ../crates/systolic/tests/data/scalesim/*/; do
  cp "$d/scale.cfg" "$c/scalesim_config/seed_$(basename "$d").cfg"
done
for f in ../crates/graph/tests/data/topology/*.csv; do cp "$f" "$c/topology/seed_$(basename "$f")"; done
for f in ../data/chips/*.toml; do cp "$f" "$c/chip_toml/seed_$(basename "$f")"; done
for f in ../data/lmem/*.toml; do cp "$f" "$c/lmem_toml/seed_$(basename "$f")"; done
for f in resnet18_bm1688_ours resnet18_b4_bm1684x_ours; do
  cp ../crates/planner/tests/data/tpumlir_alloc/$f.cache.json "$c/tpumlir_cache/seed_$f.json"
done
"$tpusim" plan resnet18 --resolution 32 --chip bm1684x --export-tpu-mlir "$c/tpumlir_cache/seed_r18_32.json" >/dev/null
# a transformer's cache: TPU-MLIR's own for the graph the target imports it against
cp ../crates/planner/tests/data/tx_zoo/llama_d128_s64_bm1684x.tpumlir_cache.json "$c/tpumlir_cache/seed_llama_d128_s64.json"
"$tpusim" plan resnet18 --resolution 32 --chip bm1684x --json > "$c/plan_json/seed_r18_32_bm1684x.json"
"$tpusim" plan mobilenetv2 --resolution 32 --chip cv183x --json > "$c/plan_json/seed_mbv2_32_cv183x.json"
cp ../bench/report-sweep.toml "$c/sweep_toml/seed_report-sweep.toml"
printf 'models = ["resnet18"]\nchips = ["v5e", "bm1684x"]\nbatches = [1, 4096]\ndtypes = ["bf16", "int8"]\n' > "$c/sweep_toml/seed_dtypes.toml"
# Hugging Face configs of every family `tpusim llm` reads, as the hub ships them
for f in ../crates/llm/tests/data/hf_configs/*.json ../crates/graph/tests/data/nd/hf_*.json; do
  cp "$f" "$c/llm_model/seed_$(basename "$f")"
done
# measurements for `llm validate --data`: every shipped row, one file a row
for f in ../data/llm/*.jsonl; do
  n=0
  while IFS= read -r l; do
    printf '%s\n' "$l" > "$c/llm_measurements/seed_$(basename "$f" .jsonl)_$n"; n=$((n + 1))
  done < "$f"
done
cp ../crates/llm/tests/data/measurements_user.jsonl "$c/llm_measurements/seed_user_fields.jsonl"

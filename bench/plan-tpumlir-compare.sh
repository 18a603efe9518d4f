#!/bin/bash
# Compare our grouping with TPU-MLIR's on the same ONNX files, both evaluated with our
# cost model (TPU-MLIR's via its layer-group cache JSON). Needs the TPU-MLIR outputs in
# $TPUMLIR_WORK (see crates/planner/tests/data/README.md for how they were made).
# Usage: TPUMLIR_WORK=DIR bench/plan-tpumlir-compare.sh
#   TPUMLIR_WORK (required): absolute path of the folder of TPU-MLIR's runs (<model>/lg/...)
#   TPUSIM: the binary (absolute path); default $CARGO_TARGET_DIR/release/tpusim,
#   CARGO_TARGET_DIR defaulting to the repository's target/
set -e
R=$(cd "$(dirname "$0")/.." && pwd)
W=${TPUMLIR_WORK:?set TPUMLIR_WORK to the folder of the TPU-MLIR runs (see crates/planner/tests/data/README.md)}
T=${TPUSIM:-${CARGO_TARGET_DIR:-$R/target}/release/tpusim}
cd $W
for spec in "resnet18.onnx|resnet18/lg/resnet18_bm1684x_f16.layer_group_cache.json|" \
            "resnet18.onnx|resnet18_b4/lg/resnet18_b4_bm1684x_f16.layer_group_cache.json|--batch 4" \
            "mini_mbv2.onnx|mini_mbv2/lg/mini_mbv2_bm1684x_f16.layer_group_cache.json|"; do
  IFS='|' read -r m c extra <<< "$spec"
  echo "== $m $extra: ours"
  $T plan $m $extra
  echo "== $m $extra: TPU-MLIR's grouping ($c)"
  $T plan $m $extra --import-tpu-mlir $c 2>&1
done

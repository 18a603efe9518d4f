#!/bin/bash
# TPU-MLIR 1.30.2's own layer-group run of a transformed model for another chip (F16):
# run in $TPUMLIR_WORK (the folder of TPU-MLIR's runs) after lmem_tpumlir_run.sh /
# lmem_tpumlir_run_shape.sh made DIR; writes DIR/CHIP_lg, which bench/plan-tpumlir-ours.sh
# (CHIP=...) compares with.
# Usage: TPUMLIR_VENV=VENV ./lmem_tpumlir_run_chip.sh DIR CHIP   (e.g. resnet50_b4 bm1688)
#   TPUMLIR_VENV (required): a Python 3.10 venv with `pip install tpu_mlir==1.30.2`
set -e
. "${TPUMLIR_VENV:?set TPUMLIR_VENV to a Python 3.10 venv with pip install tpu_mlir==1.30.2}/bin/activate"
D=$1; C=$2
[ -n "$C" ] || { echo "usage: $0 DIR CHIP" >&2; exit 2; }
cd "$D"
rm -rf "${C}_lg" && mkdir "${C}_lg" && ln -s "../$D.mlir" "../${D}_top_f32_all_weight.npz" "${C}_lg/"
( cd "${C}_lg" && model_deploy.py --mlir "$D.mlir" --quantize F16 --chip "$C" --model "$D.bmodel" --debug > deploy.log 2>&1 )
echo "done $D $C"

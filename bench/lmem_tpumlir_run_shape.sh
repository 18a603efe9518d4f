#!/bin/bash
# Like run.sh (bench/lmem_tpumlir_run.sh), for another input shape, run in $TPUMLIR_WORK
# (the folder of TPU-MLIR's runs, holding MODEL.onnx):
#   TPUMLIR_VENV=VENV ./run_shape.sh MODEL DIRNAME "[[4,3,224,224]]"  (layer groups on only)
#   TPUMLIR_VENV (required): a Python 3.10 venv with `pip install tpu_mlir==1.30.2`
set -e
. "${TPUMLIR_VENV:?set TPUMLIR_VENV to a Python 3.10 venv with pip install tpu_mlir==1.30.2}/bin/activate"
M=$1; D=$2; S=$3
mkdir -p $D && cd $D
model_transform.py --model_name $D --model_def ../$M.onnx --input_shapes "$S" --mlir $D.mlir > transform.log 2>&1
rm -rf lg && mkdir lg && ln -s ../$D.mlir ../${D}_top_f32_all_weight.npz lg/
( cd lg && model_deploy.py --mlir $D.mlir --quantize F16 --chip bm1684x --model $D.bmodel --debug > deploy.log 2>&1 )
echo done $D

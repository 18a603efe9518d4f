#!/bin/bash
# Compile one model with TPU-MLIR 1.30.2: with layer groups (lg/) and without (nolg/).
# Usage: TPUMLIR_VENV=VENV ./run.sh NAME   (NAME.onnx in this folder: $TPUMLIR_WORK, the
#        folder of TPU-MLIR's runs, where this script is copied as run.sh)
#   TPUMLIR_VENV (required): a Python 3.10 venv with `pip install tpu_mlir==1.30.2`
set -e
. "${TPUMLIR_VENV:?set TPUMLIR_VENV to a Python 3.10 venv with pip install tpu_mlir==1.30.2}/bin/activate"
NAME=$1
mkdir -p $NAME && cd $NAME
[ -f $NAME.mlir ] || model_transform.py --model_name $NAME --model_def ../$NAME.onnx --input_shapes "[[1,3,224,224]]" --mlir $NAME.mlir > transform.log 2>&1
for v in lg nolg; do
  rm -rf $v && mkdir -p $v && ln -s ../$NAME.mlir ../${NAME}_top_f32_all_weight.npz $v/
done
( cd lg && /usr/bin/time -v model_deploy.py --mlir $NAME.mlir --quantize F16 --chip bm1684x --model $NAME.bmodel --debug > deploy.log 2>&1 )
( cd nolg && model_deploy.py --mlir $NAME.mlir --quantize F16 --chip bm1684x --model $NAME.bmodel --debug --disable_layer_group > deploy.log 2>&1 )
echo done $NAME

#!/bin/bash
# Compile one model with TPU-MLIR 1.30.2: with layer groups (lg/) and without (nolg/).
# Usage: ./run.sh NAME   (NAME.onnx in this folder)
set -e
. /work/peers/tpumlir-venv/bin/activate
NAME=$1
mkdir -p $NAME && cd $NAME
[ -f $NAME.mlir ] || model_transform.py --model_name $NAME --model_def ../$NAME.onnx --input_shapes "[[1,3,224,224]]" --mlir $NAME.mlir > transform.log 2>&1
for v in lg nolg; do
  rm -rf $v && mkdir -p $v && ln -s ../$NAME.mlir ../${NAME}_top_f32_all_weight.npz $v/
done
( cd lg && /usr/bin/time -v model_deploy.py --mlir $NAME.mlir --quantize F16 --chip bm1684x --model $NAME.bmodel --debug > deploy.log 2>&1 )
( cd nolg && model_deploy.py --mlir $NAME.mlir --quantize F16 --chip bm1684x --model $NAME.bmodel --debug --disable_layer_group > deploy.log 2>&1 )
echo done $NAME

#!/bin/bash
# Like run.sh, for another input shape: ./run_shape.sh MODEL DIRNAME "[[4,3,224,224]]"  (layer groups on only)
set -e
. /work/peers/tpumlir-venv/bin/activate
M=$1; D=$2; S=$3
mkdir -p $D && cd $D
model_transform.py --model_name $D --model_def ../$M.onnx --input_shapes "$S" --mlir $D.mlir > transform.log 2>&1
rm -rf lg && mkdir lg && ln -s ../$D.mlir ../${D}_top_f32_all_weight.npz lg/
( cd lg && model_deploy.py --mlir $D.mlir --quantize F16 --chip bm1684x --model $D.bmodel --debug > deploy.log 2>&1 )
echo done $D

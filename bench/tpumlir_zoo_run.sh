#!/bin/bash
# TPU-MLIR 1.30.2's own F16 runs of the zoo (bench/tpumlir_zoo.py) on bm1684x and bm1688:
# model_transform once per network, then model_deploy per chip into $TPUMLIR_WORK/<net>/<chip>_lg,
# which bench/tpumlir_zoo_compare.py compares our exported groupings with.
# Usage: TPUMLIR_VENV=VENV TPUMLIR_WORK=DIR bench/tpumlir_zoo_run.sh [NET...]
#   TPUMLIR_VENV (required): a Python 3.10 venv with `pip install tpu_mlir==1.30.2`
#   TPUMLIR_WORK (required): the folder holding the zoo's .onnx files and zoo.json
#   CHIPS: default "bm1684x bm1688"
#   ONNX_SUFFIX: compile <net>$ONNX_SUFFIX.onnx, e.g. _static for the transformer zoo
#   (bench/tpumlir_tx_zoo.py); default none
set -e
. "${TPUMLIR_VENV:?set TPUMLIR_VENV to a Python 3.10 venv with pip install tpu_mlir==1.30.2}/bin/activate"
W=${TPUMLIR_WORK:?set TPUMLIR_WORK to the folder of the zoo}
cd "$W"
NETS=${*:-$(python3 -c "import json; print(' '.join(json.load(open('zoo.json'))))")}
for m in $NETS; do
  shape=$(python3 -c "import json; print(json.load(open('zoo.json'))['$m']['input_shape'])")
  mkdir -p "$m"
  ( cd "$m"
    # one input's shape [n, c, …], or every input's [[…], […]] as it is
    case "$shape" in "[["*) shapes=$shape ;; *) shapes="[$shape]" ;; esac
    [ -f "$m.mlir" ] || model_transform.py --model_name "$m" --model_def "../$m${ONNX_SUFFIX:-}.onnx" --input_shapes "$shapes" --mlir "$m.mlir" > transform.log 2>&1 \
      || { echo "$m: model_transform failed"; exit 0; }
    for c in ${CHIPS:-bm1684x bm1688}; do
      [ -f "${c}_lg/compiler_profile_0.txt" ] && continue
      rm -rf "${c}_lg" && mkdir "${c}_lg" && ln -s "../$m.mlir" "../${m}_top_f32_all_weight.npz" "${c}_lg/"
      ( cd "${c}_lg" && model_deploy.py --mlir "$m.mlir" --quantize F16 --chip "$c" --model "$m.bmodel" --debug > deploy.log 2>&1 ) \
        || { echo "$m $c: model_deploy failed: $(grep -m1 -i error "${c}_lg/deploy.log")"; continue; }
      echo "$m $c: $(grep -o 'total_cycle:[0-9]*' "${c}_lg/compiler_profile_0.txt")"
    done )
done

#!/bin/bash
# Our grouping compiled by TPU-MLIR 1.30.2 (F16): export our plan as a layer-group
# cache (op names as TPU-MLIR's: `<ONNX output>_<ONNX type>`, see planner::tpumlir::loc_name),
# force it with LOAD_TPU_GROUP=1 and read codegen's total_cycle; TPU-MLIR's own cache is
# re-run the same way as the baseline.
# Needs TPU-MLIR 1.30.2 ($TPUMLIR_VENV) and TPU-MLIR's own runs of each model for the chip:
# $TPUMLIR_WORK/<model>/lg (bm1684x) or <model>/<chip>_lg (other chips), made by
# bench/lmem_tpumlir_run.sh, _run_shape.sh for batch 4/8, _run_chip.sh for bm1688 (run in
# $TPUMLIR_WORK, which holds the .onnx files of bench/lmem_tpumlir_models.py).
# Output: one line per model and grouping.
# Usage: TPUMLIR_VENV=DIR TPUMLIR_WORK=DIR bench/plan-tpumlir-ours.sh
#   TPUMLIR_VENV (required): absolute path of a Python 3.10 venv with `pip install tpu_mlir==1.30.2`
#   TPUMLIR_WORK (required): absolute path of the folder of TPU-MLIR's runs
#   TPUSIM: the binary; default $CARGO_TARGET_DIR/release/tpusim, CARGO_TARGET_DIR
#   defaulting to the repository's target/
#   CHIP: the chip, e.g. bm1688; default bm1684x
set -e
R=$(cd "$(dirname "$0")/.." && pwd)
: "${TPUMLIR_VENV:?set TPUMLIR_VENV to a Python 3.10 venv with pip install tpu_mlir==1.30.2}"
W=${TPUMLIR_WORK:?set TPUMLIR_WORK to the folder of the TPU-MLIR runs}
T=${TPUSIM:-${CARGO_TARGET_DIR:-$R/target}/release/tpusim}
CHIP=${CHIP:-bm1684x}
if [ "$CHIP" = bm1684x ]; then P=""; else P="${CHIP}_"; fi
compile() {
  local m=$1 d=$W/$1/$P$2 lg=../${P}lg
  ( cd "$d"
    for f in $lg/*.npz $lg/${m}_${CHIP}_f16_tpu_opt.mlir $lg/${m}_${CHIP}_f16.layer_group_config.json; do ln -sf "$f" .; done
    . "$TPUMLIR_VENV/bin/activate"
    LOAD_TPU_GROUP=1 tpuc-opt ${m}_${CHIP}_f16_tpu_opt.mlir --dev-parallel --weight-reorder --subnet-divide="dynamic=False" --op-reorder --topo-sort --layer-group="opt=2 group_by_cores=auto compress_mode=none debugger=1 disable_group_overlap=false lgcache=true config_filename= enable_lghash=False lghash_dir=" --affine-opt --core-parallel --after-layergroup-weight-reorder --address-assign -o ${m}_${CHIP}_f16_final.mlir > opt.log 2>&1 \
      || { echo "  $2: tpuc-opt failed: $(grep -m1 error opt.log)"; exit 0; }
    tpuc-opt ${m}_${CHIP}_f16_final.mlir --codegen="model_file=${m}.bmodel embed_debug_info=True model_version=latest bmodel_only=False gdma_check=False rvti=False" -o /dev/null > codegen.log 2>&1 \
      || { echo "  $2: codegen failed"; exit 0; }
    echo "  $2: $(grep -o 'total_cycle:[0-9]*' compiler_profile_0.txt), tpu.Group ops: $(grep -c 'tpu.Group' ${m}_${CHIP}_f16_final.mlir), secs: $(grep -o '[nh]secs = [0-9]*' ${m}_${CHIP}_f16_final.mlir | paste -sd' ')" )
}

for spec in "resnet18|resnet18.onnx|" "resnet18_b4|resnet18.onnx|--batch 4" "mini_mbv2|mini_mbv2.onnx|" \
            "resnet50|resnet50.onnx|" "mobilenetv2|mobilenetv2.onnx|" "resnet50_b8|resnet50.onnx|--batch 8" \
            "mobilenetv2_b4|mobilenetv2.onnx|--batch 4" "resnet50_b4|resnet50.onnx|--batch 4" \
            "mini_mbv2_b4|mini_mbv2.onnx|--batch 4"; do
  IFS='|' read -r m onnx extra <<< "$spec"
  [ -d $W/$m/${P}lg ] || { echo "== $m: no $W/$m/${P}lg (TPU-MLIR's own run for $CHIP), skipped"; continue; }
  echo "== $m ($CHIP)"
  cache=${m}_${CHIP}_f16.layer_group_cache.json
  mkdir -p $W/$m/${P}theirs_reload $W/$m/${P}ours
  cp $W/$m/${P}lg/$cache $W/$m/${P}theirs_reload/
  $T plan $W/$onnx $extra --chip $CHIP --dtype f16 --export-tpu-mlir $W/$m/${P}ours/$cache > /dev/null
  compile $m theirs_reload
  compile $m ours
done

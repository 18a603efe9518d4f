#!/bin/bash
# Run TPU-MLIR 1.30.2's layer-group passes on a layer-group cache with its allocation
# logs, keeping the final MLIR (addresses, sizes, time-step flow of every group).
# Usage: TPUMLIR_VENV=DIR TPUMLIR_WORK=DIR bench/plan-tpumlir-debug.sh MODEL CHIP CACHE OUTDIR [estimates]
#   TPUMLIR_VENV (required): absolute path of a Python 3.10 venv with `pip install tpu_mlir==1.30.2`
#   TPUMLIR_WORK (required): absolute path of the folder of TPU-MLIR's runs (see
#   bench/plan-tpumlir-ours.sh)
#   MODEL: a run under $TPUMLIR_WORK (resnet18, resnet18_b4, resnet50,
#   resnet50_b8, mini_mbv2, mobilenetv2), CHIP: bm1684x or bm1688.
# Writes OUTDIR/final.mlir and OUTDIR/dbg.log (--debug-only=lmem_buffer_assign,
# timestep_assign: every buffer's time-step lifetime); then
# bench/plan_tpumlir_alloc_vectors.py turns them into allocator test vectors.
# With `estimates`, dbg.log holds instead TPU-MLIR's own cycle estimates of every op and
# transfer of each group (what its time-step pass moves transfers by; its codegen
# profile's cycles): lines "action = timestep_cycle; timestep = T; timestep_type =
# layer|gdma; [op = …;] tensor_name = NAME; cycle = C" and "action =
# timestep_cycle_slack; …". That output needs the debugger on (debugger=3) and
# `cycle_slack` among the debugger file's conditional_debug_types (type
# DEBUGGER_DUMP_ALL, which changes nothing).
set -e
m=$1; CHIP=$2; cache=$3; d=$4; mode=$5
[ -n "$d" ] || { echo "usage: $0 MODEL CHIP CACHE OUTDIR" >&2; exit 2; }
: "${TPUMLIR_VENV:?set TPUMLIR_VENV to a Python 3.10 venv with pip install tpu_mlir==1.30.2}"
W=${TPUMLIR_WORK:?set TPUMLIR_WORK to the folder of the TPU-MLIR runs}
if [ "$CHIP" = bm1684x ]; then P=""; else P="${CHIP}_"; fi
lg=$W/$m/${P}lg
mkdir -p "$d"; cp "$cache" "$d/${m}_${CHIP}_f16.layer_group_cache.json"; cd "$d"
for f in $lg/*.npz $lg/${m}_${CHIP}_f16_tpu_opt.mlir $lg/${m}_${CHIP}_f16.layer_group_config.json; do ln -sf "$f" .; done
. "$TPUMLIR_VENV/bin/activate"
debugger=1; only=lmem_buffer_assign,timestep_assign
if [ "$mode" = estimates ]; then
  debugger=3; only=cycle_slack,timestep_assign
  python3 - "$lg/${m}_${CHIP}_f16.layer_group_debugger.json" "${m}_${CHIP}_f16.layer_group_debugger.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['type'] = 'DEBUGGER_DUMP_ALL'
d['conditional_debug_types'] = ['cycle_slack', 'timestep_assign']
json.dump(d, open(sys.argv[2], 'w'), indent=2)
PY
fi
LOAD_TPU_GROUP=1 tpuc-opt ${m}_${CHIP}_f16_tpu_opt.mlir --dev-parallel --weight-reorder \
  --subnet-divide="dynamic=False" --op-reorder --topo-sort \
  --layer-group="opt=2 group_by_cores=auto compress_mode=none debugger=$debugger disable_group_overlap=false lgcache=true config_filename= enable_lghash=False lghash_dir=" \
  --affine-opt --core-parallel --after-layergroup-weight-reorder --address-assign \
  -o final.mlir --debug-only=$only > dbg.log 2>&1
# For the allocator's own trace (every candidate address, round by round), set
# "type": "DEBUGGER_DUMP_ALL" in ${m}_${CHIP}_f16.layer_group_debugger.json and run
# the same with debugger=3 and --debug-only=lmem_assign,membuf_list.

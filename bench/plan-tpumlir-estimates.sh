#!/bin/bash
# TPU-MLIR 1.30.2's own cycle estimates for every op and transfer of every layer group
# (what its time-step pass moves transfers by; equal to its codegen profile's cycles).
# Usage: bench/plan-tpumlir-estimates.sh MODEL CHIP CACHE OUTDIR
#   MODEL: a run under /work/peers/tpumlir-work (resnet18, resnet50_b8, mobilenetv2, …),
#   CHIP: bm1684x or bm1688, CACHE: a layer-group cache (its own: MODEL/lg/*cache.json).
# Writes OUTDIR/dbg.log: lines "action = timestep_cycle; timestep = T; timestep_type =
# layer|gdma; [op = …;] tensor_name = NAME; cycle = C" (per group, before its moves) and
# "action = timestep_cycle_slack; timestep = T; cycle_slack = S". The debug output needs
# the debugger on (debugger=3) and `cycle_slack` among the debugger file's
# conditional_debug_types; the type DEBUGGER_DUMP_ALL keeps it from changing anything.
set -e
m=$1; CHIP=$2; cache=$3; d=$4; W=/work/peers/tpumlir-work
[ -n "$d" ] || { echo "usage: $0 MODEL CHIP CACHE OUTDIR" >&2; exit 2; }
if [ "$CHIP" = bm1684x ]; then P=""; else P="${CHIP}_"; fi
lg=$W/$m/${P}lg
mkdir -p "$d"; cp "$cache" "$d/${m}_${CHIP}_f16.layer_group_cache.json"; cd "$d"
for f in $lg/*.npz $lg/${m}_${CHIP}_f16_tpu_opt.mlir $lg/${m}_${CHIP}_f16.layer_group_config.json; do ln -sf "$f" .; done
python3 - "$lg/${m}_${CHIP}_f16.layer_group_debugger.json" "${m}_${CHIP}_f16.layer_group_debugger.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['type'] = 'DEBUGGER_DUMP_ALL'
d['conditional_debug_types'] = ['cycle_slack', 'timestep_assign']
json.dump(d, open(sys.argv[2], 'w'), indent=2)
PY
. /work/peers/tpumlir-venv/bin/activate
LOAD_TPU_GROUP=1 tpuc-opt ${m}_${CHIP}_f16_tpu_opt.mlir --dev-parallel --weight-reorder \
  --subnet-divide="dynamic=False" --op-reorder --topo-sort \
  --layer-group="opt=2 group_by_cores=auto compress_mode=none debugger=3 disable_group_overlap=false lgcache=true config_filename= enable_lghash=False lghash_dir=" \
  --affine-opt --core-parallel --after-layergroup-weight-reorder --address-assign \
  -o final.mlir --debug-only=cycle_slack,timestep_assign > dbg.log 2>&1
grep -c "timestep_type = layer" dbg.log

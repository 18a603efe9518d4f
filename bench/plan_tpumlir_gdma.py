#!/usr/bin/env python3
"""Every distinct GDMA transfer of TPU-MLIR's layer groups, with its measured cycles.

    python3 bench/plan_tpumlir_gdma.py "$TPUMLIR_WORK" > crates/planner/tests/data/tpumlir_gdma.csv
    python3 bench/plan_tpumlir_gdma.py "$TPUMLIR_WORK" bm1688 bm1688_lg > crates/planner/tests/data/tpumlir_gdma_bm1688.csv

Arguments: root folder (default: $TPUMLIR_WORK, the folder of the TPU-MLIR runs, see
crates/planner/tests/data/README.md), chip (default bm1684x), run folders to read (a
glob, default `*`: every run of every model). The bm1684x file was made on 2026-11-22 (fourth
session) from TPU-MLIR's own runs (`lg`) of resnet18, resnet18_b4, mini_mbv2, resnet50
and mobilenetv2 (a root folder holding links to those five; the resnet50_b8 run pairs
some transfers wrongly and is left out); the bm1688 file from TPU-MLIR's own runs
(`bm1688_lg`) of the first three.

Reads each `<model>/<run>/compiler_profile_0.txt` (TPU-MLIR 1.30.2 codegen's cycle
profile, F16) next to its `*_<chip>_*final.mlir` (chip: second argument, default bm1684x), pairs the profile's `Load_*`/`Store_*`
entries with the final MLIR's `tpu.Load`/`tpu.Store` ops in order (runs where the counts
differ are skipped), and prints one CSV row per distinct (direction, slice shape, bytes,
cycles): the facts behind the GDMA figures of data/lmem/bm1684x.toml, checked by
crates/planner/tests/gdma.rs. Columns: dir (load/store), coeff (1 = a weight/bias
transfer, not EU-aligned), n, c (slice planes), h, w, bytes, cycles.
"""
import glob, os, re, sys

def profile(path):
    """op name -> list of (direction, bytes, cycles) of its GDMA commands, in order."""
    ops = {}
    for line in open(path):
        for m in re.finditer(r'(\S+\|\S+)', line):
            f = m.group(1).split('|')
            if len(f) < 3:
                continue
            kv = dict(x.split(':', 1) for x in f[2:] if ':' in x)
            if 's' not in kv:
                continue
            ops.setdefault(f[0], [])
            if 'dr' in kv and 'sz' in kv:
                ops[f[0]].append((kv['dr'], int(kv['sz']), int(kv['t'])))
    return ops

def moves(path):
    out = []
    for line in open(path):
        m = re.search(r'"tpu\.(Load|Store)"\(.*?\)\s*\{(.*)\}\s*:\s*\(tensor<([0-9x]+)x(\w+)', line)
        if not m:
            continue
        kind, attrs, dims, _ = m.groups()
        dims = [int(x) for x in dims.split('x')] + [1] * 4
        sl = {}
        for k in ('n', 'c', 'h', 'w'):
            mm = re.search(k + r'_slice = \[([0-9, ]*)\]', attrs)
            sl[k] = [int(x) for x in mm.group(1).split(',')] if mm and mm.group(1).strip() else []
        out.append((kind, dims, sl, 'eu_align = true' in attrs))
    return out

def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get('TPUMLIR_WORK')
    if not root:
        sys.exit('give the root folder or set TPUMLIR_WORK to the folder of the TPU-MLIR runs')
    chip = sys.argv[2] if len(sys.argv) > 2 else 'bm1684x'
    runs = sys.argv[3] if len(sys.argv) > 3 else '*'
    rows = set()
    for d in sorted(glob.glob(os.path.join(root, '*', runs, ''))):
        prof, mls = d + 'compiler_profile_0.txt', glob.glob(d + f'*_{chip}_*final.mlir')
        if not os.path.exists(prof) or not mls:
            continue
        p = profile(prof)
        pm = [v for k, v in p.items() if k.startswith(('Load_', 'Store_'))]
        mm = moves(mls[0])
        if len(pm) != len(mm):
            print(f'# skipped {d}: {len(pm)} profile moves vs {len(mm)} in the MLIR', file=sys.stderr)
            continue
        for cmds, (kind, dims, sl, eu) in zip(pm, mm):
            for dr, sz, t in cmds:
                n = sl['n'][0] if sl['n'] else dims[0]
                c = sl['c'][0] if sl['c'] else dims[1]
                h = sl['h'][0] if sl['h'] else dims[2]
                w = sl['w'][0] if sl['w'] else dims[3]
                rows.add(('load' if dr == '0' else 'store', 0 if eu else 1, n, c, h, w, sz, t))
    print('dir,coeff,n,c,h,w,bytes,cycles')
    for r in sorted(rows):
        print(','.join(map(str, r)))

main()

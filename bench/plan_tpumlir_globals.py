#!/usr/bin/env python3
"""How much of a global conv's DMA and compute TPU-MLIR overlaps, from its cycle profiles.

    python3 bench/plan_tpumlir_globals.py "$TPUMLIR_WORK" [bm1684x|bm1688]

The root folder defaults to $TPUMLIR_WORK (the folder of the TPU-MLIR runs, see
crates/planner/tests/data/README.md).

For every run folder `<root>/<model>/<run>` of the chip (bm1684x: folders without
`bm1688` in the name; bm1688: with it) that has TPU-MLIR 1.30.2 codegen's
`compiler_profile_0.txt` and `net_0.profile`, takes each global Conv2D layer (from
`net_0.profile`), sums its TIU and GDMA command cycles and its span (first start to last
end), and prints one line per distinct layer: span, TIU, loads, stores, the number of
CONV commands, and the exposed share `(span - max(TIU, DMA)) / min(TIU, DMA)`; then the
median of that share over the layers, the chip's `global_exposed_fraction` in
data/lmem/*.toml.
"""
import collections, glob, os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get('TPUMLIR_WORK')
if not root:
    sys.exit('give the root folder or set TPUMLIR_WORK to the folder of the TPU-MLIR runs')
chip = sys.argv[2] if len(sys.argv) > 2 else 'bm1684x'
seen, shares = set(), []
for prof in sorted(glob.glob(f'{root}/*/*/compiler_profile_0.txt')):
    d = os.path.dirname(prof)
    if (('bm1688' in d) != (chip == 'bm1688')) or not os.path.exists(d + '/net_0.profile'):
        continue
    glob_ids = []
    for line in open(d + '/net_0.profile'):
        m = re.search(r'global_layer: layer_id=(\d+) layer_type=(\w+)', line)
        if m and m.group(2) == 'Conv2D':
            glob_ids.append(int(m.group(1)))
    span = {}
    for line in open(prof):
        for m in re.finditer(r'(\w+?)_(\d+)\|(\S+?)\|s:(\d+)\|b:\d+\|g:\d+\|e:(\d+)\|t:(\d+)(?:\|dr:(\d)\|sz:(\d+))?', line):
            i, s, e, t = int(m.group(2)), int(m.group(4)), int(m.group(5)), int(m.group(6))
            v = span.setdefault(i, {'s': s, 'e': e, 'tiu': 0, 'ld': 0, 'st': 0, 'conv': 0})
            v['s'], v['e'] = min(v['s'], s), max(v['e'], e)
            if 'DMA' in m.group(3):
                v['ld' if m.group(7) == '0' else 'st'] += t
            else:
                v['tiu'] += t
                v['conv'] += m.group(3) == 'CONV'
    for i in glob_ids:
        if i not in span:
            continue
        v = span[i]
        sp, tiu, dma = v['e'] - v['s'], v['tiu'], v['ld'] + v['st']
        if (sp, tiu, dma) in seen:
            continue
        seen.add((sp, tiu, dma))
        share = (sp - max(tiu, dma)) / max(1, min(tiu, dma))
        shares.append(share)
        print(f"{os.path.relpath(d, root):28s} span {sp:7d} tiu {tiu:7d} load {v['ld']:7d} store {v['st']:7d} CONV cmds {v['conv']:2d} exposed {share:.3f}")
shares.sort()
if shares:
    print(f"{len(shares)} global convs on {chip}: median exposed share {shares[len(shares) // 2]:.3f}")

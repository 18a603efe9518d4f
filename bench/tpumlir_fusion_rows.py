#!/usr/bin/env python3
"""Rows of a fused-attention sweep for tests/data/tx_fusion/: per block, one head's TIU
cycles and MM2 cycles (TPU-MLIR's codegen profile), the buffer TPU-MLIR gives it (its
final MLIR), and the three totals (TPU-MLIR's own grouping, ours compiled, ours
predicted).

    python3 bench/tpumlir_fusion_rows.py DIR COMPARE.jsonl > rows.jsonl

DIR is a folder of bench/tpumlir_fusion_nets.py blocks (`att_d<d>_h<heads>_s<seq>_b<b>`,
with zoo.json) compiled by bench/tpumlir_zoo_run.sh (CHIPS=bm1684x); COMPARE.jsonl is
bench/tpumlir_tx_compare.py DIR --graph dynamic --compile --out's output.
"""
import json
import os
import re
import sys

CMD = re.compile(r'(\w+?)_(\d+)\|(\w+)\|s:(\d+)\|b:\d+\|g:\d+\|e:(\d+)\|t:(\d+)')


def first_head(profile):
    """(kind, cycles) of each command of the profile's first tpu.Attention layer."""
    cmds = {}
    for line in open(profile):
        for m in CMD.finditer(line):
            layer = f'{m.group(1)}_{m.group(2)}'
            if layer.startswith('Attention'):
                cmds.setdefault(layer, []).append((m.group(3), int(m.group(6))))
    return next(iter(cmds.values()))


def main():
    root, compare = sys.argv[1], sys.argv[2]
    zoo = json.load(open(os.path.join(root, 'zoo.json')))
    cmp = {json.loads(l)['net']: json.loads(l) for l in open(compare)}
    for net, info in zoo.items():
        d, h, s, b = (int(x) for x in re.match(r'att_d(\d+)_h(\d+)_s(\d+)_b(\d+)', net).groups())
        lg = os.path.join(root, net, 'bm1684x_lg')
        head = first_head(os.path.join(lg, 'compiler_profile_0.txt'))
        mlir = open(os.path.join(lg, f'{net}_bm1684x_f16_final.mlir')).read()
        line = next(l for l in mlir.splitlines() if '"tpu.Attention"' in l)
        c = cmp[net]
        print(json.dumps({
            'net': net, 'held_out': info['held_out'], 'batch': b, 'seq': s, 'd_model': d, 'heads': h,
            'head_tiu_cycles': sum(t for _, t in head),
            'head_mm2_cycles': sum(t for k, t in head if k == 'MM2'),
            'head_buffer_bytes': int(re.search(r'buffer_size = (\d+)', line).group(1)),
            'tpumlir_cycles': c['tpumlir_cycles'], 'ours_compiled_cycles': c['ours_compiled']['cycles'],
            'tpusim_cycles': c['tpusim_cycles']}))


if __name__ == '__main__':
    main()

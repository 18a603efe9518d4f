#!/usr/bin/env python3
"""Every layer TPU-MLIR 1.30.2 compiled for the transformer zoo, with its shapes and cycles.

    python3 bench/plan_tpumlir_tx_ops.py ZOO_DIR [CHIP] > ops.jsonl

ZOO_DIR is the folder of bench/tpumlir_tx_zoo.py, compiled by bench/tpumlir_zoo_run.sh
(ONNX_SUFFIX=_static): it holds zoo.json and <net>/<chip>_lg/ with codegen's
compiler_profile_0.txt and the bmodel's net_0.profile. CHIP defaults to bm1684x.

One JSON line per layer of each network, in run order:
  {"net", "held_out", "layer" (the profile's layer id), "type" (TPU-MLIR's layer type;
   "Group" for a layer group: its loads, local ops and stores), "global" (false for a
   group), "inputs"/"outputs" ([{"shape", "const", "dtype"}]; dtype is the profile's code,
   0 f32, 1 f16, ...), "start", "cycles" (first command's start to last command's end)}
and for each network a last line {"net", "total_cycle"}.
"""
import json
import os
import re
import sys

LAYER = re.compile(r'\[bmprofile\] (global|local)_layer: layer_id=(\d+) layer_type=(\w+)')
TENSOR = re.compile(r'\[bmprofile\] tensor_id=\d+ is_in=(\d) shape=\[([0-9x]*)\] dtype=(\d+) is_const=(\d)')
CMD = re.compile(r'(\w+?)_(\d+)\|\S+?\|s:(\d+)\|b:\d+\|g:\d+\|e:(\d+)')


def layers_of(profile):
    """Global layers and groups of net_0.profile in run order, with their tensors."""
    out, cur = [], None
    for line in open(profile):
        m = LAYER.search(line)
        if m:
            kind, lid, typ = m.group(1), int(m.group(2)), m.group(3)
            if kind == 'local':
                if cur is None or cur['global']:
                    cur = {'layer': lid, 'type': 'Group', 'global': False, 'ids': [], 'inputs': [], 'outputs': [], 'ops': []}
                    out.append(cur)
                cur['ids'].append(lid)
                cur['ops'].append(typ)
                continue
            cur = {'layer': lid, 'type': typ, 'global': True, 'ids': [lid], 'inputs': [], 'outputs': []}
            out.append(cur)
            continue
        t = TENSOR.search(line)
        if t and cur is not None and cur['global']:
            shape = [int(x) for x in t.group(2).split('x') if x]
            rec = {'shape': shape, 'const': t.group(4) == '1', 'dtype': int(t.group(3))}
            cur['inputs' if t.group(1) == '1' else 'outputs'].append(rec)
    return out


def spans_of(profile_txt):
    span = {}
    for line in open(profile_txt):
        for m in CMD.finditer(line):
            i, s, e = int(m.group(2)), int(m.group(3)), int(m.group(4))
            a = span.setdefault(i, [s, e])
            a[0], a[1] = min(a[0], s), max(a[1], e)
    return span


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root, chip = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else 'bm1684x')
    zoo = json.load(open(os.path.join(root, 'zoo.json')))
    for net, info in zoo.items():
        d = os.path.join(root, net, f'{chip}_lg')
        prof = os.path.join(d, 'compiler_profile_0.txt')
        netp = os.path.join(d, f'{net}.bmodel.net_0.profile')
        if not (os.path.exists(prof) and os.path.exists(netp)):
            print(f'{net}: no TPU-MLIR run for {chip}', file=sys.stderr)
            continue
        span = spans_of(prof)
        for layer in layers_of(netp):
            hits = [span[i] for i in layer['ids'] if i in span]
            s = min((h[0] for h in hits), default=None)
            e = max((h[1] for h in hits), default=None)
            rec = {'net': net, 'held_out': info['held_out'], 'layer': layer['layer'], 'type': layer['type'],
                   'global': layer['global'], 'inputs': layer['inputs'], 'outputs': layer['outputs'],
                   'start': s, 'cycles': 0 if s is None else e - s + 1}
            if not layer['global']:
                rec['ops'] = layer['ops']
            print(json.dumps(rec))
        total = re.search(r'total_cycle:(\d+)', open(prof).read())
        print(json.dumps({'net': net, 'total_cycle': int(total.group(1))}))


if __name__ == '__main__':
    main()

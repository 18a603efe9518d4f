#!/usr/bin/env python3
"""Every layer group TPU-MLIR 1.30.2 compiled for the transformer zoo: its span in cycles
and its time steps.

    python3 bench/tpumlir_group_spans.py ZOO_DIR [ZOO_DIR ...] > group_spans.jsonl

Each ZOO_DIR is a folder of bench/tpumlir_tx_zoo.py compiled by bench/tpumlir_zoo_run.sh
(ONNX_SUFFIX=_static): zoo.json and <net>/<chip>_lg/ with the final MLIR and codegen's
compiler_profile_0.txt. A network found in several folders is taken from the first.

A profile command is named after its op's line in the final MLIR (`Load_25` is the op on
line 25), so a group's commands are those named after the lines between its
`tpu.Group` and its `tpu.Yield`. One JSON line per group of two or more ops, in run
order: {"net", "chip", "held_out", "group" (its index among them), "ops" (ops in its
body, loads and stores included), "steps" (time steps of its `flow`), "cycles" (first
command's start to last command's end; a group's first loads may be issued under the
layer before it, so short groups can span more than they take)}.
"""
import glob
import json
import os
import re
import sys

from plan_tpumlir_tx_ops import spans_of

FLOW = re.compile(r'flow = \[([-0-9, ]*)\]')


def groups_of(final_mlir):
    """(first line, last line, steps, ops) of each group, in file order."""
    out, start = [], None
    for i, line in enumerate(open(final_mlir), 1):
        if '"tpu.Group"' in line:
            start = i
        elif start is not None and '"tpu.Yield"' in line:
            start_line = start
            start = None
            out.append([start_line, i, None, None])
        m = FLOW.search(line)
        if m and out and out[-1][2] is None and start is None:
            flow = [int(x) for x in m.group(1).split(',') if x.strip()]
            out[-1][2] = sum(1 for x in flow if x < 0)
            out[-1][3] = sum(1 for x in flow if x >= 0)
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    seen = set()
    for root in sys.argv[1:]:
        zoo = json.load(open(os.path.join(root, 'zoo.json')))
        for net, info in zoo.items():
            for chip in ('bm1684x', 'bm1688'):
                d = os.path.join(root, net, f'{chip}_lg')
                finals = glob.glob(os.path.join(d, '*_final.mlir'))
                prof = os.path.join(d, 'compiler_profile_0.txt')
                if (net, chip) in seen or not finals or not os.path.exists(prof):
                    continue
                seen.add((net, chip))
                span = spans_of(prof)
                for k, (a, b, steps, ops) in enumerate(groups_of(finals[0])):
                    hits = [span[i] for i in range(a, b) if i in span]
                    if not hits:
                        continue
                    cycles = max(h[1] for h in hits) - min(h[0] for h in hits) + 1
                    print(json.dumps({'net': net, 'chip': chip, 'held_out': info['held_out'], 'group': k,
                                      'ops': ops, 'steps': steps, 'cycles': cycles}))


if __name__ == '__main__':
    main()

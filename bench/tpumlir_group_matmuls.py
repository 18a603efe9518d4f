#!/usr/bin/env python3
"""Every unsliced weight matmul inside a layer group of TPU-MLIR 1.30.2's own compiles of
the transformer zoo, with its shape and cycles (crates/planner/tests/data/tx_zoo/
group_matmuls.jsonl, which tests/group_matmul.rs checks `nd_plan::group_matmul` against).

    python3 bench/tpumlir_group_matmuls.py ZOO_DIR [ZOO_DIR...] > group_matmuls.jsonl

Each ZOO_DIR is a folder of bench/tpumlir_tx_zoo.py compiled by bench/tpumlir_zoo_run.sh
(ONNX_SUFFIX=_static): <net>/<chip>_lg/ holds codegen's *_final.mlir and
compiler_profile_0.txt. One JSON line per distinct (chip, planes n, rows c, k, n_out,
left_reuse): {"net", "chip", "n", "c", "k", "n_out", "left_reuse", "bias", "cycles"}, the
cycles from the op's first command's start to its last's end.
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_tpumlir_tx_ops import spans_of  # noqa: E402


def slices(line, key):
    return re.search(key + r' = \[([0-9, ]+)\]', line).group(1).split(",")


def rows_of(d, net, chip):
    final = glob.glob(f"{d}/*_final.mlir")
    if not final:
        return
    span = spans_of(f"{d}/compiler_profile_0.txt")
    seen, in_group = set(), False
    for i, line in enumerate(open(final[0]).read().split("\n"), 1):
        in_group = (in_group or '"tpu.Group"' in line) and '"tpu.Yield"' not in line
        if not (in_group and '"tpu.MatMul"' in line and i in span) or "hdim_is_batch = true" in line:
            continue
        sig = line[line.rfind(": ("):]
        shapes = [[int(x) for x in t.split("x")]
                  for t in re.findall(r'tensor<([0-9x]+)x(?:f16|f32)', sig.split(") -> ")[0])]
        left, right = shapes[0], shapes[1]
        if len(left) != 3 or any(len(slices(line, k)) > 1 for k in ("n_slice", "c_slice", "h_slice")):
            continue
        n, c = int(slices(line, "n_slice")[0]), int(slices(line, "c_slice")[0])
        if (n, c) != (left[0], left[1]):
            continue
        reuse = re.search(r'left_reuse = (\d)', line).group(1) == "1"
        key = (n, c, left[2], right[-1], reuse)
        if key in seen:
            continue
        seen.add(key)
        yield {"net": net, "chip": chip, "n": n, "c": c, "k": left[2], "n_out": right[-1],
               "left_reuse": reuse, "bias": len(shapes) > 2, "cycles": span[i][1] - span[i][0] + 1}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for chip in ("bm1684x", "bm1688"):
        for root in sys.argv[1:]:
            for d in sorted(glob.glob(f"{root}/*/{chip}_lg")):
                for row in rows_of(d, d.split("/")[-2], chip):
                    print(json.dumps(row))


if __name__ == "__main__":
    main()

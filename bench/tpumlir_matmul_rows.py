#!/usr/bin/env python3
"""Single-matmul ONNX graphs ([M, K]·[K, N], M from 1 to 48) and TPU-MLIR 1.30.2's
commands for each: which command runs it (MM, a vector product a row, or MM2, the rows
across the lanes) and its cycles, for `crates/planner/tests/data/tx_zoo/matmul_rows.jsonl`
(`tests/nd_global.rs`, the chips' `matmul_lane_rows_from`).

    python3 bench/tpumlir_matmul_rows.py write DIR      # DIR/<net>.onnx and DIR/zoo.json
    TPUMLIR_VENV=… TPUMLIR_WORK=DIR bench/tpumlir_zoo_run.sh   # both chips
    python3 bench/tpumlir_matmul_rows.py read DIR > matmul_rows.jsonl

`write` needs onnx and numpy (TPU-MLIR's venv has both).
"""
import collections
import json
import os
import re
import sys

SHAPES = [(1, 1024, 1024), (2, 1024, 1024), (4, 1024, 1024), (6, 1024, 1024),
          (8, 1024, 1024), (16, 1024, 1024), (48, 1024, 1024), (1, 512, 2048),
          (4, 2048, 512), (4, 512, 512), (2, 4096, 1024)]
CMD = re.compile(r'(\w+?)_(\d+)\|(\S+?)\|s:(\d+)\|b:(\d+)\|g:(\d+)\|e:(\d+)\|t:(\d+)(?:\|dr:(\d)\|sz:(\d+))?')


def name(m, k, n):
    return f"mm_m{m}_k{k}_n{n}"


def write(out):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    os.makedirs(out, exist_ok=True)
    zoo = {}
    rng = np.random.default_rng(0)
    for m, k, n in SHAPES:
        w = numpy_helper.from_array((rng.standard_normal((k, n)) * 0.02).astype(np.float32), "W")
        g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"])], name(m, k, n),
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [w])
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.save(model, os.path.join(out, name(m, k, n) + ".onnx"))
        zoo[name(m, k, n)] = {"input_shape": [m, k], "held_out": True}
    with open(os.path.join(out, "zoo.json"), "w") as f:
        json.dump(zoo, f)


def read(root):
    rows = []
    for chip in ("bm1684x", "bm1688"):
        for m, k, n in SHAPES:
            tiu, total = collections.Counter(), None
            with open(os.path.join(root, name(m, k, n), f"{chip}_lg", "compiler_profile_0.txt")) as f:
                for line in f:
                    t = re.search(r"total_cycle:(\d+)", line)
                    total = int(t.group(1)) if t else total
                    for c in CMD.finditer(line):
                        if c.group(9) is None:
                            tiu[c.group(3)] += int(c.group(8))
            cmd = "MM2" if tiu.get("MM2") else "MM"
            rows.append(dict(chip=chip, m=m, k=k, n=n, command=cmd, mm_cycles=tiu.get(cmd, 0),
                             ar_cycles=tiu.get("AR", 0), total_cycle=total))
    rows.sort(key=lambda r: (r["chip"], r["k"], r["n"], r["m"]))
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "read"):
        sys.exit(__doc__)
    (write if sys.argv[1] == "write" else read)(sys.argv[2])

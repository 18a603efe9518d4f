#!/usr/bin/env python3
"""The local buffers TPU-MLIR 1.30.2 gives transformer layers in its layer groups.

    python3 bench/tpumlir_tx_buffers.py ZOO_DIR > crates/planner/tests/data/tx_zoo/local_buffers.jsonl

ZOO_DIR is the folder of bench/tpumlir_tx_zoo.py after bench/tpumlir_zoo_run.sh (its
`<net>/<chip>_lg`) and bench/tpumlir_tx_compare.py --compile (its `<net>/<chip>_ours`). In
each `*_final.mlir` every op inside a layer group carries `ginfo = #tpu.lg<…>` with the
`buffer_size` TPU-MLIR allocated for it. One row per distinct (chip, op, shapes, slices)
of the ops whose buffer tpusim models: Softmax, LayerNorm, RMSNorm, Active (by mode) and
the heads-as-batch MatMuls. `crates/planner/tests/nd_buffers.rs` checks every row.
"""
import glob
import json
import os
import re
import sys

OPS = ("Softmax", "LayerNorm", "RMSNorm", "Active", "MatMul")


def tensor(text):
    """'1x64x128xf16' -> ([1, 64, 128], 'f16')"""
    parts = text.split(",")[0].split("x")
    return [int(p) for p in parts[:-1]], parts[-1]


def slice_max(lg, key):
    m = re.search(rf"\b{key} = \[([\d, ]*)\]", lg)
    return max((int(x) for x in m.group(1).split(",") if x.strip()), default=1) if m else 1


def rows_of(path, chip, net):
    for line in open(path):
        m = re.search(r'"tpu\.(\w+)"\(', line)
        if not m or m.group(1) not in OPS or "ginfo = #tpu.lg<" not in line:
            continue
        op = m.group(1)
        if op == "MatMul" and "hdim_is_batch = true" not in line:
            continue
        lg = re.search(r"#tpu\.lg<([^>]*)>", line).group(1)
        sig = line[line.rindex(" : (") :]
        ins = [tensor(t) for t in re.findall(r"tensor<([^>]*)>", sig.split("->")[0])]
        out = tensor(re.findall(r"tensor<([^>]*)>", sig.split("->")[1])[0])
        mode = re.search(r"active_mode (\w+)", line)
        row = {
            "chip": chip,
            "net": net,
            "op": op,
            "mode": mode.group(1) if mode else None,
            "inputs": [{"dims": d, "dtype": t} for d, t in ins],
            "output": {"dims": out[0], "dtype": out[1]},
            "slice": {k: slice_max(lg, f"{k}_slice") for k in "nchw"},
            "group_type": int(re.search(r"group_type = (\d+)", lg).group(1)),
            "buffer_size": int(re.search(r"buffer_size = (\d+)", lg).group(1)),
        }
        if op == "MatMul":
            row["right_transpose"] = "right_transpose = true" in line
            row["left_transpose"] = "left_transpose = true" in line
        yield row


def main():
    zoo = sys.argv[1]
    seen = set()
    for path in sorted(glob.glob(os.path.join(zoo, "*", "bm*_*", "*_final.mlir"))):
        run = os.path.basename(os.path.dirname(path))
        chip = run.split("_")[0]
        net = os.path.basename(os.path.dirname(os.path.dirname(path)))
        for row in rows_of(path, chip, net):
            key = json.dumps({k: v for k, v in row.items() if k != "net"}, sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            print(json.dumps(row))


if __name__ == "__main__":
    main()

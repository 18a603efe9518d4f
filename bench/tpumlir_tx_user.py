#!/usr/bin/env python3
"""The user-style transformer exports of crates/graph/tests/data/nd, bound the way
TPU-MLIR's users export them, for `bench/tpumlir_zoo_run.sh` and
`bench/tpumlir_tx_compare.py` (issue 20; tests/data/README.md, "User-style exports").

Each graph that takes token ids alone is bound to 1 x 64 tokens and simplified by onnxsim
(`tpumlir_tx_zoo.static`). With --committed, the stripped graph committed under
crates/planner/tests/data/tx_user is refilled at random instead (the graphs the committed
figures came from; TPU-MLIR's cycles do not depend on weight values).

Usage: python bench/tpumlir_tx_user.py OUTDIR [--committed]
  writes OUTDIR/<name>.onnx (the export as committed), OUTDIR/<name>_static.onnx and
  OUTDIR/zoo.json ({name: {"input_shape": [1, 64], "batch": 1, "seq": 64, "held_out": false}}).
Needs what tpumlir_tx_zoo.py needs (onnx==1.16.2, onnxsim==0.4.36, numpy).
"""
import json
import os
import shutil
import sys

import tpumlir_tx_zoo as zoo

NETS = ["bert_tiny", "gpt2_tiny", "hf_gemma2", "hf_phi3", "hf_qwen2", "llama_tiny"]
BATCH, SEQ = 1, 64
SOURCES = os.path.join(zoo.HERE, "..", "crates", "graph", "tests", "data", "nd")
COMMITTED = os.path.join(zoo.HERE, "..", "crates", "planner", "tests", "data", "tx_user")


def main():
    flags = sys.argv[2:]
    if len(sys.argv) != 2 + len(flags) or flags not in ([], ["--committed"]):
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    index = {}
    for i, name in enumerate(NETS):
        src = os.path.join(SOURCES, name + ".onnx")
        shutil.copyfile(src, os.path.join(out, name + ".onnx"))
        dst = os.path.join(out, name + "_static.onnx")
        if flags:
            zoo.refilled(os.path.join(COMMITTED, name + "_static.onnx"), dst, seed=i)
        else:
            zoo.static(src, dst, BATCH, SEQ)
        index[name] = {"input_shape": [BATCH, SEQ], "batch": BATCH, "seq": SEQ, "held_out": False}
    with open(os.path.join(out, "zoo.json"), "w") as f:
        json.dump(index, f, indent=1)
    print(f"{len(index)} networks in {out}")


if __name__ == "__main__":
    main()

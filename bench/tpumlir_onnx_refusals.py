#!/usr/bin/env python3
"""Which ONNX graphs TPU-MLIR 1.30.2's front end refuses, and with what error: the
reference for `tpumlir::nd_unconvertible` (what `tpusim plan` notes).

Run with TPU-MLIR's venv (Python 3.10, `pip install tpu_mlir==1.30.2 onnx==1.16.2
onnxsim==0.4.36 psutil "setuptools<70"`, its bundled libc.so.6, libm.so.6 and
libpthread.so.0 moved aside for the machine's glibc):

    $TPUMLIR_VENV/bin/python bench/tpumlir_onnx_refusals.py WORKDIR GRAPH.onnx... \\
        > crates/planner/tests/data/tpumlir_onnx_refusals.json

Each graph is bound to batch 2 and sequence 16 and simplified by onnxsim (as the zoo's
`_static` graphs are; IR versions above 10 lowered to 10 for its checker), then given to `model_transform.py`; the last RuntimeError line
of its log is kept, or null when it converts.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import onnx
import onnxsim


def static(src, dst, batch=2, seq=16):
    m = onnx.load(src)
    m.ir_version = min(m.ir_version, 10)  # onnxsim 0.4.36's checker reads up to IR 10
    for i in m.graph.input:
        dims = i.type.tensor_type.shape.dim
        dims[0].dim_value, dims[1].dim_value = batch, seq
    for o in m.graph.output:
        for d in o.type.tensor_type.shape.dim:
            d.Clear()
    simple, ok = onnxsim.simplify(m)
    if not ok:
        sys.exit(f"onnxsim could not check {src}")
    onnx.save(simple, dst)


def refusal(work, src):
    name = os.path.basename(src)[:-len(".onnx")]
    folder = os.path.join(work, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for f in os.listdir(os.path.dirname(os.path.abspath(src))):
        if f.startswith(name + ".onnx"):
            shutil.copy(os.path.join(os.path.dirname(os.path.abspath(src)), f), folder)
    static(os.path.join(folder, name + ".onnx"), os.path.join(folder, "static.onnx"))
    run = subprocess.run(["model_transform.py", "--model_name", name, "--model_def", "static.onnx",
                          "--input_shapes", "[[2,16]]", "--mlir", "x.mlir"], cwd=folder,
                         capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    errors = re.findall(r"^RuntimeError: (.*)$", run.stdout + run.stderr, re.M)
    opset = onnx.load(src, load_external_data=False).opset_import[0].version
    return name, {"opset": opset, "converts": run.returncode == 0,
                  "error": errors[-1] if errors else None}


def main():
    work, graphs = sys.argv[1], sys.argv[2:]
    out = {"tpu_mlir": "1.30.2", "graphs": dict(refusal(work, g) for g in graphs)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

#!/bin/sh
# Import speed of tpusim-graph vs the Python `onnx` package on the same file
# (torchvision ResNet-50 export, weights stripped). Writes nothing; paste the figures
# into bench/RESULTS-graph.md.
#   ONNX_VENV=DIR sh bench/graph-import.sh
#   ONNX_VENV (required): absolute path of a venv with `pip install onnx onnxruntime numpy`
#   (as in crates/graph/tests/data/README.md)
set -e
cd "$(dirname "$0")/.."
F=crates/graph/tests/data/tv_resnet50.onnx
"${ONNX_VENV:?set ONNX_VENV to a venv with pip install onnx onnxruntime numpy}/bin/python" - "$F" <<'PY'
import sys, time, onnx
from onnx import shape_inference
path = sys.argv[1]
best = 1e9
for _ in range(20):
    t = time.perf_counter()
    m = onnx.load(path)
    shape_inference.infer_shapes(m)
    best = min(best, time.perf_counter() - t)
print(f"python onnx.load + infer_shapes (best of 20): {best*1e6:.1f} us")
PY
cargo bench -p tpusim-graph --bench import -- --noplot 2>&1 | grep -E "^[a-z_0-9]+ +time|time:"

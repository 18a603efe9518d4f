#!/usr/bin/env python3
"""Small ONNX networks to read TPU-MLIR 1.30.2's cycles of single CNN ops off its profiles.

A tuning set, kept apart from the zoo (bench/tpumlir_zoo.py), whose held-out networks
are not fitted on: each network is one op under study inside a layer group, so its
codegen profile gives that op's TIU commands.
  dw_c<C>_s<HW>_k<K>: a depthwise K×K conv (stride 1, padded) on C channels of HW², then
      a LeakyReLU (its own op, so the conv is not a group alone);
  add_c<C>_s<HW>: a 1×1 conv with a LeakyReLU, added to the network input.

Usage: python bench/tpumlir_cnn_op_sweep.py OUTDIR
  writes OUTDIR/<name>.onnx and OUTDIR/zoo.json, which bench/tpumlir_zoo_run.sh compiles
  (TPUMLIR_WORK=OUTDIR); then read each op's commands from OUTDIR/<name>/<chip>_lg/
  compiler_profile_0.txt. Needs `onnx` and `numpy`.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tpumlir_zoo import Net, write_zoo  # noqa: E402


def depthwise(c, k):
    def build(n):
        y = n.conv("input", c, c, k, 1, group=c, act=None)
        return n.act(y, "leaky")
    return build


def add(c):
    def build(n):
        y = n.conv("input", c, c, 1, p=0, act="leaky")
        return n.add(y, "input")
    return build


def sweep():
    nets = {}
    for c in [4, 8, 12, 16, 24, 32, 48]:
        for hw in [32, 64]:
            for k in [3, 5]:
                nets[f"dw_c{c}_s{hw}_k{k}"] = (depthwise(c, k), [1, c, hw, hw])
    for c in [8, 16, 32, 64]:
        for hw in [25, 50]:
            nets[f"add_c{c}_s{hw}"] = (add(c), [1, c, hw, hw])
    return nets


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    out = ap.parse_args().outdir
    os.makedirs(out, exist_ok=True)
    write_zoo(sweep(), out, False, set(), seed0=1000)


if __name__ == "__main__":
    main()

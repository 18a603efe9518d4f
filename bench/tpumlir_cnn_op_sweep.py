#!/usr/bin/env python3
"""Small ONNX networks to read TPU-MLIR 1.30.2's cycles of single CNN ops off its profiles.

A tuning set, kept apart from the zoo (bench/tpumlir_zoo.py), whose held-out networks
are not fitted on: each network is one op under study inside a layer group, so its
codegen profile gives that op's TIU commands.
  dw_c<C>_s<HW>_k<K>: a depthwise K×K conv (stride 1, padded) on C channels of HW², then
      a LeakyReLU (its own op, so the conv is not a group alone);
  add_c<C>_s<HW>: a 1×1 conv with a LeakyReLU, added to the network input;
  {avg,max}_c<C>_s<HW>_k<K>s<S>p<P>[_b<N>][_inc]: a 1×1 conv with a LeakyReLU, then a K×K
      pool of stride S and padding P (`_inc`: count_include_pad), then a LeakyReLU;
  fused_<act>_c<C>_s<HW>_k<K>s<S>: a K×K conv of stride S with a ReLU or a ReLU6 (Clip
      0..6), which TPU-MLIR fuses into it, then a LeakyReLU.

Usage: python bench/tpumlir_cnn_op_sweep.py OUTDIR [--set convs|pools|fused]
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


def pool(kind, c, k, s, p, include_pad):
    def build(n):
        y = n.conv("input", c, c, 1, p=0, act="leaky")
        op = "AveragePool" if kind == "avg" else "MaxPool"
        attrs = {"count_include_pad": 1} if include_pad else {}
        y = n.node(op, [y], kind + "pool", kernel_shape=[k, k], strides=[s, s], pads=[p] * 4, **attrs)
        return n.act(y, "leaky")
    return build


# the pools' (kernel, stride, padding)
POOL_WINDOWS = [(2, 2, 0), (3, 1, 1), (3, 2, 1), (3, 2, 0), (5, 1, 2), (3, 1, 0)]


def pool_sweep():
    nets = {}
    for kind in ["avg", "max"]:
        for k, s, p in POOL_WINDOWS:
            for c, hw in [(16, 56), (80, 28), (48, 40)]:
                nets[f"{kind}_c{c}_s{hw}_k{k}s{s}p{p}"] = (pool(kind, c, k, s, p, False), [1, c, hw, hw])
    for k, s, p in [(3, 1, 1), (3, 2, 1)]:
        nets[f"avg_c32_s32_k{k}s{s}p{p}_inc"] = (pool("avg", 32, k, s, p, True), [1, 32, 32, 32])
        nets[f"avg_c32_s32_k{k}s{s}p{p}_b4"] = (pool("avg", 32, k, s, p, False), [4, 32, 32, 32])
    return nets


def fused(c, k, s, act):
    def build(n):
        y = n.conv("input", c, c, k, s, act=act)
        return n.act(y, "leaky")
    return build


def fused_sweep():
    nets = {}
    for act in ["relu", "relu6"]:
        for c, hw, k, s in [(48, 64, 1, 1), (96, 28, 3, 1), (32, 56, 3, 2)]:
            nets[f"fused_{act}_c{c}_s{hw}_k{k}s{s}"] = (fused(c, k, s, act), [1, c, hw, hw])
        nets[f"fused_{act}_dw_c64_s28"] = (
            lambda n, act=act: n.act(n.conv("input", 64, 64, 3, 1, group=64, act=act), "leaky"),
            [1, 64, 28, 28])
    return nets


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
    ap.add_argument("--set", choices=["convs", "pools", "fused"], default="convs",
                    help="convs: depthwise convs and adds; pools: max and average pools; "
                    "fused: convs with a fused ReLU or ReLU6")
    args = ap.parse_args()
    out = args.outdir
    os.makedirs(out, exist_ok=True)
    nets = {"convs": sweep, "pools": pool_sweep, "fused": fused_sweep}[args.set]()
    write_zoo(nets, out, False, set(), seed0=1000)


if __name__ == "__main__":
    main()

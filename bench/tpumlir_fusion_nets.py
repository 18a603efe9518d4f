#!/usr/bin/env python3
"""Small BERT-style attention blocks for checking where TPU-MLIR 1.30.2 fuses an attention
into `tpu.Attention` on bm1684x (crates/planner/tests/nd_fusion.rs), written with torch's
exporter as users write them. Usage: python3 bench/tpumlir_fusion_nets.py OUTDIR

- hf_qkv_static:   separate Q, K and V Linear layers (Hugging Face's BERT), an additive
                   mask, exported at fixed shapes [1, 64];
- hf_qkv_dynamic:  the same exported with dynamic batch and sequence axes (its reshapes'
                   shapes computed by Shape nodes);
- hf_qkv_nomask:   separate Q, K, V, no mask, fixed shapes;
- joint_qkv_static: one Q, K, V Linear split three ways (GPT-2's c_attn), a mask, fixed
                   shapes.
Weights are random (seeded); d_model 64, 4 heads, one layer.
"""
import os
import sys

import torch


class Block(torch.nn.Module):
    def __init__(self, d=64, heads=4, joint=False, mask=True):
        super().__init__()
        self.d, self.h, self.joint, self.mask = d, heads, joint, mask
        if joint:
            self.qkv = torch.nn.Linear(d, 3 * d)
        else:
            self.q = torch.nn.Linear(d, d)
            self.k = torch.nn.Linear(d, d)
            self.v = torch.nn.Linear(d, d)
        self.o = torch.nn.Linear(d, d)
        self.ln = torch.nn.LayerNorm(d)

    def heads(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.h, self.d // self.h).permute(0, 2, 1, 3)

    def forward(self, x, m=None):
        if self.joint:
            q, k, v = self.qkv(x).split(self.d, dim=2)
        else:
            q, k, v = self.q(x), self.k(x), self.v(x)
        q, k, v = self.heads(q), self.heads(k), self.heads(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / (self.d // self.h) ** 0.5
        if self.mask:
            scores = scores + (1.0 - m[:, None, None, :]) * -10000.0
        p = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(p, v).permute(0, 2, 1, 3)
        b, s = x.shape[0], x.shape[1]
        ctx = ctx.reshape(b, s, self.d)
        return self.ln(x + self.o(ctx))


def export(out, name, joint=False, mask=True, dynamic=False):
    torch.manual_seed(0)
    net = Block(joint=joint, mask=mask).eval()
    x = torch.randn(1, 64, 64)
    args = (x, torch.ones(1, 64)) if mask else (x,)
    names = ["x", "mask"] if mask else ["x"]
    axes = None
    if dynamic:
        axes = {"x": {0: "batch", 1: "seq"}, "out": {0: "batch", 1: "seq"}}
        if mask:
            axes["mask"] = {0: "batch", 1: "seq"}
    torch.onnx.export(net, args, os.path.join(out, name + ".onnx"), input_names=names,
                      output_names=["out"], dynamic_axes=axes, opset_version=17, dynamo=False)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    export(out, "hf_qkv_static")
    export(out, "hf_qkv_dynamic", dynamic=True)
    export(out, "hf_qkv_nomask", mask=False)
    export(out, "joint_qkv_static", joint=True)


if __name__ == "__main__":
    main()

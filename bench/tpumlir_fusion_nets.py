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
                   shapes;
- hf_qkv_one_head: hf_qkv_static with a single head.
Weights are random (seeded); d_model 64, 4 heads (but hf_qkv_one_head), one layer.

    python3 bench/tpumlir_fusion_nets.py OUTDIR --sweep

writes instead a sweep of hf_qkv_static blocks at other widths, heads, lengths and batches
(SWEEP: `att_d<d>_h<heads>_s<seq>_b<batch>`), with a zoo.json for bench/tpumlir_zoo_run.sh
(CHIPS=bm1684x), for timing the fused attention. Its `held_out` rows are kept out of every
rule read off the others. With --bert-sized instead, three blocks at BERT-base and
BERT-large widths (BERT_SIZED), all held out.
"""
import json
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


# (d_model, heads, seq, batch, held_out)
SWEEP = [
    (128, 4, 128, 1, False), (128, 2, 64, 2, False), (256, 4, 64, 1, False),
    (256, 8, 128, 1, False), (192, 3, 96, 2, False), (96, 4, 32, 4, False),
    (320, 5, 160, 1, False), (64, 2, 256, 1, False),
    (160, 4, 80, 2, True), (256, 4, 256, 1, True), (384, 6, 128, 1, True),
    (128, 8, 64, 3, True),
]

# BERT-base and BERT-large widths (`--bert-sized`), all held out: made and compiled after
# every rule of planner::tpumlir::nd_fused was read off SWEEP (thirty-first session).
BERT_SIZED = [(768, 12, 128, 1, True), (1024, 16, 128, 1, True), (768, 12, 256, 2, True)]


def export(out, name, joint=False, mask=True, dynamic=False, d=64, heads=4, seq=64, batch=1):
    torch.manual_seed(0)
    net = Block(d=d, heads=heads, joint=joint, mask=mask).eval()
    x = torch.randn(batch, seq, d)
    args = (x, torch.ones(batch, seq)) if mask else (x,)
    names = ["x", "mask"] if mask else ["x"]
    axes = None
    if dynamic:
        axes = {"x": {0: "batch", 1: "seq"}, "out": {0: "batch", 1: "seq"}}
        if mask:
            axes["mask"] = {0: "batch", 1: "seq"}
    torch.onnx.export(net, args, os.path.join(out, name + ".onnx"), input_names=names,
                      output_names=["out"], dynamic_axes=axes, opset_version=17, dynamo=False)


def sweep(out, blocks):
    zoo = {}
    for d, heads, seq, batch, held_out in blocks:
        name = f"att_d{d}_h{heads}_s{seq}_b{batch}"
        export(out, name, d=d, heads=heads, seq=seq, batch=batch)
        zoo[name] = {"input_shape": [[batch, seq, d], [batch, seq]], "batch": batch,
                     "seq": seq, "held_out": held_out}
    with open(os.path.join(out, "zoo.json"), "w") as f:
        json.dump(zoo, f, indent=1)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    if "--sweep" in sys.argv[2:]:
        sweep(out, SWEEP)
        return
    if "--bert-sized" in sys.argv[2:]:
        sweep(out, BERT_SIZED)
        return
    export(out, "hf_qkv_static")
    export(out, "hf_qkv_dynamic", dynamic=True)
    export(out, "hf_qkv_nomask", mask=False)
    export(out, "joint_qkv_static", joint=True)
    export(out, "hf_qkv_one_head", heads=1)


if __name__ == "__main__":
    main()

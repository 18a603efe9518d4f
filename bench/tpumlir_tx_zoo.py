#!/usr/bin/env python3
"""The zoo of generated transformer ONNX graphs that tpusim's NPU timing of transformers is
checked on against TPU-MLIR 1.30.2 (issue 20, item 5).

GPT-2-style (LayerNorm, fused QKV, GELU in its tanh form, causal mask by Where),
BERT-style (GELU in its erf form, Hugging Face's padding mask as a second input) and
LLaMA-style (RMSNorm as Pow/ReduceMean/Sqrt, rotary embedding, grouped-query attention,
SiLU gating) blocks at different widths, heads, sequence lengths and batches, written by
crates/graph/tests/data/nd/make_transformers.py the way torch.onnx.export writes them.
Each is written twice: `<name>.onnx` with dynamic axes and shape subgraphs (what tpusim
imports, binding --batch and --seq), and `<name>_static.onnx`, the same graph with its
input bound and simplified by onnxsim (what TPU-MLIR's model_transform is given, as its
users export at fixed shapes).

HELD_OUT names the networks kept out of every fit: their figures are the ones to report.
They were chosen before any of the zoo was compiled.

Usage: python bench/tpumlir_tx_zoo.py OUTDIR [--stripped | --committed]
  writes OUTDIR/<name>.onnx, OUTDIR/<name>_static.onnx and OUTDIR/zoo.json
  ({name: {"input_shape": [batch, seq], "batch", "seq", "held_out"}}); with --stripped
  only the static graphs, their initializers of more than 16 elements keeping their dims
  but not their data (what the tests commit: the importer reads only shapes and such
  constants). With --committed, a static graph committed under
  crates/planner/tests/data/tx_zoo is written instead of a new one, its stripped weights
  refilled at random (TPU-MLIR's cycles do not depend on the values): the graphs the
  committed figures came from. The graphs a given onnxsim writes differ between its
  versions (0.4.36 with onnx 1.16.2 wrote the twenty-third session's and later ones;
  the earlier ones fuse GPT-2's projections into 2-D Gemms), so compare old figures
  against --committed graphs.
Needs onnx, onnxsim and numpy (TPU-MLIR's venv has numpy; add onnx==1.16.2
onnxsim==0.4.36).
"""
import importlib.util
import json
import os
import sys

import numpy as np
import onnx
import onnxsim

HERE = os.path.dirname(os.path.abspath(__file__))
HELD_OUT = {
    "gpt2_d192_s96_b3",
    "llama_d320_s256",
    "gpt2_d512_s32_b4",
    "bert_d256_s96_b2",
    "llama_d1024_s256",
    "gpt2_d768_s64",
    "llama_d640_s128_b2",
    "bert_d384_s128",
    "gpt2_d320_s80_b2",
    "llama_d512_s96_b3",
    "gpt2_d256_s8_b4",
    "llama_d384_s4_b2",
    "gpt2_d640_s1_b8",
    "bert_d192_s16",
    "llama_d896_s2",
    "gpt2_d96_s24_b3",
    "gpt2_d128_s2_b16",
    "llama_d256_s3_b5",
    "gpt2_d112_s12_b2",
    "bert_d320_s5_b3",
    "llama_d768_s1_b4",
    "gpt2_d512_s40",
    "gpt2_d576_s200_b2",
    "llama_d448_s160_b2",
    "bert_d256_s384",
    "gpt2_d1024_s16_b2",
    "llama_d160_s48_b7",
    "gpt2_d208_s72_b6",
    "bert_d320_s256_b2",
    "gpt2_d384_s144_b4",
    "llama_d288_s96_b5",
    "gpt2_d160_s6_b3",
    "llama_d352_s64_b2",
    "bert_d224_s48_b4",
    "gpt2_d448_s112_b3",
    "llama_d576_s80_b2",
    "bert_d288_s160_b3",
    "bert_d320_s112_b3",
    "gpt2_d240_s88_b5",
    "llama_d416_s72_b3",
    "gpt2_d288_s120_b3",
    "llama_d480_s56_b5",
    "bert_d384_s72_b5",
    "bert_d352_s96_b3",
    "gpt2_d320_s104_b3",
    "llama_d384_s88_b4",
}

# name: (family, builder arguments, batch, seq)
ZOO = {
    "gpt2_d64_s64": ("gpt2", dict(d=64, heads=4), 1, 64),
    "gpt2_d128_s128": ("gpt2", dict(d=128, heads=4), 1, 128),
    "gpt2_d256_s64_b2": ("gpt2", dict(d=256, heads=8), 2, 64),
    "llama_d128_s64": ("llama", dict(d=128, heads=4, kv_heads=2, ff=344), 1, 64),
    "llama_d256_s128": ("llama", dict(d=256, heads=8, kv_heads=4, ff=688), 1, 128),
    "gpt2_d192_s96_b3": ("gpt2", dict(d=192, heads=6), 3, 96),
    "llama_d320_s256": ("llama", dict(d=320, heads=5, kv_heads=5, ff=864), 1, 256),
    "gpt2_d512_s32_b4": ("gpt2", dict(d=512, heads=8), 4, 32),
    # BERT-style with Hugging Face's padding mask (a second input, attention_mask), added
    # in the nineteenth session: bert_d128_s64 compiled first and TPU-MLIR's rules read
    # off it; bert_d256_s96_b2 held out, chosen before it was compiled
    "bert_d128_s64": ("bert", dict(d=128, heads=4, padding_mask=True), 1, 64),
    "bert_d256_s96_b2": ("bert", dict(d=256, heads=8, padding_mask=True), 2, 96),
    # added in the twentieth session, held out, chosen before it was compiled: FFN
    # weights too big for a bm1684x lane together (3 × 88 KiB), so a group holding the
    # FFN must stream them
    "llama_d1024_s256": ("llama", dict(d=1024, heads=8, kv_heads=8, ff=2816), 1, 256),
    # added in the twenty-third session, held out, chosen before they were compiled:
    # weights over a bm1688 global matmul's weight buffer (GPT-2's 768×3,072 FFN, 4.7 MB;
    # LLaMA's 640×1,728, 2.2 MB), so TPU-MLIR slices them there
    "gpt2_d768_s64": ("gpt2", dict(d=768, heads=12), 1, 64),
    "llama_d640_s128_b2": ("llama", dict(d=640, heads=10, kv_heads=2, ff=1728), 2, 128),
    # added in the twenty-fifth session, held out, chosen before they were compiled and
    # after the time-step timing and the fused transposes of the twenty-fourth, which no
    # network outside the zoo had checked: a wider BERT, a GPT-2 whose sequence is no
    # power of two, and a batch-3 LLaMA with 4 query heads to a KV head
    "bert_d384_s128": ("bert", dict(d=384, heads=6, padding_mask=True), 1, 128),
    "gpt2_d320_s80_b2": ("gpt2", dict(d=320, heads=5), 2, 80),
    "llama_d512_s96_b3": ("llama", dict(d=512, heads=8, kv_heads=2, ff=1376), 3, 96),
    # added in the thirty-eighth session, held out, chosen before they were compiled: short
    # sequences (1 to 24 tokens, 2 to 72 rows), where a weight matmul has few rows and
    # TPU-MLIR picks its few-row kernels (decode-like shapes, no KV cache)
    "gpt2_d256_s8_b4": ("gpt2", dict(d=256, heads=4), 4, 8),
    "llama_d384_s4_b2": ("llama", dict(d=384, heads=6, kv_heads=2, ff=1024), 2, 4),
    "gpt2_d640_s1_b8": ("gpt2", dict(d=640, heads=10), 8, 1),
    "bert_d192_s16": ("bert", dict(d=192, heads=3, padding_mask=True), 1, 16),
    "llama_d896_s2": ("llama", dict(d=896, heads=7, kv_heads=7, ff=2432), 1, 2),
    "gpt2_d96_s24_b3": ("gpt2", dict(d=96, heads=3), 3, 24),
    # added in the thirty-eighth session after the changes the short sequences above led
    # to, held out, chosen before they were compiled: more short sequences (16 planes of
    # 2 rows, 5 of 3, 4 of 1), narrow QKV pieces again (112), a BERT of 5 tokens, and one
    # plane of 40 rows
    "gpt2_d128_s2_b16": ("gpt2", dict(d=128, heads=4), 16, 2),
    "llama_d256_s3_b5": ("llama", dict(d=256, heads=4, kv_heads=2, ff=688), 5, 3),
    "gpt2_d112_s12_b2": ("gpt2", dict(d=112, heads=4), 2, 12),
    "bert_d320_s5_b3": ("bert", dict(d=320, heads=5, padding_mask=True), 3, 5),
    "llama_d768_s1_b4": ("llama", dict(d=768, heads=12, kv_heads=4, ff=2048), 4, 1),
    "gpt2_d512_s40": ("gpt2", dict(d=512, heads=8), 1, 40),
    # added in the thirty-ninth session, held out, chosen before they were compiled: nine
    # heads and 200 rows (no power of two), one KV head for seven query heads (MQA), a
    # 384-token BERT, GPT-2's 1,024-wide blocks (16 MiB of FFN weights a layer in F16) on
    # 32 rows, seven planes of 48 rows, and heads 52 wide
    "gpt2_d576_s200_b2": ("gpt2", dict(d=576, heads=9), 2, 200),
    "llama_d448_s160_b2": ("llama", dict(d=448, heads=7, kv_heads=1, ff=1216), 2, 160),
    "bert_d256_s384": ("bert", dict(d=256, heads=4, padding_mask=True), 1, 384),
    "gpt2_d1024_s16_b2": ("gpt2", dict(d=1024, heads=16), 2, 16),
    "llama_d160_s48_b7": ("llama", dict(d=160, heads=5, kv_heads=5, ff=432), 7, 48),
    "gpt2_d208_s72_b6": ("gpt2", dict(d=208, heads=4), 6, 72),
    # added in the forty-first session, held out, chosen before they were compiled and
    # after its three changes (grouped softmaxes by their kernel, weight matmuls over
    # TPU-MLIR's slices, groups cut along the batch): long softmax rows at batch 2, four
    # planes of 144 rows, and five of 96 with heads 48 wide
    "bert_d320_s256_b2": ("bert", dict(d=320, heads=5, padding_mask=True), 2, 256),
    "gpt2_d384_s144_b4": ("gpt2", dict(d=384, heads=6), 4, 144),
    "llama_d288_s96_b5": ("llama", dict(d=288, heads=6, kv_heads=2, ff=768), 5, 96),
    # added in the forty-second session, held out, chosen before they were compiled and
    # after its changes (the small global layers' kernels, the norm kernels, the rows of
    # small planes in groups, permutes beside groups fused): six tokens at batch 3, eleven
    # heads 32 wide over one KV head, and seven heads of 32 over 48 tokens at batch 4
    "gpt2_d160_s6_b3": ("gpt2", dict(d=160, heads=5), 3, 6),
    "llama_d352_s64_b2": ("llama", dict(d=352, heads=11, kv_heads=1, ff=960), 2, 64),
    "bert_d224_s48_b4": ("bert", dict(d=224, heads=7, padding_mask=True), 4, 48),
    # added in the forty-seventh session, held out, chosen before they were compiled and
    # after its in-place concat rule (CNN path only): seven heads of 64 over 112 tokens at
    # batch 3, nine query heads of 64 over three KV heads at batch 2, and six BERT heads
    # of 48 over 160 tokens at batch 3
    "gpt2_d448_s112_b3": ("gpt2", dict(d=448, heads=7), 3, 112),
    "llama_d576_s80_b2": ("llama", dict(d=576, heads=9, kv_heads=3, ff=1536), 2, 80),
    "bert_d288_s160_b3": ("bert", dict(d=288, heads=6, padding_mask=True), 3, 160),
    # added in the fiftieth session, held out, chosen before they were compiled or
    # planned and after its changes (a cut group's layers and transfers over TPU-MLIR's
    # N slices as it cuts them, the larger first; whole-sequence slices computing K and
    # V and the search reaching past runs that hold their weights, both withdrawn after
    # this round's first compile): odd batches, where N
    # slices come out unequal, five BERT heads of 64 over 112 tokens at batch 3, five
    # GPT-2 heads of 48 over 88 at batch 5, and thirteen LLaMA heads of 32 over one KV
    # head, 72 tokens at batch 3
    "bert_d320_s112_b3": ("bert", dict(d=320, heads=5, padding_mask=True), 3, 112),
    "gpt2_d240_s88_b5": ("gpt2", dict(d=240, heads=5), 5, 88),
    "llama_d416_s72_b3": ("llama", dict(d=416, heads=13, kv_heads=1, ff=1120), 3, 72),
    # added in the fiftieth session after the thirteenth round's rules were withdrawn,
    # held out, chosen before they were planned or compiled: the unseen figure of that
    # session's last build, again at odd batches (six GPT-2 heads of 48 over 120 tokens
    # at batch 3, ten LLaMA heads of 48 over two KV heads, 56 tokens at batch 5, six BERT
    # heads of 64 over 72 tokens at batch 5)
    "gpt2_d288_s120_b3": ("gpt2", dict(d=288, heads=6), 3, 120),
    "llama_d480_s56_b5": ("llama", dict(d=480, heads=10, kv_heads=2, ff=1280), 5, 56),
    "bert_d384_s72_b5": ("bert", dict(d=384, heads=6, padding_mask=True), 5, 72),
    # added in the fifty-first session, held out, chosen before they were planned or
    # compiled: the unseen figure of the build whose cut groups may compute K and V
    # along the batch (eleven BERT heads of 32 over 96 tokens at batch 3, five GPT-2
    # heads of 64 over 104 tokens at batch 3, twelve LLaMA heads of 32 over four KV heads,
    # 88 tokens at batch 4)
    "bert_d352_s96_b3": ("bert", dict(d=352, heads=11, padding_mask=True), 3, 96),
    "gpt2_d320_s104_b3": ("gpt2", dict(d=320, heads=5), 3, 104),
    "llama_d384_s88_b4": ("llama", dict(d=384, heads=12, kv_heads=4, ff=1024), 4, 88),
}


def builders():
    path = os.path.join(HERE, "..", "crates", "graph", "tests", "data", "nd", "make_transformers.py")
    spec = importlib.util.spec_from_file_location("make_transformers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def static(src, dst, batch, seq, stripped=False):
    """`src` with its input bound to [batch, seq] and its shape subgraphs folded."""
    m = onnx.load(src)
    m.ir_version = min(m.ir_version, 8)  # onnxsim's checker reads up to IR 8 (opset 17 is 8)
    for i in m.graph.input:
        dims = i.type.tensor_type.shape.dim
        dims[0].dim_value, dims[1].dim_value = batch, seq
    for o in m.graph.output:
        for d in o.type.tensor_type.shape.dim:  # each dim unknown, the rank kept: onnxsim infers them
            d.Clear()
    simple, ok = onnxsim.simplify(m)
    if not ok:
        sys.exit(f"onnxsim could not check {dst}")
    if stripped:
        for t in simple.graph.initializer:
            if len(t.dims) and int(np.prod(t.dims)) > 16:
                for field in ("raw_data", "float_data", "int64_data", "int32_data"):
                    t.ClearField(field)
    onnx.save(simple, dst)


def refilled(committed, dst, seed):
    """The committed stripped graph `committed` with every initializer that lost its data
    filled with small random values of its type, written to `dst`."""
    m = onnx.load(committed)
    rng = np.random.default_rng(seed)
    for t in m.graph.initializer:
        n = int(np.prod(t.dims)) if len(t.dims) else 1
        if t.HasField("raw_data") or n <= 16 or t.data_location == onnx.TensorProto.EXTERNAL:
            continue
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
        values = (rng.standard_normal(n) * 0.02).astype(dtype) if dtype.kind == "f" else rng.integers(0, 4, n).astype(dtype)
        t.raw_data = values.tobytes()
    onnx.save(m, dst)


def main():
    flags = sys.argv[2:]
    if len(sys.argv) < 2 or len(flags) > 1 or (flags and flags[0] not in ("--stripped", "--committed")):
        sys.exit(__doc__)
    out, stripped, committed = sys.argv[1], flags == ["--stripped"], flags == ["--committed"]
    os.makedirs(out, exist_ok=True)
    mt = builders()
    index = {}
    for name, (family, args, batch, seq) in ZOO.items():
        path = os.path.join(out, name + ".onnx")
        common = dict(layers=2, vocab=512, positions=seq)
        if family == "gpt2":
            mt.gpt2(path=path, **common, **args)
        elif family == "bert":
            mt.bert(path=path, **common, **args)
        else:
            mt.llama(path, **common, **args)
        kept = os.path.join(HERE, "..", "crates", "planner", "tests", "data", "tx_zoo", name + "_static.onnx")
        if committed and os.path.exists(kept):
            refilled(kept, os.path.join(out, name + "_static.onnx"), seed=len(index))
        else:
            static(path, os.path.join(out, name + "_static.onnx"), batch, seq, stripped)
        if stripped:
            os.remove(path)
        inputs = 2 if args.get("padding_mask") else 1
        shape = [batch, seq] if inputs == 1 else [[batch, seq]] * inputs
        index[name] = {"input_shape": shape, "batch": batch, "seq": seq, "held_out": name in HELD_OUT}
    with open(os.path.join(out, "zoo.json"), "w") as f:
        json.dump(index, f, indent=1)
    print(f"{len(index)} networks in {out}")


if __name__ == "__main__":
    main()

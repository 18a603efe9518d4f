#!/usr/bin/env python3
"""Small transformer graphs written the way exporters write them, for the N-D importer.

The node patterns follow what torch.onnx.export (opset 17) writes for Hugging Face
GPT-2, BERT and LLaMA: shape subgraphs (Shape -> Gather -> Unsqueeze -> Concat ->
Reshape) computed from the dynamic inputs, LayerNormalization, GELU as Erf or as the
tanh polynomial, RMSNorm as Pow/ReduceMean/Sqrt/Div, rotary embedding as
Slice/Neg/Concat/Mul/Add over Gathered cos/sin tables, grouped-query attention by
Expand/Reshape of the keys and values, a causal mask by Slice of a constant buffer
and Where. Dynamic axes are named batch_size and sequence_length.

    pip install onnx numpy && python3 make_transformers.py
writes gpt2_tiny.onnx, bert_tiny.onnx, llama_tiny.onnx, llama_external.onnx (its
weights in an external file that is then deleted: the importer must not need it) and
fused_attention.onnx (an onnxruntime com.microsoft op, refused with a hint).
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(0)


class G:
    def __init__(self, name):
        self.name, self.nodes, self.inits, self.n = name, [], [], 0

    def w(self, name, shape):
        self.inits.append(numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32) * 0.02, name))
        return name

    def c(self, values, dtype=np.int64):
        self.n += 1
        name = f"const_{self.n}"
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def op(self, op, inputs, outputs=1, **attrs):
        self.n += 1
        outs = [f"{op.lower()}_{self.n}_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=f"/{op}_{self.n}", **attrs))
        return outs[0] if outputs == 1 else outs

    def dim(self, x, i):
        """Shape(x)[i] as a 1-D int64 tensor, the exporters' way."""
        s = self.op("Shape", [x])
        g = self.op("Gather", [s, self.c(i)], axis=0)
        return self.op("Unsqueeze", [g, self.c([0])])

    def reshape(self, x, parts):
        shape = self.op("Concat", parts, axis=0)
        return self.op("Reshape", [x, shape])

    def save(self, inputs, output, path, external=False):
        graph = helper.make_graph(self.nodes, self.name, inputs,
                                  [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch_size", "sequence_length", None])], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_transformers.py")
        if external:
            onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                            location=os.path.basename(path) + ".data", size_threshold=1024)
            os.remove(path + ".data")
        else:
            onnx.save_model(model, path)


def ids_input():
    return helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"])


def attention(g, x, p, d, heads, kv_heads, causal, rotary=None, mask_side=None, additive=None):
    hd = d // heads
    b, s = g.dim(x, 0), g.dim(x, 1)
    if kv_heads == heads and rotary is None:
        qkv = g.op("Add", [g.op("MatMul", [x, g.w(p + "c_attn.w", (d, 3 * d))]), g.w(p + "c_attn.b", (3 * d,))])
        q, k, v = g.op("Split", [qkv, g.c([d, d, d])], outputs=3, axis=2)
    else:
        q = g.op("MatMul", [x, g.w(p + "q.w", (d, heads * hd))])
        k = g.op("MatMul", [x, g.w(p + "k.w", (d, kv_heads * hd))])
        v = g.op("MatMul", [x, g.w(p + "v.w", (d, kv_heads * hd))])

    def heads_of(t, n):
        t = g.reshape(t, [b, s, g.c([n]), g.c([hd])])
        return g.op("Transpose", [t], perm=[0, 2, 1, 3])

    q, k, v = heads_of(q, heads), heads_of(k, kv_heads), heads_of(v, kv_heads)
    if rotary is not None:
        q, k = rotary(q), rotary(k)
    if kv_heads != heads:
        rep = heads // kv_heads

        def repeat(t):
            t = g.op("Unsqueeze", [t, g.c([2])])
            t = g.op("Expand", [t, g.op("Concat", [b, g.c([kv_heads]), g.c([rep]), s, g.c([hd])], axis=0)])
            return g.reshape(t, [b, g.c([heads]), s, g.c([hd])])

        k, v = repeat(k), repeat(v)
    kt = g.op("Transpose", [k], perm=[0, 1, 3, 2])
    scores = g.op("Div", [g.op("MatMul", [q, kt]), g.c(np.sqrt(hd), np.float32)])
    if causal:
        side = mask_side or (1024 if d >= 768 else 64)
        mask_buf = g.c(np.tril(np.ones((1, 1, side, side), bool)), np.bool_)
        mask = g.op("Slice", [mask_buf, g.c([0]), s, g.c([2])])
        mask = g.op("Slice", [mask, g.c([0]), s, g.c([3])])
        scores = g.op("Where", [mask, scores, g.c(-1e9, np.float32)])
    if additive is not None:
        scores = g.op("Add", [scores, additive])
    probs = g.op("Softmax", [scores], axis=-1)
    o = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    o = g.reshape(o, [b, s, g.c([d])])
    return o


def gpt2(layers=2, d=32, heads=4, vocab=64, positions=64, path=None):
    g = G("gpt2_tiny" if path is None else "gpt2")
    ids = "input_ids"
    s = g.dim(ids, 1)
    pos = g.op("Range", [g.c(0), g.op("Squeeze", [s, g.c([0])]), g.c(1)])
    x = g.op("Add", [g.op("Gather", [g.w("wte", (vocab, d)), ids]), g.op("Gather", [g.w("wpe", (positions, d)), pos])])
    for i in range(layers):
        p = f"h.{i}."
        h = g.op("LayerNormalization", [x, g.w(p + "ln_1.g", (d,)), g.w(p + "ln_1.b", (d,))], axis=-1)
        a = attention(g, h, p, d, heads, heads, causal=True, mask_side=positions if d < 768 else None)
        a = g.op("Add", [g.op("MatMul", [a, g.w(p + "c_proj.w", (d, d))]), g.w(p + "c_proj.b", (d,))])
        x = g.op("Add", [x, a])
        h = g.op("LayerNormalization", [x, g.w(p + "ln_2.g", (d,)), g.w(p + "ln_2.b", (d,))], axis=-1)
        h = g.op("Add", [g.op("MatMul", [h, g.w(p + "c_fc.w", (d, 4 * d))]), g.w(p + "c_fc.b", (4 * d,))])
        # GELU, tanh form: 0.5*h*(1+tanh(0.79788456*(h+0.044715*h^3)))
        cube = g.op("Pow", [h, g.c(3.0, np.float32)])
        inner = g.op("Mul", [g.op("Add", [h, g.op("Mul", [cube, g.c(0.044715, np.float32)])]), g.c(0.7978845608, np.float32)])
        h = g.op("Mul", [g.op("Mul", [h, g.c(0.5, np.float32)]), g.op("Add", [g.op("Tanh", [inner]), g.c(1.0, np.float32)])])
        h = g.op("Add", [g.op("MatMul", [h, g.w(p + "mlp.c_proj.w", (4 * d, d))]), g.w(p + "mlp.c_proj.b", (d,))])
        x = g.op("Add", [x, h])
    x = g.op("LayerNormalization", [x, g.w("ln_f.g", (d,)), g.w("ln_f.b", (d,))], axis=-1)
    logits = g.op("MatMul", [x, g.op("Transpose", ["wte"], perm=[1, 0])])
    g.save([ids_input()], logits, path or os.path.join(HERE, "gpt2_tiny.onnx"))


def bert(layers=2, d=32, heads=4, vocab=64, positions=64, path=None, padding_mask=False):
    """BERT-style encoder; with `padding_mask`, Hugging Face's second input
    `attention_mask` [batch, seq] (1 keep, 0 pad), added to the scores as
    (1 − mask)·−10000 over [batch, 1, 1, seq]."""
    g = G("bert_tiny" if path is None else "bert")
    ids = "input_ids"
    s = g.dim(ids, 1)
    additive = None
    if padding_mask:
        m = g.op("Cast", [g.op("Unsqueeze", ["attention_mask", g.c([1, 2])])], to=TensorProto.FLOAT)
        additive = g.op("Mul", [g.op("Sub", [g.c(1.0, np.float32), m]), g.c(-10000.0, np.float32)])
    pos = g.op("Unsqueeze", [g.op("Range", [g.c(0), g.op("Squeeze", [s, g.c([0])]), g.c(1)]), g.c([0])])
    x = g.op("Add", [g.op("Gather", [g.w("word", (vocab, d)), ids]), g.op("Gather", [g.w("position", (positions, d)), pos])])
    x = g.op("LayerNormalization", [x, g.w("emb_ln.g", (d,)), g.w("emb_ln.b", (d,))], axis=-1)
    for i in range(layers):
        p = f"layer.{i}."
        a = attention(g, x, p, d, heads, heads, causal=False, additive=additive)
        a = g.op("Add", [g.op("MatMul", [a, g.w(p + "o.w", (d, d))]), g.w(p + "o.b", (d,))])
        x = g.op("LayerNormalization", [g.op("Add", [x, a]), g.w(p + "ln1.g", (d,)), g.w(p + "ln1.b", (d,))], axis=-1)
        h = g.op("Add", [g.op("MatMul", [x, g.w(p + "fc.w", (d, 4 * d))]), g.w(p + "fc.b", (4 * d,))])
        erf = g.op("Erf", [g.op("Div", [h, g.c(1.4142135, np.float32)])])
        h = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, g.c(1.0, np.float32)])]), g.c(0.5, np.float32)])
        h = g.op("Add", [g.op("MatMul", [h, g.w(p + "proj.w", (4 * d, d))]), g.w(p + "proj.b", (d,))])
        x = g.op("LayerNormalization", [g.op("Add", [x, h]), g.w(p + "ln2.g", (d,)), g.w(p + "ln2.b", (d,))], axis=-1)
    inputs = [ids_input()]
    if padding_mask:
        inputs.append(helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "sequence_length"]))
    g.save(inputs, x, path or os.path.join(HERE, "bert_tiny.onnx"))


def llama(path, layers=2, d=32, heads=4, kv_heads=2, ff=80, vocab=64, external=False, positions=64):
    g = G("llama_tiny")
    ids = "input_ids"
    hd = d // heads
    s = g.dim(ids, 1)
    pos = g.op("Range", [g.c(0), g.op("Squeeze", [s, g.c([0])]), g.c(1)])
    cos = g.op("Gather", [g.w("rope.cos", (positions, hd)), pos])
    sin = g.op("Gather", [g.w("rope.sin", (positions, hd)), pos])

    def rotary(t):
        half = hd // 2
        x1 = g.op("Slice", [t, g.c([0]), g.c([half]), g.c([3])])
        x2 = g.op("Slice", [t, g.c([half]), g.c([hd]), g.c([3])])
        rot = g.op("Concat", [g.op("Neg", [x2]), x1], axis=3)
        return g.op("Add", [g.op("Mul", [t, cos]), g.op("Mul", [rot, sin])])

    def rms(x, name):
        var = g.op("ReduceMean", [g.op("Pow", [x, g.c(2.0, np.float32)])], axes=[-1], keepdims=1)
        x = g.op("Mul", [x, g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [var, g.c(1e-6, np.float32)])])])])
        return g.op("Mul", [x, g.w(name, (d,))])

    x = g.op("Gather", [g.w("embed", (vocab, d)), ids])
    for i in range(layers):
        p = f"layers.{i}."
        a = attention(g, rms(x, p + "in_norm"), p, d, heads, kv_heads, causal=True, rotary=rotary, mask_side=positions)
        x = g.op("Add", [x, g.op("MatMul", [a, g.w(p + "o.w", (d, d))])])
        h = rms(x, p + "post_norm")
        gate = g.op("MatMul", [h, g.w(p + "gate.w", (d, ff))])
        up = g.op("MatMul", [h, g.w(p + "up.w", (d, ff))])
        act = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), up])
        x = g.op("Add", [x, g.op("MatMul", [act, g.w(p + "down.w", (ff, d))])])
    x = rms(x, "norm")
    logits = g.op("MatMul", [x, g.w("lm_head", (d, vocab))])
    g.save([ids_input()], logits, path, external=external)


def fused():
    g = G("fused_attention")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch_size", "sequence_length", 64])
    y = g.op("Attention", ["x", g.w("qkv.w", (64, 192)), g.w("qkv.b", (192,))], num_heads=4)
    g.nodes[-1].domain = "com.microsoft"
    graph = helper.make_graph(g.nodes, g.name, [x], [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["batch_size", "sequence_length", 64])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    onnx.save_model(model, os.path.join(HERE, "fused_attention.onnx"))


if __name__ == "__main__":
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--gpt2-small":
        # GPT-2 small at full size (124M parameters, ~500 MB inline), for bench/llm.sh
        gpt2(layers=12, d=768, heads=12, vocab=50257, positions=1024, path=sys.argv[2])
        sys.exit(0)
    gpt2()
    bert()
    llama(os.path.join(HERE, "llama_tiny.onnx"))
    llama(os.path.join(HERE, "llama_external.onnx"), external=True)
    fused()
    for f in sorted(os.listdir(HERE)):
        if f.endswith(".onnx"):
            print(f, os.path.getsize(os.path.join(HERE, f)))

#!/usr/bin/env python3
"""Tiny random-weight Hugging Face models exported as users export them today:
transformers 5 and torch.onnx.export's default (dynamo) exporter, opset 20, with
dynamic batch and sequence. The graphs differ from the TorchScript exporter's
(make_hf_exports.py): the attention masks are built with CumSum, GatherND and IsNaN,
BERT's token types come through GatherElements, and identical initializers (every norm
weight of a fresh model) are stored once.

Each is written as dyn_<model_type>_<attention>.onnx with its config as
dyn_<model_type>.json (what `tpusim llm show` reads). dyn_llama_decode.onnx is the
LLaMA one decode step: new tokens against a KV cache given as inputs
`past_key_<layer>`/`past_value_<layer>` (dynamic `past_sequence_length`), the updated
caches returned as `present_key_<layer>`/`present_value_<layer>`. Made with torch 2.15.0,
transformers 5.24.0, onnx 1.23.2 and onnxscript 0.7.2 (Python 3.11):

    pip install torch transformers onnx onnxscript
    python make_dynamo_exports.py
"""
import json
import os
import warnings

import torch
from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, DynamicCache

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=64, max_position_embeddings=64)
CASES = [
    ("llama", BASE, "sdpa"),
    ("qwen3", {**BASE, "head_dim": 8}, "sdpa"),
    ("gemma3_text", {**BASE, "head_dim": 8, "sliding_window": 8}, "eager"),
    ("gpt2", dict(n_embd=32, n_layer=2, n_head=4, vocab_size=64, n_positions=64), "sdpa"),
    ("bert", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=64, vocab_size=64, max_position_embeddings=64), "eager"),
]


class Outputs(torch.nn.Module):
    """The logits of a causal LM, the last hidden state of an encoder."""

    def __init__(self, model, causal):
        super().__init__()
        self.model = model
        self.causal = causal

    def forward(self, ids):
        if self.causal:
            return self.model(input_ids=ids, use_cache=False).logits
        return self.model(input_ids=ids).last_hidden_state


class Decode(torch.nn.Module):
    """One decode step of a two-layer model: logits and the caches it appends to."""

    def __init__(self, model, cfg):
        super().__init__()
        self.model = model
        self.cfg = cfg

    def forward(self, ids, k0, v0, k1, v1):
        cache = DynamicCache(config=self.cfg)
        cache.update(k0, v0, 0)
        cache.update(k1, v1, 1)
        out = self.model(input_ids=ids, past_key_values=cache, use_cache=True)
        kv = out.past_key_values
        return (out.logits, kv.layers[0].keys, kv.layers[0].values, kv.layers[1].keys,
                kv.layers[1].values)


def export_decode():
    torch.manual_seed(0)
    cfg = AutoConfig.for_model("llama", **BASE)
    model = AutoModelForCausalLM.from_config(cfg).eval()
    ids = torch.randint(0, 64, (2, 1))
    head = BASE["hidden_size"] // BASE["num_attention_heads"]
    past = [torch.randn(2, BASE["num_key_value_heads"], 8, head) for _ in range(4)]
    batch = torch.export.Dim("batch", min=1, max=32)
    length = torch.export.Dim("past_sequence_length", min=1, max=64)
    cache = {0: batch, 2: length}
    names = ["past_key_0", "past_value_0", "past_key_1", "past_value_1"]
    path = os.path.join(HERE, "dyn_llama_decode.onnx")
    torch.onnx.export(Decode(model, cfg), (ids, *past), path,
                      input_names=["input_ids", *names],
                      output_names=["logits", *[n.replace("past", "present") for n in names]],
                      dynamo=True,
                      dynamic_shapes={"ids": {0: batch}, "k0": cache, "v0": cache,
                                      "k1": cache, "v1": cache})
    print(path, os.path.getsize(path))


def main():
    warnings.filterwarnings("ignore")
    for model_type, fields, attention in CASES:
        torch.manual_seed(0)
        cfg = AutoConfig.for_model(model_type, **fields)
        cfg._attn_implementation = attention
        causal = model_type != "bert"
        model = (AutoModelForCausalLM if causal else AutoModel).from_config(cfg).eval()
        ids = torch.randint(0, 64, (2, 16))
        batch = torch.export.Dim("batch", min=1, max=32)
        seq = torch.export.Dim("seq", min=2, max=64)
        path = os.path.join(HERE, f"dyn_{model_type}_{attention}.onnx")
        torch.onnx.export(Outputs(model, causal), (ids,), path, input_names=["input_ids"],
                          dynamo=True, dynamic_shapes={"ids": {0: batch, 1: seq}})
        with open(os.path.join(HERE, f"dyn_{model_type}.json"), "w") as f:
            json.dump({"model_type": model_type, **fields}, f, indent=1)
            f.write("\n")
        print(path, os.path.getsize(path))
    export_decode()


if __name__ == "__main__":
    main()

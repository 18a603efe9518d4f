#!/usr/bin/env python3
"""Tiny random-weight Hugging Face models exported by torch.onnx.export, as users
export them: Qwen2 (biases on Q, K, V), Gemma 2 (norms after attention and the MLP,
logit soft-capping, a sliding window) and Phi-3 (fused QKV and gate/up matrices).

Each is written as hf_<model_type>.onnx with its config as hf_<model_type>.json
(what `tpusim llm show` reads), dynamic axes batch_size and sequence_length, opset 17,
eager attention, no KV cache. transformers 5 builds its masks in a way the TorchScript
exporter cannot trace, so this needs transformers 4.44 (with torch 2.5):

    pip install --target /tmp/tf444 --no-deps transformers==4.44.2 tokenizers==0.19.1 \\
        huggingface_hub==0.24.6 requests
    PYTHONPATH=/tmp/tf444 python make_hf_exports.py
"""
import json
import os
import warnings

import torch
from transformers import AutoConfig, AutoModelForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=128, max_position_embeddings=64)
FAMILIES = {
    "qwen2": {},
    "gemma2": dict(head_dim=8, sliding_window=8),
    "phi3": dict(num_key_value_heads=4, pad_token_id=0),
}


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).logits


def main():
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    for model_type, extra in FAMILIES.items():
        fields = {**BASE, **extra}
        cfg = AutoConfig.for_model(model_type, **fields)
        cfg._attn_implementation = "eager"
        model = AutoModelForCausalLM.from_config(cfg).eval()
        ids = torch.randint(0, BASE["vocab_size"], (2, 16))
        path = os.path.join(HERE, f"hf_{model_type}.onnx")
        torch.onnx.export(Logits(model), (ids,), path, input_names=["input_ids"],
                          output_names=["logits"], opset_version=17,
                          dynamic_axes={"input_ids": {0: "batch_size", 1: "sequence_length"}})
        with open(os.path.join(HERE, f"hf_{model_type}.json"), "w") as f:
            json.dump({"model_type": model_type, **fields}, f, indent=1)
            f.write("\n")
        print(path, os.path.getsize(path))


if __name__ == "__main__":
    main()

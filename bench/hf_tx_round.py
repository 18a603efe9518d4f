#!/usr/bin/env python3
"""A round of tiny random-weight Hugging Face causal LMs exported as users export them,
for `bench/tpumlir_zoo_run.sh` and `bench/tpumlir_tx_compare.py` (issue 20): each model
exported by torch.onnx.export (TorchScript, opset 17, eager attention, no KV cache, as
crates/graph/tests/data/nd/make_hf_exports.py does), then bound to its batch and tokens
and simplified by onnxsim (`tpumlir_tx_zoo.static`).

ROUND holds every configuration; they were written down before any was exported,
planned or compiled, and every network of a round is held out: its first compile is the
figure to report.

Usage: PYTHONPATH=TRANSFORMERS_4_44 python bench/hf_tx_round.py OUTDIR
  writes OUTDIR/<name>.onnx, OUTDIR/<name>_static.onnx, OUTDIR/<name>.json (the config)
  and OUTDIR/zoo.json. Needs torch, onnx==1.16.2, onnxsim==0.4.36 and transformers 4.44
  (its masks trace; see make_hf_exports.py for the install line).
"""
import importlib.util
import json
import os
import sys
import warnings

import torch
from transformers import AutoConfig, AutoModelForCausalLM

import tpumlir_tx_zoo as zoo

# name: (model_type, config fields, batch, tokens); fifty-third session, 2026-12-03
ROUND = {
    "hf_llama_d64_s80": ("llama", dict(hidden_size=64, intermediate_size=176, num_attention_heads=4,
                                       num_key_value_heads=2), 1, 80),
    "hf_mistral_d96_s64": ("mistral", dict(hidden_size=96, intermediate_size=256, num_attention_heads=6,
                                           num_key_value_heads=2, sliding_window=4096), 1, 64),
    "hf_qwen2_d128_s48_b2": ("qwen2", dict(hidden_size=128, intermediate_size=256, num_attention_heads=4,
                                           num_key_value_heads=4), 2, 48),
    "hf_gemma2_d64_s96": ("gemma2", dict(hidden_size=64, intermediate_size=128, num_attention_heads=4,
                                         num_key_value_heads=2, head_dim=16, sliding_window=32), 1, 96),
    "hf_phi3_d96_s64": ("phi3", dict(hidden_size=96, intermediate_size=192, num_attention_heads=6,
                                     num_key_value_heads=6, pad_token_id=0), 1, 64),
    "hf_gemma_d64_s64": ("gemma", dict(hidden_size=64, intermediate_size=128, num_attention_heads=4,
                                       num_key_value_heads=1, head_dim=16), 1, 64),
}
COMMON = dict(num_hidden_layers=2, vocab_size=256, max_position_embeddings=128)




def hf_exports():
    """crates/graph/tests/data/nd/make_hf_exports.py, whose `Logits` wrapper this exports."""
    path = os.path.join(zoo.HERE, "..", "crates", "graph", "tests", "data", "nd", "make_hf_exports.py")
    spec = importlib.util.spec_from_file_location("make_hf_exports", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def export(model_type, fields, path):
    cfg = AutoConfig.for_model(model_type, **fields)
    cfg._attn_implementation = "eager"
    model = AutoModelForCausalLM.from_config(cfg).eval()
    ids = torch.randint(0, fields["vocab_size"], (2, 16))
    torch.onnx.export(hf_exports().Logits(model), (ids,), path, input_names=["input_ids"], output_names=["logits"],
                      opset_version=17, dynamo=False,
                      dynamic_axes={"input_ids": {0: "batch_size", 1: "sequence_length"}})


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    index = {}
    for name, (model_type, extra, batch, seq) in ROUND.items():
        fields = {**COMMON, **extra}
        path = os.path.join(out, name + ".onnx")
        export(model_type, fields, path)
        zoo.static(path, os.path.join(out, name + "_static.onnx"), batch, seq)
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump({"model_type": model_type, **fields}, f, indent=1)
        index[name] = {"input_shape": [batch, seq], "batch": batch, "seq": seq, "held_out": True}
        print(name, os.path.getsize(path), flush=True)
    with open(os.path.join(out, "zoo.json"), "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()

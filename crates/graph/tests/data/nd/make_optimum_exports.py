#!/usr/bin/env python3
"""A tiny random-weight LLaMA exported by Hugging Face optimum as ONNX Runtime users
export LLMs: `text-generation-with-past`, one graph for prefill and decode, the caches
as inputs `past_key_values.<layer>.key|value` (axis `past_sequence_length`), the mask
over cache and new tokens (`past_sequence_length + sequence_length`), the updated caches
as outputs `present.<layer>.key|value`. Written as opt_llama_with_past.onnx.

Made with optimum-onnx 0.1.0 (optimum 2.1.0, transformers 4.57.6, torch 2.15.0,
onnx 1.23.2, onnxruntime, Python 3.11):

    pip install optimum-onnx onnxruntime
    python make_optimum_exports.py
"""
import os
import shutil
import tempfile
import warnings

import torch
from optimum.exporters.onnx import main_export
from transformers import AutoConfig, AutoModelForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, vocab_size=64, max_position_embeddings=64)


def main():
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir, out_dir = os.path.join(tmp, "hf"), os.path.join(tmp, "onnx")
        cfg = AutoConfig.for_model("llama", **FIELDS)
        AutoModelForCausalLM.from_config(cfg).save_pretrained(model_dir)
        main_export(model_dir, out_dir, task="text-generation-with-past", do_validation=False)
        path = os.path.join(HERE, "opt_llama_with_past.onnx")
        shutil.copy(os.path.join(out_dir, "model.onnx"), path)
        print(path, os.path.getsize(path))


if __name__ == "__main__":
    main()

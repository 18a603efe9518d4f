#!/usr/bin/env python3
"""Reference figures for `tpusim llm show CONFIG.json`, from Hugging Face's own code.

For every config.json in crates/llm/tests/data/hf_configs/, build the model that
`transformers` builds from it (on the meta device: no weights are allocated) and
record its parameter count (`sum(p.numel())` over distinct parameters, so a tied
embedding counts once) and, from the config's `layer_types` as transformers
resolves them, how many layers attend through a sliding window and its size.
BERT is counted as `AutoModel` (the encoder with its pooler, what `bert-base`'s
published count covers); every other family as `AutoModelForCausalLM`.

Run with a Python that has torch and transformers (the TPU-MLIR venv of
bench/tpumlir_zoo_run.sh has both):
    python bench/hf_config_counts.py > crates/llm/tests/data/hf_configs/counts.jsonl
"""
import inspect
import json
import pathlib
import sys

import torch
import transformers
from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

DIR = pathlib.Path(__file__).resolve().parent.parent / "crates/llm/tests/data/hf_configs"


def windowed_layers(cfg, model):
    """Layers transformers runs with a sliding window, and the window.

    None when the family's modelling code never reads a window (LLaMA, Gemma), whatever
    keys the config carries.

    Configs with `layer_types` (Gemma 2/3, Qwen2/3 in transformers 5) name each
    layer's attention. The others (Mistral, Mixtral, Phi-3) have none: their
    modelling code passes `config.sliding_window` to the attention of every layer
    (`modeling_mistral.py`: `sliding_window=getattr(self.config, "sliding_window",
    None)`), so every layer is windowed when it is set."""
    code = inspect.getsource(sys.modules[type(model).__module__])
    window = getattr(cfg, "sliding_window", None)
    if window is None or "sliding_window" not in code:
        return 0, None
    # SmolLM3 (and Qwen, whose layer_types already say so) window only when switched on
    if getattr(cfg, "use_sliding_window", None) is False:
        return 0, None
    types = getattr(cfg, "layer_types", None)
    if types is None:
        return cfg.num_hidden_layers, window
    return sum(t == "sliding_attention" for t in types), window


def main():
    for path in sorted(DIR.glob("*.json")):
        fields = json.loads(path.read_text())
        model_type = fields.pop("model_type")
        cfg = AutoConfig.for_model(model_type, **fields)
        build = AutoModel if model_type == "bert" else AutoModelForCausalLM
        with torch.device("meta"):
            model = build.from_config(cfg)
        params = sum(p.numel() for p in model.parameters())
        layers, window = windowed_layers(cfg, model)
        row = {
            "file": path.name,
            "model_type": model_type,
            "params": params,
            "sliding_window": window if layers else None,
            "windowed_layers": layers,
            "transformers": transformers.__version__,
        }
        print(json.dumps(row))
        sys.stdout.flush()


if __name__ == "__main__":
    main()

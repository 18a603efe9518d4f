#!/usr/bin/env python3
"""One layer's weights of the newer families, sized by XLA:TPU itself (libtpu,
compile-only): the reference for `layer_weights_bytes_tiled` in `tpusim report`.

Two steps, two Pythons (transformers and jax[tpu] live in different venvs here):

    # 1. the layer's parameters as transformers builds them (meta device), 2-D ones
    #    in JAX's [in, out] orientation:
    TPUMLIR_VENV/bin/python bench/xla_layer_bytes.py shapes > /tmp/layer_shapes.json
    # 2. XLA's argument bytes of a program taking exactly those arrays (bf16) on v5e,
    #    v6e and v5p (crates/report/tests/data/xla/README.md has the jax venv):
    JAX_VENV/bin/python bench/xla_layer_bytes.py bytes /tmp/layer_shapes.json \\
        > crates/llm/tests/data/xla_layer_bytes.json
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "..", "crates", "llm", "tests", "data", "hf_configs")
MODELS = [("gemma-2-2b", "gemma-2-2b.json"), ("qwen2.5-7b", "qwen2.5-7b.json"),
          ("qwen3-8b", "qwen3-8b.json"), ("phi-3-mini", "phi-3-mini-4k.json"),
          # forty-fourth session
          ("olmo-2-7b", "olmo-2-1124-7b.json"), ("gpt-oss-20b", "gpt-oss-20b.json"),
          ("smollm3-3b", "smollm3-3b.json"), ("granite-3.3-8b", "granite-3.3-8b.json")]
CHIPS = [("v5e", "v5e:1x1"), ("v6e", "v6e:1x1"), ("v5p", "v5p:1x1x1")]


def shapes():
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    out = {}
    for name, f in MODELS:
        fields = json.load(open(os.path.join(CONFIGS, f)))
        cfg = AutoConfig.for_model(fields.pop("model_type"), **fields)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(cfg)
        out[name] = [[n, list(p.shape)[::-1] if p.dim() == 2 else list(p.shape)]
                     for n, p in model.model.layers[0].named_parameters()]
    json.dump(out, sys.stdout, indent=0)


def argument_bytes(path):
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import jax.numpy as jnp
    from jax.experimental import topologies
    from jax.sharding import SingleDeviceSharding
    layers = json.load(open(path))
    out = {}
    for chip, topo in CHIPS:
        dev = topologies.get_topology_desc(topo, platform="tpu",
                                           chips_per_host_bounds=(1, 1, 1)).devices[0]
        s = SingleDeviceSharding(dev)
        for model, params in layers.items():
            args = [jax.ShapeDtypeStruct(tuple(sh), jnp.bfloat16, sharding=s) for _, sh in params]
            c = (jax.jit(lambda *w: jnp.zeros((), jnp.float32), in_shardings=s,
                         out_shardings=s, keep_unused=True).lower(*args).compile())
            out.setdefault(model, {})[chip] = c.memory_analysis().argument_size_in_bytes
    json.dump({"jax": jax.__version__, "layer_argument_bytes": out, "layer_shapes": layers},
              sys.stdout, indent=1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["shapes"]:
        shapes()
    elif sys.argv[1:2] == ["bytes"] and len(sys.argv) == 3:
        argument_bytes(sys.argv[2])
    else:
        sys.exit(__doc__)

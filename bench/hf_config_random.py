#!/usr/bin/env python3
"""Random but valid config.json files of every family `tpusim llm` reads, written to
crates/llm/tests/data/hf_configs/random_<family>_<i>.json (seeded: the same files every
run). Each draws its dimensions, bias flags, tying, experts and sliding-window keys
(`sliding_window`, `layer_types`, `use_sliding_window`/`max_window_layers`,
`sliding_window_pattern`) at random, so that `bench/hf_config_counts.py` can count them
with transformers itself and `tests/params.rs` check us against those counts on shapes
no rule was written for.

    python3 bench/hf_config_random.py && python bench/hf_config_counts.py > crates/llm/tests/data/hf_configs/counts.jsonl
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "crates", "llm", "tests", "data", "hf_configs")
FAMILIES = ["llama", "mistral", "mixtral", "gemma", "gemma2", "gemma3_text", "qwen2",
            "qwen3", "qwen3_moe", "phi3", "gpt2", "bert"]
PER_FAMILY = 2
# added in the forty-fourth session, drawn from their own seed so the files above stay
NEW_FAMILIES = ["granite", "smollm3", "olmo2", "olmo3", "gpt_oss"]
NEW_PER_FAMILY = 3


def decoder(rng, family):
    kv = rng.choice([1, 2, 4])
    heads = kv * rng.choice([1, 2, 3, 4])
    head_dim = rng.choice([16, 24, 32, 64])
    layers = rng.randint(1, 9)
    c = {
        "model_type": family,
        "hidden_size": rng.choice([48, 64, 96, 128, 160]),
        "intermediate_size": rng.choice([64, 96, 200, 256]),
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": head_dim,
        "vocab_size": rng.randint(50, 3000),
        "tie_word_embeddings": rng.random() < 0.5,
    }
    if family == "phi3":
        c["pad_token_id"] = 0
    if family in ("llama", "qwen3", "qwen3_moe"):
        c["attention_bias"] = rng.random() < 0.5
    if family == "llama":
        c["mlp_bias"] = rng.random() < 0.5
    if family in ("mixtral", "qwen3_moe"):
        c["num_local_experts" if family == "mixtral" else "num_experts"] = rng.choice([2, 4, 8])
        c["num_experts_per_tok"] = rng.choice([1, 2])
        if family == "qwen3_moe":
            c["moe_intermediate_size"] = rng.choice([32, 48, 64])
            c["decoder_sparse_step"] = 1
            c["mlp_only_layers"] = []
    window = rng.choice([None, 4, 16, 64])
    if window is not None and family not in ("llama", "gemma"):
        c["sliding_window"] = window
        if family in ("qwen2", "qwen3", "qwen3_moe"):
            c["use_sliding_window"] = rng.random() < 0.7
            c["max_window_layers"] = rng.randint(0, layers)
        if family == "gemma3_text" and rng.random() < 0.5:
            c["sliding_window_pattern"] = rng.choice([2, 3, 6])
        if family in ("gemma2", "gemma3_text", "qwen2") and rng.random() < 0.3:
            c["layer_types"] = [rng.choice(["sliding_attention", "full_attention"])
                                for _ in range(layers)]
    return c


def newer(rng, family):
    """A config of the forty-fourth session's families, keys left out at random so that
    transformers' defaults are exercised too."""
    c = decoder(rng, "llama")
    c["model_type"] = family
    c.pop("mlp_bias", None)
    if rng.random() < 0.4:
        c.pop("tie_word_embeddings")
    if family == "smollm3":
        c["pad_token_id"] = 0
    if family in ("granite", "smollm3", "olmo2", "olmo3", "gpt_oss"):
        c["attention_bias"] = rng.random() < 0.5
    if family in ("granite", "smollm3", "olmo2"):
        c["mlp_bias"] = rng.random() < 0.5
    layers = c["num_hidden_layers"]
    window = rng.choice([None, 4, 16, 64])
    if family == "smollm3":
        c["use_sliding_window"] = rng.random() < 0.7
        if window is not None:
            c["sliding_window"] = window
        if rng.random() < 0.4:
            c["no_rope_layers"] = [rng.choice([0, 1]) for _ in range(layers)]
        else:
            c["no_rope_layer_interval"] = rng.choice([2, 3, 4])
    if family in ("olmo3", "gpt_oss"):
        if rng.random() < 0.7:
            c["sliding_window"] = window
        if rng.random() < 0.3:
            c["layer_types"] = [rng.choice(["sliding_attention", "full_attention"])
                                for _ in range(layers)]
    if family == "gpt_oss":
        experts = rng.choice([2, 4, 8])
        c["num_local_experts"] = experts
        c["num_experts_per_tok"] = rng.choice([k for k in (1, 2, 4) if k <= experts])
        if rng.random() < 0.3:
            c.pop("head_dim")
            c["hidden_size"] = c["num_attention_heads"] * 16
    return c


def multi_head(rng, family):
    heads = rng.choice([1, 2, 4, 6])
    d = heads * rng.choice([8, 16, 32])
    if family == "gpt2":
        return {"model_type": "gpt2", "n_embd": d, "n_head": heads, "n_layer": rng.randint(1, 6),
                "n_positions": rng.choice([32, 128, 1024]), "vocab_size": rng.randint(50, 3000)}
    return {"model_type": "bert", "hidden_size": d, "num_attention_heads": heads,
            "num_hidden_layers": rng.randint(1, 6), "intermediate_size": rng.choice([64, 128, 4 * d]),
            "max_position_embeddings": rng.choice([64, 512]), "type_vocab_size": rng.choice([1, 2]),
            "vocab_size": rng.randint(50, 3000)}


def main():
    rng = random.Random(43)
    for family in FAMILIES:
        for i in range(PER_FAMILY):
            c = multi_head(rng, family) if family in ("gpt2", "bert") else decoder(rng, family)
            path = os.path.join(OUT, f"random_{family}_{i}.json")
            with open(path, "w") as f:
                json.dump(c, f)
                f.write("\n")
    rng = random.Random(44)
    for family in NEW_FAMILIES:
        for i in range(NEW_PER_FAMILY):
            path = os.path.join(OUT, f"random_{family}_{i}.json")
            with open(path, "w") as f:
                json.dump(newer(rng, family), f)
                f.write("\n")


if __name__ == "__main__":
    main()

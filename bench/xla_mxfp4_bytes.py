#!/usr/bin/env python3
"""XLA:TPU's argument bytes of one GPT-OSS expert block's matrices stored as MXFP4
(f4e2m1fn values and f8e8m0fnu scales, one a block of 32 along the input dimension),
compile-only with libtpu: the reference for `tiled_bytes` at `mxfp4`.

    $JAX_VENV/bin/python bench/xla_mxfp4_bytes.py > crates/llm/tests/data/xla_mxfp4_bytes.json

(JAX_VENV: Python 3.12 with `pip install 'jax[tpu]==0.12.0.1'`.)
"""
import json
import os
import re

os.environ["JAX_PLATFORMS"] = "cpu"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import topologies  # noqa: E402
from jax.sharding import SingleDeviceSharding  # noqa: E402

CHIPS = [("v5e", "v5e=1x1"), ("v6e", "v6e=1x1"), ("v5p", "v5p=1x1x1")]
# gpt-oss's d_model and expert width: gate_up [2880, 5760] and down [2880, 2880]
MATRICES = [(2880, 5760), (2880, 2880)]


def main():
    out = {"matrices": MATRICES, "block": 32, "chips": {}}
    for gen, topo in CHIPS:
        s = SingleDeviceSharding(topologies.get_topology_desc(topo, platform="tpu").devices[0])
        args = []
        for k, n in MATRICES:
            args.append(jax.ShapeDtypeStruct((k, n), jnp.float4_e2m1fn, sharding=s))
            args.append(jax.ShapeDtypeStruct((k // 32, n), jnp.float8_e8m0fnu, sharding=s))
        c = (jax.jit(lambda *a: jnp.zeros((), jnp.float32), in_shardings=(s,) * len(args),
                     out_shardings=s, keep_unused=True).lower(*args).compile())
        params = [re.search(r"=\s*(\S+)\s+parameter", line).group(1)
                  for line in c.as_text().splitlines() if "parameter(" in line]
        out["chips"][gen] = {"argument_size_in_bytes": c.memory_analysis().argument_size_in_bytes,
                             "parameters": sorted(params)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

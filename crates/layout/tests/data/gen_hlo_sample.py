#!/usr/bin/env python3
"""A real XLA:TPU HLO dump (after optimizations) for `tpusim layout hlo` tests.

    $JAX_VENV/bin/python gen_hlo_sample.py > tpu_v5e_mlp.hlo.txt

(JAX_VENV: a Python 3.12 venv with `pip install 'jax[tpu]==0.12.0.1'`.)

A small MLP with awkward sizes (batch 3, hidden 1000, a trailing dim of 1) compiled for
one TPU v5e compile-only device (libtpu 0.0.50); no TPU is needed.
"""
import os
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp
from jax.experimental import topologies
from jax.sharding import SingleDeviceSharding

dev = topologies.get_topology_desc("v5e=1x1", platform="tpu").devices[0]
s = SingleDeviceSharding(dev)

def mlp(x, w1, b1, w2, mask):
    h = jax.nn.relu(x @ w1 + b1)
    return (h @ w2) * mask, jnp.sum(h, axis=1, keepdims=True)

args = [jax.ShapeDtypeStruct(shape, dt, sharding=s) for shape, dt in [
    ((3, 1000), jnp.bfloat16), ((1000, 1000), jnp.bfloat16), ((1000,), jnp.bfloat16),
    ((1000, 1), jnp.bfloat16), ((3, 1), jnp.bfloat16)]]
c = jax.jit(mlp, in_shardings=s, out_shardings=s).lower(*args).compile()
print(c.as_text())

#!/usr/bin/env python3
"""XLA:TPU's own time estimate of one LLaMA-2 70B layer's forward and backward pass
(tokens T on one chip, bf16, attention written out as softmax(QKᵀ)V, no remat), against
its FLOPs at the chip's sustained MXU rate (bench/xla_mxu_rates.py), for v5e, v6e and
v5p: how much slower than its matmul rate XLA's cost model expects each generation to
run a transformer layer. `--no-attention` leaves attention's scores out.

    /tmp/jaxvenv/bin/python bench/xla_layer_ratio.py 4096 [--no-attention]
"""
import jax, jax.numpy as jnp, json, os, sys
from jax.experimental import topologies
from jax.sharding import SingleDeviceSharding
T = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 4096
NO_ATTENTION = "--no-attention" in sys.argv
D, F, H, K, HD = 8192, 28672, 64, 8, 128
S = 4096
def layer(p, x):
    wq, wk, wv, wo, wg, wu, wd, n1, n2 = p
    def rms(x, g): return x * jax.lax.rsqrt(jnp.mean(x.astype(jnp.float32)**2, -1, keepdims=True)).astype(x.dtype) * g
    h = rms(x, n1)
    b = T // S
    q = (h @ wq).reshape(b, S, H, HD); k = (h @ wk).reshape(b, S, K, HD); v = (h @ wv).reshape(b, S, K, HD)
    k = jnp.repeat(k, H // K, axis=2); v = jnp.repeat(v, H // K, axis=2)
    if NO_ATTENTION:
        o = (q + k + v).reshape(T, H * HD)
        x = x + o @ wo
        h = rms(x, n2)
        return x + (jax.nn.silu(h @ wg) * (h @ wu)) @ wd
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(HD).astype(x.dtype)
    mask = jnp.tril(jnp.ones((S, S), bool))
    s = jnp.where(mask, s, -1e9)
    a = jax.nn.softmax(s.astype(jnp.float32), -1).astype(x.dtype)
    o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(T, H * HD)
    x = x + o @ wo
    h = rms(x, n2)
    x = x + (jax.nn.silu(h @ wg) * (h @ wu)) @ wd
    return x
def loss(p, x): return jnp.sum(layer(p, x).astype(jnp.float32))
g = jax.grad(loss)
shapes = [(D, H*HD), (D, K*HD), (D, K*HD), (H*HD, D), (D, F), (D, F), (F, D), (D,), (D,)]
# the sustained rate of each chip, as bench/xla_mxu_rates.py recorded it
RATES = {r["chip"]: r for r in json.load(open(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "data", "llm", "xla-mxu-rates.json")))["rates"]}
for chip in ["v5e", "v6e", "v5p"]:
    topo, peak = RATES[chip]["topology"], RATES[chip]["chip_flops_per_s"]
    d = topologies.get_topology_desc(topo, platform="tpu", chips_per_host_bounds=(1,1,1)).devices[0]
    s = SingleDeviceSharding(d)
    p = [jax.ShapeDtypeStruct(sh, jnp.bfloat16, sharding=s) for sh in shapes]
    x = jax.ShapeDtypeStruct((T, D), jnp.bfloat16, sharding=s)
    c = jax.jit(g, in_shardings=s, out_shardings=s).lower(p, x).compile()
    cost = c.cost_analysis(); cost = cost[0] if isinstance(cost, list) else cost
    import re
    ncat = len(re.findall(r'custom_call_target="ConcatBitcast"', c.as_text()))
    fl = cost["flops"]; opt = cost["optimal_seconds"] + ncat
    print(chip, "flops %.4g" % fl, "opt_s %.4g" % opt, "flops/peak %.4g" % (fl / peak), "ratio %.3f" % (opt / (fl / peak)), "bytes %.4g" % cost.get("bytes accessed", 0))

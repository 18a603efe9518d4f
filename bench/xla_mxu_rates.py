#!/usr/bin/env python3
"""The bf16 matmul rate XLA:TPU's own cost model assumes for each TPU generation.

For each chip, compile (compile only: libtpu from PyPI, no TPU needed) one large bf16
matmul, [16384, 8192] x [8192, 28672], for a one-chip topology and read XLA's
`cost_analysis()["optimal_seconds"]`. A matmul this large is compute-bound on every
generation, so FLOPs / optimal_seconds is the MXU rate the cost model assumes for one
device; times the devices of one chip (v2, v3, v4 and tpu7x show each TensorCore or
chiplet as a device, v5p one megacore device) it is the chip's. `tpusim llm` divides it
by the chip's published peak (`llm::calib::xla_mxu_fraction`).

    /tmp/jaxvenv/bin/python bench/xla_mxu_rates.py > data/llm/xla-mxu-rates.json

(a Python with jax[tpu]: jax 0.10.2, libtpu 0.0.42.1 wrote the shipped file).
"""
import json
import sys

import jax
import jax.numpy as jnp
from jax.experimental import topologies
from jax.sharding import SingleDeviceSharding

M, K, N = 16384, 8192, 28672
# tpusim's chip name -> libtpu's topology of one chip
CHIPS = [("v3", "v3:1x1"), ("v4p", "v4:1x1x1"), ("v5e", "v5e:1x1"), ("v5p", "v5p:1x1x1"),
         ("v6e", "v6e:1x1")]


def main():
    rows = []
    for chip, topology in CHIPS:
        devices = topologies.get_topology_desc(
            topology, platform="tpu", chips_per_host_bounds=(1, 1, 1)).devices
        dev = devices[0]
        s = SingleDeviceSharding(dev)
        a = jax.ShapeDtypeStruct((M, K), jnp.bfloat16, sharding=s)
        b = jax.ShapeDtypeStruct((K, N), jnp.bfloat16, sharding=s)
        compiled = jax.jit(lambda x, y: x @ y, in_shardings=s, out_shardings=s).lower(a, b).compile()
        cost = compiled.cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        flops = 2 * M * K * N
        rows.append({
            "chip": chip, "topology": topology, "device_kind": dev.device_kind,
            "devices_per_chip": len(devices), "matmul": [M, K, N], "flops": flops,
            "optimal_seconds": cost["optimal_seconds"],
            "chip_flops_per_s": flops / cost["optimal_seconds"] * len(devices),
        })
    try:
        import libtpu
        libtpu_version = getattr(libtpu, "__version__", None)
    except ImportError:
        libtpu_version = None
    json.dump({"jax": jax.__version__, "libtpu": libtpu_version, "rates": rows}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

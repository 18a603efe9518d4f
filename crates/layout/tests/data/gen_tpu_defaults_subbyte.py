#!/usr/bin/env python3
"""Copy of crates/layout/tests/data/gen_tpu_defaults.py with more element types and shapes.

Run with jax/jaxlib 0.12.0.1 + libtpu 0.0.50.1 (Python 3.12, venv /tmp/jaxenv2):
    /tmp/jaxenv2/bin/python gen_tpu_defaults_subbyte.py > tpu_defaults_subbyte.jsonl
Optional args: generation names (default: all of GENS).

Same row format as tpu_defaults_golden.jsonl:
  {"tpu": "v5e", "input": "s2[1,1000]", "shape": "...", "bytes": N}
or, when jax/libtpu does not compile the type:
  {"tpu": "v5e", "input": "...", "shape": null, "error": "..."}
Differences from the original script: TYPES lists the types tpu_defaults_golden.jsonl lacks
(plus s4, regenerated as a cross-check) and DIMS adds [3], [7,9,130], [256,1024].
"""
import json, os, re, sys
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
from jax.experimental import topologies
from jax.sharding import SingleDeviceSharding

GENS = {"v2": "v2=1x1", "v3": "v3=1x1", "v4": "v4=1x1x1", "v5e": "v5e=1x1",
        "v5p": "v5p=1x1x1", "v6e": "v6e=1x1", "tpu7x": "tpu7x=1x1x1"}
TYPES = {"s1": jnp.int1, "u1": jnp.uint1, "s2": jnp.int2, "u2": jnp.uint2,
         "s4": jnp.int4, "u4": jnp.uint4, "f4e2m1fn": jnp.float4_e2m1fn,
         "f6e2m3fn": jnp.float6_e2m3fn, "f6e3m2fn": jnp.float6_e3m2fn,
         "f8e5m2": jnp.float8_e5m2, "f8e4m3": jnp.float8_e4m3, "f8e4m3fn": jnp.float8_e4m3fn,
         "f8e4m3b11fnuz": jnp.float8_e4m3b11fnuz, "f8e3m4": jnp.float8_e3m4,
         "f8e5m2fnuz": jnp.float8_e5m2fnuz, "f8e4m3fnuz": jnp.float8_e4m3fnuz,
         "f8e8m0fnu": jnp.float8_e8m0fnu, "u16": jnp.uint16, "u32": jnp.uint32,
         "u64": jnp.uint64, "c64": jnp.complex64, "c128": jnp.complex128}
DIMS = [(), (1,), (3,), (7,), (128,), (200,), (1000,), (2048,), (5000,), (1, 1), (1, 1000),
        (1000, 1), (2, 128), (3, 128), (4, 200), (5, 128), (8, 128), (9, 100), (16, 256),
        (33, 100), (64, 128), (32, 256), (96, 512), (128, 2), (256, 4), (3, 1000),
        (256, 1024), (1000, 1000), (2, 3, 4), (8, 1, 128), (7, 9, 130), (4, 5, 6, 7),
        (1, 1, 1), (1, 7, 1), (10, 1, 1), (2, 1, 300), (64, 64), (40, 129)]

def main():
    only = sys.argv[1:] or list(GENS)
    for gen in only:
        dev = topologies.get_topology_desc(GENS[gen], platform="tpu").devices[0]
        s = SingleDeviceSharding(dev)
        for tname, dt in TYPES.items():
            for dims in DIMS:
                inp = "%s[%s]" % (tname, ",".join(map(str, dims)))
                try:
                    c = (jax.jit(lambda x: jnp.zeros((), jnp.float32), in_shardings=s, out_shardings=s, keep_unused=True)
                         .lower(jax.ShapeDtypeStruct(dims, dt, sharding=s)).compile())
                    line = [l for l in c.as_text().splitlines() if "parameter(0)" in l][-1]
                    m = re.search(r"=\s*(\S+)\s+parameter\(0\)", line)
                    row = {"tpu": gen, "input": inp, "shape": m.group(1),
                           "bytes": c.memory_analysis().argument_size_in_bytes}
                except Exception as e:
                    row = {"tpu": gen, "input": inp, "shape": None, "error": str(e).splitlines()[0][:160]}
                print(json.dumps(row), flush=True)

if __name__ == "__main__":
    main()

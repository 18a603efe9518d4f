#!/usr/bin/env python3
"""Golden TPU default layouts from XLA:TPU (libtpu compile-only devices, no TPU needed).

Run with jax/jaxlib 0.12.0.1 + libtpu 0.0.50 on Python 3.12 (`pip install 'jax[tpu]==0.12.0.1'`):
    python gen_tpu_defaults.py > tpu_defaults_golden.jsonl
    python gen_tpu_defaults.py --more > tpu_defaults_subbyte_golden.jsonl
`--more` takes the types the first set lacks (sub-byte, fp8/fp6/fp4, the other integers
and complex; s4 again as a cross-check) over three more shapes; u1 rows record jax's
refusal. (s1 is left out: jax lowers int1 to pred.) Generation names after the options
restrict the run.

For every TPU generation and every (dtype, dims) below it compiles a function taking one
argument of that shape on one device and records the parameter's shape with the layout
XLA:TPU chose and the argument size in bytes (`memory_analysis().argument_size_in_bytes`):
  {"tpu": "v5e", "input": "bf16[1,1000]", "shape": "bf16[1,1000]{1,0:T(2,128)(2,1)}", "bytes": 4096}
libtpu is used only to generate this data; it is not shipped.
"""
import json, os, re, sys
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
from jax.experimental import topologies
from jax.sharding import SingleDeviceSharding

GENS = {"v2": "v2=1x1", "v3": "v3=1x1", "v4": "v4=1x1x1", "v5e": "v5e=1x1",
        "v5p": "v5p=1x1x1", "v6e": "v6e=1x1", "tpu7x": "tpu7x=1x1x1"}
TYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16, "s8": jnp.int8,
         "u8": jnp.uint8, "pred": jnp.bool_, "s4": jnp.int4, "s32": jnp.int32,
         "s16": jnp.int16, "f8e4m3fn": jnp.float8_e4m3fn, "f64": jnp.float64, "s64": jnp.int64}
DIMS = [(), (1,), (7,), (128,), (200,), (1000,), (2048,), (5000,), (1, 1), (1, 1000),
        (1000, 1), (2, 128), (3, 128), (4, 200), (5, 128), (8, 128), (9, 100), (16, 256),
        (33, 100), (64, 128), (32, 256), (96, 512), (128, 2), (256, 4), (3, 1000),
        (1000, 1000), (2, 3, 4), (8, 1, 128), (4, 5, 6, 7), (1, 1, 1), (1, 7, 1),
        (10, 1, 1), (2, 1, 300), (64, 64), (40, 129)]
MORE_TYPES = {"u1": jnp.uint1, "s2": jnp.int2, "u2": jnp.uint2,
              "s4": jnp.int4, "u4": jnp.uint4, "f4e2m1fn": jnp.float4_e2m1fn,
              "f6e2m3fn": jnp.float6_e2m3fn, "f6e3m2fn": jnp.float6_e3m2fn,
              "f8e5m2": jnp.float8_e5m2, "f8e4m3": jnp.float8_e4m3, "f8e4m3fn": jnp.float8_e4m3fn,
              "f8e4m3b11fnuz": jnp.float8_e4m3b11fnuz, "f8e3m4": jnp.float8_e3m4,
              "f8e5m2fnuz": jnp.float8_e5m2fnuz, "f8e4m3fnuz": jnp.float8_e4m3fnuz,
              "f8e8m0fnu": jnp.float8_e8m0fnu, "u16": jnp.uint16, "u32": jnp.uint32,
              "u64": jnp.uint64, "c64": jnp.complex64, "c128": jnp.complex128}
MORE_DIMS = DIMS[:2] + [(3,)] + DIMS[2:25] + [(256, 1024)] + DIMS[25:28] + [(7, 9, 130)] + DIMS[28:]

def main():
    global TYPES, DIMS
    args = sys.argv[1:]
    if "--more" in args:
        args.remove("--more")
        TYPES, DIMS = MORE_TYPES, MORE_DIMS
    only = args or list(GENS)
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

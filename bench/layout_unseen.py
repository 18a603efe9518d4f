#!/usr/bin/env python3
"""Random shapes never used to build tpusim's layout rules, checked against XLA itself.

Two halves, so that XLA runs in its own venv and the comparison needs only tpusim:

  generate (needs jax[tpu]; JAX_VENV made with `pip install 'jax[tpu]==0.12.0.1'`, Python 3.12):
      $JAX_VENV/bin/python bench/layout_unseen.py generate --seed 7 --n 300 > rows.jsonl
    Draws `n` random (generation, type, dims) and `n` random tiled layouts from `seed`, and
    records what XLA says of each:
      {"kind": "default", "tpu": "v4", "input": "s8[3,1,130]", "shape": "...", "bytes": N}
        the layout XLA:TPU gives a one-device argument (compile-only topology, as
        crates/layout/tests/data/gen_tpu_defaults.py) and memory_analysis()'s size;
      {"kind": "text", "input": "f32[5,9]{0,1:T(2,128)}", "xla": "...", "array_size": N}
        XLA's parser/printer and its ArraySize (CPU cost analysis, as gen_xla_golden.py).

  compare (any Python 3):
      python3 bench/layout_unseen.py compare rows.jsonl --tpusim target/release/tpusim
    Runs `tpusim layout default --json` and `tpusim layout info --json` on the same inputs
    and prints the agreement and every disagreement. Exit code 1 if any row disagrees.

The shapes are drawn, not chosen: ranks 0-5, dims mixing 1, small, odd, prime and
large sizes, every type libtpu lays out, every generation.
"""
import argparse, json, os, random, re, subprocess, sys

GENS = {"v2": "v2=1x1", "v3": "v3=1x1", "v4": "v4=1x1x1", "v5e": "v5e=1x1",
        "v5p": "v5p=1x1x1", "v6e": "v6e=1x1", "tpu7x": "tpu7x=1x1x1"}
TYPE_NAMES = ["f32", "bf16", "f16", "s8", "u8", "pred", "s4", "s32", "s16", "f8e4m3fn",
              "f64", "s64", "s2", "u2", "u4", "f4e2m1fn", "f8e5m2", "u16", "u32", "u64", "c64"]
TEXT_TYPES = ["f32", "bf16", "s8", "s4", "pred", "s32", "f64", "u16", "s2", "c64"]


def draw_dim(rng):
    r = rng.random()
    if r < 0.25:
        return 1
    if r < 0.55:
        return rng.randint(2, 17)
    if r < 0.8:
        return rng.randint(18, 300)
    if r < 0.9:
        return rng.choice([127, 128, 129, 255, 256, 257, 384, 511, 512, 1023, 1024])
    return rng.randint(301, 5000)


def draw_dims(rng, max_elems=1 << 24):
    while True:
        dims = [draw_dim(rng) for _ in range(rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6]))]
        n = 1
        for d in dims:
            n *= d
        if n <= max_elems:
            return dims


def draw_text(rng):
    """A random array shape with a random minor-to-major order and one to three tiles."""
    dims = draw_dims(rng, 1 << 20)
    while not dims:
        dims = draw_dims(rng, 1 << 20)
    rank = len(dims)
    m2m = list(range(rank))
    rng.shuffle(m2m)
    tiles = []
    first_rank = rng.randint(1, min(rank, 3))
    tiles.append([rng.choice([1, 2, 4, 8, 16, 3, 5, 128, 256]) for _ in range(first_rank)])
    if rng.random() < 0.6:
        tiles.append([rng.choice([1, 2, 4, 8, 128]) for _ in range(rng.randint(1, 2))])
    if rng.random() < 0.3:
        tiles.append([rng.choice([2, 4]), 1])
    tile_text = "T" + "".join("(%s)" % ",".join(map(str, t)) for t in tiles)
    t = rng.choice(TEXT_TYPES)
    return "%s[%s]{%s:%s%s}" % (t, ",".join(map(str, dims)), ",".join(map(str, m2m)), tile_text,
                                draw_extras(rng, dims, m2m))


def draw_extras(rng, dims, m2m):
    """Optional layout fields after the tiles: element size, memory space, split configs."""
    out = ""
    if rng.random() < 0.2:
        out += "E(%d)" % rng.choice([1, 2, 4, 8, 16, 32])
    if rng.random() < 0.2:
        out += "S(%d)" % rng.choice([1, 2, 5])
    if rng.random() < 0.3:
        d = rng.randrange(len(dims))
        size = dims[m2m[len(dims) - 1 - d]]
        k = rng.randint(1, 3)
        idx = sorted(set(rng.randint(1, max(1, size + 2)) for _ in range(k)))
        out += "SC(%d:%s)" % (d, ",".join(map(str, idx)))
    return out


def generate(seed, n):
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax, jax.numpy as jnp
    from jax.experimental import topologies
    from jax.sharding import SingleDeviceSharding
    from jax._src.lib import xla_client as xc, _jax
    jax.config.update("jax_enable_x64", True)
    rng = random.Random(seed)
    devices = {g: SingleDeviceSharding(topologies.get_topology_desc(t, platform="tpu").devices[0])
               for g, t in GENS.items()}
    types = {name: getattr(jnp, jnp_name) for name, jnp_name in [
        ("f32", "float32"), ("bf16", "bfloat16"), ("f16", "float16"), ("s8", "int8"),
        ("u8", "uint8"), ("pred", "bool_"), ("s4", "int4"), ("s32", "int32"),
        ("s16", "int16"), ("f8e4m3fn", "float8_e4m3fn"), ("f64", "float64"),
        ("s64", "int64"), ("s2", "int2"), ("u2", "uint2"), ("u4", "uint4"),
        ("f4e2m1fn", "float4_e2m1fn"), ("f8e5m2", "float8_e5m2"), ("u16", "uint16"),
        ("u32", "uint32"), ("u64", "uint64"), ("c64", "complex64")]}
    for _ in range(n):
        gen = rng.choice(list(GENS))
        tname = rng.choice(TYPE_NAMES)
        dims = draw_dims(rng)
        inp = "%s[%s]" % (tname, ",".join(map(str, dims)))
        s = devices[gen]
        row = {"kind": "default", "tpu": gen, "input": inp}
        try:
            c = (jax.jit(lambda x: jnp.zeros((), jnp.float32), in_shardings=s, out_shardings=s,
                         keep_unused=True)
                 .lower(jax.ShapeDtypeStruct(tuple(dims), types[tname], sharding=s)).compile())
            line = [l for l in c.as_text().splitlines() if "parameter(0)" in l][-1]
            row["shape"] = re.search(r"=\s*(\S+)\s+parameter\(0\)", line).group(1)
            row["bytes"] = c.memory_analysis().argument_size_in_bytes
        except Exception as e:
            row["error"] = str(e).splitlines()[0][:160]
        print(json.dumps(row), flush=True)
    client = jax.devices("cpu")[0].client
    for _ in range(n):
        text = draw_text(rng)
        row = {"kind": "text", "input": text}
        try:
            row["xla"] = str(xc.Shape(text))
            m = xc.hlo.hlo_module_from_text(
                "HloModule m\nENTRY e {\n p = %s parameter(0)\n ROOT r = %s negate(p)\n}\n"
                % (row["xla"], row["xla"]))
            size = _jax.hlo_module_cost_analysis(client, m).get("bytes accessed0{}")
            row["array_size"] = int(size) if size is not None else None
        except Exception as e:
            row["error"] = str(e).splitlines()[0][:160]
        print(json.dumps(row), flush=True)


def tpusim_json(binary, args, stdin):
    out = subprocess.run([binary] + args, input=stdin, capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "exit %d" % out.returncode
    return json.loads(out.stdout), None


def compare_defaults(rows, binary):
    bad = []
    by_gen = {}
    for r in rows:
        if "shape" in r:
            by_gen.setdefault(r["tpu"], []).append(r)
    agree = 0
    for gen, group in sorted(by_gen.items()):
        got, err = tpusim_json(binary, ["layout", "default", "-", "--tpu", gen, "--json"],
                               "".join(r["input"] + "\n" for r in group))
        if got is None:
            bad += [(r, "tpusim: " + err) for r in group]
            continue
        for r, g in zip(group, got):
            if g["shape"] == r["shape"] and g["array_size_bytes"] == r["bytes"]:
                agree += 1
            else:
                bad.append((r, "tpusim %s %s B" % (g["shape"], g["array_size_bytes"])))
    return agree, bad


def compare_texts(rows, binary):
    """Agreement on text XLA parses; `on_purpose` holds the split indices our validator
    refuses and XLA's text parser lets through (crates/layout/tests/data/README.md)."""
    agree, bad, on_purpose = 0, [], []
    for r in rows:
        got, err = tpusim_json(binary, ["layout", "info", r["input"], "--json"], None)
        if "error" in r:
            if got is None:
                agree += 1
            else:
                bad.append((r, "tpusim accepts it as %s" % got["shape"]))
        elif r.get("array_size") is None:
            continue
        elif got is None and "split index" in err:
            on_purpose.append(r)
        elif got is None:
            bad.append((r, "tpusim: " + err))
        elif got["array_size_bytes"] == r["array_size"] and got["shape"] == r["xla"]:
            agree += 1
        else:
            bad.append((r, "tpusim %s %s B" % (got["shape"], got["array_size_bytes"])))
    return agree, bad, on_purpose


def compare(path, binary):
    rows = [json.loads(l) for l in open(path)]
    defaults = [r for r in rows if r["kind"] == "default"]
    texts = [r for r in rows if r["kind"] == "text"]
    skipped = sum(1 for r in rows if (r["kind"] == "default" and "error" in r)
                  or (r["kind"] == "text" and "error" not in r and r.get("array_size") is None))
    d_ok, d_bad = compare_defaults(defaults, binary)
    t_ok, t_bad, t_kept = compare_texts(texts, binary)
    print("TPU default layouts: %d of %d agree" % (d_ok, d_ok + len(d_bad)))
    print("tiled layouts' text and ArraySize (refused by both counts as agreeing): %d of %d agree"
          % (t_ok, t_ok + len(t_bad)))
    print("split indices past their dimension, refused on purpose (XLA's parser does not"
          " validate): %d" % len(t_kept))
    print("rows XLA could not lay out or size (skipped): %d" % skipped)
    for r, why in d_bad + t_bad:
        print("DISAGREE %s %s: XLA %s %s B; %s" % (r.get("tpu", "-"), r["input"],
              r.get("shape", r.get("xla")), r.get("bytes", r.get("array_size")), why))
    return 1 if d_bad or t_bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--n", type=int, default=300)
    c = sub.add_parser("compare")
    c.add_argument("rows")
    c.add_argument("--tpusim", default="target/release/tpusim")
    a = p.parse_args()
    if a.cmd == "generate":
        generate(a.seed, a.n)
        return 0
    return compare(a.rows, a.tpusim)


if __name__ == "__main__":
    sys.exit(main())

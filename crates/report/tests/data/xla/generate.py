#!/usr/bin/env python3
"""Reference figures from a real XLA:TPU compile (libtpu, compile-only; no TPU needed).

Compiles, for TPU v5e, v6e and v5p (single-chip topologies), in bf16 with every weight
passed as an ARGUMENT (not a closed-over constant):
  * ResNet-18 and ResNet-50 inference (torchvision architecture, 224x224, NHWC input,
    BatchNorm folded into each conv as a bias: conv + bias, then ReLU; avgpool + fc 1000),
    batch 1 and batch 8;
  * one GPT-2-small transformer block (d_model 768, 12 heads, seq 1024, LayerNorm, causal
    softmax attention, GELU MLP 3072), prefill, batch 1;
and writes, next to this script:
  * xla_reference.json            one record per (model, chip, batch)
  * xla_params_resnet18_v5e_b1.json  every entry parameter of ResNet-18 v5e batch 1 with
                                     XLA's layout and XLA:TPU's own byte size for it
  * resnet18_v5e_b1.hlo.txt       its optimized HLO (if under 2 MB)

Run with the venv described in README.md:  python generate.py   (about 6-8 min on 2 cores)
Weights are never materialised: only shapes (jax.ShapeDtypeStruct) are lowered.
"""

import collections
import json
import math
import os
import re
import sys
import time

os.environ["JAX_PLATFORMS"] = "cpu"  # no TPU here: libtpu serves compile-only devices

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import topologies  # noqa: E402
from jax.experimental.layout import Format  # noqa: E402
from jax.sharding import SingleDeviceSharding  # noqa: E402

# HLO metadata names source files: keep only the base name so the saved HLO does not
# depend on where the repository is checked out
jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPE = jnp.bfloat16
DTYPE_NAME = "bf16"

# chip name as tpusim spells it -> libtpu topology name of one chip
CHIPS = [("v5e", "v5e:1x1"), ("v6e", "v6e:1x1"), ("v5p", "v5p:1x1x1")]


# --------------------------------------------------------------------------- networks


class Params:
    """Collects parameter shapes in call order; the network reads them back by index."""

    def __init__(self):
        self.shapes = []  # (name, shape)

    def add(self, name, shape):
        self.shapes.append((name, tuple(shape)))
        return len(self.shapes) - 1


def conv(x, w, b, stride, pad):
    y = jax.lax.conv_general_dilated(
        x, w, window_strides=(stride, stride), padding=((pad, pad), (pad, pad)),
        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return y + b  # BatchNorm folded into the conv: scale in w, shift in b


def maxpool_3x3_s2(x):
    # torchvision: MaxPool2d(kernel_size=3, stride=2, padding=1)
    return jax.lax.reduce_window(
        x, jnp.array(-jnp.inf, x.dtype), jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
        ((0, 0), (1, 1), (1, 1), (0, 0)))


def resnet(kind):
    """torchvision resnet18 / resnet50 (v1.5: stride on the 3x3 conv of a bottleneck).

    Returns (param shapes, apply(x, *weights), bn_channels) where bn_channels is the number
    of BatchNorm channels (each had weight+bias = 2 parameters unfolded, 1 bias folded)."""
    if kind == "resnet18":
        block, layers, expansion = "basic", [2, 2, 2, 2], 1
    elif kind == "resnet50":
        block, layers, expansion = "bottleneck", [3, 4, 6, 3], 4
    else:
        raise ValueError(kind)
    P = Params()
    ops = []  # the network as a list of closures over parameter indices
    bn = [0]

    def conv_p(name, k, cin, cout):
        bn[0] += cout
        return (P.add(name + ".w", (k, k, cin, cout)), P.add(name + ".b", (cout,)))

    stem = conv_p("conv1", 7, 3, 64)
    blocks = []
    cin = 64
    for li, (n, width) in enumerate(zip(layers, [64, 128, 256, 512])):
        for bi in range(n):
            stride = 2 if (bi == 0 and li > 0) else 1
            name = f"layer{li + 1}.{bi}"
            cout = width * expansion
            if block == "basic":
                convs = [(conv_p(name + ".conv1", 3, cin, width), stride, 1),
                         (conv_p(name + ".conv2", 3, width, width), 1, 1)]
            else:
                convs = [(conv_p(name + ".conv1", 1, cin, width), 1, 0),
                         (conv_p(name + ".conv2", 3, width, width), stride, 1),
                         (conv_p(name + ".conv3", 1, width, cout), 1, 0)]
            down = None
            if stride != 1 or cin != cout:
                down = (conv_p(name + ".downsample", 1, cin, cout), stride, 0)
            blocks.append((convs, down))
            cin = cout
    fc = (P.add("fc.w", (cin, 1000)), P.add("fc.b", (1000,)))

    def apply(x, *w):
        (cw, cb) = stem
        x = jax.nn.relu(conv(x, w[cw], w[cb], 2, 3))
        x = maxpool_3x3_s2(x)
        for convs, down in blocks:
            h = x
            for i, ((iw, ib), s, p) in enumerate(convs):
                h = conv(h, w[iw], w[ib], s, p)
                if i + 1 < len(convs):
                    h = jax.nn.relu(h)
            if down is not None:
                (iw, ib), s, p = down
                x = conv(x, w[iw], w[ib], s, p)
            x = jax.nn.relu(h + x)
        x = jnp.mean(x, axis=(1, 2))  # adaptive avgpool to 1x1, flatten
        return x @ w[fc[0]] + w[fc[1]]

    return P.shapes, apply, bn[0]


def gpt2_block(d=768, heads=12, ff=3072):
    """One GPT-2-small block, pre-LayerNorm, prefill: x[B,S,d] -> x[B,S,d]."""
    P = Params()
    names = {}
    for n, shape in [("ln_1.g", (d,)), ("ln_1.b", (d,)),
                     ("attn.c_attn.w", (d, 3 * d)), ("attn.c_attn.b", (3 * d,)),
                     ("attn.c_proj.w", (d, d)), ("attn.c_proj.b", (d,)),
                     ("ln_2.g", (d,)), ("ln_2.b", (d,)),
                     ("mlp.c_fc.w", (d, ff)), ("mlp.c_fc.b", (ff,)),
                     ("mlp.c_proj.w", (ff, d)), ("mlp.c_proj.b", (d,))]:
        names[n] = P.add(n, shape)

    def ln(x, g, b):
        xf = x.astype(jnp.float32)
        mu = xf.mean(-1, keepdims=True)
        var = ((xf - mu) ** 2).mean(-1, keepdims=True)
        return ((xf - mu) * jax.lax.rsqrt(var + 1e-5)).astype(x.dtype) * g + b

    def apply(x, *w):
        p = {n: w[i] for n, i in names.items()}
        B, S, _ = x.shape
        hd = d // heads
        h = ln(x, p["ln_1.g"], p["ln_1.b"])
        qkv = h @ p["attn.c_attn.w"] + p["attn.c_attn.b"]
        q, k, v = jnp.split(qkv, 3, axis=-1)
        q, k, v = (t.reshape(B, S, heads, hd) for t in (q, k, v))
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(hd)
        mask = jnp.tril(jnp.ones((S, S), bool))
        s = jnp.where(mask, s, jnp.array(-jnp.inf, s.dtype))
        a = jax.nn.softmax(s.astype(jnp.float32), axis=-1).astype(x.dtype)
        o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(B, S, d)
        x = x + (o @ p["attn.c_proj.w"] + p["attn.c_proj.b"])
        h = ln(x, p["ln_2.g"], p["ln_2.b"])
        h = jax.nn.gelu(h @ p["mlp.c_fc.w"] + p["mlp.c_fc.b"], approximate=True)
        return x + (h @ p["mlp.c_proj.w"] + p["mlp.c_proj.b"])

    return P.shapes, apply


# --------------------------------------------------------------------------- HLO helpers

# an HLO instruction line: "%name = <shape> opcode(operands), attrs"
INSTR = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+([\w\-]+)\((.*)$")
COMP = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")


def parse_hlo(text):
    """{computation name: [instruction dicts]}, entry name."""
    comps, entry, cur = {}, None, None
    for line in text.splitlines():
        if cur is None:
            m = COMP.match(line)
            if m and not line.startswith("HloModule"):
                cur = m.group(2)
                comps[cur] = []
                if m.group(1):
                    entry = cur
            continue
        if line.strip() == "}":
            cur = None
            continue
        m = INSTR.match(line)
        if m:
            comps[cur].append({"name": m.group(2), "shape": m.group(3), "op": m.group(4),
                               "rest": m.group(5), "line": line.strip()})
    return comps, entry


def hlo_facts(text):
    comps, entry = parse_hlo(text)
    params = sorted(
        ((int(re.match(r"(\d+)\)", i["rest"]).group(1)), i) for i in comps[entry]
         if i["op"] == "parameter"), key=lambda t: t[0])
    custom = collections.Counter()
    for c in comps.values():
        for i in c:
            if i["op"] == "custom-call":
                t = re.search(r'custom_call_target="([^"]+)"', i["rest"])
                custom[t.group(1) if t else "?"] += 1
    # first convolution in program order: the entry instruction that (through fusions)
    # contains it, and the convolution instruction itself
    def find_conv(cname, seen=()):
        for i in comps.get(cname, []):
            if i["op"] == "convolution":
                return i
            for callee in re.findall(r"calls=%?([\w.\-]+)", i["rest"]):
                if callee not in seen:
                    r = find_conv(callee, seen + (callee,))
                    if r is not None:
                        return r
        return None

    first_conv = first_conv_entry = None
    for i in comps[entry]:
        if i["op"] == "convolution":
            first_conv, first_conv_entry = i, i
            break
        for callee in re.findall(r"calls=%?([\w.\-]+)", i["rest"]):
            r = find_conv(callee, (callee,))
            if r is not None:
                first_conv, first_conv_entry = r, i
                break
        if first_conv is not None:
            break
    n_conv = sum(1 for c in comps.values() for i in c if i["op"] == "convolution")
    n_fusion = sum(1 for i in comps[entry] if i["op"] == "fusion")
    return {
        "entry_parameters": [(k, i["name"], i["shape"]) for k, i in params],
        "custom_calls": dict(custom),
        "first_conv": first_conv,
        "first_conv_entry": first_conv_entry,
        "convolutions": n_conv,
        "entry_fusions": n_fusion,
        "entry_instructions": len(comps[entry]),
    }


# --------------------------------------------------------------------------- compile


def device(topology):
    return topologies.get_topology_desc(
        topology, platform="tpu", chips_per_host_bounds=(1, 1, 1)).devices[0]


def compile_case(fn, arg_shapes, dev):
    s = SingleDeviceSharding(dev)
    args = [jax.ShapeDtypeStruct(sh, DTYPE, sharding=s) for sh in arg_shapes]
    t0 = time.time()
    c = jax.jit(fn, in_shardings=s, out_shardings=s, keep_unused=True).lower(*args).compile()
    return c, time.time() - t0


def xla_param_bytes(fmt, shape, dev):
    """XLA:TPU's own size of one array in the given layout: compile a program whose only
    argument has that shape and layout and read argument_size_in_bytes."""
    s = SingleDeviceSharding(dev)
    c = (jax.jit(lambda x: jnp.zeros((), jnp.float32), in_shardings=Format(fmt.layout, s),
                 out_shardings=s, keep_unused=True)
         .lower(jax.ShapeDtypeStruct(shape, DTYPE, sharding=s)).compile())
    return c.memory_analysis().argument_size_in_bytes


def layout_text(fmt):
    lay = fmt.layout
    return {"major_to_minor": list(lay.major_to_minor),
            "tiling": [list(t) for t in (lay.tiling or ())]}


MEMORY_FIELDS = ["argument_size_in_bytes", "output_size_in_bytes", "temp_size_in_bytes",
                 "generated_code_size_in_bytes", "alias_size_in_bytes",
                 "host_argument_size_in_bytes", "host_output_size_in_bytes",
                 "host_temp_size_in_bytes", "host_generated_code_size_in_bytes",
                 "host_alias_size_in_bytes"]


def record(model, chip, topology, dev, batch, shapes, apply, extra, keep_hlo=None,
           params_file=None):
    input_shape = shapes[0]
    c, secs = compile_case(apply, shapes, dev)
    text = c.as_text()
    mem = c.memory_analysis()
    cost = c.cost_analysis()
    if isinstance(cost, (list, tuple)):  # older jax: one dict per program
        cost = cost[0]
    cost = {k: float(v) for k, v in sorted(cost.items()) if isinstance(v, (int, float))}
    facts = hlo_facts(text)
    ncc = sum(facts["custom_calls"].values())
    nconcat = facts["custom_calls"].get("ConcatBitcast", 0)
    in_fmts = c.input_formats[0]
    out_fmt = c.output_formats
    params = facts["entry_parameters"]
    assert len(params) == len(shapes), (len(params), len(shapes))
    logical_args = sum(math.prod(s) * 2 for s in shapes)
    rec = {
        "model": model,
        "chip": chip,
        "topology": topology,
        "device_kind": dev.device_kind,
        "batch": batch,
        "dtype": DTYPE_NAME,
        "input_shape": list(input_shape),
        "input_dims": extra.pop("input_dims"),
        "param_count": sum(math.prod(s) for s in shapes[1:]),
        **extra,
        "entry_parameter_count": len(params),
        "argument_bytes_logical": logical_args,
        "input_bytes_logical": math.prod(input_shape) * 2,
        "weight_bytes_logical": logical_args - math.prod(input_shape) * 2,
        "memory_analysis": {f: int(getattr(mem, f)) for f in MEMORY_FIELDS if hasattr(mem, f)},
        "cost_analysis": cost,
        "custom_call_count": ncc,
        "custom_call_targets": facts["custom_calls"],
        "concat_bitcast_count": nconcat,
        # optimal_seconds has 1 s taken off per ConcatBitcast custom-call (README.md,
        # "Surprises")
        "optimal_seconds_corrected": cost.get("optimal_seconds", float("nan")) + nconcat,
        "input_parameter_hlo": params[0][2],
        "parameter_names": ["input"] + [n for n, _ in apply.names],
        "parameter_hlo": [p[2] for p in params],
        "input_layout": layout_text(in_fmts[0]),
        "output_hlo": None,
        "first_conv_hlo": facts["first_conv"]["shape"] if facts["first_conv"] else None,
        # jax op it came from (conv_general_dilated; dot_general for the transformer,
        # whose matmuls XLA:TPU rewrites as convolutions)
        "first_conv_op_name": (re.search(r'op_name="([^"]*)"', facts["first_conv"]["line"]).group(1)
                               if facts["first_conv"] and 'op_name="' in facts["first_conv"]["line"]
                               else None),
        "first_conv_entry_op": (facts["first_conv_entry"]["op"]
                                if facts["first_conv_entry"] else None),
        "first_conv_entry_hlo": (facts["first_conv_entry"]["shape"]
                                 if facts["first_conv_entry"] else None),
        "convolutions": facts["convolutions"],
        "entry_fusions": facts["entry_fusions"],
        "entry_instructions": facts["entry_instructions"],
        "compile_seconds": round(secs, 2),
    }
    comps, entry = parse_hlo(text)
    root = [i for i in comps[entry] if i["line"].startswith("ROOT")]
    rec["output_hlo"] = root[0]["shape"] if root else None
    if keep_hlo:
        data = text.encode()
        if len(data) < 2 * 1024 * 1024:
            with open(os.path.join(HERE, keep_hlo), "wb") as f:
                f.write(data)
            rec["hlo_file"] = keep_hlo
        else:
            print(f"  HLO {len(data)} bytes: not kept", file=sys.stderr)
    if params_file:
        rows = []
        for (k, pname, pshape), fmt, shp, (wname, _) in zip(
                params, in_fmts, shapes, [("input", None)] + apply.names):
            rows.append({
                "index": k,
                "name": wname,
                "hlo_name": pname,
                "shape": list(shp),
                "hlo": pshape,
                "layout": layout_text(fmt),
                "bytes_logical": math.prod(shp) * 2,
                "bytes_xla": xla_param_bytes(fmt, shp, dev),
            })
        total = sum(r["bytes_xla"] for r in rows)
        out = {
            "model": model, "chip": chip, "topology": topology, "batch": batch,
            "dtype": DTYPE_NAME, "versions": VERSIONS,
            "argument_size_in_bytes": rec["memory_analysis"]["argument_size_in_bytes"],
            "sum_bytes_xla": total,
            "sum_bytes_logical": sum(r["bytes_logical"] for r in rows),
            "note": "bytes_xla: argument_size_in_bytes of a one-parameter XLA:TPU program "
                    "whose parameter has this shape and layout",
            "parameters": rows,
        }
        with open(os.path.join(HERE, params_file), "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        rec["params_file"] = params_file
    return rec


def versions():
    import importlib.metadata as md
    v = {"jax": jax.__version__}
    for p in ("jaxlib", "libtpu", "numpy", "ml_dtypes"):
        try:
            v[p] = md.version(p)
        except md.PackageNotFoundError:
            v[p] = None
    v["python"] = sys.version.split()[0]
    return v


VERSIONS = None


def main():
    global VERSIONS
    VERSIONS = versions()
    print("versions:", VERSIONS, file=sys.stderr)
    records = []
    nets = {}
    for kind in ("resnet18", "resnet50"):
        shapes, apply, bn = resnet(kind)
        apply.names = shapes
        nets[kind] = (shapes, apply, bn)
    gshapes, gapply = gpt2_block()
    gapply.names = gshapes
    for chip, topo in CHIPS:
        dev = device(topo)
        for kind in ("resnet18", "resnet50"):
            wshapes, apply, bn = nets[kind]
            folded = sum(math.prod(s) for _, s in wshapes)
            for batch in (1, 8):
                shapes = [(batch, 224, 224, 3)] + [s for _, s in wshapes]
                first = chip == "v5e" and kind == "resnet18" and batch == 1
                rec = record(kind, chip, topo, dev, batch, shapes, apply, {
                    "input_dims": "NHWC",
                    "weight_dims": "conv HWIO, fc [in,out]; BatchNorm folded into conv bias",
                    # torchvision: conv weights + BN weight & bias (2/channel) + fc
                    "param_count_bn_unfolded": folded + bn,
                    "bn_channels": bn,
                }, keep_hlo="resnet18_v5e_b1.hlo.txt" if first else None,
                   params_file="xla_params_resnet18_v5e_b1.json" if first else None)
                records.append(rec)
                print(f"{kind} {chip} b{batch}: args {rec['memory_analysis']['argument_size_in_bytes']}"
                      f" flops {rec['cost_analysis'].get('flops'):.4g}"
                      f" opt_s {rec['optimal_seconds_corrected']:.4g}"
                      f" ({rec['compile_seconds']} s)", file=sys.stderr)
        shapes = [(1, 1024, 768)] + [s for _, s in gshapes]
        rec = record("gpt2_block", chip, topo, dev, 1, shapes, gapply, {
            "input_dims": "BSD",
            "weight_dims": "GPT-2 Conv1D [in,out]; c_attn fused QKV",
            "seq": 1024, "d_model": 768, "heads": 12, "d_ff": 3072,
        })
        records.append(rec)
        print(f"gpt2_block {chip}: args {rec['memory_analysis']['argument_size_in_bytes']}"
              f" flops {rec['cost_analysis'].get('flops'):.4g}"
              f" opt_s {rec['optimal_seconds_corrected']:.4g} ({rec['compile_seconds']} s)",
              file=sys.stderr)
    for r in records:
        r.pop("compile_seconds")  # machine-dependent: keep the file reproducible
    out = {
        "generator": "crates/report/tests/data/xla/generate.py",
        "versions": VERSIONS,
        "cases": records,
    }
    with open(os.path.join(HERE, "xla_reference.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

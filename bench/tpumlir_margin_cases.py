#!/usr/bin/env python3
"""Which readers TPU-MLIR 1.30.2 lets share a value in a group cut along H (issue 19).

Each case is a small network: x = a 3x3 conv of the input (32 channels, 64x64), read by
the readers named, their outputs concatenated (with x itself when it is to be stored)
and fed to a 1x1 conv. TPU-MLIR compiles it once on its own (bench/tpumlir_zoo_run.sh);
then each case's group, named by its ops, is forced through LOAD_TPU_GROUP=1 cut in 2 H
slices (the rest of the network global), and the script prints whether tpuc-opt
compiled it or refused it ("local memory allocate failed"). The planner's rule
(crates/planner/src/tpumlir/margins.rs) and its unit tests restate these results.

Usage: TPUMLIR_VENV=VENV python3 bench/tpumlir_margin_cases.py WORKDIR [--chip bm1684x]
Needs onnx and numpy in VENV (TPU-MLIR's own venv has both).
"""
import argparse
import json
import os
import subprocess
import sys

from tpumlir_zoo_compare import force_cache

R = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.environ.get("TPUMLIR_VENV") or sys.exit("set TPUMLIR_VENV")

# network: readers of x. A reader is a conv (kernel, dilation), "gconv" (3x3, 4 groups),
# "pool" (3x3 max pool), "avg" (3x3 average pool), "sig", "leaky", "add" (x + conv3x3(x)),
# "mul" (x * conv3x3(x)), "bn" (a BatchNormalization of x), "deconv" (a 3x3 stride-1
# transposed conv) or "id" (x itself into the concat: x is stored).
NETS = {
    "k1k3": [(1, 1), (3, 1)], "k3k5": [(3, 1), (5, 1)], "d1d2": [(3, 1), (3, 2)],
    "d2k5": [(3, 2), (5, 1)], "d2k1": [(3, 2), (1, 1)], "k7d2": [(7, 1), (3, 2)],
    "k1gconv": [(1, 1), "gconv"], "k1pool": [(1, 1), "pool"], "k3pool": [(3, 1), "pool"],
    "k3id": [(3, 1), "id"], "k3add": ["add"], "k3mul": ["mul"], "k3sig": [(3, 1), "sig"],
    "k1avg": [(1, 1), "avg"], "k3leaky": [(3, 1), "leaky"], "k1k3d2": [(1, 1), (3, 1), (3, 2)],
    "poolstore": ["pool", "id"], "d2store": [(3, 2), "id"], "leakystore": ["leaky", "id"],
    "k3store": [(3, 1), "id"], "k3bn": [(3, 1), "bn"], "k1deconv": [(1, 1), "deconv"],
}

# case: (network, ops of the group by their ONNX output names, what the rule says)
CASES = [
    ("k1k3", ["r0", "r1"], "compiles"), ("k1k3", ["x", "r0", "r1"], "compiles"),
    ("k3k5", ["r0", "r1"], "compiles"), ("k1gconv", ["r0", "r1"], "compiles"),
    ("k3add", ["x", "r0a", "r0"], "compiles"), ("k3mul", ["x", "r0a", "r0"], "compiles"),
    ("k3id", ["x", "r0", "cat"], "compiles"), ("k1k3d2", ["r0", "r1"], "compiles"),
    ("d1d2", ["r0", "r1"], "refused"), ("d2k1", ["x", "r0", "r1"], "refused"),
    ("k7d2", ["r0", "r1"], "refused"), ("k1k3d2", ["x", "r0", "r1", "r2"], "refused"),
    ("k1pool", ["r0", "r1"], "refused"), ("k3sig", ["x", "r0", "r1 cast"], "refused"),
    ("k3leaky", ["r0", "r1"], "refused"), ("k1avg", ["x", "r0", "r1 cast", "r1"], "refused"),
    ("d2k5", ["r0", "r1"], "compiles"), ("k3pool", ["r0", "r1"], "compiles"),
    ("k1avg", ["x", "r0", "r1 cast"], "compiles"),
    ("k3store", ["x", "r0"], "compiles"), ("leakystore", ["x", "r0"], "compiles"),
    ("d2store", ["x", "r0"], "refused"), ("poolstore", ["x", "r0"], "refused"),
    ("k3bn", ["r0", "r1"], "compiles"), ("k1deconv", ["r0", "r1"], "refused"),
]


def write_nets(work):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    np.random.seed(0)
    c, h = 32, 64
    for name, readers in NETS.items():
        nodes, inits = [], []

        def conv(x, cin, cout, k, d, out, g=1):
            w = (np.random.rand(cout, cin // g, k, k).astype(np.float32) - .5) * .1
            inits.append(numpy_helper.from_array(w, out + "_w"))
            nodes.append(helper.make_node("Conv", [x, out + "_w"], [out + "_c"], kernel_shape=[k, k],
                                          dilations=[d, d], pads=[d * (k // 2)] * 4, group=g))
            nodes.append(helper.make_node("Relu", [out + "_c"], [out]))
            return out

        def node(op, ins, out, **kw):
            nodes.append(helper.make_node(op, ins, [out], **kw))
            return out

        x = conv("input", 3, c, 3, 1, "x")
        outs = []
        for i, r in enumerate(readers):
            o = f"r{i}"
            if isinstance(r, tuple):
                outs.append(conv(x, c, c, r[0], r[1], o))
            elif r == "gconv":
                outs.append(conv(x, c, c, 3, 1, o, g=4))
            elif r in ("pool", "avg"):
                op = "MaxPool" if r == "pool" else "AveragePool"
                outs.append(node(op, [x], o, kernel_shape=[3, 3], pads=[1] * 4, strides=[1, 1]))
            elif r == "sig":
                outs.append(node("Sigmoid", [x], o))
            elif r == "leaky":
                outs.append(node("LeakyRelu", [x], o, alpha=0.1))
            elif r == "bn":
                ones, zeros = np.ones(c, np.float32), np.zeros(c, np.float32)
                names = [f"{o}_{k}" for k in ("s", "b", "m", "v")]
                for nm, v in zip(names, (ones * 1.1, zeros + 0.1, zeros, ones)):
                    inits.append(numpy_helper.from_array(v, nm))
                outs.append(node("BatchNormalization", [x] + names, o, epsilon=1e-5))
            elif r == "deconv":
                w = (np.random.rand(c, c, 3, 3).astype(np.float32) - .5) * .1
                inits.append(numpy_helper.from_array(w, o + "_w"))
                outs.append(node("ConvTranspose", [x, o + "_w"], o, kernel_shape=[3, 3], pads=[1] * 4))
            elif r in ("add", "mul"):
                outs.append(node(r.capitalize(), [x, conv(x, c, c, 3, 1, o + "a")], o))
            else:  # "id"
                outs.append(x)
        node("Concat", outs, "cat", axis=1)
        y = conv("cat", c * len(outs), 8, 1, 1, "y")
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, h, h])],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 8, h, h])], inits)
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{work}/{name}.onnx")
    zoo = {n: {"input_shape": [1, 3, h, h], "held_out": False} for n in NETS}
    with open(f"{work}/zoo.json", "w") as f:
        json.dump(zoo, f)


def loc_of(op, locs):
    """TPU-MLIR's loc of the op writing ONNX output `op` ("r1 cast": the cast in front of r1)."""
    if op.endswith(" cast"):
        r = op.split()[0]
        return next(l for l in locs if l.endswith("_f32") and f"{r}_" in l and not l.startswith(r))
    return next(l for l in locs if l.startswith(op + "_") and not l.endswith(("_f32", "_f16")))


def force(work, net, chip, group_ops):
    """Compile `net` with `group_ops` as one group in 2 H slices, the rest global."""
    base = f"{net}_{chip}_f16"
    lg, d = f"{work}/{net}/{chip}_lg", f"{work}/{net}/{chip}_case"
    own = json.load(open(f"{lg}/{base}.layer_group_cache.json"))["subfunc_0"]
    locs = {}
    for g in own["GroupLayer"]:
        for i, loc in enumerate(g["locs"]):
            locs[g["start_idx"] + i] = loc
    for g in own["GlobalLayer"]:
        locs[g["func_idx"]] = g["loc"]
    ret = max(locs)
    idx = sorted(i for i, loc in locs.items() if loc in {loc_of(o, locs.values()) for o in group_ops})
    s, e = idx[0], idx[-1]
    assert idx == list(range(s, e + 1)), f"{net}: the group {group_ops} is not consecutive"
    groups, globals_, k, i = [], [], 0, 0
    while i < ret:
        if i == s:
            groups.append({"base_group_idx": k, "start_idx": s, "end_idx": e, "func_start_idx": s,
                           "func_end_idx": e, "group_cost": 1000, "index": k,
                           "locs": [locs[j] for j in range(s, e + 1)], "shape_secs": [1, 1, 1, 2, 1]})
            i = e + 1
        else:
            globals_.append({"func_idx": i, "group_cost": 1000, "index": k, "loc": locs[i]})
            i += 1
        k += 1
    globals_.append({"func_idx": ret, "group_cost": 0, "index": k, "loc": "func.return"})
    cache = {"opt": 2, "subfunc_0": {"CyclePrefixSum": [], "GlobalLayer": globals_, "GroupLayer": groups,
                                     "subfunc idx": 0}, "total subfunc": 1}
    r = force_cache(lg, d, base, json.dumps(cache, indent=1), VENV)
    if r.returncode == 0:
        return "compiles"
    log = r.stdout + r.stderr
    return "refused" if "local memory allocate failed" in log else "error: " + log.strip().splitlines()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", help="folder for the networks and TPU-MLIR's runs")
    ap.add_argument("--chip", default="bm1684x")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    write_nets(a.work)
    env = dict(os.environ, TPUMLIR_WORK=os.path.abspath(a.work), CHIPS=a.chip)
    subprocess.run(["bash", f"{R}/bench/tpumlir_zoo_run.sh"], env=env, check=True, stdout=subprocess.DEVNULL)
    agree = 0
    for net, ops, rule in CASES:
        seen = force(a.work, net, a.chip, ops)
        agree += seen == rule
        print(f"{net:11} {'+'.join(ops):22} TPU-MLIR {seen:9} rule {rule}{'' if seen == rule else '  DISAGREE'}")
    print(f"{agree} of {len(CASES)} cases agree with the rule on {a.chip}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Print README.md's comparison tables: xla_reference.json against `tpusim report --json`.

    python3 compare.py [PATH/TO/tpusim]        (default: target/release/tpusim)

Standard library only; runs one `tpusim report` per ResNet case (the report has no
built-in transformer block, so gpt2_block is left out).
"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TPUSIM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    HERE, "../../../../../target/release/tpusim")


def report(model, chip, batch):
    out = subprocess.run([TPUSIM, "report", model, "--chip", chip, "--batch", str(batch),
                          "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def xla_name(n):
    """report tensor name (torchvision, BN folded) -> generate.py parameter name"""
    n = re.sub(r"(^|\.)bn(\d)\.bias$", lambda m: f"{m.group(1)}conv{m.group(2)}.bias", n)
    n = n.replace("downsample.0.weight", "downsample.weight")
    n = n.replace("downsample.1.bias", "downsample.bias")
    return n.replace(".weight", ".w").replace(".bias", ".b")


def xla_sizes(c):
    """XLA's byte size of every entry parameter of a case, by generate.py name, using
    `tpusim layout default` (checked equal to XLA:TPU's own sizes; see README.md)."""
    shapes = [re.match(r"(\w+\[[\d,]*\])", h).group(1) for h in c["parameter_hlo"]]
    out = subprocess.run([TPUSIM, "layout", "default", "--tpu", c["chip"], "-"],
                         input="\n".join(shapes) + "\n", check=True, capture_output=True,
                         text=True).stdout.split("\n")
    rows = [o.split() for o in out if o.strip()]
    assert [r[0] for r in rows] == [h.replace("S(1)", "") for h in c["parameter_hlo"]], c
    assert sum(int(r[1]) for r in rows) == c["memory_analysis"]["argument_size_in_bytes"]
    return dict(zip(c["parameter_names"], (int(r[1]) for r in rows)))


def is_weight(t):
    return t["name"].endswith((".weight", ".bias"))


def mb(x):
    return f"{x / 1e6:.2f}"


def main():
    ref = json.load(open(os.path.join(HERE, "xla_reference.json")))
    rows, lay, gaps = [], [], []
    for c in ref["cases"]:
        if not c["model"].startswith("resnet"):
            continue
        r = report(c["model"], c["chip"], c["batch"])
        t = {x["name"]: x for x in r["tensors"]}
        w = sum(x["bytes_stored"] for x in r["tensors"] if is_weight(x))
        wl = sum(x["bytes_logical"] for x in r["tensors"] if is_weight(x))
        inp = t["input"]["bytes_stored"]
        ma, ca = c["memory_analysis"], c["cost_analysis"]
        xs = c["optimal_seconds_corrected"]
        rows.append(
            f"| {c['model']} | {c['chip']} | {c['batch']} "
            f"| {mb(ma['argument_size_in_bytes'])} | {mb(w + inp)} ({mb(w)} + {mb(inp)}) "
            f"| {mb(c['weight_bytes_logical'])} / {mb(wl)} "
            f"| {ca['flops'] / 1e9:.3f} | {r['flops'] / 1e9:.3f} | {ca['flops'] / r['flops']:.3f} "
            f"| {mb(ca['bytes accessed'])} | {mb(r['bytes_moved'])} "
            f"| {ca['bytes accessed'] / r['bytes_moved']:.2f} "
            f"| {mb(ma['temp_size_in_bytes'])} "
            f"| {xs * 1e6:.1f} | {r['total_time_s'] * 1e6:.1f} | {xs / r['total_time_s']:.2f} "
            f"| {ca['bytes accessed'] / xs / 1e12:.3f} |")
        xs_ = xla_sizes(c)
        diff = {}
        for x in r["tensors"]:
            if is_weight(x) or x["name"] == "input":
                d = x["bytes_stored"] - xs_[xla_name(x["name"])]
                if d:
                    diff[x["name"]] = d
        total = w + inp - ma["argument_size_in_bytes"]
        assert total == sum(diff.values()), (total, diff)
        gaps.append(f"| {c['model']} | {c['chip']} | {c['batch']} | {total:,} | "
                    + ", ".join(f"{k} {v:+,}" for k, v in diff.items()) + " |")
        if c["batch"] in (1, 8) and c["chip"] == "v5e":
            lay.append(f"| {c['model']} b{c['batch']} | `{c['input_parameter_hlo']}` "
                       f"| `{t['input']['layout']}` ({mb(t['input']['bytes_stored'])} MB) |")
    print("| model | chip | batch | XLA argument MB | report weights+input MB (w + in) "
          "| logical weight MB XLA / report | XLA GFLOP | report GFLOP | ratio "
          "| XLA bytes accessed MB | report bytes moved MB | ratio | XLA temp MB "
          "| XLA optimal µs (corr.) | report total µs | ratio | XLA bytes/opt s, TB/s |")
    print("|" + "---|" * 17)
    print("\n".join(rows))
    print()
    print("| model | chip | batch | report − XLA argument bytes | by tensor (report − XLA) |")
    print("|---|---|---|---|---|")
    print("\n".join(gaps))
    print()
    print("| case (v5e) | XLA input parameter | report input tensor |")
    print("|---|---|---|")
    print("\n".join(lay))


if __name__ == "__main__":
    main()

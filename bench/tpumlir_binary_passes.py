#!/usr/bin/env python3
"""The TIU cycles of every element-wise op TPU-MLIR 1.30.2 ran inside a layer group of the
transformer zoo, against one EU pass over what it writes: the measurement behind the
planner's binary rule (`nd_plan::Ctx::binary_passes`).

    python3 bench/tpumlir_binary_passes.py [--ops OP,...] [--rows] ZOO_DIR [ZOO_DIR ...]

Each ZOO_DIR is a folder of bench/tpumlir_tx_zoo.py compiled by bench/tpumlir_zoo_run.sh
(ONNX_SUFFIX=_static): zoo.json and <net>/<chip>_lg/ with the final MLIR and codegen's
compiler_profile_0.txt (TPU-MLIR's own grouping). A profile command is named after its
op's line in the final MLIR; a grouped op's line carries its slices (`ginfo`: n_slice,
c_slice, h_slice, w_slice, d_slice).

For each grouped op: `passes`, the sum over its slices of N · ⌈C / lanes⌉ · ⌈H·W / EU⌉
(EU_NUM at the width of what it writes), `ratio`, its AR commands' cycles over
`passes`, and `tiu_ratio`, all its TIU commands' cycles over `passes`; an operand
broadcast to every lane first shows as LANE_BC cycles (`lane_bc`). Printed: per chip, op,
whether its smallest slice holds one N, and whether it has LANE_BC, the count and the
median, least and most ratio (and of `tiu_ratio`); with --rows, every op as one JSON
line. --ops picks the op types (default: the element-wise ones and copies below; a
softmax's many commands are read with `--ops Softmax`, by `tiu_ratio`).
"""
import collections
import glob
import json
import re
import statistics
import sys

LANES = {"bm1684x": 64, "bm1688": 32}
EU_BYTES = {"bm1684x": 64, "bm1688": 16}
OPS = ("Add", "Mul", "Sub", "MulConst", "AddConst", "SubConst", "Slice", "Concat", "Cast", "Reshape")
CMD = re.compile(r'(\w+?)_(\d+)\|(\w+)\|s:(\d+)\|b:\d+\|g:\d+\|e:(\d+)\|t:(\d+)')
SLICES = ("n_slice", "c_slice", "d_slice", "h_slice", "w_slice")


def tiu_cycles(profile):
    """TIU cycles by command kind, by the op's line in the final MLIR."""
    by_line = collections.defaultdict(collections.Counter)
    for text in open(profile):
        for m in CMD.finditer(text):
            if "GDMA" not in m.group(3):
                by_line[int(m.group(2))][m.group(3)] += int(m.group(6))
    return by_line


def passes(slices, chip, bits):
    """EU passes over every slice of a grouped op writing `bits`-bit elements."""
    eu = EU_BYTES[chip] * 8 // bits
    total = 0
    for n in slices["n_slice"]:
        for c in slices["c_slice"]:
            for d in slices["d_slice"]:
                for h in slices["h_slice"]:
                    for w in slices["w_slice"]:
                        total += n * d * -(-c // LANES[chip]) * -(-(h * w) // eu)
    return total


def grouped_ops(run_dir, chip, ops=OPS):
    """One record per grouped element-wise op of one compiled network."""
    finals = glob.glob(f"{run_dir}/*_final.mlir")
    if not finals:
        return
    lines = open(finals[0]).read().split("\n")
    for line_no, kinds in tiu_cycles(f"{run_dir}/compiler_profile_0.txt").items():
        text = lines[line_no - 1]
        ginfo = re.search(r"ginfo = #tpu.lg<([^>]*)>", text)
        op = re.search(r'"tpu\.(\w+)"', text)
        if not ginfo or not op or op.group(1) not in ops:
            continue
        slices = {k: [int(x) for x in re.search(k + r" = \[([^\]]*)\]", ginfo.group(1)).group(1).split(",")
                      if x.strip()] for k in SLICES}
        out = re.findall(r"tensor<([^>]*)>", text)[-1]
        p = passes(slices, chip, 32 if out.endswith("f32") else 16)
        yield {"chip": chip, "op": op.group(1), "out": out, "line": line_no, "n_slice": slices["n_slice"],
               "passes": p, "ar": kinds.get("AR", 0), "lane_bc": kinds.get("LANE_BC", 0),
               "ratio": kinds.get("AR", 0) / max(p, 1), "tiu_ratio": sum(kinds.values()) / max(p, 1)}


def main():
    args, ops = [], OPS
    argv = iter(sys.argv[1:])
    for a in argv:
        if a == "--ops":
            ops = tuple(next(argv, "").split(","))
        elif a != "--rows":
            args.append(a)
    if not args:
        sys.exit(__doc__)
    seen, table = set(), collections.defaultdict(list)
    for root in args:
        for net in json.load(open(f"{root}/zoo.json")):
            for chip in LANES:
                if (net, chip) in seen:
                    continue
                seen.add((net, chip))
                for rec in grouped_ops(f"{root}/{net}/{chip}_lg", chip, ops):
                    rec["net"] = net
                    if "--rows" in sys.argv:
                        print(json.dumps(rec))
                    one_n = "one N" if min(rec["n_slice"]) == 1 else "N >= 2"
                    key = (chip, rec["op"], one_n, "LANE_BC" if rec["lane_bc"] else "")
                    table[key].append((rec["ratio"], rec["tiu_ratio"]))
    for (chip, op, one_n, bc), pairs in sorted(table.items()):
        ar, tiu = [p[0] for p in pairs], [p[1] for p in pairs]
        print(f"{chip:8s} {op:9s} {one_n:7s} {bc:7s} {len(pairs):4d} ops  AR / passes: median "
              f"{statistics.median(ar):.2f}, least {min(ar):.2f}, most {max(ar):.2f}; all TIU / passes: "
              f"median {statistics.median(tiu):.2f}, least {min(tiu):.2f}, most {max(tiu):.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Every LayerNorm and RMSNorm TPU-MLIR 1.30.2 runs inside its own layer groups of the
transformer zoo, with its slices and TIU cycles, as CSV (the planner's
`tests/data/tpumlir_norms.csv`, read by `tests/local_norm.rs`).

    python3 bench/tpumlir_norm_rows.py ZOO_DIR [ZOO_DIR...] > norms.csv

Each ZOO_DIR is a folder of bench/tpumlir_tx_zoo.py compiled by bench/tpumlir_zoo_run.sh
(ONNX_SUFFIX=_static): zoo.json (with each network's held_out flag) and
<net>/<chip>_lg/ with the final MLIR and codegen's compiler_profile_0.txt. A network in
several folders is read from the first. One row per distinct norm of a network: chip,
split (tuned or held_out), net, op, n_slices and c_slices (space-separated, as the
group's ginfo lists them), width (the norm's axis), cycles (the sum of its TIU
commands over every slice).
"""
import glob
import json
import re
import sys

CMD = r"\|(\w+)\|s:\d+\|b:\d+\|g:\d+\|e:\d+\|t:(\d+)"


def norms(d):
    """(op, n_slices, c_slices, width, cycles) of every grouped norm in compile dir `d`."""
    final = glob.glob(f"{d}/*_final.mlir")
    if not final:
        return
    lines = open(final[0]).read().split("\n")
    prof = open(f"{d}/compiler_profile_0.txt").read()
    grouped = False
    for i, line in enumerate(lines, 1):
        if '"tpu.Group"' in line:
            grouped = True
        if '"tpu.Yield"' in line:
            grouped = False
        m = re.search(r'"tpu\.(LayerNorm|RMSNorm)"', line)
        if not (grouped and m):
            continue
        op = m.group(1)
        cycles = sum(int(t) for _, t in re.findall(rf"{op}_{i}{CMD}", prof))
        sl = {k: re.search(rf"{k} = \[([0-9, ]*)\]", line).group(1).replace(",", "")
              for k in ("n_slice", "c_slice")}
        dims = re.findall(r"tensor<([0-9x]+)x(?:f16|f32)", line[line.rfind(": ("):])[0]
        yield op, sl["n_slice"], sl["c_slice"], int(dims.split("x")[-1]), cycles


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("chip,split,net,op,n_slices,c_slices,width,cycles")
    seen, rows = set(), set()
    for zoo_dir in sys.argv[1:]:
        zoo = json.load(open(f"{zoo_dir}/zoo.json"))
        for net in sorted(zoo):
            if net in seen:
                continue
            split = "held_out" if zoo[net].get("held_out") else "tuned"
            found = False
            for chip in ("bm1684x", "bm1688"):
                for op, ns, cs, width, cycles in norms(f"{zoo_dir}/{net}/{chip}_lg"):
                    found = True
                    row = (chip, split, net, op, ns, cs, width, cycles)
                    if row not in rows:
                        rows.add(row)
                        print(",".join(str(x) for x in row))
            if found:
                seen.add(net)


if __name__ == "__main__":
    main()

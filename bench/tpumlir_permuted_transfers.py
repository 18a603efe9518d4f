#!/usr/bin/env python3
"""Every permuted load and store of TPU-MLIR 1.30.2's own groups in the transformer zoo
(a `tpu.Load` or `tpu.Store` whose input and output shapes are the same dims in another
order: a permute fused into the transfer), with its GDMA commands' cycles and bytes.

    python3 bench/tpumlir_permuted_transfers.py CHIP ZOO_DIR [ZOO_DIR...]

Each ZOO_DIR is a folder of bench/tpumlir_tx_zoo.py compiled by bench/tpumlir_zoo_run.sh
(ONNX_SUFFIX=_static). Prints one line per transfer: network, Load or Store, the shapes,
the transfer's C slice and [(cycles, bytes)] of each of its commands.
"""
import glob
import re
import sys


def transfers(d):
    final = glob.glob(f"{d}/*_final.mlir")
    if not final:
        return
    prof = open(f"{d}/compiler_profile_0.txt").read()
    for i, line in enumerate(open(final[0]).read().split("\n"), 1):
        kind = "Load" if '"tpu.Load"' in line else "Store" if '"tpu.Store"' in line else None
        if kind is None:
            continue
        shapes = re.findall(r'tensor<([0-9x]+)x(?:f16|f32)', line[line.rfind(": ("):])
        if len(shapes) < 2:
            continue
        a, b = shapes[0], shapes[-1]
        if a == b or sorted(a.split("x")) != sorted(b.split("x")):
            continue
        cmds = re.findall(rf"{kind}_{i}\|GDMA_\w+\|s:\d+\|b:\d+\|g:\d+\|e:\d+\|t:(\d+)\|dr:\d\|sz:(\d+)", prof)
        c = re.search(r'c_slice = \[([0-9, ]+)\]', line).group(1)
        yield kind, a, b, c, [(int(t), int(z)) for t, z in cmds]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    chip = sys.argv[1]
    for root in sys.argv[2:]:
        for d in sorted(glob.glob(f"{root}/*/{chip}_lg")):
            for kind, a, b, c, cmds in transfers(d):
                print(d.split("/")[-2], kind, a, "->", b, "c_slice", c, "cmds", cmds)


if __name__ == "__main__":
    main()

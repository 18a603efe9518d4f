#!/usr/bin/env python3
"""Regenerate SCALE-Sim 3.0.0 golden reports for tpusim-systolic's compat tests.

Usage (SCALESIM_VENV: a virtualenv with `pip install scalesim==3.0.0`):
    $SCALESIM_VENV/bin/python bench/systolic_make_goldens.py [CASE ...]

For every case it writes, under crates/systolic/tests/data/scalesim/<case>/:
    scale.cfg, topology.csv, layout.csv   the inputs given to SCALE-Sim
    COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv, DETAILED_ACCESS_REPORT.csv
                                          the reports SCALE-Sim wrote, copied verbatim
and a line in cases.txt: "<case> <gemm|conv>".
Runs SCALE-Sim through its Python API with save_disk_space=True (no address traces),
which computes the same reports as `python -m scalesim.scale ... -i gemm|conv`.
"""
import os, shutil, sys, tempfile, time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "crates/systolic/tests/data/scalesim")

GEMM = {
    8: [("g1", 30, 20, 19), ("g2", 16, 8, 8)],
    32: [("g1", 100, 70, 90), ("g2", 64, 32, 40)],
    128: [("g1", 200, 300, 150), ("g2", 128, 128, 128)],
}
# name, ifmap h, ifmap w, filter h, filter w, channels, filters, stride
CONV = {
    8: [("c1", 10, 10, 3, 3, 3, 8, 1), ("c2", 9, 9, 3, 3, 4, 6, 2), ("DP1", 8, 8, 3, 3, 3, 1, 1)],
    32: [("c1", 20, 20, 3, 3, 16, 40, 2), ("c2", 14, 14, 1, 1, 64, 32, 1)],
    128: [("c1", 30, 30, 3, 3, 32, 64, 1), ("c2", 16, 16, 5, 5, 8, 150, 3)],
}

# Small-SRAM cases: operands larger than half their SRAM, so SCALE-Sim refetches
# (CALC and USER) and stalls the array (USER). name: (array, dataflow, mode, Bandwidth,
# (ifmap, filter, ofmap) SRAM kB, kind, topology rows)
SMALL = {
    "refetch_conv_8_ws_calc": (8, "ws", "CALC", 4, (1, 1, 1), "conv",
                               [("c1", 12, 12, 3, 3, 6, 16, 1), ("c2", 11, 11, 3, 3, 5, 12, 2)]),
    "refetch_gemm_32_os_calc": (32, "os", "CALC", 10, (2, 2, 2), "gemm",
                                [("g1", 100, 70, 90), ("g2", 64, 32, 40)]),
    "stall_gemm_8_ws_user": (8, "ws", "USER", 4, (1, 1, 1), "gemm",
                             [("s1", 40, 24, 36), ("s2", 20, 9, 30)]),
    "stall_conv_8_is_user": (8, "is", "USER", 4, (1, 1, 1), "conv",
                             [("c1", 12, 12, 3, 3, 6, 16, 1), ("c2", 11, 11, 3, 3, 5, 12, 2)]),
    # operands fit; the 1 kB OFMAP buffer draining 1 word/cycle stalls the array
    "stall_ofmap_gemm_16_os_user": (16, "os", "USER", 1, (64, 64, 1), "gemm",
                                    [("g1", 34, 61, 22), ("g2", 25, 40, 30)]),
}

def cfg_text(run, rows, cols, df, mode, bw, sram_kb):
    return f"""[general]
run_name = {run}

[architecture_presets]
ArrayHeight:    {rows}
ArrayWidth:     {cols}
IfmapSramSzkB:    {sram_kb[0]}
FilterSramSzkB:   {sram_kb[1]}
OfmapSramSzkB:    {sram_kb[2]}
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Bandwidth : {bw}
Dataflow : {df}
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[layout]
IfmapCustomLayout: False
IfmapSRAMBankBandwidth: 10
IfmapSRAMBankNum: 10
IfmapSRAMBankPort: 2
FilterCustomLayout: False
FilterSRAMBankBandwidth: 10
FilterSRAMBankNum: 10
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport : false
SparseRep : ellpack_block
OptimizedMapping : false
BlockSize : 8
RandomNumberGeneratorSeed : 40

[run_presets]
InterfaceBandwidth: {mode}
UseRamulatorTrace: False
"""

def cases():
    out = []
    for a in (8, 32, 128):
        for df in ("ws", "os", "is"):
            out.append((f"gemm_{a}_{df}_calc", a, df, "CALC", 10, "gemm"))
            out.append((f"conv_{a}_{df}_calc", a, df, "CALC", 10, "conv"))
        for df in ("ws", "os", "is"):
            if a <= 32:
                out.append((f"gemm_{a}_{df}_user", a, df, "USER", 4, "gemm"))
                out.append((f"conv_{a}_{df}_user", a, df, "USER", 4, "conv"))
    for name, (a, df, mode, bw, sram, kind, rows) in SMALL.items():
        out.append((name, a, df, mode, bw, kind, sram, rows))
    return out

def topo_text(kind, a, rows=None):
    if kind == "gemm":
        rows = rows or GEMM[a]
        lines = ["Layer,M,N,K,"] + [f"{n},{m},{nn},{k}," for (n, m, nn, k) in rows]
    else:
        rows = rows or CONV[a]
        lines = ["Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,"]
        lines += [",".join(str(x) for x in row) + "," for row in rows]
    return "\n".join(lines) + "\n"

LAYOUT = "Layer name,IFMAP Height Intraline Factor,IFMAP Width Intraline Factor,\n"

def run_case(name, a, df, mode, bw, kind, sram=(64, 64, 32), rows=None):
    from scalesim.scale_sim import scalesim
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "scale.cfg"), "w") as f:
        f.write(cfg_text(name, a, a, df, mode, bw, sram))
    with open(os.path.join(d, "topology.csv"), "w") as f:
        f.write(topo_text(kind, a, rows))
    with open(os.path.join(d, "layout.csv"), "w") as f:
        f.write(LAYOUT)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.time()
        s = scalesim(save_disk_space=True, verbose=False,
                     config=os.path.join(d, "scale.cfg"),
                     topology=os.path.join(d, "topology.csv"),
                     layout=os.path.join(d, "layout.csv"),
                     input_type_gemm=(kind == "gemm"))
        s.run_scale(top_path=tmp)
        dt = time.time() - t0
        for rep in ("COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv", "DETAILED_ACCESS_REPORT.csv"):
            shutil.copy(os.path.join(tmp, name, rep), os.path.join(d, rep))
    print(f"{name}: {dt:.1f} s", flush=True)

def main():
    want = set(sys.argv[1:])
    done = []
    for c in cases():
        if want and c[0] not in want:
            continue
        run_case(*c)
        done.append(c)
    # cases.txt lists every case directory present, so partial reruns keep it whole
    rows = []
    for c in cases():
        if os.path.exists(os.path.join(OUT, c[0], "COMPUTE_REPORT.csv")):
            rows.append(f"{c[0]} {c[5]}")
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(rows) + "\n")

if __name__ == "__main__":
    main()

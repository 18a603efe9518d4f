#!/usr/bin/env python3
"""Regenerate SCALE-Sim 3.0.0 golden reports for tpusim-systolic's compat tests.

Usage (SCALESIM_VENV: a virtualenv with `pip install scalesim==3.0.0 "numpy<2.4"`;
SCALE-Sim 3.0.0 stops on numpy 2.4, which no longer converts a one-element array with
int(); the goldens were made with numpy 2.3.5, tqdm 4.70.1, configparser 7.3.0):
    $SCALESIM_VENV/bin/python bench/systolic_make_goldens.py [CASE ...]

For every case it writes, under crates/systolic/tests/data/scalesim/<case>/:
    scale.cfg, topology.csv, layout.csv   the inputs given to SCALE-Sim
    COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv, DETAILED_ACCESS_REPORT.csv
                                          the reports SCALE-Sim wrote, copied verbatim
    SPARSE_REPORT.csv                     likewise, for the sparse cases
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

def cfg_text(run, rows, cols, df, mode, bw, sram_kb, opts=None):
    o = dict(CFG_DEFAULTS, **(opts or {}))
    return f"""[general]
run_name = {run}

[architecture_presets]
ArrayHeight:    {rows}
ArrayWidth:     {cols}
IfmapSramSzkB:    {sram_kb[0]}
FilterSramSzkB:   {sram_kb[1]}
OfmapSramSzkB:    {sram_kb[2]}
IfmapOffset:    {o["IfmapOffset"]}
FilterOffset:   {o["FilterOffset"]}
OfmapOffset:    20000000
Bandwidth : {bw}
Dataflow : {df}
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[layout]
IfmapCustomLayout: {o["IfmapCustomLayout"]}
IfmapSRAMBankBandwidth: {o["IfmapSRAMBankBandwidth"]}
IfmapSRAMBankNum: {o["IfmapSRAMBankNum"]}
IfmapSRAMBankPort: {o["IfmapSRAMBankPort"]}
FilterCustomLayout: {o["FilterCustomLayout"]}
FilterSRAMBankBandwidth: {o["FilterSRAMBankBandwidth"]}
FilterSRAMBankNum: {o["FilterSRAMBankNum"]}
FilterSRAMBankPort: {o["FilterSRAMBankPort"]}

[sparsity]
SparsitySupport : {o["SparsitySupport"]}
SparseRep : {o["SparseRep"]}
OptimizedMapping : {o["OptimizedMapping"]}
BlockSize : {o["BlockSize"]}
RandomNumberGeneratorSeed : {o["RandomNumberGeneratorSeed"]}

[run_presets]
InterfaceBandwidth: {mode}
UseRamulatorTrace: False
"""

# Every config key the cases vary, with the value the base cases use.
CFG_DEFAULTS = {
    "IfmapOffset": 0, "FilterOffset": 10000000,
    "IfmapCustomLayout": "False", "IfmapSRAMBankBandwidth": 10, "IfmapSRAMBankNum": 10,
    "IfmapSRAMBankPort": 2, "FilterCustomLayout": "False", "FilterSRAMBankBandwidth": 10,
    "FilterSRAMBankNum": 10, "FilterSRAMBankPort": 2,
    "SparsitySupport": "false", "SparseRep": "ellpack_block", "OptimizedMapping": "false",
    "BlockSize": 8, "RandomNumberGeneratorSeed": 40,
}

def sparse(rep, optimized="false", block=8, seed=40):
    return {"SparsitySupport": "true", "SparseRep": rep, "OptimizedMapping": optimized,
            "BlockSize": block, "RandomNumberGeneratorSeed": seed}

# Sparsity: N:M sparse layers (the topology's last column; a row without one is 1:1),
# SparseRep csr/csc/ellpack_block, OptimizedMapping off (the topology's N:M) and on
# (ws: a random N per filter column from numpy's legacy MT19937, seeded per layer).
GEMM_SPARSE = [("s1", 30, 20, 19, "2:4"), ("s2", 16, 8, 8, "1:4"), ("s3", 12, 10, 13, "3:4"),
               ("s4", 9, 7, 11)]
CONV_SPARSE = [("c1", 10, 10, 3, 3, 3, 8, 1, "2:4"), ("c2", 9, 9, 3, 3, 4, 6, 2, "1:2"),
               ("c3", 8, 8, 2, 2, 5, 9, 1, "3:8")]
# name: (array, dataflow, mode, Bandwidth, SRAM kB, kind, topology rows, config options)
SPARSITY = {
    "sparse_gemm_8_ws_calc_ellpack": (8, "ws", "CALC", 10, (64, 64, 32), "gemm", GEMM_SPARSE,
                                      sparse("ellpack_block")),
    "sparse_gemm_8_ws_user_csr": (8, "ws", "USER", 4, (64, 64, 32), "gemm", GEMM_SPARSE,
                                  sparse("csr")),
    "sparse_gemm_8_os_calc_csc": (8, "os", "CALC", 10, (64, 64, 32), "gemm", GEMM_SPARSE,
                                  sparse("csc")),
    "sparse_conv_8_is_user_ellpack": (8, "is", "USER", 4, (64, 64, 32), "conv", CONV_SPARSE,
                                      sparse("ellpack_block")),
    "sparse_conv_8_ws_calc_csr": (8, "ws", "CALC", 10, (64, 64, 32), "conv", CONV_SPARSE,
                                  sparse("csr")),
    # operands over half their 1 kB SRAMs: refetched (CALC) and stalled (USER)
    "sparse_small_gemm_8_ws_calc": (8, "ws", "CALC", 4, (1, 1, 1), "gemm",
                                    [("g1", 60, 24, 40, "2:4"), ("g2", 40, 20, 30, "1:2")],
                                    sparse("ellpack_block")),
    "sparse_small_conv_8_os_user": (8, "os", "USER", 4, (1, 1, 1), "conv",
                                    [("c1", 12, 12, 3, 3, 6, 16, 1, "2:4")], sparse("csc")),
    "sparse_opt_gemm_8_ws_calc_b4": (8, "ws", "CALC", 10, (64, 64, 32), "gemm", GEMM_SPARSE,
                                     sparse("ellpack_block", "true", 4, 40)),
    "sparse_opt_gemm_8_ws_user_b8": (8, "ws", "USER", 4, (64, 64, 32), "gemm",
                                     [("o1", 20, 30, 40, "2:4"), ("o2", 10, 12, 17)],
                                     sparse("csr", "true", 8, 7)),
    "sparse_opt_conv_8_ws_calc_b2": (8, "ws", "CALC", 10, (64, 64, 32), "conv", CONV_SPARSE,
                                     sparse("csc", "true", 2, 123)),
    "sparse_opt_small_gemm_8_ws_calc": (8, "ws", "CALC", 4, (1, 1, 1), "gemm",
                                        [("g1", 60, 24, 40, "2:4")],
                                        sparse("ellpack_block", "true", 8, 2024)),
    # an odd BlockSize that divides the two tiles (2R = 12): ⌊B/2⌋ = 1 weight per block
    "sparse_opt_gemm_6_ws_user_b3": (6, "ws", "USER", 4, (64, 64, 32), "gemm",
                                     [("o1", 20, 12, 17, "2:4"), ("o2", 9, 5, 7)],
                                     sparse("csr", "true", 3, 5)),
    # optimized mapping on os/is runs only where the compressed FILTER keeps K rows (K = BlockSize)
    "sparse_opt_gemm_8_os_calc_k8": (8, "os", "CALC", 10, (64, 64, 32), "gemm",
                                     [("k1", 20, 12, 8, "1:4")], sparse("csr", "true", 8, 5)),
}

# Custom layouts: the layout file's first row orders the IFMAP and FILTER in SRAM lines of
# …SRAMBankBandwidth words, spread over …SRAMBankNum banks with …SRAMBankPort ports each
# (USER mode; CALC mode only checks the layout).
LAYOUT_HEADER = ("Layer name, IFMAP Height Intraline Factor, IFMAP Width Intraline Factor, "
                 "Filter Height Intraline Factor, Filter Width Intraline Factor, Channel "
                 "Intraline Factor, Num Filter Intraline Factor, IFMAP Height Intraline Order, "
                 "IFMAP Width Intraline Order, Channel Intraline Order, IFMAP Height Interline "
                 "Order, IFMAP Width Interline Order, Channel Interline Order, Num Filter "
                 "Intraline Order, Channel Intraline Order, Filter Height Intraline Order, Filter "
                 "Width Intraline Order, Num Filter Interline Order, Channel Interline Order, "
                 "Filter Height Interline Order, Filter Width Interline Order, \n")

def layout_text(*rows):
    return LAYOUT_HEADER + "".join(", ".join(str(x) for x in r) + ",\n" for r in rows)

def banks(ifmap_bw, ifmap_num, ifmap_port, filter_bw, filter_num, filter_port,
          ifmap=True, filt=True):
    return {"IfmapCustomLayout": str(ifmap), "IfmapSRAMBankBandwidth": ifmap_bw,
            "IfmapSRAMBankNum": ifmap_num, "IfmapSRAMBankPort": ifmap_port,
            "FilterCustomLayout": str(filt), "FilterSRAMBankBandwidth": filter_bw,
            "FilterSRAMBankNum": filter_num, "FilterSRAMBankPort": filter_port}

# conv layout: IFMAP lines of 2x2 pixels x 4 channels, FILTER lines of 4 filters x 4 channels
CONV_LAYOUT = layout_text(("L0", 2, 2, 1, 1, 4, 4, 0, 1, 2, 4, 5, 3, 3, 2, 1, 0, 4, 5, 6, 7))
# GEMM layout (IFMAP M x K, FILTER N x K): K-major lines
GEMM_LAYOUT = layout_text(("L0", 2, 8, 1, 8, 1, 2, 2, 1, 0, 5, 4, 3, 3, 0, 1, 2, 7, 4, 5, 6))
LAYOUTS = {
    "layout_conv_8_os_user": (8, "os", "USER", 4, (64, 64, 32), "conv",
                              [("c1", 10, 10, 3, 3, 8, 8, 1), ("c2", 9, 9, 3, 3, 4, 6, 2)],
                              banks(16, 2, 1, 16, 4, 1), CONV_LAYOUT),
    "layout_conv_8_ws_user": (8, "ws", "USER", 4, (64, 64, 32), "conv",
                              [("c1", 10, 10, 3, 3, 8, 8, 1), ("c2", 9, 9, 3, 3, 4, 6, 2)],
                              banks(32, 4, 2, 16, 2, 1), CONV_LAYOUT),
    "layout_gemm_8_ws_user": (8, "ws", "USER", 4, (64, 64, 32), "gemm",
                              [("g1", 30, 20, 19), ("g2", 16, 8, 8)],
                              banks(16, 4, 1, 16, 8, 1), GEMM_LAYOUT),
    "layout_gemm_8_is_user_ifmap": (8, "is", "USER", 4, (64, 64, 32), "gemm",
                                    [("g1", 30, 20, 19), ("g2", 16, 8, 8)],
                                    banks(20, 2, 1, 10, 10, 2, filt=False), GEMM_LAYOUT),
    "layout_gemm_8_os_calc": (8, "os", "CALC", 10, (64, 64, 32), "gemm",
                              [("g1", 30, 20, 19), ("g2", 16, 8, 8)],
                              banks(16, 4, 1, 16, 8, 1), GEMM_LAYOUT),
    # operands over half their 1 kB SRAMs: refetched line by line, stalls counted once
    "layout_small_gemm_8_ws_user": (8, "ws", "USER", 4, (1, 1, 1), "gemm",
                                    [("s1", 40, 24, 36), ("s2", 20, 9, 30)],
                                    banks(16, 2, 1, 16, 4, 2), GEMM_LAYOUT),
    "layout_sparse_gemm_8_ws_user": (8, "ws", "USER", 4, (64, 64, 32), "gemm", GEMM_SPARSE,
                                     dict(banks(16, 4, 1, 16, 8, 1), **sparse("csr")),
                                     GEMM_LAYOUT),
}

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
    for name, (a, df, mode, bw, sram, kind, rows, opts) in SPARSITY.items():
        out.append((name, a, df, mode, bw, kind, sram, rows, opts))
    for name, (a, df, mode, bw, sram, kind, rows, opts, layout) in LAYOUTS.items():
        out.append((name, a, df, mode, bw, kind, sram, rows, opts, layout))
    return out

def topo_text(kind, a, rows=None):
    """A row may end with an N:M sparsity ratio (SCALE-Sim's last column)."""
    if kind == "gemm":
        rows = rows or GEMM[a]
        ratio = any(len(r) > 4 for r in rows)
        lines = ["Layer,M,N,K," + ("Sparsity," if ratio else "")]
        lines += [",".join(str(x) for x in row) + "," for row in rows]
    else:
        rows = rows or CONV[a]
        ratio = any(len(r) > 8 for r in rows)
        lines = ["Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,"
                 + ("Sparsity," if ratio else "")]
        lines += [",".join(str(x) for x in row) + "," for row in rows]
    return "\n".join(lines) + "\n"

LAYOUT = "Layer name,IFMAP Height Intraline Factor,IFMAP Width Intraline Factor,\n"

def run_case(name, a, df, mode, bw, kind, sram=(64, 64, 32), rows=None, opts=None,
             layout=LAYOUT):
    from scalesim.scale_sim import scalesim
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "scale.cfg"), "w") as f:
        f.write(cfg_text(name, a, a, df, mode, bw, sram, opts))
    with open(os.path.join(d, "topology.csv"), "w") as f:
        f.write(topo_text(kind, a, rows))
    with open(os.path.join(d, "layout.csv"), "w") as f:
        f.write(layout)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.time()
        s = scalesim(save_disk_space=True, verbose=False,
                     config=os.path.join(d, "scale.cfg"),
                     topology=os.path.join(d, "topology.csv"),
                     layout=os.path.join(d, "layout.csv"),
                     input_type_gemm=(kind == "gemm"))
        s.run_scale(top_path=tmp)
        dt = time.time() - t0
        for rep in ("COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv", "DETAILED_ACCESS_REPORT.csv",
                    "SPARSE_REPORT.csv"):
            if os.path.exists(os.path.join(tmp, name, rep)):
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

"""Configs SCALE-Sim 3.0.0 cannot read, and its reason for each (the last line of its
traceback), as test vectors for `--scalesim-compat`'s refusals.

Usage: python3 bench/scalesim_unreadable.py PYTHON_WITH_SCALESIM > crates/systolic/tests/data/scalesim/unreadable.jsonl
(PYTHON_WITH_SCALESIM: a Python with `pip install scalesim==3.0.0`). Each variant starts
from the golden case gemm_8_os_calc (or its USER twin) and breaks one thing.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "crates", "systolic", "tests", "data", "scalesim")


def variants(base: str):
    lines = base.splitlines()

    def without(pred):
        return "\n".join(l for l in lines if not pred(l)) + "\n"

    def replaced(key, value):
        return "\n".join(re.sub(rf"^({key}\s*[:=]).*$", rf"\g<1> {value}", l) for l in lines) + "\n"

    def drop_section(name):
        out, skip = [], False
        for l in lines:
            if l.strip().startswith("["):
                skip = l.strip() == f"[{name}]"
            if not skip:
                out.append(l)
        return "\n".join(out) + "\n"

    yield "no layout section", drop_section("layout")
    yield "no sparsity section", drop_section("sparsity")
    yield "no run_presets section", drop_section("run_presets")
    yield "no IfmapSRAMBankNum", without(lambda l: l.startswith("IfmapSRAMBankNum"))
    yield "no FilterSRAMBankPort", without(lambda l: l.startswith("FilterSRAMBankPort"))
    yield "no ReadRequestBuffer", without(lambda l: l.startswith("ReadRequestBuffer"))
    yield "no OfmapOffset", without(lambda l: l.startswith("OfmapOffset"))
    yield "no UseRamulatorTrace", without(lambda l: l.startswith("UseRamulatorTrace"))
    yield "no SparsitySupport", without(lambda l: l.startswith("SparsitySupport"))
    yield "IfmapOffset not a number", replaced("IfmapOffset", "0x10")
    yield "WriteRequestBuffer not a number", replaced("WriteRequestBuffer", "32.0")
    yield "IfmapCustomLayout not a boolean", replaced("IfmapCustomLayout", "maybe")
    yield "IfmapSRAMBankPort not a number", replaced("IfmapSRAMBankPort", "two")
    # configparser's section names are case-sensitive (its option names are not)
    yield "Layout section capitalised", base.replace("[layout]", "[Layout]")
    yield "General section capitalised", base.replace("[general]", "[General]")
    user = replaced("InterfaceBandwidth", "USER")
    yield "USER without Bandwidth", "\n".join(l for l in user.splitlines() if not l.startswith("Bandwidth")) + "\n"
    yield "USER with a bad Bandwidth", "\n".join(re.sub(r"^(Bandwidth\s*[:=]).*$", r"\1 10, x", l) for l in user.splitlines()) + "\n"


def main() -> None:
    python = sys.argv[1]
    case = os.path.join(DATA, "gemm_8_os_calc")
    base = open(os.path.join(case, "scale.cfg")).read()
    for name, text in variants(base):
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "scale.cfg")
            open(cfg, "w").write(text)
            r = subprocess.run(
                [python, "-m", "scalesim.scale", "-c", cfg, "-t", os.path.join(case, "topology.csv"),
                 "-l", os.path.join(case, "layout.csv"), "-p", os.path.join(d, "out"), "-i", "gemm"],
                capture_output=True, text=True, timeout=120, cwd=d,
            )
            last = (r.stderr.strip().splitlines() or [""])[-1]
            print(json.dumps({"case": name, "exit": r.returncode, "reason": last if r.returncode else None, "cfg": text}))


if __name__ == "__main__":
    main()

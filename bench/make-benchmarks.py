#!/usr/bin/env python3
"""Regenerate BENCHMARKS.md: its header and summary table (everything before the first
per-area section) are kept as written; below them every bench/RESULTS-<area>.md follows,
its headings demoted one level (lines inside code fences untouched).
Usage: python3 bench/make-benchmarks.py   (from anywhere; rewrites BENCHMARKS.md)"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORDER = ["layout", "chip", "lmem", "systolic", "graph", "plan", "report", "hardening", "python", "llm"]


def demote(text):
    out, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#+ ", line):
            line = "#" + line
        out.append(line)
    return "\n".join(out).rstrip() + "\n"


def main():
    path = os.path.join(ROOT, "BENCHMARKS.md")
    head = open(path, encoding="utf-8").read()
    first = open(os.path.join(ROOT, "bench", f"RESULTS-{ORDER[0]}.md"), encoding="utf-8").readline()
    cut = head.index("\n#" + first.rstrip("\n"))
    parts = [head[: cut + 1].rstrip() + "\n"]
    for area in ORDER:
        with open(os.path.join(ROOT, "bench", f"RESULTS-{area}.md"), encoding="utf-8") as f:
            parts.append(demote(f.read()))
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    os.replace(tmp, path)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Golden data from XLA's own shape parser/printer and ArraySize.

Run with jax/jaxlib 0.12.0.1 (Python 3.12), from this folder (JAX_VENV: a Python 3.12 venv with `pip install 'jax[tpu]==0.12.0.1'`):
    $JAX_VENV/bin/python gen_xla_golden.py < xla_text_inputs.txt > xla_text_golden.jsonl

For every input line (comments skipped) it writes one JSON object:
  input        the text given to XLA
  xla          str(xla_client.Shape(input)), or null when XLA's parser rejects it
  error        XLA's parse error (first line), or null
  array_size   bytes XLA's CPU cost analysis reports for a parameter of this shape
               ("bytes accessed0{}", ArraySize semantics), or null when XLA cannot
               compute it (not an array, CHECK failure, unparseable module).
Everything runs in a worker subprocess that is restarted when XLA aborts (CHECK-fails)
on a shape; that shape is recorded with error "XLA aborted (CHECK failure)".
"""
import json, subprocess, sys

WORKER = r'''
import sys, json, os
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax
from jax._src.lib import xla_client as xc, _jax
client = jax.devices("cpu")[0].client
for line in sys.stdin:
    t = line.rstrip("\n")
    row = {"input": t, "xla": None, "error": None, "array_size": None}
    try:
        row["xla"] = str(xc.Shape(t))
    except Exception as e:
        msg = [l for l in str(e).splitlines() if "error" in l.lower()]
        row["error"] = (msg[-1] if msg else str(e).splitlines()[0])[:200]
    print(json.dumps(row), flush=True)
    s = row["xla"]
    size = None
    if s and not s.startswith(("(", "token", "opaque")):
        try:
            m = xc.hlo.hlo_module_from_text("HloModule m\nENTRY e {\n p = %s parameter(0)\n ROOT r = %s negate(p)\n}\n" % (s, s))
            r = _jax.hlo_module_cost_analysis(client, m).get("bytes accessed0{}")
            size = int(r) if r is not None else None
        except Exception:
            pass
    print(json.dumps(size), flush=True)
'''

def run(inputs):
    todo = list(inputs)
    while todo:
        p = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        got = 0
        for s in todo:
            p.stdin.write(s + "\n"); p.stdin.flush()
            line = p.stdout.readline()
            if not line:
                # XLA aborted the process (a CHECK failure) while parsing this shape.
                print(json.dumps({"input": s, "xla": None, "error": "XLA aborted (CHECK failure)", "array_size": None}))
                got += 1
                break
            row = json.loads(line)
            size = p.stdout.readline()
            # An empty line: XLA aborted while computing the size (array_size null).
            row["array_size"] = json.loads(size) if size else None
            print(json.dumps(row))
            got += 1
            if not size:
                break
        p.stdin.close(); p.wait()
        todo = todo[got:]

def main():
    inputs = [l.rstrip("\n") for l in sys.stdin if l.strip() and not l.startswith("#")]
    run(inputs)

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Extract TPU-MLIR's per-tensor local-memory sizes from compiled `*_final.mlir` files.

Every op inside a `tpu.Group` carries `ginfo = #tpu.lg<out_addr, out_size, eu_align,
n_slice, c_slice, d_slice, h_slice, w_slice, ...>`: out_size is the bytes per lane TPU-MLIR
reserves for the op's result (Arch::get_tensor_lmem_bytes), out_addr its start address in
the lane. We write one CSV row per op with the largest slice of each dimension (the one the
buffer is sized for), so tpusim-lmem's test can recompute out_size.

Usage: python bench/lmem_tpumlir_vectors.py OUT.csv MODEL=path/to/X_final.mlir [...]
"""
import re
import sys

GINFO = re.compile(r'"tpu\.(\w+)".*?ginfo = #tpu\.lg<([^>]*)>.*?->\s*tensor<([0-9x]+)x(\w+)[,>]')
FIELDS = ("out_addr", "out_size", "eu_align", "n_slice", "c_slice", "d_slice", "h_slice", "w_slice")


def parse_lg(text):
    out = {}
    for key in FIELDS:
        m = re.search(rf"\b{key} = (\[[^\]]*\]|\w+)", text)
        val = m.group(1)
        if val.startswith("["):
            nums = [int(x) for x in val.strip("[]").split(",") if x.strip()]
            out[key] = max(nums) if nums else 1
        elif val in ("true", "false"):
            out[key] = val == "true"
        else:
            out[key] = int(val)
    return out


def main():
    out_path, models = sys.argv[1], sys.argv[2:]
    rows = []
    for spec in models:
        model, path = spec.split("=", 1)
        for line_no, line in enumerate(open(path), 1):
            m = GINFO.search(line)
            if not m:
                continue
            op, lg, dims, dtype = m.group(1), parse_lg(m.group(2)), m.group(3), m.group(4)
            rows.append((model, line_no, op, dtype, int(lg["eu_align"]), lg["n_slice"], lg["c_slice"],
                         lg["d_slice"], lg["h_slice"], lg["w_slice"], lg["out_addr"], lg["out_size"], dims))
    with open(out_path, "w") as f:
        f.write("# TPU-MLIR 1.30.2 bm1684x F16 local-memory tensors (bench/lmem_tpumlir_vectors.py)\n")
        f.write("model,line,op,dtype,eu_align,n,c,d,h,w,out_addr,out_size,tensor\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    print(f"{len(rows)} rows -> {out_path}")


if __name__ == "__main__":
    main()

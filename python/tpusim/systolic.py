"""Systolic arrays: GEMMs on an R×C array, analytic or cycle-accurate on real numpy
operands, and the analytic model over many configurations at once."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _native
from ._native import BadInput
from ._record import Record

__all__ = ["gemm", "run", "RunSummary", "analytic_many"]


class RunSummary(Record):
    """``tpusim systolic gemm --json``: cycles, compute_cycles, weight_load_cycles, macs,
    utilization, folds, SRAM/DRAM traffic, m, k, n, groups, rows, cols, dataflow,
    double_buffer, mode."""


def gemm(
    m: int, k: int, n: int, rows: int = 128, cols: int = 128, dataflow: str = "ws", double_buffer: bool = True
) -> RunSummary:
    """One GEMM C[M,N] = A[M,K]·W[K,N] timed by the analytic model."""
    return RunSummary._from_json(
        _native.systolic_gemm_json(int(m), int(k), int(n), int(rows), int(cols), dataflow, bool(double_buffer))
    )


def run(
    a: Any, w: Any, rows: int = 128, cols: int = 128, dataflow: str = "ws", double_buffer: bool = True
) -> tuple[np.ndarray, RunSummary]:
    """Run the cycle-accurate array on real operands: the product (int8 → int32,
    float32 → float32) and the run's measured summary. The GIL is released."""
    a = np.asarray(a)
    w = np.asarray(w)
    if a.ndim != 2 or w.ndim != 2:
        raise BadInput(f"a and w must be matrices; got {a.ndim}-D and {w.ndim}-D")
    if a.dtype == np.int8 and w.dtype == np.int8:
        f = _native.systolic_run_i8
    elif a.dtype == np.float32 and w.dtype == np.float32:
        f = _native.systolic_run_f32
    else:
        raise BadInput(f"operands must be both int8 or both float32; got {a.dtype} and {w.dtype}")
    c, doc = f(np.ascontiguousarray(a), np.ascontiguousarray(w), int(rows), int(cols), dataflow, bool(double_buffer))
    return c, RunSummary._from_json(doc)


def analytic_many(m: Any, k: Any, n: Any, rows: Any, cols: Any, dataflow: str = "ws", double_buffer: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Cycles and utilization of many GEMM/array configurations (equal-length columns),
    on every core. An invalid row gets 0 cycles and NaN utilization."""
    cols_in = [np.ascontiguousarray(np.asarray(x, dtype=np.uint64).reshape(-1)) for x in (m, k, n, rows, cols)]
    return _native.systolic_sweep(*cols_in, dataflow, bool(double_buffer))

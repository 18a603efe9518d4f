"""``tpusim.sweep``: a product of choices, evaluated in-process on every core or on a Ray
cluster, as a DataFrame and, when asked, a Parquet dataset of one file per chunk.

Every row carries ``key``, a hash of its configuration and the tpusim version; a chunk's
file is named by its rows' keys, so an interrupted sweep into the same ``out`` folder
skips the chunks already written.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
from typing import Any, Callable, Iterable, Optional

import numpy as np

from . import _native, systolic
from ._native import BadInput
from ._report import ask

REPORT_KEYS = ("model", "chip", "batch", "dtype", "resolution", "vmem", "input_dtype", "fuse", "chip_file", "phase", "seq", "context")
SYSTOLIC_KEYS = ("m", "k", "n", "rows", "cols", "dataflow", "double_buffer", "mode", "clock_hz", "seed", "sram_kb", "bandwidth", "bank_bandwidth")
DEFAULT_SRAM_KB = (64, 64, 32)  # IFMAP, FILTER, OFMAP KiB of mode="scalesim", as SCALE-Sim's sample configs
LLM_KEYS = {
    "serve": ("model", "chip", "slice", "batch", "context", "weights", "kv_dtype", "prefill_tokens", "mfu", "tp", "dp", "tp_d", "slices", "ideal", "calib"),
    "train": ("model", "chip", "slice", "slices", "batch_tokens", "seq", "tokens", "degrees", "remat", "checkpoints_per_layer",
              "param_dtype", "optimizer_bytes", "microbatches", "full_attention", "capacity_factor", "dcn_fsdp", "mfu", "ideal", "calib"),
}
# what a serve or train row reports: (column, field of the --json document); the first is total_time_s
LLM_COLUMNS = {
    "serve": (("total_time_s", "decode_step_s"), ("decode_tokens_per_s", None), ("decode_tokens_per_s_per_chip", None),
              ("prefill_s", None), ("fits", None), ("bytes_per_chip", None), ("min_slice", None), ("max_batch", None),
              ("bound", None), ("sharding", None)),
    "train": (("total_time_s", "step_s"), ("mfu", None), ("tokens_per_s", None), ("total_s", None), ("fits", None),
              ("memory_per_chip_bytes", None), ("bound", None), ("sharding", None)),
}
DEFAULT_CLOCK_HZ = 1e9  # a systolic sweep's cycles are turned into seconds at this clock unless clock_hz is given


def _kind(space: dict[str, list[Any]], llm: Optional[str] = None) -> str:
    keys = set(space)
    if llm is not None:
        if llm not in LLM_KEYS:
            raise BadInput(f"llm sweep verb '{llm}': use serve or train")
        if "model" not in keys:
            raise BadInput(f"an llm {llm} sweep needs 'model' (keys: {', '.join(LLM_KEYS[llm])})")
        bad = keys - set(LLM_KEYS[llm])
        kind = llm
    elif "model" in keys:
        bad = keys - set(REPORT_KEYS)
        kind = "report"
    elif {"m", "k", "n"} <= keys:
        bad = keys - set(SYSTOLIC_KEYS)
        kind = "systolic"
    else:
        raise BadInput(
            "a sweep space needs 'model' (reports: "
            + ", ".join(REPORT_KEYS)
            + ") or 'm', 'k' and 'n' (systolic GEMMs: "
            + ", ".join(SYSTOLIC_KEYS)
            + ")"
        )
    if bad:
        raise BadInput(f"unknown sweep key(s) {sorted(bad)} for a {kind} sweep")
    return kind


def _choices(space: dict[str, Any]) -> dict[str, list[Any]]:
    if not isinstance(space, dict) or not space:
        raise BadInput("space must be a non-empty dict of lists, e.g. {'model': ['resnet18'], 'batch': [1, 8]}")
    out = {}
    for k, v in space.items():
        vs = list(v) if isinstance(v, (list, tuple, range, np.ndarray)) else [v]
        if not vs:
            raise BadInput(f"sweep key '{k}' has no values")
        out[str(k)] = vs
    return out


def _explicit(rows: Any) -> list[dict[str, Any]]:
    """An explicit list of configurations (dicts), checked."""
    if not rows or not all(isinstance(r, dict) and r for r in rows):
        raise BadInput("an explicit sweep is a non-empty list of non-empty dicts, e.g. [{'model': 'resnet18', 'batch': 8}]")
    return [{str(k): v for k, v in r.items()} for r in rows]


def _key(row: dict[str, Any]) -> str:
    text = json.dumps({"tpusim": _native.__version__, "row": row}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise BadInput(f"chip dict value {v!r} is not a TOML scalar or list")


def chip_toml(d: dict[str, Any]) -> str:
    """A chip given as a dict (the TOML schema's fields) as TOML text."""
    top = [f"{k} = {_toml_value(v)}" for k, v in d.items() if not isinstance(v, dict)]
    for k, v in d.items():
        if isinstance(v, dict):
            top.append(f"\n[{k}]")
            top.extend(f"{kk} = {_toml_value(vv)}" for kk, vv in v.items())
    return "\n".join(top) + "\n"


def _report_ask(row: dict[str, Any]) -> dict[str, Any]:
    r = dict(row)
    chip = r.pop("chip", "v5e")
    if isinstance(chip, dict):
        if "name" not in chip:
            raise BadInput("a chip dict needs a 'name'")
        r["chip_file"] = None
        a = ask(chip=str(chip["name"]), **{k if k != "resolution" else "resolution_": v for k, v in r.items()})
        a["chip_toml"] = (chip_toml(chip), f"chip dict '{chip['name']}'")
        return a
    if isinstance(chip, str) and chip.endswith(".toml"):
        r["chip_file"] = chip
        chip = os.path.splitext(os.path.basename(chip))[0]
    return ask(chip=chip, **{k if k != "resolution" else "resolution_": v for k, v in r.items()})


def _report_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # a row whose inputs are wrong keeps its error; the others still run
    asks: list[Optional[dict[str, Any]]] = []
    errors: list[Optional[str]] = []
    for r in rows:
        try:
            asks.append(_report_ask(r))
            errors.append(None)
        except BadInput as e:
            asks.append(None)
            errors.append(str(e))
    ran = iter(json.loads(_native.sweep_reports(json.dumps([a for a in asks if a is not None]))))
    out = []
    for a, err in zip(asks, errors):
        out.append(next(ran) if a is not None else {"total_time_s": None, "error": err})
    return out


def _systolic_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[Optional[dict[str, Any]]] = [None] * len(rows)
    groups: dict[tuple[str, bool, str], list[int]] = {}
    for i, r in enumerate(rows):
        key = (str(r.get("dataflow", "ws")), bool(r.get("double_buffer", True)), str(r.get("mode", "analytic")))
        groups.setdefault(key, []).append(i)
    for (df, db, mode), idx in groups.items():
        if mode != "scalesim" and any(k in rows[i] for i in idx for k in ("sram_kb", "bandwidth", "bank_bandwidth")):
            raise BadInput("sram_kb and bandwidth apply to mode='scalesim' (the analytic and cycle models have no SRAM limit)")
        col = lambda name, default: [int(rows[i].get(name, default)) for i in idx]  # noqa: E731
        if mode == "analytic":
            cyc, util = systolic.analytic_many(col("m", 0), col("k", 0), col("n", 0), col("rows", 128), col("cols", 128), df, db)
            res = list(zip(cyc.tolist(), util.tolist()))
        elif mode == "cycle":
            res = []
            for i in idx:
                r = rows[i]
                rng = np.random.default_rng(int(r.get("seed", 0)))
                a = rng.integers(-128, 128, (int(r["m"]), int(r["k"])), dtype=np.int8)
                w = rng.integers(-128, 128, (int(r["k"]), int(r["n"])), dtype=np.int8)
                _, s = systolic.run(a, w, int(r.get("rows", 128)), int(r.get("cols", 128)), df, db)
                res.append((s.cycles, s.utilization))
        elif mode == "scalesim":
            _scalesim_rows(rows, idx, df, out)
            continue
        else:
            raise BadInput(f"systolic sweep mode '{mode}': use analytic, cycle or scalesim")
        for i, (c, u) in zip(idx, res):
            clock = float(rows[i].get("clock_hz", DEFAULT_CLOCK_HZ))
            ok = c > 0
            out[i] = {
                "total_time_s": c / clock if ok else None,
                "cycles": c if ok else None,
                "utilization": u if ok else None,
                "error": None if ok else "invalid configuration (a zero size)",
            }
    return [o for o in out if o is not None]


def _sram_kb(v: Any) -> list[int]:
    """``sram_kb``: one size for the IFMAP, FILTER and OFMAP SRAMs, or three."""
    sizes = list(v) if isinstance(v, (list, tuple)) else [v, v, v]
    if len(sizes) != 3 or any(isinstance(x, bool) or int(x) != x or x < 1 for x in sizes):
        raise BadInput(f"sram_kb {v!r}: one size in KiB, or three (IFMAP, FILTER, OFMAP)")
    return [int(x) for x in sizes]


def _scalesim_rows(rows: list[dict[str, Any]], idx: list[int], df: str, out: list[Optional[dict[str, Any]]]) -> None:
    """SCALE-Sim 3.0.0's numbers (``--scalesim-compat``) for the GEMM rows ``idx``:
    SRAM sizes ``sram_kb``, USER-mode ``bandwidth`` and ``bank_bandwidth`` words/cycle
    (CALC without ``bandwidth``)."""
    asks, errors = [], {}
    for i in idx:
        r = rows[i]
        try:
            bw = r.get("bandwidth")
            asks.append({"m": int(r["m"]), "k": int(r["k"]), "n": int(r["n"]), "rows": int(r.get("rows", 128)),
                         "cols": int(r.get("cols", 128)), "dataflow": df,
                         "sram_kb": _sram_kb(r.get("sram_kb", DEFAULT_SRAM_KB)),
                         "bandwidth": None if bw is None else int(bw),
                         "bank_bandwidth": int(r.get("bank_bandwidth", 10))})
        except BadInput as e:
            errors[i] = str(e)
    ran = iter(json.loads(_native.scalesim_sweep(json.dumps(asks))))
    for i in idx:
        res = {"error": errors[i]} if i in errors else next(ran)
        clock = float(rows[i].get("clock_hz", DEFAULT_CLOCK_HZ))
        c = res.get("cycles")
        out[i] = {"total_time_s": None if c is None else c / clock, **{k: res.get(k) for k in
                  ("cycles", "stall_cycles", "cycles_incl_prefetch", "utilization", "dram_ifmap_reads",
                   "dram_filter_reads", "dram_ofmap_writes", "error")}}


def _llm_rows(verb: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from .llm import _calls as llm

    run = llm.serve if verb == "serve" else llm.train
    out = []
    for r in rows:
        try:
            doc = run(**r).to_dict()
            rec = {col: doc.get(field or col) for col, field in LLM_COLUMNS[verb]}
            rec["sharding"] = json.dumps(rec["sharding"], sort_keys=True)
            rec["error"] = None
        except BadInput as e:
            rec = {col: None for col, _ in LLM_COLUMNS[verb]}
            rec["error"] = str(e)
        out.append(rec)
    return out


def evaluate(kind: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Result columns of each row, in order (``total_time_s`` first; ``error`` names a
    row that could not run)."""
    if kind in LLM_KEYS:
        return _llm_rows(kind, rows)
    return _report_rows(rows) if kind == "report" else _systolic_rows(rows)


def _table(kind: str, rows: list[dict[str, Any]], keys: list[str]) -> Any:
    import pandas as pd

    results = evaluate(kind, rows)
    recs = []
    for r, res in zip(rows, results):
        shown = lambda v: json.dumps(v, sort_keys=True) if isinstance(v, (dict, list, tuple)) else v  # noqa: E731
        rec = {k: shown(r[k]) if k in r else None for k in keys}
        rec["key"] = _key(r)
        # a figure never overwrites a key column (a report's `dtype` is the one asked)
        rec.update({k: v for k, v in res.items() if k not in rec})
        recs.append(rec)
    df = pd.DataFrame.from_records(recs)
    front = keys + ["key", "total_time_s"]
    return df[front + [c for c in df.columns if c not in front]]


def _chunks(rows: list[dict[str, Any]], size: int) -> list[list[dict[str, Any]]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def _chunk_name(chunk: list[dict[str, Any]]) -> str:
    h = hashlib.sha256("".join(_key(r) for r in chunk).encode()).hexdigest()[:20]
    return f"part-{h}.parquet"


def _write_atomic(df: Any, path: str) -> None:
    d, base = os.path.split(path)
    tmp = os.path.join(d, f".{base}.{os.getpid()}.tmp")
    try:
        df.to_parquet(tmp, engine="pyarrow", index=False)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _progress(total: int, show: Optional[bool]) -> Callable[[int], None]:
    if show is None:
        show = sys.stderr.isatty() or "ipykernel" in sys.modules
    if not show:
        return lambda n: None
    try:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="row", desc="tpusim sweep")

        def step(n: int) -> None:
            bar.update(n)
            if bar.n >= total:
                bar.close()

        return step
    except ImportError:
        done = [0]

        def step(n: int) -> None:
            done[0] += n
            print(f"\rtpusim sweep {done[0]}/{total} rows", end="\n" if done[0] >= total else "", file=sys.stderr)

        return step


def _run_chunk(kind: str, chunk: list[dict[str, Any]], keys: list[str], path: Optional[str]) -> Any:
    df = _table(kind, chunk, keys)
    if path is not None:
        _write_atomic(df, path)
    return df


def sweep(
    space: dict[str, Any],
    backend: str = "local",
    out: Optional[str] = None,
    chunk_size: Optional[int] = None,
    progress: Optional[bool] = None,
    llm: Optional[str] = None,
) -> Any:
    """Evaluate every combination of ``space`` (a dict of lists; or an explicit list of
    configurations, each a dict) and return a pandas DataFrame: one row per
    configuration, the space's keys as columns (a key a row leaves out is empty there
    and takes its default), ``key`` (a hash of the row and the tpusim version),
    ``total_time_s`` and the run's other figures.

    A report sweep has ``model`` and any of ``chip`` (a name, a chip TOML path or a dict
    of its fields), ``batch``, ``dtype``, ``resolution``, ``vmem``, ``input_dtype``,
    ``fuse``, and for a transformer (a built-in LLM or a ``config.json``) ``phase``,
    ``seq`` and ``context``, run as ``tpusim report MODEL --phase …`` runs it; a systolic sweep has ``m``, ``k``, ``n`` and any of ``rows``, ``cols``
    (the array), ``dataflow``, ``double_buffer``, ``mode`` (analytic, cycle, or
    scalesim: SCALE-Sim 3.0.0's numbers, stalls and DRAM traffic included, with
    ``sram_kb`` (one size or IFMAP, FILTER, OFMAP KiB), ``bandwidth`` (USER mode,
    words/cycle of the OFMAP interface; CALC without it) and ``bank_bandwidth`` (the
    IFMAP and FILTER interfaces, default 10)), ``clock_hz`` (default 1 GHz) and ``seed``. With ``llm="serve"`` or ``"train"``
    (what :func:`tpusim.llm.sweep` passes) the keys are those functions' arguments and
    ``total_time_s`` is the decode step or the training step.

    ``backend="local"`` runs in-process on every core; ``backend="ray"`` sends chunks
    of ``chunk_size`` rows to a Ray cluster (``ray.init()`` finds one, or starts a local
    one). Given ``out`` (a folder), each chunk is written as a Parquet file there, read
    back as one dataset by ``pandas.read_parquet(out)``; chunks already there are not
    run again.
    """
    import pandas as pd

    if isinstance(space, (list, tuple)):
        rows = _explicit(space)
        keys = list(dict.fromkeys(k for r in rows for k in r))
        kind = _kind({k: [] for k in keys}, llm)
    else:
        choices = _choices(space)
        kind = _kind(choices, llm)
        keys = list(choices)
        rows = [dict(zip(keys, combo)) for combo in itertools.product(*choices.values())]
    if backend not in ("local", "ray"):
        raise BadInput(f"backend '{backend}': use local or ray")
    if chunk_size is None:
        per = 64 if kind == "report" else 4096 if kind in LLM_KEYS else 100_000
        chunk_size = max(1, min(per, -(-len(rows) // 8))) if backend == "ray" else (per if out else len(rows))
    if int(chunk_size) < 1:
        raise BadInput("chunk_size must be at least 1")
    chunks = _chunks(rows, int(chunk_size))
    paths: list[Optional[str]] = [None] * len(chunks)
    if out is not None:
        os.makedirs(out, exist_ok=True)
        paths = [os.path.join(out, _chunk_name(c)) for c in chunks]
    todo = [i for i, p in enumerate(paths) if p is None or not os.path.exists(p)]
    step = _progress(len(rows), progress)
    step(sum(len(chunks[i]) for i in range(len(chunks)) if i not in set(todo)))
    frames: dict[int, Any] = {}
    if backend == "local":
        for i in todo:
            frames[i] = _run_chunk(kind, chunks[i], keys, paths[i])
            step(len(chunks[i]))
    else:
        frames.update(_ray_run(kind, chunks, todo, keys, paths, step))
    for i, p in enumerate(paths):
        if i not in frames:
            frames[i] = pd.read_parquet(p)
    df = pd.concat([frames[i] for i in range(len(chunks))], ignore_index=True)
    return df


def _ray_run(
    kind: str,
    chunks: list[list[dict[str, Any]]],
    todo: Iterable[int],
    keys: list[str],
    paths: list[Optional[str]],
    step: Callable[[int], None],
) -> dict[int, Any]:
    try:
        import ray
    except ImportError:
        raise BadInput("backend='ray' needs Ray: pip install ray") from None
    if not ray.is_initialized():
        ray.init(runtime_env={"env_vars": {"RAYON_NUM_THREADS": "1"}})
    task = ray.remote(num_cpus=1)(_run_chunk)
    pending = {task.remote(kind, chunks[i], keys, paths[i]): i for i in todo}
    frames: dict[int, Any] = {}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            i = pending.pop(ref)
            frames[i] = ray.get(ref)
            step(len(chunks[i]))
    return frames

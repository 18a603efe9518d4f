"""Transformers and LLMs on TPU slices: ``tpusim llm`` as functions.

Every function returns what ``tpusim llm VERB … --json`` prints, field for field::

    import tpusim
    tpusim.llm.show("llama-3-8b").params                      # 8030261248
    s = tpusim.llm.serve("llama-3-70b", chip="v5e", slice="4x2", batch=32,
                         context=8192, weights="int8", kv_dtype="int8", ideal=True)
    s.decode_step_s, s.fits, s.min_slice, s.bound
    t = tpusim.llm.train("llama-3-8b", chip="v5p", slice="4x4x4", batch_tokens=2**20)
    t.sharding, t.step_s, t.mfu, t.runners_up
    tpusim.llm.validate_df()                                   # measured vs predicted

MODEL is a built-in name (:func:`models`) or a path to a Hugging Face ``config.json``
(or the same keys plus ``mlp`` and ``block``).
"""

from __future__ import annotations

from typing import Any, Optional

from ._calls import (
    ModelSummary,
    Report,
    Serve,
    Thresholds,
    Train,
    models,
    report,
    serve,
    show,
    thresholds,
    train,
    validate,
    validate_df,
)

__all__ = [
    "models",
    "show",
    "report",
    "serve",
    "train",
    "validate",
    "validate_df",
    "thresholds",
    "sweep",
    "ModelSummary",
    "Report",
    "Serve",
    "Train",
    "Thresholds",
]


def sweep(
    space: Any,
    verb: str = "serve",
    backend: str = "local",
    out: Optional[str] = None,
    chunk_size: Optional[int] = None,
    progress: Optional[bool] = None,
) -> Any:
    """:func:`serve` or :func:`train` over every combination of ``space`` (a dict of
    lists of their arguments, or an explicit list of argument dicts), in-process or on a
    Ray cluster (``backend="ray"``), as a DataFrame (and Parquet files under ``out``,
    resumable) with the arguments, ``key``, ``total_time_s`` (the decode or training
    step), the headline figures and ``error`` for a row whose inputs were wrong::

        tpusim.llm.sweep({"model": ["llama-3-8b", "llama-3-70b"], "slice": ["4x2", "4x4"],
                          "batch": [1, 8, 64, 256], "context": [2048]})
    """
    from .._sweep import sweep as run

    return run(space, backend=backend, out=out, chunk_size=chunk_size, progress=progress, llm=verb)

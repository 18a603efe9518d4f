"""``tpusim.report`` and ``tpusim.plan``: the main job, as the CLI runs it."""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Optional, Sequence, Union

from . import _native
from ._native import BadInput
from ._record import Record, frame

Resolution = Union[int, str, Sequence[int]]


def resolution(r: Optional[Resolution]) -> Optional[tuple[int, int]]:
    """(H, W) from 224, (224, 160), "224", "224,160" or "224x160"; None (the model's own:
    an ONNX file's, 224×224 for a built-in) from None."""
    if r is None:
        return None
    if isinstance(r, int):
        parts: list[Any] = [r, r]
    elif isinstance(r, str):
        parts = [p.strip() for p in r.replace("x", ",").replace("X", ",").split(",")]
        parts = parts * 2 if len(parts) == 1 else parts
    else:
        parts = list(r)
    try:
        h, w = (int(p) for p in parts)
    except (TypeError, ValueError):
        raise BadInput(f"resolution {r!r}: expected H,W or one number, e.g. 224 or (224, 160)") from None
    if h <= 0 or w <= 0:
        raise BadInput(f"resolution {r!r}: H and W must be positive")
    return h, w


def _chip_toml(chip_file: Optional[str]) -> Optional[tuple[str, str]]:
    if chip_file is None:
        return None
    try:
        with open(chip_file, encoding="utf-8") as f:
            return f.read(), os.fspath(chip_file)
    except OSError as e:
        raise BadInput(f"chip_file '{chip_file}': {e.strerror}") from None


def ask(
    model: str = "resnet50",
    chip: str = "v5e",
    batch: int = 1,
    dtype: Optional[str] = None,
    resolution_: Optional[Resolution] = None,
    vmem: Optional[int] = None,
    input_dtype: Optional[str] = None,
    fuse: bool = True,
    chip_file: Optional[str] = None,
    phase: Optional[str] = None,
    seq: Optional[int] = None,
    context: Optional[int] = None,
) -> dict[str, Any]:
    """The request the native side takes (one report; ``phase``, ``seq`` and
    ``context`` for a transformer in a sweep)."""
    if isinstance(batch, bool) or int(batch) != batch or batch < 1:
        raise BadInput(f"batch {batch!r}: must be a whole number ≥ 1")
    for name, v in (("seq", seq), ("context", context)):
        if v is not None and (isinstance(v, bool) or int(v) != v or v < 1):
            raise BadInput(f"{name} {v!r}: must be a whole number ≥ 1")
    return {
        "phase": phase,
        "seq": None if seq is None else int(seq),
        "context": None if context is None else int(context),
        "model": os.fspath(model),
        "chip": chip,
        "batch": int(batch),
        "dtype": dtype,
        "resolution": resolution(resolution_),
        "vmem_bytes": None if vmem is None else int(vmem),
        "input_dtype": input_dtype,
        "fuse": bool(fuse),
        "chip_toml": _chip_toml(chip_file),
    }


class Report(Record):
    """``tpusim report … --json``: model, chip, total_time_s, compute_s, dma_s,
    exposed_dma_s, roofline_lower_bound_s, flops, bytes_logical, bytes_moved, fits_hbm,
    hbm_bytes_needed, capacity, layers, groups, tensors, …"""

    def layers_df(self) -> Any:
        """One row per layer (pandas, or polars when pandas is missing)."""
        return frame(self._d["layers"])

    def groups_df(self) -> Any:
        """One row per group of the plan (blocks left out)."""
        return frame([{k: v for k, v in g.items() if k != "blocks"} for g in self._d["groups"]])

    def tensors_df(self) -> Any:
        """One row per tensor, most padding first."""
        return frame(self._d["tensors"])


class Plan(Record):
    """``tpusim plan MODEL --json``: the layer groups, their blocks, time steps and
    cycles, the global ops, and the graph."""


def report(
    model: str = "resnet50",
    chip: str = "v5e",
    batch: int = 1,
    dtype: Optional[str] = None,
    resolution: Optional[Resolution] = None,
    vmem: Optional[int] = None,
    input_dtype: Optional[str] = None,
    fuse: bool = True,
    chip_file: Optional[str] = None,
) -> Report:
    """Time a network on a chip and show where time and memory go (``tpusim report``).
    ``model`` is a built-in name, an ``.onnx`` file or a SCALE-Sim topology ``.csv``;
    ``chip`` a TPU or NPU name, or ``chip_file`` a chip TOML of your own. ``resolution``
    overrides the model's own (an ONNX file's; 224×224 for a built-in)."""
    a = ask(model, chip, batch, dtype, resolution, vmem, input_dtype, fuse, chip_file)
    return Report._from_json(_native.report_json(json.dumps(a)))


class TransformerPlan(Record):
    """``tpusim plan MODEL.onnx --json`` for a transformer graph: ``model``, ``inputs``,
    ``parameters``, ``plan`` (its TPU-MLIR layers, the runs of them in layer groups or
    global, their cycles, and the ungrouped total), ``tpu_mlir_fused_attentions`` and
    ``tpu_mlir_unmodelled_attentions``."""


def _count(name: str, value: int, least: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < least:
        raise BadInput(f"{name} {value!r}: must be a whole number ≥ {least}")
    return int(value)


def _warn_fused(result: "TransformerPlan", chip: str) -> None:
    # as `tpusim plan` notes on stderr: TPU-MLIR fuses these attentions, the plan does
    # not model them (an F32 plan); the ones it models are its heads
    fused = result.tpu_mlir_unmodelled_attentions
    if fused:
        more = f" and {len(fused) - 1} more" if len(fused) > 1 else ""
        warnings.warn(
            f"TPU-MLIR 1.30.2 fuses the attention before {fused[0]!r}{more} into "
            f"tpu.Attention on {chip}, which tpusim models only for a 16-bit plan; these "
            "cycles are for the unfused ops, and an exported cache of this plan will not "
            "compile",
            stacklevel=3,
        )


def plan(
    model: str,
    chip: str = "bm1684x",
    batch: int = 1,
    dtype: str = "f16",
    input_dtype: str = "f32",
    resolution: Optional[Resolution] = None,
    fuse: bool = True,
    seq: int = 128,
    context: int = 0,
    tpu_mlir_cache: Optional[str] = None,
) -> Union[Plan, TransformerPlan]:
    """Layer groups of a network in an NPU's local memory (``tpusim plan``). A
    transformer exported to ONNX is planned from its TPU-MLIR form, its dynamic axes bound
    by ``batch``, ``seq`` and ``context`` (a :class:`TransformerPlan`). With
    ``tpu_mlir_cache`` (a TPU-MLIR layer-group cache JSON, ``--import-tpu-mlir``), its
    grouping is priced instead of searched; a transformer's document then also holds
    ``tpu_mlir_import``: the groups our model would refuse, and names it did not match.
    ``tpu_mlir_fused_attentions`` names the attentions TPU-MLIR fuses into
    ``tpu.Attention`` on the chip (bm1684x), which the plan holds as its heads, and
    ``tpu_mlir_unmodelled_attentions`` those it does not model (an F32 plan); a
    ``UserWarning`` says so when there are any."""
    batch = _count("batch", batch, 1)
    path = os.fspath(model)
    cache = None if tpu_mlir_cache is None else os.fspath(tpu_mlir_cache)
    if path.lower().endswith(".onnx"):
        doc = _native.transformer_plan_json(path, chip, batch, _count("seq", seq, 1), _count("context", context, 0), dtype, cache)
        if doc is not None:
            result = TransformerPlan._from_json(doc)
            _warn_fused(result, chip)
            return result
    doc = _native.plan_json(path, chip, batch, dtype, input_dtype, _res(resolution), bool(fuse), cache)
    return Plan._from_json(doc)


_res = resolution

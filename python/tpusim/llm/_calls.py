"""What ``tpusim.llm`` offers but its grid sweep: each function calls ``tpusim llm VERB … --json``
through the native module (see the package's own doc)."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Union

from .. import _native
from .._record import Record, frame

ModelArg = Union[str, "os.PathLike[str]"]


class ModelSummary(Record):
    """``tpusim llm show --json``: params, params_attention, params_mlp, params_embedding,
    params_norms, params_other, params_active, flops_per_token, kv_bytes_per_token,
    weights_bytes (at weights_dtype, the experts' matrices at expert_weights_dtype), model."""


class Report(Record):
    """``tpusim llm report --json`` (= ``tpusim report MODEL --phase … --json`` for a
    transformer): ops, flops, bytes_moved, kv_cache_bytes_read, total_time_s, bound,
    tokens_per_s, fits_hbm, …"""

    def ops_df(self) -> Any:
        """The operations as a DataFrame."""
        return frame(self._d["ops"])


class Serve(Record):
    """``tpusim llm serve --json``: fits, bytes_per_chip, weights_bytes, kv_bytes,
    decode_step_s, decode_tokens_per_s, prefill_s, bound, min_slice, max_batch,
    sharding, decode, runners_up, mode, frontier (with ``sweep_batch``)."""

    def frontier_df(self) -> Any:
        """The latency–throughput frontier as a DataFrame (needs ``sweep_batch=True``)."""
        return frame(self._d.get("frontier") or [])


class Train(Record):
    """``tpusim llm train --json``: memory_per_chip_bytes, weights_bytes,
    optimizer_bytes, checkpoint_bytes, step_s, mfu, tokens_per_s, total_s,
    flops_total, bound, sharding, comms, runners_up, thresholds, mode."""


class Thresholds(Record):
    """``tpusim llm thresholds --json``: the book's thresholds for a chip."""


def _model(model: ModelArg) -> dict[str, Optional[str]]:
    path = os.fspath(model)
    if path.endswith(".json") or os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return {"model": path, "model_json": f.read()}
    return {"model": path, "model_json": None}


def _ask(verb: str, **ask: Any) -> Any:
    return json.loads(_native.llm_json(verb, json.dumps(ask)))


def models() -> list[ModelSummary]:
    """The built-in models with their counts."""
    return [ModelSummary(d) for d in _ask("models")]


def show(
    model: ModelArg,
    kv_dtype: str = "bf16",
    weights: str = "bf16",
    expert_weights: Optional[str] = None,
) -> ModelSummary:
    """Parameters by part, FLOPs and KV-cache bytes per token of one model, and its
    weights' bytes at ``weights`` (an MoE model's experts' matrices at
    ``expert_weights`` when given: GPT-OSS's checkpoint is ``expert_weights="mxfp4"``)."""
    return ModelSummary(
        _ask("show", kv_dtype=kv_dtype, weights=weights, expert_weights=expert_weights,
             **_model(model))
    )


def report(
    model: ModelArg,
    chip: str = "v5e",
    phase: str = "prefill",
    batch: int = 1,
    seq: int = 2048,
    context: int = 2048,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    systolic_cycles: bool = False,
) -> Report:
    """One step of prefill or decode on one TPU, operation by operation; with
    ``systolic_cycles`` its GEMMs also timed on the systolic model and engine.
    MODEL may also be an ONNX transformer (``.onnx``): its graph is imported (shape
    subgraphs folded, dynamic axes bound by ``batch``, ``seq`` and ``context``) and
    timed node by node, as ``tpusim report MODEL.onnx`` does."""
    path = os.fspath(model)
    if path.lower().endswith(".onnx"):
        return Report(
            _ask("onnx", path=path, chip=chip, batch=int(batch), seq=int(seq),
                 context=int(context), weights=weights)
        )
    return Report(
        _ask(
            "report", chip=chip, phase=phase, batch=int(batch), seq=int(seq),
            context=int(context), weights=weights, kv_dtype=kv_dtype,
            systolic_cycles=bool(systolic_cycles), **_model(model),
        )
    )


def serve(
    model: ModelArg,
    chip: str = "v5e",
    slice: str = "4x2",
    batch: int = 1,
    context: int = 8192,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    prefill_tokens: Optional[int] = None,
    mfu: Optional[float] = None,
    tp: Optional[int] = None,
    dp: Optional[int] = None,
    slices: int = 1,
    ideal: bool = False,
    calib: Optional[Mapping[str, float]] = None,
    sweep_batch: bool = False,
    tp_d: Optional[int] = None,
    expert_weights: Optional[str] = None,
) -> Serve:
    """``tpusim llm serve``: memory fit, smallest slice, prefill, decode step and
    throughput of ``model`` on a ``slice`` ("4x2" or a chip count "8") of ``chip``;
    ``tp_d`` shards the weights over D too (2-D weight-stationary sharding);
    ``expert_weights`` stores an MoE model's experts' matrices at another precision
    than ``weights`` (GPT-OSS: ``"mxfp4"``)."""
    return Serve(
        _ask(
            "serve",
            chip=chip,
            slice=str(slice),
            batch=int(batch),
            context=int(context),
            weights=weights,
            expert_weights=expert_weights,
            kv_dtype=kv_dtype,
            prefill_tokens=None if prefill_tokens is None else int(prefill_tokens),
            mfu=mfu,
            tp=tp,
            dp=dp,
            tp_d=tp_d,
            slices=int(slices),
            ideal=bool(ideal),
            calib=dict(calib or {}),
            sweep_batch=bool(sweep_batch),
            **_model(model),
        )
    )


def train(
    model: ModelArg,
    chip: str = "v5e",
    slice: str = "4x2",
    slices: int = 1,
    batch_tokens: int = 1 << 20,
    seq: int = 4096,
    tokens: Optional[float] = None,
    degrees: Optional[Mapping[str, int]] = None,
    remat: str = "full",
    checkpoints_per_layer: Optional[float] = None,
    param_dtype: str = "bf16",
    optimizer_bytes: float = 8.0,
    microbatches: Optional[int] = None,
    full_attention: bool = False,
    capacity_factor: Optional[float] = None,
    dcn_fsdp: int = 1,
    mfu: Optional[float] = None,
    ideal: bool = False,
    calib: Optional[Mapping[str, float]] = None,
) -> Train:
    """``tpusim llm train``: memory per chip by part, step time, MFU and tokens/s;
    ``degrees`` such as ``{"fsdp": 64, "tp": 4}`` (keys dp, fsdp, tp, tp_d, pp, ep, sp;
    ``None`` to search); ``capacity_factor`` runs an MoE model's experts as MaxText's
    dropping MoE (``--capacity-factor``); ``dcn_fsdp`` shards the model state over that
    many of the ``slices`` (``--dcn-fsdp``)."""
    return Train(
        _ask(
            "train",
            chip=chip,
            slice=str(slice),
            slices=int(slices),
            batch_tokens=int(batch_tokens),
            seq=int(seq),
            tokens=None if tokens is None else float(tokens),
            degrees=None if degrees is None else {k: int(v) for k, v in degrees.items()},
            remat=remat,
            checkpoints_per_layer=checkpoints_per_layer,
            param_dtype=param_dtype,
            optimizer_bytes=float(optimizer_bytes),
            microbatches=microbatches,
            full_attention=bool(full_attention),
            capacity_factor=None if capacity_factor is None else float(capacity_factor),
            dcn_fsdp=int(dcn_fsdp),
            mfu=mfu,
            ideal=bool(ideal),
            calib=dict(calib or {}),
            **_model(model),
        )
    )


Measurements = Union[str, "os.PathLike[str]", Any]


def validate(
    ideal: bool = False,
    calib: Optional[Mapping[str, float]] = None,
    data: Optional[Measurements] = None,
) -> list[dict[str, Any]]:
    """Every shipped measurement beside its prediction: case, quantity, measured,
    predicted, error, split. With ``data``, your own measurements instead (``tpusim llm
    validate --data``): a JSON-lines file, a list of row dicts or a DataFrame of rows, in
    the shipped rows' schema; a row's ``split`` names its group (default ``user``)."""
    ask: dict[str, Any] = dict(ideal=bool(ideal), calib=dict(calib or {}))
    if data is not None:
        ask["rows"], ask["origin"] = _measurement_lines(data)
    return list(_ask("validate", **ask))


def _measurement_lines(data: Measurements) -> tuple[str, str]:
    """JSON lines of ``data`` and the name its errors give; a row's ``model`` naming a
    ``….json`` file (beside a measurements file, else from the working folder) is
    replaced by the config it holds, as the CLI reads it."""
    if isinstance(data, (str, os.PathLike)):
        with open(data, encoding="utf-8") as f:
            lines = f.read().splitlines()
        folder = os.path.dirname(os.fspath(data))
        return "\n".join(_line_with_config(line, folder) for line in lines), os.fspath(data)
    if hasattr(data, "to_dict"):  # a pandas DataFrame
        data = data.to_dict("records")
    lines = []
    for row in data:
        if not isinstance(row, Mapping):
            raise TypeError(f"a measurement row must be a dict, not {type(row).__name__}")
        clean = {k: v for k, v in row.items() if not (isinstance(v, float) and v != v)}
        lines.append(_with_config(clean, ""))
    return "\n".join(lines), "rows"


def _line_with_config(line: str, folder: str) -> str:
    """One line of a measurements file, its model file read in; a line that is not a
    JSON object stays as it is, for the reader to say what is wrong with it."""
    try:
        row = json.loads(line)
    except ValueError:
        return line
    return _with_config(row, folder) if isinstance(row, dict) else line


def _dump(row: Any) -> str:
    return json.dumps(row, default=_plain)


def _with_config(row: Any, folder: str) -> str:
    """``row`` as JSON, its ``model`` file (if it names one) read in."""
    model = row.get("model") if isinstance(row, dict) else None
    if isinstance(model, str) and model.endswith(".json"):
        with open(os.path.join(folder, model), encoding="utf-8") as f:
            row = {**row, "model": json.load(f)}
    return _dump(row)


def _plain(value: Any) -> Any:
    """numpy scalars (from a DataFrame) as Python numbers."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def validate_df(
    ideal: bool = False,
    calib: Optional[Mapping[str, float]] = None,
    data: Optional[Measurements] = None,
) -> Any:
    """:func:`validate` as a DataFrame."""
    return frame(validate(ideal, calib, data))


def thresholds(
    chip: str,
    model: Optional[ModelArg] = None,
    batch_tokens: Optional[int] = None,
    chips: Optional[int] = None,
) -> Thresholds:
    """The book's thresholds for ``chip`` (with a model: TP limit, mixed FSDP+TP
    batch; with ``batch_tokens`` and ``chips`` too: X_opt)."""
    m = _model(model) if model is not None else {"model": None, "model_json": None}
    return Thresholds(_ask("thresholds", chip=chip, batch_tokens=batch_tokens, chips=chips, **m))

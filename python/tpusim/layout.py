"""XLA tiled layouts: parse and print shapes, sizes, the index map's facts, TPU default
tilings, conversion of real data between layouts, and the padding of an HLO dump."""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Sequence

import numpy as np

from . import _native
from ._native import BadInput
from ._record import Record

__all__ = ["ShapeInfo", "info", "normalize", "size", "tpu_default", "convert", "hlo_padding", "xla_type"]


class ShapeInfo(Record):
    """``tpusim layout info SHAPE --json``: shape, element_type, element_bits, dims,
    minor_to_major, tiles, physical_shape, logical_bytes, array_size_bytes,
    exact_size_bytes, expansion, warnings."""


def info(shape: str) -> ShapeInfo | list[ShapeInfo]:
    """Facts of an array shape (a list for a tuple shape)."""
    doc = json.loads(_native.layout_info(shape))
    if isinstance(doc, list):
        return [ShapeInfo(d) for d in doc]
    return ShapeInfo(doc)


def normalize(shape: str) -> str:
    """The shape as XLA prints it (validated)."""
    return _native.layout_normalize(shape)


def size(shape: str) -> int:
    """Bytes XLA allocates for an array shape (its ArraySize)."""
    return _native.layout_size(shape)


def tpu_default(dtype: str, dims: Sequence[int], generation: str = "v5e") -> str:
    """The layout XLA:TPU gives an array (``tpusim layout default``)."""
    return _native.layout_tpu_default(dtype, [int(d) for d in dims], generation)


_XLA_OF_NUMPY = {
    "bool": "pred",
    "int8": "s8",
    "int16": "s16",
    "int32": "s32",
    "int64": "s64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "bfloat16": "bf16",
    "complex64": "c64",
    "complex128": "c128",
}
_NUMPY_OF_XLA = {v: k for k, v in _XLA_OF_NUMPY.items()}


def xla_type(dtype: Any) -> str:
    """The XLA element type of a numpy dtype (``float32`` → ``f32``)."""
    name = np.dtype(dtype).name
    try:
        return _XLA_OF_NUMPY[name]
    except KeyError:
        raise BadInput(f"numpy dtype {name} has no XLA element type") from None


def _row_major(a: np.ndarray) -> str:
    dims = ",".join(str(d) for d in a.shape)
    order = ",".join(str(i) for i in reversed(range(a.ndim)))
    return f"{xla_type(a.dtype)}[{dims}]{{{order}}}"


def _plain_numpy(shape: str) -> Optional[tuple[tuple[int, ...], np.dtype]]:
    """(dims, dtype) when ``shape`` is plain row-major data numpy can hold as is."""
    i = info(shape)
    if isinstance(i, list) or i.tiles or any(not isinstance(d, int) for d in i.dims):
        return None
    if i.minor_to_major != list(reversed(range(len(i.dims)))):
        return None
    name = _NUMPY_OF_XLA.get(i.element_type)
    if name is None:
        return None
    try:
        dt = np.dtype(name)
    except TypeError:  # bfloat16 without ml_dtypes
        return None
    if i.array_size_bytes != dt.itemsize * int(np.prod(i.dims, dtype=np.int64)):
        return None
    return tuple(int(d) for d in i.dims), dt


def _bytes_view(a: np.ndarray, what: str) -> np.ndarray:
    if not a.flags.c_contiguous:
        raise BadInput(f"{what} must be C-contiguous")
    return a.reshape(-1).view(np.uint8)


def convert(
    array: Any,
    to: str,
    frm: Optional[str] = None,
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Convert ``array`` (laid out as ``frm``; default: its own row-major shape) into the
    layout ``to``.

    The result holds the physical bytes of ``to``: a numpy array of ``to``'s dims and type
    when ``to`` is plain row-major data, else a flat ``uint8`` array of its allocation
    (tiles and padding included), which converts back with ``frm=to``. Given ``out``
    (C-contiguous, writable, of the destination's byte size), the bytes go there and
    ``out`` is returned: no array is allocated. The only copy is the conversion itself
    (plus one of ``array`` if it is not C-contiguous). The GIL is released meanwhile.
    """
    a = np.ascontiguousarray(array)
    frm = frm if frm is not None else _row_major(a)
    src_bytes, dst_bytes = _native.layout_convert_plan(frm, to)
    if a.nbytes != src_bytes:
        raise BadInput(f"the array has {a.nbytes} bytes but {frm} holds {src_bytes}")
    if out is None:
        plain = _plain_numpy(to)
        out = np.empty(plain[0], plain[1]) if plain else np.empty(dst_bytes, np.uint8)
    if not isinstance(out, np.ndarray) or not out.flags.writeable:
        raise BadInput("out must be a writable numpy array")
    if out.nbytes != dst_bytes:
        raise BadInput(f"out has {out.nbytes} bytes but {to} needs {dst_bytes}")
    _native.layout_convert(_bytes_view(a, "array"), _bytes_view(out, "out"), frm, to)
    return out


def hlo_padding(hlo: str) -> dict[str, Any]:
    """Every array of an HLO dump (its text, or a file path) with its logical and
    allocated bytes (``tpusim layout hlo``): ``{"arrays": [...], "skipped": [...]}``."""
    text = hlo
    if "\n" not in hlo and os.path.exists(hlo):
        with open(hlo, encoding="utf-8") as f:
            text = f.read()
    return json.loads(_native.layout_hlo_padding(text))

"""NPU local memory (Sophgo style): strides and addresses of a tensor over the lanes."""

from __future__ import annotations

import json
from typing import Any, Sequence

from . import _native
from ._record import Record

__all__ = ["strides", "address", "Address"]


class Address(Record):
    """``tpusim lmem addr … --json``: index, lane, offset, bit, address."""


def _shape(shape: str | Sequence[int]) -> str:
    return shape if isinstance(shape, str) else ",".join(str(int(d)) for d in shape)


def strides(
    chip: str,
    shape: str | Sequence[int],
    dtype: str = "f16",
    layout: str = "aligned",
    start_npu: int = 0,
    start_addr: int = 0,
) -> dict[str, Any]:
    """Strides in elements (n, c, d, h, w) and the bytes per lane of a local layout."""
    return json.loads(
        _native.lmem_strides(chip, _shape(shape), dtype, layout, int(start_npu), int(start_addr))
    )


def address(
    chip: str,
    shape: str | Sequence[int],
    index: str | Sequence[int],
    dtype: str = "f16",
    layout: str = "aligned",
    start_npu: int = 0,
    start_addr: int = 0,
) -> Address:
    """Where element ``index`` (n,c,h,w or n,c,d,h,w) of the tensor lives."""
    return Address._from_json(
        _native.lmem_address(
            chip, _shape(shape), dtype, layout, int(start_npu), int(start_addr), _shape(index)
        )
    )

"""The TPU chip database, rooflines, slices and collectives over torus axes."""

from __future__ import annotations

import json
from typing import Any

from . import _native
from ._record import Record

__all__ = ["names", "show", "roofline", "slice", "collective", "Collective", "Roofline", "SliceInfo"]


class Roofline(Record):
    """A roofline estimate: flops, bytes, t_math_s, t_comms_s, t_lower_s (their max),
    t_upper_s (their sum), intensity, critical_intensity, bound, peak_flops_per_s,
    bandwidth_bytes_per_s."""


class Collective(Record):
    """``tpusim comm KIND CHIP SHAPE --axes … --bytes … --json``: time_s, regime,
    per_hop_s, hops, latency_s, bandwidth_s, axes, axis_sizes, wraparound."""


class SliceInfo(Record):
    """``tpusim slice info CHIP SHAPE --json``: chip, shape, chips, hosts, cores,
    wraparound, dtype, flops_per_s, hbm_bytes, max_hops, bisection_links,
    bisection_bytes_per_s."""


def slice(chip: str, shape: str, dtype: str = "bf16") -> SliceInfo:
    """A slice of a TPU pod (``"4x4"``, ``"8x16x16"``) with the chip's wraparound rule."""
    return SliceInfo._from_json(_native.chip_slice(chip, shape, dtype))


def names() -> list[str]:
    """Built-in chips."""
    return list(_native.chip_names())


def show(name: str) -> dict[str, Any]:
    """Every figure of one chip, as its TOML names them."""
    return json.loads(_native.chip_json(name))


def roofline(chip: str, flops: float, bytes: float, source: str = "hbm") -> Roofline:
    """Time of ``flops`` over ``bytes`` read from ``source`` (hbm, vmem, pcie, ici) on the
    chip's MXUs at bf16."""
    return Roofline._from_json(_native.chip_roofline(chip, float(flops), float(bytes), source))


def collective(kind: str, chip: str, shape: str, axes: str, bytes: float) -> Collective:
    """A collective (allgather, reducescatter, allreduce, alltoall) of ``bytes`` over the
    mesh ``axes`` ("0", "0,1", "X,Y") of a ``shape`` slice ("4x4"), with the chip's hop
    latency and ICI bandwidth and the slice's wraparound."""
    return Collective._from_json(_native.chip_collective(kind, chip, shape, str(axes), float(bytes)))

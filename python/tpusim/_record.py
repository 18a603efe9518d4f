"""A result object: typed attributes over the JSON document the CLI prints."""

from __future__ import annotations

import copy
import json
from typing import Any


class Record:
    """Attributes are the fields of the CLI's ``--json`` document; ``to_dict()`` is that
    document."""

    __slots__ = ("_d",)

    def __init__(self, doc: dict[str, Any]) -> None:
        object.__setattr__(self, "_d", doc)

    @classmethod
    def _from_json(cls, text: str) -> "Record":
        return cls(json.loads(text))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._d[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r} (fields: {', '.join(self._d)})"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._d))

    def to_dict(self) -> dict[str, Any]:
        """The CLI's ``--json`` document (a deep copy)."""
        return copy.deepcopy(self._d)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and type(self) is type(other) and self._d == other._d

    def __repr__(self) -> str:
        keys = ", ".join(list(self._d)[:6])
        return f"<{type(self).__name__} {keys}{', …' if len(self._d) > 6 else ''}>"


def frame(rows: list[dict[str, Any]]) -> Any:
    """A pandas DataFrame of ``rows`` (polars if pandas is missing)."""
    try:
        import pandas as pd

        return pd.DataFrame(rows)
    except ImportError:
        pass
    try:
        import polars as pl

        return pl.DataFrame(rows)
    except ImportError:
        raise ImportError("tables need pandas or polars: pip install pandas") from None

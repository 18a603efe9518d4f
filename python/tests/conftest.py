"""Shared fixtures: the `tpusim` command the Python results are compared with."""

import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _cli_path() -> str:
    given = os.environ.get("TPUSIM_BIN")
    if given:
        return given
    found = [REPO / "target" / p / "tpusim" for p in ("debug", "release")]
    found = [p for p in found if p.exists()]
    if not found:
        raise RuntimeError("no tpusim binary: run `cargo build -p tpusim` or set TPUSIM_BIN")
    return str(max(found, key=lambda p: p.stat().st_mtime))


@pytest.fixture(scope="session")
def cli():
    """cli(*args) runs `tpusim ARGS --json` and returns the parsed document."""
    exe = _cli_path()

    def run(*args: str):
        out = subprocess.run([exe, *args, "--json"], check=True, capture_output=True, text=True)
        return json.loads(out.stdout)

    return run


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO

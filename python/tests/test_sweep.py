"""tpusim.sweep: rows against single runs, Parquet out and resume, and a local Ray
cluster of 2 workers against the embedded backend, row for row."""

import os

import numpy as np
import pandas as pd
import pytest

import tpusim

SPACE = {"model": ["resnet18"], "chip": ["v5e", "bm1684x"], "batch": [1, 2], "resolution": [64]}


def test_report_sweep_rows_equal_single_reports():
    df = tpusim.sweep(SPACE, progress=False)
    assert list(df.columns[:6]) == ["model", "chip", "batch", "resolution", "key", "total_time_s"]
    assert len(df) == 4 and df["key"].is_unique
    for _, row in df.iterrows():
        r = tpusim.report(row["model"], chip=row["chip"], batch=int(row["batch"]), resolution=64)
        assert row["total_time_s"] == r.total_time_s
        assert row["hbm_bytes_needed"] == r.hbm_bytes_needed
        assert pd.isna(row["error"])


def test_a_failing_row_keeps_its_error_and_the_others_run():
    df = tpusim.sweep({"model": ["resnet18"], "chip": ["v5e", "nochip"], "resolution": [64]}, progress=False)
    assert df.loc[0, "total_time_s"] > 0 and pd.isna(df.loc[0, "error"])
    assert pd.isna(df.loc[1, "total_time_s"]) and "unknown chip 'nochip'" in df.loc[1, "error"]
    # inputs refused before running, too
    df = tpusim.sweep({"model": ["resnet18"], "batch": [0, 1], "resolution": [64]}, progress=False)
    assert "batch 0" in df.loc[0, "error"] and df.loc[1, "total_time_s"] > 0


def test_custom_chip_as_a_dict():
    v5e = tpusim.chip.show("v5e")
    mine = {k: v for k, v in v5e.items() if v is not None}
    mine["name"] = "mine"
    df = tpusim.sweep({"model": ["resnet18"], "chip": [mine, "v5e"], "resolution": [64]}, progress=False)
    assert df.loc[0, "total_time_s"] == df.loc[1, "total_time_s"], df.loc[0, "error"]


def test_an_explicit_list_of_configurations():
    rows = [{"model": "resnet18", "chip": "v5e", "resolution": 64}, {"model": "resnet18", "batch": 2, "chip": "v6e", "resolution": 64}]
    df = tpusim.sweep(rows, progress=False)
    assert list(df.columns[:5]) == ["model", "chip", "resolution", "batch", "key"]
    assert df.loc[0, "total_time_s"] == tpusim.report("resnet18", chip="v5e", resolution=64).total_time_s
    assert df.loc[1, "total_time_s"] == tpusim.report("resnet18", chip="v6e", batch=2, resolution=64).total_time_s
    assert pd.isna(df.loc[0, "batch"])
    with pytest.raises(tpusim.BadInput, match="explicit sweep"):
        tpusim.sweep([{}])


def test_systolic_sweep_and_bad_spaces():
    df = tpusim.sweep({"m": [64, 512], "k": [96], "n": [32], "rows": [16, 128], "cols": [16]}, progress=False)
    assert len(df) == 4
    for _, row in df.iterrows():
        s = tpusim.systolic.gemm(int(row["m"]), 96, 32, int(row["rows"]), 16)
        assert row["cycles"] == s.cycles and row["total_time_s"] == s.cycles / 1e9
    with pytest.raises(tpusim.BadInput, match="needs 'model'"):
        tpusim.sweep({"batch": [1]})
    with pytest.raises(tpusim.BadInput, match="unknown sweep key"):
        tpusim.sweep({"model": ["resnet18"], "colour": ["red"]})
    with pytest.raises(tpusim.BadInput, match="backend"):
        tpusim.sweep(SPACE, backend="spark")


def test_parquet_dataset_and_resume(tmp_path):
    out = tmp_path / "sweep"
    df = tpusim.sweep(SPACE, out=str(out), chunk_size=1, progress=False)
    parts = sorted(p for p in os.listdir(out) if p.endswith(".parquet"))
    assert len(parts) == 4
    back = pd.read_parquet(out).sort_values("key").reset_index(drop=True)
    pd.testing.assert_frame_equal(back, df.sort_values("key").reset_index(drop=True), check_dtype=False)
    # an interrupted sweep: one chunk lost, one left half-written as a temp file
    os.remove(out / parts[0])
    (out / f".{parts[1]}.123.tmp").write_bytes(b"garbage")
    stamps = {p: os.stat(out / p).st_mtime_ns for p in parts[1:]}
    again = tpusim.sweep(SPACE, out=str(out), chunk_size=1, progress=False)
    assert {p: os.stat(out / p).st_mtime_ns for p in parts[1:]} == stamps, "finished chunks are not redone"
    assert (out / parts[0]).exists()
    pd.testing.assert_frame_equal(again, df, check_dtype=False)


@pytest.fixture(scope="module")
def ray_cluster():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"RAYON_NUM_THREADS": "1"}})
    yield ray
    ray.shutdown()


def test_ray_backend_equals_the_embedded_one(ray_cluster, tmp_path):
    space = dict(SPACE, batch=[1, 2, 3])
    local = tpusim.sweep(space, progress=False)
    out = tmp_path / "ray"
    remote = tpusim.sweep(space, backend="ray", out=str(out), chunk_size=2, progress=False)
    pd.testing.assert_frame_equal(remote, local)
    back = pd.read_parquet(out).sort_values("key").reset_index(drop=True)
    pd.testing.assert_frame_equal(back, local.sort_values("key").reset_index(drop=True), check_dtype=False)
    cyc = {"m": [32, 48], "k": [40], "n": [24], "rows": [8], "cols": [8], "mode": ["cycle"]}
    pd.testing.assert_frame_equal(tpusim.sweep(cyc, backend="ray", progress=False), tpusim.sweep(cyc, progress=False))

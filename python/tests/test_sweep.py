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


def test_the_cli_sweep_is_the_same_engine(tmp_path, repo):
    """`tpusim report --sweep --out x.parquet` and `tpusim.sweep` give the same figures,
    column for column, bit for bit."""
    import subprocess

    from conftest import _cli_path

    grid = tmp_path / "grid.toml"
    grid.write_text('models = ["resnet18"]\nchips = ["v5e", "bm1684x", "nochip"]\nbatches = [1, 2]\n')
    out = tmp_path / "runs.parquet"
    subprocess.run([_cli_path(), "report", "--sweep", str(grid), "--resolution", "64", "--out", str(out)], check=True, capture_output=True)
    cli = pd.read_parquet(out)
    py = tpusim.sweep({"model": ["resnet18"], "chip": ["v5e", "bm1684x", "nochip"], "batch": [1, 2], "resolution": [64]}, progress=False)
    assert len(cli) == len(py) == 6
    figures = [c for c in cli.columns if c not in ("model", "chip", "batch", "phase", "seq", "context")]
    assert set(figures) <= set(py.columns), set(figures) - set(py.columns)
    for c in figures:
        a = cli[c].astype(object).where(cli[c].notna(), None).tolist()
        b = py[c].astype(object).where(py[c].notna(), None).tolist()
        assert a == b, c
    assert cli["error"].notna().sum() == 2 and (cli["total_time_s"] > 0).sum() == 4


def test_transformer_rows_take_phase_seq_and_context():
    df = tpusim.sweep({"model": ["llama-3-8b", "resnet18"], "batch": [1, 8], "phase": ["prefill", "decode"],
                       "seq": [512], "context": [4096], "resolution": [64]}, progress=False)
    llm = df[df["model"] == "llama-3-8b"]
    assert len(llm) == 4 and llm["error"].isna().all()
    for _, row in llm.iterrows():
        r = tpusim.llm.report("llama-3-8b", phase=row["phase"], batch=int(row["batch"]), seq=512, context=4096)
        assert row["total_time_s"] == r.total_time_s
        assert row["flops"] == round(r.to_dict()["flops"])
    # a network that is not a transformer says so in its rows
    cnn = df[df["model"] == "resnet18"]
    assert cnn["total_time_s"].isna().all() and cnn["error"].str.contains("apply to transformers").all()


def test_scalesim_rows_are_scalesims_own_numbers(repo):
    """mode="scalesim" with SRAM sizes and a USER bandwidth gives SCALE-Sim 3.0.0's own
    COMPUTE_REPORT (a golden run of SCALE-Sim, kept in the systolic crate's tests)."""
    compared, stalled = 0, 0
    for name in ("gemm_32_ws_user", "stall_gemm_8_ws_user", "stall_ofmap_gemm_16_os_user", "gemm_128_is_calc"):
        case = repo / "crates/systolic/tests/data/scalesim" / name
        cfg = dict(
            (k.strip(), v.strip()) for k, v in
            (line.replace("=", ":").split(":", 1) for line in (case / "scale.cfg").read_text().splitlines() if ":" in line or "=" in line)
        )
        user = cfg["InterfaceBandwidth"] == "USER"
        assert cfg["IfmapSRAMBankBandwidth"] == cfg["FilterSRAMBankBandwidth"]
        gemms = [line.split(",")[1:4] for line in (case / "topology.csv").read_text().splitlines()[1:] if line.strip()]
        rows = [{"m": int(m), "n": int(n), "k": int(k), "rows": int(cfg["ArrayHeight"]), "cols": int(cfg["ArrayWidth"]),
                 "dataflow": cfg["Dataflow"], "mode": "scalesim", "bandwidth": int(cfg["Bandwidth"]) if user else None,
                 "bank_bandwidth": int(cfg["IfmapSRAMBankBandwidth"]),
                 "sram_kb": [int(cfg["IfmapSramSzkB"]), int(cfg["FilterSramSzkB"]), int(cfg["OfmapSramSzkB"])]}
                for m, n, k in gemms]
        df = tpusim.sweep(rows, progress=False)
        golden = [line.split(",") for line in (case / "COMPUTE_REPORT.csv").read_text().splitlines()[1:]]
        assert len(golden) == len(df), name
        for (_, row), g in zip(df.iterrows(), golden):
            assert pd.isna(row["error"]), row["error"]
            assert (row["cycles_incl_prefetch"], row["cycles"], row["stall_cycles"]) == (int(g[1]), int(g[2]), int(g[3])), name
            assert row["total_time_s"] == row["cycles"] / 1e9
            compared += 1
            stalled += int(row["stall_cycles"] > 0)
    assert compared >= 5 and stalled >= 2  # the stall cases do stall
    # less SRAM: a size SCALE-Sim cannot run keeps its reason; the analytic model has no SRAM
    with pytest.raises(tpusim.BadInput, match="scalesim"):
        tpusim.sweep({"m": [64], "k": [64], "n": [64], "sram_kb": [1]}, progress=False)
    bad = tpusim.sweep({"m": [64], "k": [64], "n": [64], "mode": ["scalesim"], "sram_kb": [[64, 64]]}, progress=False)
    assert "sram_kb" in bad.loc[0, "error"]


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

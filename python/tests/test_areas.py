"""tpusim.systolic, chip, lmem, report and plan against independent references."""

import warnings

import numpy as np
import pytest

import tpusim


def test_systolic_product_is_numpys_matmul():
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (37, 50), dtype=np.int8)
    w = rng.integers(-128, 128, (50, 21), dtype=np.int8)
    for df in ["ws", "os", "is"]:
        c, s = tpusim.systolic.run(a, w, rows=8, cols=8, dataflow=df)
        np.testing.assert_array_equal(c, a.astype(np.int32) @ w.astype(np.int32))
        assert s.macs == 37 * 50 * 21 and s.mode == "cycle"
        # the engine's cycles are the analytic model's (the systolic crate's contract)
        assert s.cycles == tpusim.systolic.gemm(37, 50, 21, 8, 8, df).cycles
    af = rng.standard_normal((9, 12)).astype(np.float32)
    wf = rng.standard_normal((12, 5)).astype(np.float32)
    c, _ = tpusim.systolic.run(af, wf, rows=4, cols=4)
    np.testing.assert_allclose(c, af @ wf, rtol=1e-5, atol=1e-5)
    with pytest.raises(tpusim.BadInput, match="K must agree"):
        tpusim.systolic.run(a, a, rows=4, cols=4)


def test_systolic_many_equals_one_by_one():
    m, k, n = [64, 128, 3], [96, 7, 300], [32, 256, 1]
    rows, cols = [16, 128, 8], [16, 64, 8]
    cyc, util = tpusim.systolic.analytic_many(m, k, n, rows, cols)
    for i in range(3):
        s = tpusim.systolic.gemm(m[i], k[i], n[i], rows[i], cols[i])
        assert cyc[i] == s.cycles and util[i] == pytest.approx(s.utilization)
    cyc, util = tpusim.systolic.analytic_many([0], [1], [1], [1], [1])
    assert cyc[0] == 0 and np.isnan(util[0])


def test_chip_roofline_is_the_roofline_formula():
    v5e = tpusim.chip.show("v5e")
    flops, nbytes = 1e12, 1e9
    r = tpusim.chip.roofline("v5e", flops, nbytes)
    t_math, t_comms = flops / v5e["bf16_flops_per_s"], nbytes / v5e["hbm_bytes_per_s"]
    assert (r.t_math_s, r.t_comms_s) == (pytest.approx(t_math), pytest.approx(t_comms))
    assert r.t_lower_s == pytest.approx(max(t_math, t_comms))
    assert r.t_upper_s == pytest.approx(t_math + t_comms)
    assert "v5e" in tpusim.chip.names()


def test_lmem_strides_of_the_aligned_layout():
    s = tpusim.lmem.strides("bm1684x", [1, 96, 28, 28])
    # aligned: w contiguous, a channel row per lane; 96 channels over 64 lanes → 2 rows
    assert s["strides"]["w"] == 1 and s["strides"]["h"] == 28
    assert s["lane_bytes"] >= 2 * 28 * 28 * 2


def test_report_tables_and_errors(tmp_path):
    r = tpusim.report("resnet18", chip="v5e", batch=2, resolution=64)
    df = r.layers_df()
    assert len(df) == len(r.layers) and df["flops"].sum() == r.flops
    assert r.groups_df()["time_s"].sum() == pytest.approx(r.total_time_s)
    assert r.total_time_s == pytest.approx(r.compute_s + r.exposed_dma_s)
    with pytest.raises(tpusim.BadInput, match="unknown chip"):
        tpusim.report("resnet18", chip="v99")
    with pytest.raises(tpusim.BadInput, match="batch"):
        tpusim.report("resnet18", batch=0)
    with pytest.raises(tpusim.BadInput, match="resolution"):
        tpusim.report("resnet18", resolution="a,b")
    bad = tmp_path / "x.onnx"
    bad.write_bytes(b"not onnx")
    with pytest.raises(tpusim.BadInput):
        tpusim.report(str(bad))


def test_report_with_a_chip_file(tmp_path):
    toml = tmp_path / "mine.toml"
    toml.write_text(tpusim_chip_toml("v5e").replace('name = "v5e"', 'name = "mine"'))
    a = tpusim.report("resnet18", chip_file=str(toml)).to_dict()
    b = tpusim.report("resnet18", chip="v5e").to_dict()
    assert a.pop("chip") == "mine" and b.pop("chip") == "v5e"
    assert a == b


def tpusim_chip_toml(name):
    import subprocess

    from conftest import _cli_path

    return subprocess.run([_cli_path(), "chip", "show", name, "--toml"], check=True, capture_output=True, text=True).stdout


def test_plan_verifies_its_own_totals():
    p = tpusim.plan("resnet18")
    d = p.to_dict()
    assert d["cycles"] == sum(g["cycles"] for g in d["groups"]) + sum(c["cycles"] for c in d["global_costs"])
    assert tpusim.report("resnet18", chip="bm1684x").total_time_s == pytest.approx(d["seconds"], rel=1e-12)


def test_plan_takes_a_transformer_onnx_as_the_cli_does(cli, repo):
    gpt2 = str(repo / "crates" / "graph" / "tests" / "data" / "nd" / "gpt2_tiny.onnx")
    p = tpusim.plan(gpt2, seq=32)
    assert isinstance(p, tpusim.TransformerPlan)
    d = p.to_dict()
    runs = d["plan"]["groups"]
    assert d["plan"]["cycles"] == sum(r["cycles"] for r in runs) < d["plan"]["ungrouped_cycles"]
    assert [r["start"] for r in runs[1:]] == [r["end"] for r in runs[:-1]]
    assert cli("plan", gpt2, "--seq", "32") == d
    with pytest.raises(tpusim.BadInput, match="seq"):
        tpusim.plan(gpt2, seq=0)
    with pytest.raises(tpusim.BadInput, match="do not broadcast"):
        tpusim.plan(gpt2, seq=128)


def test_plan_groups_a_berts_whole_attention_as_tpu_mlir_does(repo):
    zoo = repo / "crates" / "planner" / "tests" / "data" / "tx_zoo"
    d = tpusim.plan(str(zoo / "bert_d128_s64_static.onnx")).to_dict()["plan"]
    layers = d["layers"]
    kinds = [[layers[i]["op_type"] for i in range(r["start"], r["end"])] for r in d["groups"]]
    # TPU-MLIR's own group: the Q and K slices, Q·Kᵀ with the heads as a batch, its scale,
    # the padding mask's Add, the softmax and P·V, with no permute left
    attention = [k for k in kinds if "Softmax" in k]
    assert attention and all(k.count("MatMul") == 2 for k in attention)
    assert not any(l["op_type"] == "Permute" for l in layers)
    assert sum(l["heads_as_batch"] for l in layers) == 4
    assert any(l["op_type"] == "Gelu" and l["f32"] for l in layers)


def test_plan_models_the_attentions_tpu_mlir_fuses_and_warns_where_it_does_not(cli, repo):
    zoo = repo / "crates" / "planner" / "tests" / "data" / "tx_zoo"
    bert = str(zoo / "bert_d384_s128_static.onnx")
    # a 16-bit plan holds them as tpu.Attention heads: listed, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = tpusim.plan(bert, chip="bm1684x")
        assert tpusim.plan(bert, chip="bm1688").tpu_mlir_fused_attentions == []
    assert p.tpu_mlir_fused_attentions == ["/MatMul_64", "/MatMul_122"]
    assert p.tpu_mlir_unmodelled_attentions == []
    assert sum(l["op_type"] == "Attention" for l in p.to_dict()["plan"]["layers"]) == 12
    assert cli("plan", bert, "--chip", "bm1684x") == p.to_dict()
    # an f32 plan does not model them, and says so as the CLI does
    with pytest.warns(UserWarning, match=r"fuses the attention before '/MatMul_64' and 1 more"):
        f32 = tpusim.plan(bert, chip="bm1684x", dtype="f32")
    assert f32.tpu_mlir_unmodelled_attentions == ["/MatMul_64", "/MatMul_122"]
    assert cli("plan", bert, "--chip", "bm1684x", "--dtype", "f32") == f32.to_dict()


def test_plan_prices_tpu_mlir_s_own_grouping_as_the_cli_does(cli, repo, tmp_path):
    zoo = repo / "crates" / "planner" / "tests" / "data" / "tx_zoo"
    net = str(zoo / "llama_d1024_s256_static.onnx")
    cache = str(zoo / "llama_d1024_s256_bm1688.tpumlir_cache.json")
    d = tpusim.plan(net, seq=256, chip="bm1688", tpu_mlir_cache=cache).to_dict()
    assert d == cli("plan", net, "--seq", "256", "--chip", "bm1688", "--import-tpu-mlir", cache)
    report = d["tpu_mlir_import"]
    # its nine groups, two of which our reproduction of its allocator refuses on bm1688
    # (bench/RESULTS-plan.md), priced all the same
    assert report["groups"] == 9 and len(report["refused"]) == 2
    # on bm1684x it takes all nine, and TPU-MLIR's grouping costs no less than our own
    cache = str(zoo / "llama_d1024_s256_bm1684x.tpumlir_cache.json")
    d = tpusim.plan(net, seq=256, tpu_mlir_cache=cache).to_dict()
    assert d["tpu_mlir_import"]["refused"] == []
    assert d["plan"]["cycles"] >= tpusim.plan(net, seq=256).to_dict()["plan"]["cycles"]
    # a CNN's grouping, exported by the CLI, is priced as the plan it came from
    resnet = str(tmp_path / "resnet18.cache.json")
    planned = cli("plan", "resnet18", "--export-tpu-mlir", resnet)
    cnn = tpusim.plan("resnet18", chip="bm1684x", tpu_mlir_cache=resnet).to_dict()
    assert cnn == cli("plan", "resnet18", "--import-tpu-mlir", resnet)
    assert cnn["cycles"] == planned["cycles"]
    with pytest.raises(tpusim.BadInput, match="TPU-MLIR cache"):
        tpusim.plan(net, seq=256, tpu_mlir_cache=str(repo / "README.md"))

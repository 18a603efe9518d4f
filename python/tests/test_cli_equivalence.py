"""Every area's Python result equals the CLI's --json document, field for field."""

import tpusim


def test_layout_info(cli):
    for shape in [
        "bf16[8,128]{1,0:T(8,128)(2,1)}",
        "f32[3,5]",
        "s4[1024,7]{0,1:T(8,128)(2,1)E(4)}",
        "(f32[2,3], s8[128,128]{1,0:T(32,128)(4,1)})",
    ]:
        got = tpusim.layout.info(shape)
        got = [g.to_dict() for g in got] if isinstance(got, list) else got.to_dict()
        assert got == cli("layout", "info", shape), shape


def test_report_tpu_and_npu(cli):
    for chip, batch in [("v5e", 1), ("bm1684x", 2)]:
        got = tpusim.report("resnet18", chip=chip, batch=batch).to_dict()
        assert got == cli("report", "resnet18", "--chip", chip, "--batch", str(batch))


def test_report_of_a_topology_file(cli, repo):
    csv = str(repo / "crates/report/tests/data/tiny.csv")
    got = tpusim.report(csv, chip="v6e", fuse=False).to_dict()
    assert got == cli("report", csv, "--chip", "v6e", "--no-fuse")


def test_an_onnx_cnn_keeps_its_own_resolution(cli, repo):
    # fpn_like was exported at 128×128: report and plan read it at that size unless told
    net = str(repo / "crates/planner/tests/data/zoo/fpn_like.onnx")
    report = tpusim.report(net, chip="bm1684x").to_dict()
    plan = tpusim.plan(net, chip="bm1684x").to_dict()
    assert report == cli("report", net, "--chip", "bm1684x")
    assert plan == cli("plan", net, "--chip", "bm1684x")
    assert report["total_time_s"] == plan["seconds"]
    bigger = tpusim.report(net, chip="bm1684x", resolution=224).to_dict()
    assert bigger["total_time_s"] > 2 * report["total_time_s"]


def test_plan(cli):
    got = tpusim.plan("resnet18", chip="bm1688", batch=2).to_dict()
    assert got == cli("plan", "resnet18", "--chip", "bm1688", "--batch", "2")


def test_chip_collective(cli):
    got = tpusim.chip.collective("allreduce", "v5p", "4x4x4", "0,1", 1e8).to_dict()
    assert got == cli("comm", "allreduce", "v5p", "4x4x4", "--axes", "0,1", "--bytes", "1e8")


def test_chip_slice(cli):
    got = tpusim.chip.slice("v5p", "4x4x8", dtype="int8").to_dict()
    assert got == cli("slice", "info", "v5p", "4x4x8", "--dtype", "int8")


def test_lmem_address(cli):
    got = tpusim.lmem.address("bm1684x", [1, 96, 28, 28], [0, 70, 3, 5]).to_dict()
    want = cli("lmem", "addr", "--chip", "bm1684x", "--shape", "1,96,28,28", "--index", "0,70,3,5")
    assert got == want


def test_systolic_gemm(cli):
    got = tpusim.systolic.gemm(64, 96, 32, rows=16, cols=16, dataflow="os").to_dict()
    want = cli("systolic", "gemm", "--m", "64", "--k", "96", "--n", "32", "--rows", "16", "--cols", "16", "--dataflow", "os")
    assert got == want

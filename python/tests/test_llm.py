"""tpusim.llm equals `tpusim llm … --json` field for field, and says what was wrong."""

import json
import pathlib

import pytest

import tpusim


def test_show_and_models_equal_the_cli(cli):
    assert tpusim.llm.show("llama-3-8b").to_dict() == cli("llm", "show", "llama-3-8b")
    assert tpusim.llm.show("gemma-7b", kv_dtype="int8").params == 8_537_680_896
    assert [m.to_dict() for m in tpusim.llm.models()] == cli("llm", "models")


def test_serve_equals_the_cli(cli):
    got = tpusim.llm.serve(
        "llama-3-70b", chip="v5e", slice="4x2", batch=32, context=8192, weights="int8",
        kv_dtype="int8", prefill_tokens=1024, ideal=True, sweep_batch=True,
    )
    want = cli(
        "llm", "serve", "llama-3-70b", "--chip", "v5e", "--slice", "4x2", "--batch", "32",
        "--context", "8192", "--weights", "int8", "--kv-dtype", "int8", "--prefill-tokens",
        "1024", "--ideal", "--sweep-batch",
    )
    assert got.to_dict() == want
    assert got.min_slice == "4x2" and got.fits
    assert len(got.frontier_df()) == len(want["frontier"])


def test_train_equals_the_cli(cli):
    got = tpusim.llm.train(
        "llama-3-8b", chip="v5e", slice="16x16", slices=2, batch_tokens=2 << 20, seq=4096,
        tokens=1e12, degrees={"fsdp": 256}, calib={"overlap": 0.5},
    )
    want = cli(
        "llm", "train", "llama-3-8b", "--chip", "v5e", "--slice", "16x16", "--slices", "2",
        "--batch-tokens", "2Mi", "--seq", "4096", "--tokens", "1e12", "--fsdp", "256",
        "--calib", "overlap=0.5",
    )
    assert got.to_dict() == want
    assert got.mode == "custom"
    searched = tpusim.llm.train("llama-3-8b", chip="v5p", slice="4x4x4")
    assert searched.to_dict() == cli("llm", "train", "llama-3-8b", "--chip", "v5p", "--slice", "4x4x4")


def test_validate_and_thresholds_equal_the_cli(cli):
    assert tpusim.llm.validate() == cli("llm", "validate")
    df = tpusim.llm.validate_df(ideal=True)
    assert len(df) == 70 and set(df["split"]) == {"fit", "held_out", "held_out_v5p", "held_out_v6e", "fit_v6e", "held_out_v6e_vllm"}
    got = tpusim.llm.thresholds("v5p", model="llama-3-70b", batch_tokens=4 << 20, chips=8960)
    want = cli("llm", "thresholds", "v5p", "--model", "llama-3-70b", "--batch-tokens", "4Mi", "--chips", "8960")
    assert got.to_dict() == want
    assert round(got.x_opt) == 1619


def test_a_calibrated_figure_set_by_name_equals_the_cli(cli):
    # attention's own training efficiency: only the training rows move
    got = tpusim.llm.validate(calib={"attention_train": 0.3})
    assert got == cli("llm", "validate", "--calib", "attention_train=0.3")
    base = {r["case"]: r["predicted"] for r in tpusim.llm.validate()}
    moved = {r["case"] for r in got if r["predicted"] != base[r["case"]]}
    assert moved == {r["case"] for r in got if r["quantity"] == "train_step_s"}


def test_validate_reads_measurements_as_rows_a_frame_or_a_file(tmp_path, cli, repo):
    lines = (repo / "data/llm/llm-validation-jetstream-v5e.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines[:3]]
    rows[1]["split"] = "lab"
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    want = cli("llm", "validate", "--data", str(path))
    assert tpusim.llm.validate(data=path) == want
    assert tpusim.llm.validate(data=rows) == want
    df = tpusim.llm.validate_df(data=tpusim._record.frame(rows))
    assert list(df["split"]) == ["user", "lab", "user"]
    shipped = {r["case"]: r["predicted"] for r in tpusim.llm.validate()}
    assert [shipped[r["id"]] for r in rows] == [w["predicted"] for w in want]
    with pytest.raises(tpusim.BadInput, match="rows line 1: field 'chip' is missing"):
        tpusim.llm.validate(data=[{"id": "x", "model": "llama-2-7b"}])


def test_config_files(tmp_path, cli):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({
        "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "vocab_size": 32000,
    }))
    assert tpusim.llm.show(cfg).params == 7_241_732_096
    assert tpusim.llm.show(str(cfg)).to_dict() == cli("llm", "show", str(cfg))


def test_newer_families_from_the_shipped_configs(cli):
    # Counts transformers itself gives for these files (bench/hf_config_counts.py).
    configs = pathlib.Path(__file__).resolve().parents[2] / "crates/llm/tests/data/hf_configs"
    for line in (configs / "counts.jsonl").read_text().splitlines():
        row = json.loads(line)
        got = tpusim.llm.show(configs / row["file"])
        assert got.params == row["params"], row["file"]
    gemma2 = configs / "gemma-2-2b.json"
    decode = tpusim.llm.report(str(gemma2), chip="v5e", phase="decode", batch=4, context=16384)
    assert decode.to_dict() == cli("report", str(gemma2), "--chip", "v5e", "--phase", "decode",
                                   "--batch", "4", "--context", "16384")
    names = [op["name"] for op in decode.to_dict()["ops"]]
    assert "scores_window" in names and "scores" in names


def test_bad_input_raises_badinput():
    with pytest.raises(tpusim.BadInput, match="unknown model 'llama-9'"):
        tpusim.llm.show("llama-9")
    with pytest.raises(tpusim.BadInput, match="must equal 16"):
        tpusim.llm.train("llama-3-8b", slice="4x4", degrees={"fsdp": 4})
    with pytest.raises(tpusim.BadInput, match="unknown degree"):
        tpusim.llm.train("llama-3-8b", slice="4x4", degrees={"zz": 16})
    with pytest.raises(tpusim.BadInput, match="does not fit any slice"):
        tpusim.llm.serve("llama-3.1-405b", slice="4x4", batch=64, context=128000)


def test_report_equals_the_cli(cli):
    got = tpusim.llm.report("llama-3-8b", chip="v5p", phase="decode", batch=8, context=4096)
    assert got.to_dict() == cli("report", "llama-3-8b", "--chip", "v5p", "--phase", "decode", "--batch", "8", "--context", "4096")
    assert got.bound == "hbm" and len(got.ops_df()) == len(got.ops)


def test_report_with_systolic_cycles_equals_the_cli(cli):
    got = tpusim.llm.report("gpt2", phase="decode", batch=2, context=256, systolic_cycles=True)
    assert got.to_dict() == cli("report", "gpt2", "--phase", "decode", "--batch", "2", "--context", "256", "--systolic-cycles")
    assert all(g["engine_cycles"] in (None, g["cycles"]) for g in got.systolic)


def test_onnx_transformer_report_equals_the_cli(cli, repo):
    path = str(repo / "crates/graph/tests/data/nd/llama_tiny.onnx")
    got = tpusim.llm.report(path, batch=2, seq=16)
    assert got.to_dict() == cli("report", path, "--batch", "2", "--seq", "16")
    assert got.inputs[0]["dims"] == [2, 16]
    with pytest.raises(tpusim.BadInput, match="com.microsoft.Attention"):
        tpusim.llm.report(str(repo / "crates/graph/tests/data/nd/fused_attention.onnx"))


def test_llm_sweep_rows_equal_single_calls(tmp_path):
    space = {"model": ["llama-3-8b", "gemma-2b"], "slice": ["4x2", "2x2"], "batch": [1, 64], "context": [2048]}
    df = tpusim.llm.sweep(space, out=str(tmp_path / "s"))
    assert len(df) == 8 and df["error"].isna().all()
    for _, row in df.iterrows():
        one = tpusim.llm.serve(row["model"], slice=row["slice"], batch=int(row["batch"]), context=2048)
        assert row["total_time_s"] == one.decode_step_s and row["fits"] == one.fits
    again = tpusim.llm.sweep(space, out=str(tmp_path / "s"))  # resumed from the Parquet files
    assert again.equals(df)
    bad = tpusim.llm.sweep([{"model": "llama-9", "batch": 1}, {"model": "gpt2", "batch": 2}])
    assert "unknown model" in bad["error"][0] and not isinstance(bad["error"][1], str)
    tr = tpusim.llm.sweep({"model": ["llama-3-8b"], "chip": ["v5p"], "slice": ["4x4x4"], "batch_tokens": [1 << 20, 1 << 22]}, verb="train")
    assert (tr["total_time_s"] > 0).all() and tr["mfu"].between(0, 1).all()
    with pytest.raises(tpusim.BadInput, match="unknown sweep key"):
        tpusim.llm.sweep({"model": ["gpt2"], "resolution": [224]})


def test_serve_on_several_slices_equals_the_cli(cli):
    got = tpusim.llm.serve("llama-3-8b", slice="4x2", slices=2, batch=64, context=4096)
    assert got.to_dict() == cli("llm", "serve", "llama-3-8b", "--slice", "4x2", "--slices", "2", "--batch", "64", "--context", "4096")
    assert got.chips == 16


def test_serve_with_2d_tensor_parallelism_equals_the_cli(cli):
    got = tpusim.llm.serve("llama-2-70b", chip="v5p", slice="8x8x4", batch=8192, context=128, tp=32, tp_d=8, ideal=True)
    assert got.to_dict() == cli("llm", "serve", "llama-2-70b", "--chip", "v5p", "--slice", "8x8x4", "--batch", "8192",
                                "--context", "128", "--tp", "32", "--tp-d", "8", "--ideal")
    assert got.sharding["tp_d"] == 8


def test_train_with_2d_tensor_parallelism_equals_the_cli(cli):
    got = tpusim.llm.train("llama-2-70b", chip="v5p", slice="8x8x4", batch_tokens=4 << 20, seq=4096,
                           degrees={"tp": 16, "tp_d": 4, "fsdp": 4})
    assert got.to_dict() == cli("llm", "train", "llama-2-70b", "--chip", "v5p", "--slice", "8x8x4", "--batch-tokens", "4Mi",
                                "--seq", "4096", "--tp", "16", "--tp-d", "4", "--fsdp", "4")
    assert got.sharding["tp_d"] == 4


def test_train_with_a_custom_remat_policy_equals_the_cli(cli):
    policy = "custom:decoder_layer_input=offload,query_proj=offload,key_proj=offload,value_proj=offload"
    got = tpusim.llm.train("llama-3.1-70b", chip="v6e", slice="16x16", batch_tokens=10 << 20, seq=8192,
                           degrees={"fsdp": 256}, remat=policy)
    assert got.to_dict() == cli("llm", "train", "llama-3.1-70b", "--chip", "v6e", "--slice", "16x16",
                                "--batch-tokens", "10Mi", "--seq", "8192", "--fsdp", "256", "--remat", policy)
    assert got.remat == policy and got.comms["host_s"] > 0


def test_train_with_maxtexts_dropping_moe_equals_the_cli(cli):
    got = tpusim.llm.train("mixtral-8x7b", chip="v6e", slice="16x16", batch_tokens=12 << 20, seq=4096,
                           degrees={"fsdp": 256}, capacity_factor=1.25)
    assert got.to_dict() == cli("llm", "train", "mixtral-8x7b", "--chip", "v6e", "--slice", "16x16",
                                "--batch-tokens", "12Mi", "--seq", "4096", "--fsdp", "256", "--capacity-factor", "1.25")
    dropless = tpusim.llm.train("mixtral-8x7b", chip="v6e", slice="16x16", batch_tokens=12 << 20, seq=4096,
                                degrees={"fsdp": 256})
    assert got.flops_executed_per_step > dropless.flops_executed_per_step
    assert got.flops_per_step == dropless.flops_per_step


def test_train_with_fsdp_across_slices_equals_the_cli(cli):
    got = tpusim.llm.train("llama-3.1-70b", chip="v6e", slice="16x16", slices=2, dcn_fsdp=2,
                           batch_tokens=4 << 20, seq=8192, degrees={"fsdp": 256})
    assert got.to_dict() == cli("llm", "train", "llama-3.1-70b", "--chip", "v6e", "--slice", "16x16", "--slices", "2",
                                "--dcn-fsdp", "2", "--batch-tokens", "4Mi", "--seq", "8192", "--fsdp", "256")
    assert got.sharding["dcn_fsdp"] == 2 and got.sharding["dcn_dp"] == 1


def test_validate_reads_a_rows_config_file_as_the_cli_does(tmp_path, cli):
    config = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
              "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000}
    (tmp_path / "l2.json").write_text(json.dumps(config))
    row = {"id": "r", "model": "l2.json", "chip": "v5e", "chips": 8, "precision": "bf16",
           "batch": 32, "cache_length": 1024, "throughput_tokens_per_s": 1000}
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(row) + "\n")
    want = cli("llm", "validate", "--data", str(path))
    assert tpusim.llm.validate(data=path) == want
    assert tpusim.llm.validate(data=[{**row, "model": config}]) == want


def test_experts_at_their_own_precision_equal_the_cli(cli):
    got = tpusim.llm.show("gpt-oss-120b", expert_weights="mxfp4")
    assert got.to_dict() == cli("llm", "show", "gpt-oss-120b", "--expert-weights", "mxfp4")
    assert round(got.weights_bytes / 2**30, 1) == 60.8  # the gpt-oss model card's checkpoint
    served = tpusim.llm.serve("gpt-oss-20b", chip="v5e", slice="8", batch=32, context=4096,
                              expert_weights="mxfp4")
    assert served.to_dict() == cli("llm", "serve", "gpt-oss-20b", "--chip", "v5e", "--slice", "8",
                                   "--batch", "32", "--context", "4096", "--expert-weights", "mxfp4")
    with pytest.raises(tpusim.BadInput, match="no experts"):
        tpusim.llm.show("llama-3-8b", expert_weights="mxfp4")

"""tpusim.layout: sizes against hand counts, conversion round trips against numpy, the
caller's output buffer, and bad input."""

import numpy as np
import pytest

import tpusim
from tpusim import layout


def test_sizes_and_facts():
    # (8,128) tiles of bf16 with (2,1) packing: 3×200 pads to 8×256 elements of 2 bytes
    i = layout.info("bf16[3,200]{1,0:T(8,128)(2,1)}")
    assert i.logical_bytes == 3 * 200 * 2
    assert i.array_size_bytes == 8 * 256 * 2
    assert layout.size("f32[3,5]") == 60
    assert layout.normalize("f32[3,5]") == "f32[3,5]{1,0}"
    assert layout.tpu_default("bf16", [1, 224, 224, 3], "v5e") == "bf16[1,224,224,3]{2,1,3,0:T(8,128)(2,1)}"


@pytest.mark.parametrize(
    "dtype,to",
    [
        (np.float32, "f32[5,130]{1,0:T(8,128)}"),
        (np.int8, "s8[5,130]{1,0:T(32,128)(4,1)}"),
        (np.float16, "f16[5,130]{0,1:T(8,128)(2,1)}"),
        (np.int32, "s32[5,130]{0,1}"),
    ],
)
def test_convert_round_trips(dtype, to):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((5, 130)) * 50).astype(dtype)
    t = layout.convert(x, to=to)
    assert t.dtype == np.uint8 and t.nbytes == layout.size(to)
    back = layout.convert(t, to=f"{layout.xla_type(dtype)}[5,130]", frm=to)
    assert back.dtype == x.dtype and back.shape == x.shape
    np.testing.assert_array_equal(back, x)


def test_tiled_bytes_are_where_the_tiles_put_them():
    # f32[3,5] in one (8,128) tile: row r starts at r·128 elements; the rest is padding
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    t = layout.convert(x, to="f32[3,5]{1,0:T(8,128)}").view(np.float32)
    for r in range(3):
        np.testing.assert_array_equal(t[r * 128 : r * 128 + 5], x[r])
    # a transposed plain layout is numpy's transpose
    y = layout.convert(x, to="f32[3,5]{0,1}").view(np.float32).reshape(5, 3)
    np.testing.assert_array_equal(y, x.T)


def test_convert_into_the_callers_buffer():
    x = np.ones((4, 256), np.float32)
    out = np.full(layout.size("f32[4,256]{1,0:T(8,128)}"), 0xAB, np.uint8)
    got = layout.convert(x, to="f32[4,256]{1,0:T(8,128)}", out=out)
    assert got is out
    assert np.shares_memory(got, out)
    assert out.view(np.float32)[:256].tolist() == [1.0] * 256
    with pytest.raises(tpusim.BadInput, match="needs"):
        layout.convert(x, to="f32[4,256]{1,0:T(8,128)}", out=np.empty(3, np.uint8))


def test_bad_input_names_what_is_wrong():
    with pytest.raises(tpusim.BadInput, match="dimension size"):
        layout.info("bf16[8,")
    with pytest.raises(tpusim.BadInput, match="bytes"):
        layout.convert(np.zeros(3, np.float32), to="f32[4]", frm="f32[4]")
    with pytest.raises(tpusim.BadInput):
        layout.tpu_default("bf16", [2**62, 2**62], "v5e")
    with pytest.raises(tpusim.Error):
        layout.tpu_default("nope", [1], "v5e")
    assert issubclass(tpusim.BadInput, tpusim.Error)


def test_hlo_padding(repo):
    hlo = repo / "crates/report/tests/data/xla/resnet18_v5e_b1.hlo.txt"
    p = layout.hlo_padding(str(hlo))
    assert p["arrays"], "arrays found"
    for a in p["arrays"]:
        assert a["array_size_bytes"] >= a["logical_bytes"]
        assert a["waste_bytes"] == a["array_size_bytes"] - a["logical_bytes"]


def test_size_refuses_what_has_no_size():
    with pytest.raises(tpusim.BadInput, match="not an array"):
        layout.size("(f32[2], f32[3])")
    with pytest.raises(tpusim.BadInput):
        layout.size("f32[?,3]")

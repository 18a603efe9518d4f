"""Generates the small ONNX test models in this folder and, for each, the shapes that
ONNX's own shape inference gives every value (`<name>.shapes.json`), checked against
onnxruntime's actual output shapes.

Run (from this folder; ONNX_VENV: any folder outside the repository for the venv):
    python3 -m venv "$ONNX_VENV"
    $ONNX_VENV/bin/pip install onnx onnxruntime numpy
    $ONNX_VENV/bin/python make_onnx.py
"""

import json

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper, shape_inference

rng = np.random.default_rng(0)


def w(name, *dims):
    return numpy_helper.from_array(rng.standard_normal(dims).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def floats(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


def small_cnn():
    """Residual, concat, deconv, resize, dilated grouped conv, pools, gemm, matmul."""
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c1.w"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c1", "bn1.s", "bn1.b", "bn1.m", "bn1.v"], ["bn1"], name="bn1"),
        n("Relu", ["bn1"], ["r1"], name="relu1"),
        n("Conv", ["r1", "c2.w", "c2.b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        n("Add", ["c2", "r1"], ["res"], name="residual"),
        n("Clip", ["res", "zero", "six"], ["r6"], name="relu6"),
        n("MaxPool", ["r6"], ["mp"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["mp", "b1.w"], ["b1"], name="branch1x1"),
        n("Conv", ["mp", "b3.w"], ["b3"], name="branch3x3", pads=[1, 1, 1, 1]),
        n("LeakyRelu", ["b3"], ["b3a"], name="leaky", alpha=0.1),
        n("Concat", ["b1", "b3a"], ["cat"], name="concat", axis=1),
        n("ConvTranspose", ["cat", "d.w", "d.b"], ["up1"], name="deconv", strides=[2, 2], pads=[1, 1, 1, 1]),
        n("Sigmoid", ["up1"], ["sg"], name="sigmoid"),
        n("Mul", ["sg", "scale"], ["scaled"], name="chan_scale"),
        n("Resize", ["scaled", "", "rs"], ["up2"], name="resize", mode="nearest"),
        n("Conv", ["up2", "g.w"], ["g"], name="dil_group", strides=[2, 2], dilations=[2, 2], group=2, pads=[2, 2, 2, 2]),
        n("HardSwish", ["g"], ["hs"], name="hswish"),
        n("AveragePool", ["hs"], ["ap"], name="avgpool_ceil", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        n("Tanh", ["ap"], ["th"], name="tanh"),
        n("GlobalAveragePool", ["th"], ["gap"], name="gap"),
        n("Flatten", ["gap"], ["fl"], name="flatten"),
        n("Dropout", ["fl"], ["dr"], name="dropout"),
        n("Gemm", ["dr", "fc.w", "fc.b"], ["fc"], name="fc", transB=1),
        n("HardSigmoid", ["fc"], ["hsg"], name="hsig"),
        n("MatMul", ["hsg", "mm.w"], ["mm"], name="matmul"),
        n("Add", ["mm", "mm.b"], ["mmb"], name="matmul_bias"),
        n("Reshape", ["mmb", "shape"], ["rsh"], name="reshape"),
        n("Identity", ["rsh"], ["y"], name="identity"),
    ]
    inits = [
        w("c1.w", 8, 3, 3, 3),
        w("bn1.s", 8), w("bn1.b", 8), w("bn1.m", 8), floats("bn1.v", np.ones(8)),
        w("c2.w", 8, 8, 3, 3), w("c2.b", 8),
        floats("zero", 0.0), floats("six", 6.0),
        w("b1.w", 4, 8, 1, 1), w("b3.w", 4, 8, 3, 3),
        w("d.w", 8, 6, 4, 4), w("d.b", 6),
        w("scale", 6, 1, 1),
        floats("rs", [1, 1, 2, 2]),
        w("g.w", 4, 3, 3, 3),
        w("fc.w", 10, 4), w("fc.b", 10),
        w("mm.w", 10, 6), w("mm.b", 6),
        ints("shape", [0, 2, 3]),
    ]
    g = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 20])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3])],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


def upsample_v9():
    """Opset 9: Upsample with a scales input, Clip with min/max attributes."""
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c.w"], ["c"], name="conv", auto_pad="SAME_UPPER", strides=[2, 2]),
        n("Clip", ["c"], ["r"], name="clip", min=0.0, max=6.0),
        n("Upsample", ["r", "sc"], ["u"], name="up", mode="nearest"),
        n("GlobalMaxPool", ["u"], ["y"], name="gmp"),
    ]
    g = helper.make_graph(
        nodes, "upsample_v9",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2, 7, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 1, 1])],
        [w("c.w", 3, 2, 3, 3), floats("sc", [1, 1, 3, 2])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)], ir_version=8)


def variants():
    """Attribute variants: SAME padding, ConvTranspose output_shape, count_include_pad, Resize by sizes,
    squeeze-excitation Mul of two activations, Flatten axis 2, Reshape with -1."""
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c.w"], ["c"], name="conv_same", auto_pad="SAME_UPPER", strides=[2, 2]),
        n("MaxPool", ["c"], ["mp"], name="pool_same_lower", auto_pad="SAME_LOWER", kernel_shape=[3, 3], strides=[2, 2]),
        n("ConvTranspose", ["mp", "d.w"], ["d"], name="deconv_shape", strides=[2, 2], output_shape=[10, 12]),
        n("AveragePool", ["d"], ["ap"], name="avg_pad", kernel_shape=[3, 3], pads=[1, 0, 1, 2], count_include_pad=1),
        n("GlobalAveragePool", ["ap"], ["se0"], name="se_pool"),
        n("Conv", ["se0", "se.w", "se.b"], ["se1"], name="se_fc"),
        n("Sigmoid", ["se1"], ["se2"], name="se_gate"),
        n("Mul", ["se2", "ap"], ["se"], name="se_scale"),
        n("Resize", ["se", "", "", "sizes"], ["rs"], name="resize_sizes", mode="nearest"),
        n("Concat", ["rs", "rs", "rs"], ["cat"], name="cat3", axis=-3),
        n("Flatten", ["cat"], ["fl"], name="flatten_axis2", axis=2),
        n("Reshape", ["fl", "shape"], ["y"], name="reshape_infer"),
    ]
    g = helper.make_graph(
        nodes, "variants",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 19, 23])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6, 480])],
        [w("c.w", 4, 3, 3, 3), w("d.w", 4, 2, 3, 3), w("se.w", 2, 2, 1, 1), w("se.b", 2),
         ints("sizes", [2, 2, 20, 24]), ints("shape", [2, -1, 480])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def unsupported():
    n = helper.make_node
    g = helper.make_graph(
        [n("Relu", ["x"], ["r"], name="relu"), n("Softmax", ["r"], ["y"], name="prob", axis=1)],
        "unsupported",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 2, 2])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def shapes_of(model):
    inferred = shape_inference.infer_shapes(model, strict_mode=True)
    out = {}
    for v in list(inferred.graph.value_info) + list(inferred.graph.output) + list(inferred.graph.input):
        dims = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in v.type.tensor_type.shape.dim]
        out[v.name] = dims
    return inferred, out


def save(model, name, with_runtime=True):
    onnx.checker.check_model(model)
    onnx.save(model, f"{name}.onnx")  # saved WITHOUT value_info: our importer infers shapes
    inferred, shapes = shapes_of(model)
    if with_runtime:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        feeds = {i.name: np.zeros([d if isinstance(d, int) else 1 for d in shapes[i.name]], np.float32)
                 for i in sess.get_inputs()}
        outs = sess.run(None, feeds)
        for o, arr in zip(sess.get_outputs(), outs):
            assert list(arr.shape) == shapes[o.name], (o.name, arr.shape, shapes[o.name])
    with open(f"{name}.shapes.json", "w") as f:
        json.dump(shapes, f, indent=1, sort_keys=True)
    return inferred


if __name__ == "__main__":
    inferred = save(small_cnn(), "small_cnn")
    # The same model with value_info recorded and a symbolic batch dimension.
    dyn = onnx.ModelProto()
    dyn.CopyFrom(inferred)
    for v in list(dyn.graph.input) + list(dyn.graph.output) + list(dyn.graph.value_info):
        v.type.tensor_type.shape.dim[0].dim_param = "N"
    onnx.save(dyn, "small_cnn_dynamic.onnx")
    save(upsample_v9(), "upsample_v9")
    save(variants(), "variants")
    save(unsupported(), "unsupported", with_runtime=True)
    print("ok")

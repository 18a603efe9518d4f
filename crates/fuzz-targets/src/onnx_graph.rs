//! ONNX graphs with random but well-formed nodes (structured): a 4-D input, then nodes
//! of the op types the importer knows (and one it does not), each reading earlier
//! values, with random attributes and weights; serialized and imported.
use arbitrary::Arbitrary;
use onnx_protobuf::{
    attribute_proto::AttributeType, tensor_shape_proto::dimension, type_proto, AttributeProto,
    GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto,
    TypeProto, ValueInfoProto,
};
use protobuf::{Enum, EnumOrUnknown, Message, MessageField};

const OPS: [&str; 24] = [
    "Conv",
    "ConvTranspose",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "BatchNormalization",
    "Relu",
    "LeakyRelu",
    "Sigmoid",
    "Clip",
    "HardSwish",
    "Add",
    "Mul",
    "Concat",
    "Resize",
    "Gemm",
    "MatMul",
    "Flatten",
    "Reshape",
    "Identity",
    "Dropout",
    "Softmax",
    "Constant",
];
const ATTRS: [&str; 8] = [
    "kernel_shape",
    "strides",
    "pads",
    "dilations",
    "group",
    "axis",
    "auto_pad",
    "alpha",
];

#[derive(Arbitrary, Debug)]
struct Node {
    op: u8,
    inputs: Vec<u8>,
    weight_dims: Vec<u8>,
    attrs: Vec<(u8, i8, Vec<i8>)>,
}

/// The structured input.
#[derive(Arbitrary, Debug)]
pub struct Model {
    input: [u8; 4],
    nodes: Vec<Node>,
    opset: u8,
}

fn int_attr(name: &str, v: i64) -> AttributeProto {
    let mut a = AttributeProto::new();
    a.name = name.into();
    a.type_ = EnumOrUnknown::new(AttributeType::INT);
    a.i = v;
    a
}

fn ints_attr(name: &str, v: Vec<i64>) -> AttributeProto {
    let mut a = AttributeProto::new();
    a.name = name.into();
    a.type_ = EnumOrUnknown::new(AttributeType::INTS);
    a.ints = v;
    a
}

fn value_info(name: &str, dims: &[i64]) -> ValueInfoProto {
    let mut shape = TensorShapeProto::new();
    for &d in dims {
        let mut dim = onnx_protobuf::tensor_shape_proto::Dimension::new();
        dim.value = Some(dimension::Value::DimValue(d));
        shape.dim.push(dim);
    }
    let mut t = type_proto::Tensor::new();
    t.elem_type = onnx_protobuf::tensor_proto::DataType::FLOAT.value();
    t.shape = MessageField::some(shape);
    let mut ty = TypeProto::new();
    ty.value = Some(type_proto::Value::TensorType(t));
    let mut v = ValueInfoProto::new();
    v.name = name.into();
    v.type_ = MessageField::some(ty);
    v
}

/// One input, as the fuzzer gives it.
pub fn run(m: Model) {
    let input: Vec<i64> = m.input.iter().map(|&d| i64::from(d % 40) + 1).collect();
    let mut graph = GraphProto::new();
    graph.name = "fuzz".into();
    graph.input.push(value_info("x", &input));
    let mut values = vec!["x".to_string()];
    for (i, n) in m.nodes.iter().take(12).enumerate() {
        let mut node = NodeProto::new();
        node.op_type = if n.op as usize >= OPS.len() * 10 {
            "NoSuchOp".into()
        } else {
            OPS[n.op as usize % OPS.len()].into()
        };
        node.name = format!("n{i}");
        for &k in n.inputs.iter().take(3) {
            node.input.push(values[k as usize % values.len()].clone());
        }
        if !n.weight_dims.is_empty() {
            let mut w = TensorProto::new();
            w.name = format!("w{i}");
            w.data_type = onnx_protobuf::tensor_proto::DataType::FLOAT.value();
            w.dims = n
                .weight_dims
                .iter()
                .take(4)
                .map(|&d| i64::from(d % 70))
                .collect();
            graph.initializer.push(w);
            node.input.push(format!("w{i}"));
        }
        for (a, v, vs) in n.attrs.iter().take(4) {
            let name = ATTRS[*a as usize % ATTRS.len()];
            node.attribute.push(if matches!(name, "group" | "axis") {
                int_attr(name, i64::from(*v))
            } else {
                ints_attr(name, vs.iter().take(4).map(|&x| i64::from(x)).collect())
            });
        }
        let out = format!("v{i}");
        node.output.push(out.clone());
        values.push(out);
        graph.node.push(node);
    }
    graph
        .output
        .push(value_info(values.last().expect("x at least"), &[]));
    let mut model = ModelProto::new();
    model.ir_version = 8;
    let mut opset = OperatorSetIdProto::new();
    opset.version = i64::from(m.opset % 20) + 1;
    model.opset_import.push(opset);
    model.graph = MessageField::some(graph);
    let Ok(bytes) = model.write_to_bytes() else {
        return;
    };
    let _ = tpusim_graph::from_onnx_bytes(&bytes, None, None);
}

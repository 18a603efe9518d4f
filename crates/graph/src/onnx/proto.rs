//! Reading the ONNX protobuf messages (via the `onnx-protobuf` crate): attributes,
//! constant tensor data and value-info shapes. Never panics on malformed input (the
//! crate's own `as_value` helpers can, so they are not used).

use onnx_protobuf::{
    attribute_proto::AttributeType, tensor_proto::DataType, tensor_shape_proto::dimension,
    type_proto, AttributeProto, NodeProto, TensorProto, ValueInfoProto,
};
use protobuf::Enum;

/// The attribute `name` of `node`, if present.
pub(crate) fn attr<'a>(node: &'a NodeProto, name: &str) -> Option<&'a AttributeProto> {
    node.attribute.iter().find(|a| a.name == name)
}

/// Integer attribute, or `default` when absent.
pub(crate) fn attr_int(node: &NodeProto, name: &str, default: i64) -> i64 {
    attr(node, name).map_or(default, |a| a.i)
}

/// Integer-list attribute (empty when absent).
pub(crate) fn attr_ints(node: &NodeProto, name: &str) -> Vec<i64> {
    attr(node, name).map(|a| a.ints.clone()).unwrap_or_default()
}

/// Float attribute, if present.
pub(crate) fn attr_float(node: &NodeProto, name: &str) -> Option<f32> {
    attr(node, name).map(|a| a.f)
}

/// Float-list attribute (empty when absent).
pub(crate) fn attr_floats(node: &NodeProto, name: &str) -> Vec<f32> {
    attr(node, name)
        .map(|a| a.floats.clone())
        .unwrap_or_default()
}

/// String attribute (lossy UTF-8), if present.
pub(crate) fn attr_string(node: &NodeProto, name: &str) -> Option<String> {
    attr(node, name).map(|a| String::from_utf8_lossy(&a.s).into_owned())
}

/// A constant's value as numbers (for shapes, scales, clip bounds). Only small tensors
/// are decoded; weights keep only their dims.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ConstData {
    /// ONNX dims.
    pub dims: Vec<i64>,
    /// Values as f64 when the tensor is numeric and stored inline or as raw data.
    pub values: Option<Vec<f64>>,
}

/// Largest constant whose values we decode (shapes and scales are tiny).
const MAX_DECODED: usize = 64;

/// Decodes a tensor's dims and, when small, its values.
pub(crate) fn const_data(t: &TensorProto) -> ConstData {
    let dims = t.dims.clone();
    let count: Option<usize> = dims.iter().try_fold(1usize, |acc, &d| {
        usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
    });
    let values = match count {
        Some(c) if c <= MAX_DECODED => decode_values(t, c),
        _ => None,
    };
    ConstData { dims, values }
}

fn decode_values(t: &TensorProto, count: usize) -> Option<Vec<f64>> {
    let raw = &t.raw_data;
    let dt = DataType::from_i32(t.data_type)?;
    let v: Vec<f64> = match dt {
        DataType::FLOAT if !raw.is_empty() => raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64)
            .collect(),
        DataType::FLOAT => t.float_data.iter().map(|&x| x as f64).collect(),
        DataType::DOUBLE if !raw.is_empty() => raw
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .collect(),
        DataType::DOUBLE => t.double_data.clone(),
        DataType::INT64 if !raw.is_empty() => raw
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f64)
            .collect(),
        DataType::INT64 => t.int64_data.iter().map(|&x| x as f64).collect(),
        DataType::INT32 if !raw.is_empty() => raw
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64)
            .collect(),
        DataType::INT32 => t.int32_data.iter().map(|&x| x as f64).collect(),
        _ => return None,
    };
    (v.len() == count).then_some(v)
}

/// The tensor a `Constant` node holds (`value`, or `value_float(s)` / `value_int(s)`).
pub(crate) fn constant_node_data(node: &NodeProto) -> Option<ConstData> {
    for a in &node.attribute {
        let ty = a.type_.enum_value().ok()?;
        match (a.name.as_str(), ty) {
            ("value", AttributeType::TENSOR) => return a.t.as_ref().map(const_data),
            ("value_float", AttributeType::FLOAT) => {
                return Some(ConstData {
                    dims: vec![],
                    values: Some(vec![a.f as f64]),
                })
            }
            ("value_int", AttributeType::INT) => {
                return Some(ConstData {
                    dims: vec![],
                    values: Some(vec![a.i as f64]),
                })
            }
            ("value_floats", AttributeType::FLOATS) => {
                return Some(ConstData {
                    dims: vec![a.floats.len() as i64],
                    values: Some(a.floats.iter().map(|&x| x as f64).collect()),
                })
            }
            ("value_ints", AttributeType::INTS) => {
                return Some(ConstData {
                    dims: vec![a.ints.len() as i64],
                    values: Some(a.ints.iter().map(|&x| x as f64).collect()),
                })
            }
            _ => {}
        }
    }
    None
}

/// One dimension of a value-info shape: a number or a symbolic name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Dim {
    /// A fixed size.
    Value(i64),
    /// A symbolic size (`batch`, `N`, …) or an unknown one.
    Param(String),
}

/// The tensor shape recorded in a value-info, if it has one.
pub(crate) fn value_info_dims(v: &ValueInfoProto) -> Option<Vec<Dim>> {
    let tp = v.type_.as_ref()?;
    let Some(type_proto::Value::TensorType(t)) = &tp.value else {
        return None;
    };
    let shape = t.shape.as_ref()?;
    Some(
        shape
            .dim
            .iter()
            .map(|d| match &d.value {
                Some(dimension::Value::DimValue(x)) => Dim::Value(*x),
                Some(dimension::Value::DimParam(p)) => Dim::Param(p.clone()),
                _ => Dim::Param(String::new()),
            })
            .collect(),
    )
}

//! One converter per ONNX op type: reads the node's attributes and operands, adds the
//! matching op(s) through the builder (which infers the output shape), and records the
//! output value with its ONNX dims.

use onnx_protobuf::NodeProto;

use super::proto::{
    attr, attr_float, attr_floats, attr_int, attr_ints, attr_string, constant_node_data, ConstData,
};
use super::{to_shape4, Importer, Value, SUPPORTED_OPS};
use crate::error::{GraphError, Result};
use crate::ir::{Activation, ConvParams, OpKind, PoolParams, Shape4, TensorId};

/// Per-node context: names for messages and operand access.
struct Node<'a> {
    n: &'a NodeProto,
    name: String,
}

impl Node<'_> {
    fn err(&self, reason: impl Into<String>) -> GraphError {
        GraphError::Onnx {
            node: self.name.clone(),
            op_type: self.n.op_type.clone(),
            reason: reason.into(),
        }
    }

    /// Name of input `i`, `None` when absent or empty (an omitted optional input).
    fn input_name(&self, i: usize) -> Option<&str> {
        self.n
            .input
            .get(i)
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    fn out(&self) -> Result<&str> {
        self.n
            .output
            .first()
            .map(String::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| self.err("node has no output"))
    }
}

fn get<'v>(imp: &'v Importer, node: &Node, i: usize) -> Result<&'v Value> {
    let name = node
        .input_name(i)
        .ok_or_else(|| node.err(format!("missing input {i}")))?;
    imp.values
        .get(name)
        .ok_or_else(|| node.err(format!("input '{name}' is not produced before this node")))
}

/// Activation input `i`: its tensor id and ONNX dims.
fn act(imp: &Importer, node: &Node, i: usize) -> Result<(TensorId, Vec<u64>)> {
    match get(imp, node, i)? {
        Value::Act { id, dims } => Ok((*id, dims.clone())),
        Value::Const(_) => Err(node.err(format!(
            "input {i} ('{}') is a constant where an activation is expected (constant folding is not supported)",
            node.input_name(i).unwrap_or_default()
        ))),
    }
}

/// Constant input `i` (initializer or Constant node).
fn konst(imp: &Importer, node: &Node, i: usize) -> Result<(String, ConstData)> {
    match get(imp, node, i)? {
        Value::Const(c) => Ok((
            node.input_name(i).unwrap_or_default().to_string(),
            c.clone(),
        )),
        Value::Act { .. } => Err(node.err(format!(
            "input {i} ('{}') must be a constant (initializer), not a computed tensor",
            node.input_name(i).unwrap_or_default()
        ))),
    }
}

fn dims_u64(node: &Node, dims: &[i64], what: &str) -> Result<Vec<u64>> {
    dims.iter()
        .map(|&d| {
            u64::try_from(d)
                .map_err(|_| node.err(format!("{what} has a negative dimension in {dims:?}")))
        })
        .collect()
}

fn ints_u64(node: &Node, attr_name: &str, v: &[i64], len: usize, default: u64) -> Result<Vec<u64>> {
    if v.is_empty() {
        return Ok(vec![default; len]);
    }
    if v.len() != len {
        return Err(node.err(format!(
            "attribute {attr_name} has {} values, expected {len} (2-D only)",
            v.len()
        )));
    }
    v.iter()
        .map(|&x| {
            u64::try_from(x)
                .map_err(|_| node.err(format!("attribute {attr_name} is negative: {v:?}")))
        })
        .collect()
}

fn record(imp: &mut Importer, node: &Node, id: TensorId, dims: Vec<u64>) -> Result<()> {
    let out = node.out()?.to_string();
    imp.set_act(&node.name, &node.n.op_type, &out, id, dims)
}

/// Adds op `kind` and records its output with dims `dims_of(output shape)`.
fn emit(
    imp: &mut Importer,
    node: &Node,
    kind: OpKind,
    inputs: &[TensorId],
    weights: &[TensorId],
    dims_of: impl Fn(Shape4) -> Vec<u64>,
) -> Result<()> {
    let out = node.out()?.to_string();
    let id = imp
        .b
        .add_op_named(&node.name, kind, inputs, weights, Some(&out))?;
    if matches!(node.n.op_type.as_str(), "MatMul" | "Upsample") {
        let op = imp.b.graph().ops.len() - 1;
        imp.b.set_source_type(op, &node.n.op_type);
    }
    let s = imp.b.shape(id);
    record(imp, node, id, dims_of(s))
}

fn nchw(s: Shape4) -> Vec<u64> {
    vec![s.n, s.c, s.h, s.w]
}

/// Converts one ONNX node.
pub(crate) fn convert(imp: &mut Importer, n: &NodeProto) -> Result<()> {
    let name = if n.name.is_empty() {
        n.output.first().cloned().unwrap_or_default()
    } else {
        n.name.clone()
    };
    let node = Node { n, name };
    if !n.domain.is_empty() && n.domain != "ai.onnx" {
        return Err(GraphError::OnnxUnsupported {
            op_type: format!("{}:{}", n.domain, n.op_type),
            node: node.name,
        });
    }
    match n.op_type.as_str() {
        "Conv" => conv(imp, &node),
        "ConvTranspose" => deconv(imp, &node),
        "MaxPool" | "AveragePool" => pool(imp, &node),
        "GlobalAveragePool" | "GlobalMaxPool" => {
            let (x, d) = act(imp, &node, 0)?;
            if d.len() != 4 {
                return Err(node.err(format!("input rank {} (expected 4)", d.len())));
            }
            let kind = if n.op_type == "GlobalMaxPool" {
                OpKind::GlobalMaxPool
            } else {
                OpKind::GlobalAvgPool
            };
            emit(imp, &node, kind, &[x], &[], nchw)
        }
        "BatchNormalization" => batchnorm(imp, &node),
        "Relu" | "LeakyRelu" | "Sigmoid" | "Tanh" | "HardSigmoid" | "HardSwish" | "Clip" => {
            activation(imp, &node)
        }
        "Add" | "Mul" => binary(imp, &node),
        "Concat" => concat(imp, &node),
        "Upsample" | "Resize" => upsample(imp, &node),
        "Gemm" | "MatMul" => gemm(imp, &node),
        "Flatten" => flatten(imp, &node),
        "Reshape" => reshape(imp, &node),
        "Identity" | "Dropout" => {
            let v = get(imp, &node, 0)?.clone();
            // Dropout's mask output is never produced: a later use is reported as missing.
            let out = node.out()?.to_string();
            match v {
                Value::Act { id, dims } => imp.set_act(&node.name, &n.op_type, &out, id, dims),
                c @ Value::Const(_) => {
                    imp.values.insert(out, c);
                    Ok(())
                }
            }
        }
        "Constant" => {
            let c =
                constant_node_data(n).ok_or_else(|| node.err("no supported value attribute"))?;
            let out = node.out()?.to_string();
            imp.values.insert(out, Value::Const(c));
            Ok(())
        }
        other => {
            debug_assert!(!SUPPORTED_OPS.contains(&other));
            Err(GraphError::OnnxUnsupported {
                op_type: other.to_string(),
                node: node.name,
            })
        }
    }
}

/// Padding from `pads`/`auto_pad` for a forward window op (conv or pool).
fn forward_pads(
    node: &Node,
    in_hw: [u64; 2],
    k: [u64; 2],
    s: [u64; 2],
    d: [u64; 2],
) -> Result<[u64; 4]> {
    if s.contains(&0) || d.contains(&0) {
        return Err(node.err(format!(
            "strides {s:?} and dilations {d:?} must be at least 1"
        )));
    }
    let auto = attr_string(node.n, "auto_pad").unwrap_or_default();
    match auto.as_str() {
        "" | "NOTSET" => {
            let p = ints_u64(node, "pads", &attr_ints(node.n, "pads"), 4, 0)?;
            Ok([p[0], p[1], p[2], p[3]])
        }
        "VALID" => Ok([0; 4]),
        "SAME_UPPER" | "SAME_LOWER" => {
            let mut pads = [0u64; 4];
            for i in 0..2 {
                let out = in_hw[i].div_ceil(s[i]);
                let eff = d[i]
                    .saturating_mul(k[i].saturating_sub(1))
                    .saturating_add(1);
                let total = (out.saturating_sub(1))
                    .saturating_mul(s[i])
                    .saturating_add(eff)
                    .saturating_sub(in_hw[i]);
                let (small, big) = (total / 2, total - total / 2);
                let (begin, end) = if auto == "SAME_UPPER" {
                    (small, big)
                } else {
                    (big, small)
                };
                pads[i] = begin;
                pads[i + 2] = end;
            }
            Ok(pads)
        }
        other => Err(node.err(format!("unknown auto_pad '{other}'"))),
    }
}

fn conv_weights(
    imp: &mut Importer,
    node: &Node,
    filter_rank_msg: &str,
) -> Result<(Shape4, Vec<TensorId>)> {
    let (wname, wc) = konst(imp, node, 1)?;
    let wd = dims_u64(node, &wc.dims, "filter")?;
    let [a, b, kh, kw] = wd[..] else {
        return Err(node.err(format!("filter has dims {:?}; {filter_rank_msg}", wc.dims)));
    };
    let f = Shape4::new(a, b, kh, kw);
    let mut w = vec![imp.weight(&wname, f)];
    if node.input_name(2).is_some() {
        let (bname, bc) = konst(imp, node, 2)?;
        let bd = dims_u64(node, &bc.dims, "bias")?;
        let [c] = bd[..] else {
            return Err(node.err(format!("bias has dims {:?}, expected [C]", bc.dims)));
        };
        w.push(imp.weight(&bname, Shape4::new(1, c, 1, 1)));
    }
    Ok((f, w))
}

fn check_kernel_attr(node: &Node, f: Shape4) -> Result<()> {
    let ks = attr_ints(node.n, "kernel_shape");
    if !ks.is_empty() && ks != [f.h as i64, f.w as i64] {
        return Err(node.err(format!("kernel_shape {ks:?} disagrees with the filter {f}")));
    }
    Ok(())
}

fn conv(imp: &mut Importer, node: &Node) -> Result<()> {
    let (x, d) = act(imp, node, 0)?;
    if d.len() != 4 {
        return Err(node.err(format!(
            "input rank {} (only 2-D convolution on NCHW is supported)",
            d.len()
        )));
    }
    let (f, w) = conv_weights(imp, node, "only 2-D convolution is supported")?;
    check_kernel_attr(node, f)?;
    let s = ints_u64(node, "strides", &attr_ints(node.n, "strides"), 2, 1)?;
    let dl = ints_u64(node, "dilations", &attr_ints(node.n, "dilations"), 2, 1)?;
    let groups =
        u64::try_from(attr_int(node.n, "group", 1)).map_err(|_| node.err("negative group"))?;
    let (k, s, dl) = ([f.h, f.w], [s[0], s[1]], [dl[0], dl[1]]);
    let pad = forward_pads(node, [d[2], d[3]], k, s, dl)?;
    let p = ConvParams {
        kernel: k,
        stride: s,
        pad,
        dilation: dl,
        groups,
    };
    emit(imp, node, OpKind::Conv(p), &[x], &w, nchw)
}

fn deconv(imp: &mut Importer, node: &Node) -> Result<()> {
    let (x, d) = act(imp, node, 0)?;
    if d.len() != 4 {
        return Err(node.err(format!(
            "input rank {} (only 2-D deconvolution on NCHW is supported)",
            d.len()
        )));
    }
    let (f, w) = conv_weights(imp, node, "only 2-D deconvolution is supported")?;
    check_kernel_attr(node, f)?;
    let s = ints_u64(node, "strides", &attr_ints(node.n, "strides"), 2, 1)?;
    let dl = ints_u64(node, "dilations", &attr_ints(node.n, "dilations"), 2, 1)?;
    let op = ints_u64(
        node,
        "output_padding",
        &attr_ints(node.n, "output_padding"),
        2,
        0,
    )?;
    let groups =
        u64::try_from(attr_int(node.n, "group", 1)).map_err(|_| node.err("negative group"))?;
    let k = [f.h, f.w];
    let auto = attr_string(node.n, "auto_pad").unwrap_or_default();
    let out_shape = attr_ints(node.n, "output_shape");
    let target: Option<[u64; 2]> = match (out_shape.len(), auto.as_str()) {
        (0, "SAME_UPPER" | "SAME_LOWER") => {
            Some([d[2].saturating_mul(s[0]), d[3].saturating_mul(s[1])])
        }
        (0, _) => None,
        (2, _) => Some([
            u64::try_from(out_shape[0]).map_err(|_| node.err("negative output_shape"))?,
            u64::try_from(out_shape[1]).map_err(|_| node.err("negative output_shape"))?,
        ]),
        (4, _) => Some([
            u64::try_from(out_shape[2]).map_err(|_| node.err("negative output_shape"))?,
            u64::try_from(out_shape[3]).map_err(|_| node.err("negative output_shape"))?,
        ]),
        _ => {
            return Err(node.err(format!(
                "output_shape {out_shape:?} must have 2 (H, W) values"
            )))
        }
    };
    let pad = match target {
        None => match auto.as_str() {
            "VALID" => [0; 4],
            _ => {
                let p = ints_u64(node, "pads", &attr_ints(node.n, "pads"), 4, 0)?;
                [p[0], p[1], p[2], p[3]]
            }
        },
        Some(t) => {
            let mut pads = [0u64; 4];
            for i in 0..2 {
                let full = s[i] as i128 * (d[2 + i] as i128 - 1)
                    + op[i] as i128
                    + ((k[i] as i128 - 1) * dl[i] as i128 + 1);
                let total = full - t[i] as i128;
                if total < 0 {
                    return Err(node.err(format!(
                        "output_shape {t:?} needs negative padding ({total}) along axis {i}; not supported"
                    )));
                }
                let total = total as u64;
                let (small, big) = (total / 2, total - total / 2);
                let (b, e) = if auto == "SAME_UPPER" {
                    (small, big)
                } else {
                    (big, small)
                };
                pads[i] = b;
                pads[i + 2] = e;
            }
            pads
        }
    };
    let p = ConvParams {
        kernel: k,
        stride: [s[0], s[1]],
        pad,
        dilation: [dl[0], dl[1]],
        groups,
    };
    emit(
        imp,
        node,
        OpKind::Deconv {
            params: p,
            output_pad: [op[0], op[1]],
        },
        &[x],
        &w,
        nchw,
    )
}

fn pool(imp: &mut Importer, node: &Node) -> Result<()> {
    let (x, d) = act(imp, node, 0)?;
    if d.len() != 4 {
        return Err(node.err(format!(
            "input rank {} (only 2-D pooling on NCHW is supported)",
            d.len()
        )));
    }
    let k = ints_u64(
        node,
        "kernel_shape",
        &attr_ints(node.n, "kernel_shape"),
        2,
        0,
    )?;
    if k.contains(&0) {
        return Err(node.err("kernel_shape missing or zero"));
    }
    let s = ints_u64(node, "strides", &attr_ints(node.n, "strides"), 2, 1)?;
    let dl = ints_u64(node, "dilations", &attr_ints(node.n, "dilations"), 2, 1)?;
    if dl != [1, 1] {
        return Err(node.err(format!("dilated pooling {dl:?} is not supported")));
    }
    let (k, s) = ([k[0], k[1]], [s[0], s[1]]);
    let pad = forward_pads(node, [d[2], d[3]], k, s, [1, 1])?;
    let pp = PoolParams {
        kernel: k,
        stride: s,
        pad,
        ceil_mode: attr_int(node.n, "ceil_mode", 0) != 0,
        count_include_pad: attr_int(node.n, "count_include_pad", 0) != 0,
    };
    let kind = if node.n.op_type == "MaxPool" {
        OpKind::MaxPool(pp)
    } else {
        OpKind::AvgPool(pp)
    };
    emit(imp, node, kind, &[x], &[], nchw)
}

fn batchnorm(imp: &mut Importer, node: &Node) -> Result<()> {
    if node.n.output.iter().skip(1).any(|o| !o.is_empty()) {
        return Err(node.err("training-mode outputs (running mean/var) are not supported"));
    }
    let (x, d) = act(imp, node, 0)?;
    let c = *d
        .get(1)
        .ok_or_else(|| node.err("input has no channel axis"))?;
    let mut w = Vec::new();
    for i in 1..=2 {
        let (name, k) = konst(imp, node, i)?;
        if k.dims != [c as i64] {
            return Err(node.err(format!(
                "parameter '{name}' has dims {:?}, expected [{c}]",
                k.dims
            )));
        }
        w.push(imp.weight(&name, Shape4::new(1, c, 1, 1)));
    }
    emit(imp, node, OpKind::BatchNorm, &[x], &w, |_| d.clone())
}

/// A scalar bound of Clip: opset < 11 attribute, else optional constant input.
fn clip_bound(imp: &Importer, node: &Node, attr_name: &str, input: usize) -> Result<Option<f64>> {
    if imp.opset < 11 {
        return Ok(attr_float(node.n, attr_name).map(f64::from));
    }
    if node.input_name(input).is_none() {
        return Ok(None);
    }
    let (name, c) = konst(imp, node, input)?;
    match c.values.as_deref() {
        Some([v]) => Ok(Some(*v)),
        _ => Err(node.err(format!("bound '{name}' is not a readable scalar"))),
    }
}

fn activation(imp: &mut Importer, node: &Node) -> Result<()> {
    let (x, d) = act(imp, node, 0)?;
    let a = match node.n.op_type.as_str() {
        "Relu" => Activation::Relu,
        "LeakyRelu" => Activation::LeakyRelu,
        "Sigmoid" => Activation::Sigmoid,
        "Tanh" => Activation::Tanh,
        "HardSigmoid" => Activation::HardSigmoid,
        "HardSwish" => Activation::HardSwish,
        _ => {
            let lo = clip_bound(imp, node, "min", 1)?;
            let hi = clip_bound(imp, node, "max", 2)?;
            match (lo, hi) {
                (Some(l), Some(h)) if l == 0.0 && h == 6.0 => Activation::Relu6,
                (Some(l), h) if l == 0.0 && h.map_or(true, f64::is_infinite) => Activation::Relu,
                _ => {
                    return Err(node.err(format!(
                        "Clip(min {lo:?}, max {hi:?}) is not supported (only [0, 6] → Relu6 and [0, ∞) → Relu)"
                    )))
                }
            }
        }
    };
    emit(imp, node, OpKind::Act(a), &[x], &[], |_| d.clone())
}

fn binary(imp: &mut Importer, node: &Node) -> Result<()> {
    let kind = if node.n.op_type == "Add" {
        OpKind::Add
    } else {
        OpKind::Mul
    };
    let (a, b) = (get(imp, node, 0)?.clone(), get(imp, node, 1)?.clone());
    match (a, b) {
        (Value::Act { id: ia, dims: da }, Value::Act { id: ib, dims: db }) => {
            // Put the full-shape operand first (add and mul commute).
            let el = |d: &[u64]| to_shape4(d).and_then(|s| s.elements());
            let (first, second, dims) = if (da.len(), el(&da)) >= (db.len(), el(&db)) {
                (ia, ib, da)
            } else {
                (ib, ia, db)
            };
            emit(imp, node, kind, &[first, second], &[], |_| dims.clone())
        }
        (Value::Act { id, dims }, Value::Const(c)) | (Value::Const(c), Value::Act { id, dims }) => {
            let cname = if matches!(get(imp, node, 0)?, Value::Const(_)) {
                node.input_name(0)
            } else {
                node.input_name(1)
            }
            .unwrap_or_default()
            .to_string();
            let cd = dims_u64(node, &c.dims, "constant operand")?;
            if cd.len() > dims.len() {
                return Err(node.err(format!(
                    "constant '{cname}' has more dims {cd:?} than the activation {dims:?}"
                )));
            }
            // Right-align the constant's dims to the activation's rank (numpy broadcasting).
            let mut aligned = vec![1u64; dims.len() - cd.len()];
            aligned.extend(&cd);
            let shape = to_shape4(&aligned).ok_or_else(|| node.err("operand rank above 4"))?;
            let w = imp.weight(&cname, shape);
            emit(imp, node, kind, &[id], &[w], |_| dims.clone())
        }
        (Value::Const(_), Value::Const(_)) => {
            Err(node.err("both operands are constants (constant folding is not supported)"))
        }
    }
}

fn concat(imp: &mut Importer, node: &Node) -> Result<()> {
    let mut ids = Vec::new();
    let mut dims: Option<Vec<u64>> = None;
    for i in 0..node.n.input.len() {
        let (id, d) = act(imp, node, i)?;
        ids.push(id);
        match &mut dims {
            None => dims = Some(d),
            Some(acc) => {
                if acc.len() != d.len() || acc.len() < 2 {
                    return Err(node.err(format!(
                        "inputs of ranks {} and {} cannot be concatenated",
                        acc.len(),
                        d.len()
                    )));
                }
                acc[1] = acc[1].saturating_add(d[1]);
            }
        }
    }
    let dims = dims.ok_or_else(|| node.err("no inputs"))?;
    let axis = attr_int(node.n, "axis", 1);
    let rank = dims.len() as i64;
    if axis != 1 && axis + rank != 1 {
        return Err(node.err(format!(
            "axis {axis} (only the channel axis 1 is supported)"
        )));
    }
    emit(imp, node, OpKind::Concat, &ids, &[], |_| dims.clone())
}

fn integer_scale(node: &Node, v: f64, axis: &str) -> Result<u64> {
    if v >= 1.0 && v.fract() == 0.0 && v <= u32::MAX as f64 {
        Ok(v as u64)
    } else {
        Err(node.err(format!("scale {v} along {axis} is not a positive integer (only integer upsampling is supported)")))
    }
}

fn upsample(imp: &mut Importer, node: &Node) -> Result<()> {
    let (x, d) = act(imp, node, 0)?;
    if d.len() != 4 {
        return Err(node.err(format!("input rank {} (expected 4)", d.len())));
    }
    // Scales: Upsample-7 attribute; Upsample-9 / Resize-10 input 1; Resize-11+ input 2,
    // or sizes in input 3.
    let scales_input = if node.n.op_type == "Upsample" || imp.opset < 11 {
        1
    } else {
        2
    };
    let mut scales: Option<Vec<f64>> = None;
    if node.n.op_type == "Upsample" && attr(node.n, "scales").is_some() {
        scales = Some(
            attr_floats(node.n, "scales")
                .iter()
                .map(|&x| f64::from(x))
                .collect(),
        );
    } else if node.input_name(scales_input).is_some() {
        let (name, c) = konst(imp, node, scales_input)?;
        let v = c
            .values
            .ok_or_else(|| node.err(format!("scales '{name}' are not readable")))?;
        if !v.is_empty() {
            scales = Some(v);
        }
    }
    if scales.is_none() && node.input_name(3).is_some() {
        let (name, c) = konst(imp, node, 3)?;
        let v = c
            .values
            .ok_or_else(|| node.err(format!("sizes '{name}' are not readable")))?;
        if v.len() != 4 {
            return Err(node.err(format!("sizes {v:?} must have 4 values")));
        }
        let mut s = Vec::new();
        for (i, (&want, &have)) in v.iter().zip(&d).enumerate() {
            if want < 0.0 || have == 0 || (want as u64) % have != 0 {
                return Err(node.err(format!(
                    "size {want} along axis {i} is not an integer multiple of {have}"
                )));
            }
            s.push((want as u64 / have) as f64);
        }
        scales = Some(s);
    }
    let s = scales.ok_or_else(|| node.err("neither scales nor sizes given"))?;
    let [sn, sc, sh, sw] = s[..] else {
        return Err(node.err(format!("scales {s:?} must have 4 values (N, C, H, W)")));
    };
    if sn != 1.0 || sc != 1.0 {
        return Err(node.err(format!(
            "scales {s:?} resize N or C (only H and W are supported)"
        )));
    }
    let kind = OpKind::Upsample {
        scale_h: integer_scale(node, sh, "H")?,
        scale_w: integer_scale(node, sw, "W")?,
    };
    emit(imp, node, kind, &[x], &[], nchw)
}

fn gemm(imp: &mut Importer, node: &Node) -> Result<()> {
    let (x, d) = act(imp, node, 0)?;
    if d.len() != 2 {
        return Err(node.err(format!(
            "input rank {} (only 2-D [N, K] inputs are supported; add a Flatten)",
            d.len()
        )));
    }
    let is_gemm = node.n.op_type == "Gemm";
    if is_gemm && attr_int(node.n, "transA", 0) != 0 {
        return Err(node.err("transA = 1 is not supported"));
    }
    let (wname, wc) = konst(imp, node, 1)?;
    let wd = dims_u64(node, &wc.dims, "weight")?;
    let [r, c] = wd[..] else {
        return Err(node.err(format!("weight has dims {:?}, expected 2-D", wc.dims)));
    };
    let (k, f) = if is_gemm && attr_int(node.n, "transB", 0) != 0 {
        (c, r)
    } else {
        (r, c)
    };
    let mut w = vec![imp.weight(&wname, Shape4::new(k, f, 1, 1))];
    if is_gemm && node.input_name(2).is_some() {
        let (bname, bc) = konst(imp, node, 2)?;
        if bc.dims != [f as i64] && bc.dims != [1, f as i64] {
            return Err(node.err(format!(
                "bias '{bname}' has dims {:?}, expected [{f}]",
                bc.dims
            )));
        }
        w.push(imp.weight(&bname, Shape4::new(1, f, 1, 1)));
    }
    emit(imp, node, OpKind::Gemm, &[x], &w, |s| vec![s.n, s.c])
}

fn product(node: &Node, d: &[u64]) -> Result<u64> {
    d.iter()
        .try_fold(1u64, |a, &b| a.checked_mul(b))
        .ok_or_else(|| node.err("size overflows u64"))
}

fn add_reshape(imp: &mut Importer, node: &Node, x: TensorId, target: Vec<u64>) -> Result<()> {
    let shape = to_shape4(&target)
        .ok_or_else(|| node.err(format!("target shape {target:?} has rank above 4")))?;
    let out = node.out()?.to_string();
    let id = imp.b.reshape(&node.name, x, shape, Some(&out))?;
    record(imp, node, id, target)
}

fn flatten(imp: &mut Importer, node: &Node) -> Result<()> {
    let (x, d) = act(imp, node, 0)?;
    let rank = d.len() as i64;
    let mut axis = attr_int(node.n, "axis", 1);
    if axis < 0 {
        axis += rank;
    }
    if !(0..=rank).contains(&axis) {
        return Err(node.err(format!("axis {axis} out of range for rank {rank}")));
    }
    let (a, b) = d.split_at(axis as usize);
    let target = vec![product(node, a)?, product(node, b)?];
    if axis == 1 {
        return emit(imp, node, OpKind::Flatten, &[x], &[], |s| vec![s.n, s.c]);
    }
    add_reshape(imp, node, x, target)
}

fn reshape(imp: &mut Importer, node: &Node) -> Result<()> {
    let (x, d) = act(imp, node, 0)?;
    let (sname, c) = konst(imp, node, 1)?;
    let spec = c
        .values
        .ok_or_else(|| node.err(format!("shape '{sname}' is not a readable constant")))?;
    let allow_zero = attr_int(node.n, "allowzero", 0) != 0;
    let total = product(node, &d)?;
    let mut target: Vec<u64> = Vec::with_capacity(spec.len());
    let mut infer_at = None;
    for (i, &v) in spec.iter().enumerate() {
        let v = v as i64;
        match v {
            -1 if infer_at.is_none() => {
                infer_at = Some(i);
                target.push(1);
            }
            0 if !allow_zero => {
                target.push(*d.get(i).ok_or_else(|| {
                    node.err(format!("shape {spec:?}: 0 copies a missing dim {i}"))
                })?)
            }
            v if v > 0 => target.push(v as u64),
            _ => return Err(node.err(format!("shape {spec:?} is not a valid reshape target"))),
        }
    }
    // A hard-coded batch (the file's own) follows a batch override.
    if let (Some(new_b), Some(old_b), Some(first)) =
        (imp.opts.batch, imp.file_batch, target.first_mut())
    {
        if infer_at != Some(0) && *first == old_b && spec.first().is_some_and(|&v| v > 0.0) {
            *first = new_b;
        }
    }
    if let Some(i) = infer_at {
        let known = product(node, &target)?;
        if known == 0 || total % known != 0 {
            return Err(node.err(format!("cannot reshape {d:?} to {spec:?}")));
        }
        target[i] = total / known;
    }
    add_reshape(imp, node, x, target)
}

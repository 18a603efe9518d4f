//! Shape inference, constant folding and the work of each ONNX op the N-D graph
//! imports.

use super::fold::{broadcast, count, strides, zip, Val, MAX_ELEMENTS};
use super::Work;
use crate::onnx::proto::{attr, attr_int, attr_ints};
use onnx_protobuf::NodeProto;

/// Why a node could not be imported.
pub(crate) enum Fail {
    /// The op type is not imported.
    Unsupported,
    /// Input `index` had to be a constant (`what`) and is computed at run time.
    NotConst { index: usize, what: &'static str },
    /// Anything else, in words.
    Bad(String),
}

pub(super) type R<T> = std::result::Result<T, Fail>;

pub(super) fn bad<T>(s: impl Into<String>) -> R<T> {
    Err(Fail::Bad(s.into()))
}

/// What a node produces.
pub(crate) struct Out {
    pub vals: Vec<Val>,
    pub work: Work,
}

/// Axis `a` (negative from the end) of a rank-`rank` tensor; a scalar has none, so every
/// op along an axis refuses one (a Split of a scalar indexed its dims: the nd_onnx fuzzer).
pub(super) fn axis(a: i64, rank: usize) -> R<usize> {
    let r = rank as i64;
    let x = if a < 0 { a + r } else { a };
    if x < 0 || x >= r {
        return bad(format!("axis {a} is outside a rank-{rank} tensor"));
    }
    Ok(x as usize)
}

fn consts<'a>(ins: &'a [Val], i: usize, what: &'static str) -> R<&'a Vec<f64>> {
    ins.get(i)
        .and_then(|v| v.konst.as_ref())
        .ok_or(Fail::NotConst { index: i, what })
}

fn ints(ins: &[Val], i: usize, what: &'static str) -> R<Vec<i64>> {
    Ok(consts(ins, i, what)?.iter().map(|&x| x as i64).collect())
}

pub(super) fn input(ins: &[Val], i: usize) -> R<&Val> {
    ins.get(i)
        .ok_or_else(|| Fail::Bad(format!("input {i} is missing")))
}

fn dims_of(values: &[i64], what: &str) -> R<Vec<u64>> {
    values
        .iter()
        .map(|&d| u64::try_from(d).map_err(|_| Fail::Bad(format!("{what} {d} is negative"))))
        .collect()
}

pub(super) fn one(v: Val, work: Work) -> R<Out> {
    Ok(Out {
        vals: vec![v],
        work,
    })
}

/// Flops per output element of element-wise ops (the exporters' decompositions).
fn elementwise_flops(op: &str) -> Option<f64> {
    Some(match op {
        "Add" | "Sub" | "Mul" | "Div" | "Max" | "Min" | "Neg" | "Abs" | "Relu" | "Equal"
        | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Xor" | "Not"
        | "Mod" | "Floor" | "Ceil" | "Where" | "Clip" | "Sign" | "IsNaN" | "IsInf" => 1.0,
        "Pow" | "Sqrt" | "Reciprocal" | "Exp" | "Log" | "Erf" | "Tanh" | "Sigmoid" | "Sin"
        | "Cos" | "Softplus" | "HardSigmoid" => 1.0,
        "Gelu" => 8.0,
        _ => return None,
    })
}

fn fold_fn(op: &str, int: bool) -> Option<fn(&[f64]) -> f64> {
    Some(match (op, int) {
        ("Add", _) => |a| a[0] + a[1],
        ("Sub", _) => |a| a[0] - a[1],
        ("Mul", _) => |a| a[0] * a[1],
        ("Div", true) => |a| {
            if a[1] == 0.0 {
                0.0
            } else {
                (a[0] / a[1]).trunc()
            }
        },
        ("Div", false) => |a| a[0] / a[1],
        ("Max", _) => |a| a[0].max(a[1]),
        ("Min", _) => |a| a[0].min(a[1]),
        ("Mod", _) => |a| if a[1] == 0.0 { 0.0 } else { a[0] % a[1] },
        ("Pow", _) => |a| a[0].powf(a[1]),
        ("Equal", _) => |a| f64::from(u8::from(a[0] == a[1])),
        ("Less", _) => |a| f64::from(u8::from(a[0] < a[1])),
        ("Greater", _) => |a| f64::from(u8::from(a[0] > a[1])),
        ("LessOrEqual", _) => |a| f64::from(u8::from(a[0] <= a[1])),
        ("GreaterOrEqual", _) => |a| f64::from(u8::from(a[0] >= a[1])),
        ("And", _) => |a| f64::from(u8::from(a[0] != 0.0 && a[1] != 0.0)),
        ("Or", _) => |a| f64::from(u8::from(a[0] != 0.0 || a[1] != 0.0)),
        ("Where", _) => |a| if a[0] != 0.0 { a[1] } else { a[2] },
        ("Neg", _) => |a| -a[0],
        ("Abs", _) => |a| a[0].abs(),
        ("Not", _) => |a| f64::from(u8::from(a[0] == 0.0)),
        ("Sqrt", _) => |a| a[0].sqrt(),
        ("Floor", _) => |a| a[0].floor(),
        ("Ceil", _) => |a| a[0].ceil(),
        ("Reciprocal", _) => |a| 1.0 / a[0],
        ("Relu", _) => |a| a[0].max(0.0),
        _ => return None,
    })
}

/// Inputs an element-wise op computes with: Where 3; Clip its first (its bounds are
/// scalars); Max and Min, variadic, the first two or one; the unary ops 1; the binary
/// ops 2, which a graph must give (an Add of one input was folded as one and indexed
/// past it: the nd_onnx fuzzer).
fn arity(op: &str, given: usize) -> usize {
    match op {
        "Where" => 3,
        "Clip" => 1,
        "Max" | "Min" => given.clamp(1, 2),
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "Equal" | "Less" | "Greater"
        | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Xor" => 2,
        _ => 1,
    }
}

fn elementwise(node: &NodeProto, ins: &[Val], flops: f64) -> R<Out> {
    let op = node.op_type.as_str();
    let arity = arity(op, ins.len());
    let used: Vec<&Val> = ins.iter().take(arity).collect();
    if used.len() < arity {
        return bad(format!("{op} needs {arity} inputs"));
    }
    let mut out = used[0].dims.clone();
    for v in &used[1..] {
        out = broadcast(&out, &v.dims).ok_or_else(|| {
            Fail::Bad(format!(
                "shapes {:?} and {:?} do not broadcast",
                out, v.dims
            ))
        })?;
    }
    let int = match op {
        "Where" => used[1].int,
        "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Not" => {
            true
        }
        _ => used[0].int,
    };
    // a lone input of Max or Min is the result itself
    let fold = if used.len() == 1 && matches!(op, "Max" | "Min") {
        Some((|a: &[f64]| a[0]) as fn(&[f64]) -> f64)
    } else {
        fold_fn(op, int)
    };
    if let Some(f) = fold {
        if let Some(values) = zip(&used, &out, f) {
            return one(Val::constant(out, values, int), Work::Free);
        }
    }
    let mut v = Val::act(out);
    v.int = int;
    let flops = flops * v.elements();
    one(v, Work::Vector { flops })
}

/// Shape inference, folding and work of `node` on inputs `ins`.
pub(crate) fn infer(node: &NodeProto, ins: &[Val], opset: i64) -> R<Out> {
    let op = node.op_type.as_str();
    if !node.domain.is_empty() && node.domain != "ai.onnx" {
        return Err(Fail::Unsupported);
    }
    if let Some(f) = elementwise_flops(op) {
        return elementwise(node, ins, f);
    }
    match op {
        "Identity" | "Dropout" => {
            let v = input(ins, 0)?.clone();
            let mask = Val::act(v.dims.clone());
            Ok(Out {
                vals: vec![v, mask],
                work: Work::Free,
            })
        }
        "Constant" => {
            let c = crate::onnx::proto::constant_node_data(node)
                .ok_or_else(|| Fail::Bad("no value attribute".into()))?;
            let dims = dims_of(&c.dims, "dim")?;
            let int = attr(node, "value")
                .and_then(|a| a.t.as_ref())
                .map_or(true, |t| t.data_type == 7 || t.data_type == 6)
                && !node
                    .attribute
                    .iter()
                    .any(|a| a.name.starts_with("value_float"));
            match c.values {
                Some(v) => one(Val::constant(dims, v, int), Work::Free),
                None => one(
                    Val {
                        int,
                        ..Val::act(dims)
                    },
                    Work::Free,
                ),
            }
        }
        "Shape" => {
            let d = &input(ins, 0)?.dims;
            let r = d.len() as i64;
            let clamp = |x: i64| (if x < 0 { x + r } else { x }).clamp(0, r) as usize;
            let start = clamp(attr_int(node, "start", 0));
            let end = clamp(attr(node, "end").map_or(r, |a| a.i));
            let v: Vec<f64> = d[start..end.max(start)].iter().map(|&x| x as f64).collect();
            one(Val::constant(vec![v.len() as u64], v, true), Work::Free)
        }
        "Size" => {
            let n = input(ins, 0)?.elements();
            one(Val::constant(vec![], vec![n], true), Work::Free)
        }
        "Cast" => {
            let x = input(ins, 0)?;
            let to = attr_int(node, "to", 1);
            let int = matches!(to, 2..=7 | 9 | 12 | 13);
            if let Some(k) = &x.konst {
                let v = k.iter().map(|&a| if int { a.trunc() } else { a }).collect();
                return one(Val::constant(x.dims.clone(), v, int), Work::Free);
            }
            let mut v = Val::act(x.dims.clone());
            v.int = int;
            one(v, Work::Move)
        }
        "ConstantOfShape" => {
            let dims = dims_of(&ints(ins, 0, "shape")?, "dim")?;
            let fill = attr(node, "value")
                .and_then(|a| a.t.as_ref())
                .map(crate::onnx::proto::const_data)
                .and_then(|c| c.values)
                .and_then(|v| v.first().copied())
                .unwrap_or(0.0);
            let n = checked(&dims)?;
            let int = attr(node, "value")
                .and_then(|a| a.t.as_ref())
                .is_some_and(|t| t.data_type == 7);
            if n as usize <= super::fold::MAX_FOLD {
                return one(Val::constant(dims, vec![fill; n as usize], int), Work::Free);
            }
            one(
                Val {
                    int,
                    ..Val::act(dims)
                },
                Work::Move,
            )
        }
        "Range" => {
            let s = consts(ins, 0, "start")?[0];
            let l = consts(ins, 1, "limit")?[0];
            let d = consts(ins, 2, "delta")?[0];
            if d == 0.0 {
                return bad("Range delta is 0");
            }
            let n = ((l - s) / d).ceil().max(0.0) as u64;
            let int = input(ins, 0)?.int;
            if n as usize <= super::fold::MAX_FOLD {
                let v = (0..n).map(|i| s + i as f64 * d).collect();
                return one(Val::constant(vec![n], v, int), Work::Free);
            }
            one(
                Val {
                    int,
                    ..Val::act(vec![n])
                },
                Work::Move,
            )
        }
        "Unsqueeze" => {
            let x = input(ins, 0)?;
            let axes = if opset >= 13 {
                ints(ins, 1, "axes")?
            } else {
                attr_ints(node, "axes")
            };
            let rank = x.dims.len() + axes.len();
            let mut ax: Vec<usize> = axes.iter().map(|&a| axis(a, rank)).collect::<R<_>>()?;
            ax.sort_unstable();
            let mut dims = x.dims.clone();
            for a in ax {
                if a > dims.len() {
                    return bad("Unsqueeze axis out of range");
                }
                dims.insert(a, 1);
            }
            view(x, dims)
        }
        "Squeeze" => {
            let x = input(ins, 0)?;
            let axes = if opset >= 13 {
                if ins.len() > 1 {
                    ints(ins, 1, "axes")?
                } else {
                    vec![]
                }
            } else {
                attr_ints(node, "axes")
            };
            let ax: Vec<usize> = axes
                .iter()
                .map(|&a| axis(a, x.dims.len()))
                .collect::<R<_>>()?;
            let dims = x
                .dims
                .iter()
                .enumerate()
                .filter(|(i, &d)| {
                    !(if ax.is_empty() {
                        d == 1
                    } else {
                        ax.contains(i)
                    })
                })
                .map(|(_, &d)| d)
                .collect();
            view(x, dims)
        }
        "Reshape" => {
            let x = input(ins, 0)?;
            let shape = ints(ins, 1, "shape")?;
            let allow_zero = attr_int(node, "allowzero", 0) == 1;
            let total = checked(&x.dims)?;
            let mut dims = Vec::with_capacity(shape.len());
            let mut infer_at = None;
            for (i, &s) in shape.iter().enumerate() {
                dims.push(match s {
                    0 if !allow_zero => *x
                        .dims
                        .get(i)
                        .ok_or_else(|| Fail::Bad("Reshape copies a dim the input lacks".into()))?,
                    -1 if infer_at.is_none() => {
                        infer_at = Some(i);
                        1
                    }
                    s if s >= 0 => s as u64,
                    s => return bad(format!("Reshape size {s}")),
                });
            }
            let known = checked(&dims)?;
            if let Some(i) = infer_at {
                if known == 0 || total % known != 0 {
                    return bad(format!("cannot reshape {:?} to {shape:?}", x.dims));
                }
                dims[i] = total / known;
            } else if known != total {
                return bad(format!(
                    "cannot reshape {:?} ({total} elements) to {shape:?}",
                    x.dims
                ));
            }
            view(x, dims)
        }
        "Flatten" => {
            let x = input(ins, 0)?;
            let a = axis(attr_int(node, "axis", 1), x.dims.len() + 1)?;
            let dims = vec![checked(&x.dims[..a])?, checked(&x.dims[a..])?];
            view(x, dims)
        }
        "Concat" => {
            let first = input(ins, 0)?;
            let a = axis(attr_int(node, "axis", 0), first.dims.len())?;
            let mut dims = first.dims.clone();
            dims[a] = 0;
            for v in ins {
                if v.dims.len() != dims.len() {
                    return bad("Concat inputs differ in rank");
                }
                dims[a] += v.dims[a];
            }
            if ins.iter().all(|v| v.konst.is_some()) && dims.len() == 1 {
                let values = ins
                    .iter()
                    .flat_map(|v| v.konst.clone().unwrap_or_default())
                    .collect();
                return one(Val::constant(dims, values, first.int), Work::Free);
            }
            one(Val::typed(dims, first.int), Work::Move)
        }
        "Gather" => gather(node, ins),
        "GatherND" => super::gathers::gather_nd(node, ins),
        "GatherElements" => super::gathers::gather_elements(node, ins),
        "Slice" => slice(node, ins, opset),
        "Split" => split(node, ins, opset),
        "Transpose" => {
            let x = input(ins, 0)?;
            let r = x.dims.len();
            let perm: Vec<i64> = match attr_ints(node, "perm") {
                p if p.is_empty() => (0..r as i64).rev().collect(),
                p => p,
            };
            let p: Vec<usize> = perm.iter().map(|&a| axis(a, r)).collect::<R<_>>()?;
            if p.len() != r {
                return bad("perm has the wrong length");
            }
            let dims = p.iter().map(|&i| x.dims[i]).collect();
            if x.weight {
                // A transposed weight is laid out once, not moved per step.
                return one(
                    Val {
                        weight: true,
                        ..Val::act(dims)
                    },
                    Work::Free,
                );
            }
            one(Val::typed(dims, x.int), Work::Move)
        }
        "Expand" => {
            let x = input(ins, 0)?;
            let shape = dims_of(&ints(ins, 1, "shape")?, "dim")?;
            let dims = broadcast(&x.dims, &shape)
                .ok_or_else(|| Fail::Bad("Expand shape does not broadcast".into()))?;
            if let Some(v) = zip(&[x], &dims, |a| a[0]) {
                return one(Val::constant(dims, v, x.int), Work::Free);
            }
            one(Val::typed(dims, x.int), Work::Move)
        }
        "Trilu" | "CumSum" => {
            let x = input(ins, 0)?;
            one(
                Val::act(x.dims.clone()),
                Work::Vector {
                    flops: x.elements(),
                },
            )
        }
        "MatMul" => matmul(input(ins, 0)?, input(ins, 1)?),
        "Gemm" => gemm(node, ins),
        "Softmax" | "LogSoftmax" => {
            let x = input(ins, 0)?;
            one(
                Val::act(x.dims.clone()),
                Work::Vector {
                    flops: 5.0 * x.elements(),
                },
            )
        }
        "LayerNormalization" => {
            let x = input(ins, 0)?;
            let a = axis(attr_int(node, "axis", -1), x.dims.len())?;
            let stat: Vec<u64> = x
                .dims
                .iter()
                .enumerate()
                .map(|(i, &d)| if i < a { d } else { 1 })
                .collect();
            Ok(Out {
                vals: vec![
                    Val::act(x.dims.clone()),
                    Val::act(stat.clone()),
                    Val::act(stat),
                ],
                work: Work::Vector {
                    flops: 8.0 * x.elements(),
                },
            })
        }
        "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL2"
        | "ArgMax" | "ArgMin" => reduce(node, ins, opset),
        "TopK" => {
            let x = input(ins, 0)?;
            let k = ints(ins, 1, "k")?.first().copied().unwrap_or(1).max(0) as u64;
            let a = axis(attr_int(node, "axis", -1), x.dims.len())?;
            let mut dims = x.dims.clone();
            dims[a] = k;
            Ok(Out {
                vals: vec![Val::act(dims.clone()), Val::typed(dims, true)],
                work: Work::Vector {
                    flops: x.elements() * (k.max(2) as f64).log2(),
                },
            })
        }
        _ => Err(Fail::Unsupported),
    }
}

fn view(x: &Val, dims: Vec<u64>) -> R<Out> {
    one(Val { dims, ..x.clone() }, Work::Free)
}

fn gather(node: &NodeProto, ins: &[Val]) -> R<Out> {
    let data = input(ins, 0)?;
    let idx = input(ins, 1)?;
    let a = axis(attr_int(node, "axis", 0), data.dims.len())?;
    let mut dims = data.dims[..a].to_vec();
    dims.extend(&idx.dims);
    dims.extend(&data.dims[a + 1..]);
    if let (Some(d), Some(i)) = (&data.konst, &idx.konst) {
        let st = strides(&data.dims);
        let outer = checked(&data.dims[..a])? as usize;
        let inner = st[a];
        let n = data.dims[a] as i64;
        let mut v = Vec::new();
        for o in 0..outer {
            for &ix in i {
                let ix = if ix < 0.0 { ix as i64 + n } else { ix as i64 };
                if ix < 0 || ix >= n {
                    return bad(format!("Gather index {ix} outside {n}"));
                }
                let base = o * data.dims[a] as usize * inner + ix as usize * inner;
                v.extend_from_slice(d.get(base..base + inner).unwrap_or(&[]));
            }
        }
        return one(Val::constant(dims, v, data.int), Work::Free);
    }
    one(Val::typed(dims, data.int), Work::Move)
}

fn slice(node: &NodeProto, ins: &[Val], opset: i64) -> R<Out> {
    let x = input(ins, 0)?;
    let r = x.dims.len();
    let (starts, ends, axes, steps) = if opset >= 10 {
        let starts = ints(ins, 1, "starts")?;
        let ends = ints(ins, 2, "ends")?;
        let axes = if ins.len() > 3 {
            ints(ins, 3, "axes")?
        } else {
            (0..starts.len() as i64).collect()
        };
        let steps = if ins.len() > 4 {
            ints(ins, 4, "steps")?
        } else {
            vec![1; starts.len()]
        };
        (starts, ends, axes, steps)
    } else {
        let s = attr_ints(node, "starts");
        let n = s.len() as i64;
        let ax = match attr_ints(node, "axes") {
            a if a.is_empty() => (0..n).collect(),
            a => a,
        };
        (s, attr_ints(node, "ends"), ax, vec![1; n as usize])
    };
    let mut dims = x.dims.clone();
    let mut ranges: Vec<(i64, i64, i64)> = x.dims.iter().map(|&d| (0, d as i64, 1)).collect();
    for (k, &a) in axes.iter().enumerate() {
        let ai = axis(a, r)?;
        let d = x.dims[ai] as i64;
        let step = *steps.get(k).unwrap_or(&1);
        if step == 0 {
            return bad("Slice step 0");
        }
        let clampi = |v: i64, lo: i64, hi: i64| {
            let v = if v < 0 { v + d } else { v };
            v.clamp(lo, hi)
        };
        let (s, e) = (*starts.get(k).unwrap_or(&0), *ends.get(k).unwrap_or(&d));
        let (s, e) = if step > 0 {
            (clampi(s, 0, d), clampi(e, 0, d))
        } else {
            (clampi(s, 0, d - 1), clampi(e, -1, d - 1))
        };
        let n = if step > 0 {
            (e - s + step - 1).div_euclid(step).max(0)
        } else {
            (s - e - step - 1).div_euclid(-step).max(0)
        };
        dims[ai] = n as u64;
        ranges[ai] = (s, n, step);
    }
    if let Some(k) = &x.konst {
        let st = strides(&x.dims);
        let n = checked(&dims)?;
        let mut v = Vec::with_capacity((n as usize).min(super::fold::MAX_FOLD));
        let ost = strides(&dims);
        for flat in 0..n as usize {
            let mut src = 0usize;
            for i in 0..r {
                let c = (flat / ost[i]) % dims[i].max(1) as usize;
                src += (ranges[i].0 + c as i64 * ranges[i].2) as usize * st[i];
            }
            v.push(k.get(src).copied().unwrap_or(0.0));
        }
        return one(Val::constant(dims, v, x.int), Work::Free);
    }
    one(Val::typed(dims, x.int), Work::Move)
}

fn split(node: &NodeProto, ins: &[Val], opset: i64) -> R<Out> {
    let x = input(ins, 0)?;
    let a = axis(attr_int(node, "axis", 0), x.dims.len())?;
    let outputs = node.output.len().max(1) as u64;
    let sizes: Vec<u64> = if opset >= 13 && ins.len() > 1 {
        dims_of(&ints(ins, 1, "split")?, "split")?
    } else if opset < 13 && !attr_ints(node, "split").is_empty() {
        dims_of(&attr_ints(node, "split"), "split")?
    } else {
        let d = x.dims[a];
        let per = d.div_ceil(outputs);
        (0..outputs)
            .map(|i| per.min(d.saturating_sub(i * per)))
            .collect()
    };
    if sizes.iter().sum::<u64>() != x.dims[a] {
        return bad(format!(
            "split sizes {sizes:?} do not add up to {}",
            x.dims[a]
        ));
    }
    let vals = sizes
        .iter()
        .map(|&s| {
            let mut d = x.dims.clone();
            d[a] = s;
            Val::typed(d, x.int)
        })
        .collect();
    Ok(Out {
        vals,
        work: Work::Move,
    })
}

fn matmul(a: &Val, b: &Val) -> R<Out> {
    let (ad, bd) = (a.dims.clone(), b.dims.clone());
    if ad.is_empty() || bd.is_empty() {
        return bad(format!(
            "MatMul of {ad:?} and {bd:?}: an operand is a scalar (ONNX MatMul needs at least 1-D operands)"
        ));
    }
    let a2 = if ad.len() == 1 {
        vec![1, ad[0]]
    } else {
        ad.clone()
    };
    let b2 = if bd.len() == 1 {
        vec![bd[0], 1]
    } else {
        bd.clone()
    };
    let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (k2, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if k != k2 {
        return bad(format!(
            "MatMul of {ad:?} and {bd:?}: inner dims {k} and {k2} differ"
        ));
    }
    let batch_dims = broadcast(&a2[..a2.len() - 2], &b2[..b2.len() - 2]).ok_or_else(|| {
        Fail::Bad(format!(
            "MatMul batch dims of {ad:?} and {bd:?} do not broadcast"
        ))
    })?;
    let batch = checked(&batch_dims)?;
    let mut out = batch_dims.clone();
    if ad.len() > 1 {
        out.push(m);
    }
    if bd.len() > 1 {
        out.push(n);
    }
    // A weight shared by every row block: one product of all the rows.
    let shared = b.weight && b2.len() == 2;
    let work = if shared {
        Work::Matmul {
            batch: 1,
            m: batch * m,
            k,
            n,
            weight: true,
        }
    } else {
        Work::Matmul {
            batch,
            m,
            k,
            n,
            weight: b.weight,
        }
    };
    one(Val::act(out), work)
}

fn gemm(node: &NodeProto, ins: &[Val]) -> R<Out> {
    let (a, b) = (input(ins, 0)?, input(ins, 1)?);
    if a.dims.len() != 2 || b.dims.len() != 2 {
        return bad("Gemm takes two matrices");
    }
    let ta = attr_int(node, "transA", 0) == 1;
    let tb = attr_int(node, "transB", 0) == 1;
    let (m, k) = if ta {
        (a.dims[1], a.dims[0])
    } else {
        (a.dims[0], a.dims[1])
    };
    let (k2, n) = if tb {
        (b.dims[1], b.dims[0])
    } else {
        (b.dims[0], b.dims[1])
    };
    if k != k2 {
        return bad(format!("Gemm inner dims {k} and {k2} differ"));
    }
    one(
        Val::act(vec![m, n]),
        Work::Matmul {
            batch: 1,
            m,
            k,
            n,
            weight: b.weight,
        },
    )
}

fn reduce(node: &NodeProto, ins: &[Val], opset: i64) -> R<Out> {
    let x = input(ins, 0)?;
    let op = node.op_type.as_str();
    let r = x.dims.len();
    let axes: Vec<i64> = if op.starts_with("Arg") {
        vec![attr_int(node, "axis", 0)]
    } else if opset >= 18 || (op == "ReduceSum" && opset >= 13) {
        if ins.len() > 1 {
            ints(ins, 1, "axes")?
        } else {
            vec![]
        }
    } else {
        attr_ints(node, "axes")
    };
    let keep = attr_int(node, "keepdims", 1) == 1;
    let ax: Vec<usize> = if axes.is_empty() {
        (0..r).collect()
    } else {
        axes.iter().map(|&a| axis(a, r)).collect::<R<_>>()?
    };
    let mut dims = Vec::new();
    for (i, &d) in x.dims.iter().enumerate() {
        if ax.contains(&i) {
            if keep {
                dims.push(1);
            }
        } else {
            dims.push(d);
        }
    }
    let int = op.starts_with("Arg");
    one(
        Val {
            int,
            ..Val::act(dims)
        },
        Work::Vector {
            flops: x.elements(),
        },
    )
}

pub(super) fn checked(dims: &[u64]) -> R<u64> {
    count(dims).ok_or_else(|| {
        Fail::Bad(format!(
            "a tensor of dims {dims:?} has more than {MAX_ELEMENTS} elements"
        ))
    })
}

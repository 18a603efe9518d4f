//! Shape inference: the output shape of every [`OpKind`] from its input and weight
//! shapes, with errors that name the op and the offending numbers.
//!
//! Conventions (all shapes in elements, `[top, left, bottom, right]` padding):
//! - conv: filter `(c_out, c_in/groups, kh, kw)`, optional bias `(1, c_out, 1, 1)`;
//!   `out = (in + pad_a + pad_b − dilation·(k − 1) − 1) / stride + 1` (floor);
//! - deconv: filter `(c_in, c_out/groups, kh, kw)` (the ONNX/PyTorch layout), optional
//!   bias `(1, c_out, 1, 1)`; `out = (in − 1)·stride − pad_a − pad_b + dilation·(k − 1)
//!   + output_pad + 1`;
//! - pooling: `out = (in + pad_a + pad_b − k) / stride + 1`, rounded up with `ceil_mode`
//!   (and, as in ONNX/PyTorch, the last window must start inside the input or top/left
//!   padding);
//! - batch-norm: two weights `(1, c, 1, 1)` (scale and shift, the inference form);
//! - add/mul: two operands (activation inputs, then weights); the first gives the output
//!   shape, the second is the same shape, per-channel `(1|n, c, 1, 1)` or a scalar
//!   `(1, 1, 1, 1)`;
//! - gemm: weight `(k, f, 1, 1)` with `k = c·h·w` of the input, optional bias
//!   `(1, f, 1, 1)`; output `(n, f, 1, 1)`;
//! - reshape has no inferable output: see [`check_reshape`].

use crate::error::{GraphError, Result};
use crate::ir::{ConvParams, OpKind, PoolParams, Shape4};

/// Output shape of an op of kind `kind` named `op` (for messages) with activation input
/// shapes `inputs` and weight shapes `weights`. Errors for [`OpKind::Reshape`], whose
/// output is given, not inferred (use [`check_reshape`]).
pub fn infer_output(
    op: &str,
    kind: &OpKind,
    inputs: &[Shape4],
    weights: &[Shape4],
) -> Result<Shape4> {
    let c = OpCheck {
        op,
        kind,
        inputs,
        weights,
    };
    match kind {
        OpKind::Conv(p) => conv(&c, p),
        OpKind::Deconv {
            params: p,
            output_pad,
        } => deconv(&c, p, output_pad),
        OpKind::MaxPool(p) | OpKind::AvgPool(p) => pool(&c, p),
        OpKind::GlobalAvgPool | OpKind::GlobalMaxPool => global_pool(&c),
        OpKind::BatchNorm => batch_norm(&c),
        OpKind::Act(_) | OpKind::Cast => same_shape(&c),
        OpKind::Flatten => flatten(&c),
        OpKind::Add | OpKind::Mul => binary(&c),
        OpKind::Concat => concat(&c),
        OpKind::Upsample { scale_h, scale_w } => upsample(&c, scale_h, scale_w),
        OpKind::Gemm => gemm(&c),
        OpKind::Reshape => {
            Err(c.err("reshape output cannot be inferred; give the target shape".into()))
        }
    }
}

/// One op's shapes, with the errors every rule raises.
struct OpCheck<'a> {
    op: &'a str,
    kind: &'a OpKind,
    inputs: &'a [Shape4],
    weights: &'a [Shape4],
}

impl OpCheck<'_> {
    fn err(&self, reason: String) -> GraphError {
        GraphError::Shape {
            op: self.op.to_string(),
            kind: self.kind.name(),
            reason,
        }
    }

    fn ovf(&self, what: &str) -> GraphError {
        GraphError::Overflow {
            what: format!("{what} of op '{}'", self.op),
        }
    }

    fn one_input(&self) -> Result<Shape4> {
        match self.inputs {
            [x] => Ok(*x),
            _ => Err(self.err(format!("expects 1 input, got {}", self.inputs.len()))),
        }
    }

    fn no_weights(&self) -> Result<()> {
        if self.weights.is_empty() {
            Ok(())
        } else {
            Err(self.err(format!("expects no weights, got {}", self.weights.len())))
        }
    }
}

/// A conv's or deconv's input, filter and bias.
struct ConvOperands {
    x: Shape4,
    filter: Shape4,
    bias: Option<Shape4>,
}

/// The operands of a conv or deconv with valid parameters, its input channels divisible
/// by its groups.
fn conv_operands(c: &OpCheck<'_>, p: &ConvParams) -> Result<ConvOperands> {
    let x = c.one_input()?;
    check_conv_params(p.kernel, p.stride, p.dilation, p.groups).map_err(|r| c.err(r))?;
    let (filter, bias) = filter_and_bias(c.weights).map_err(|r| c.err(r))?;
    if x.c % p.groups != 0 {
        return Err(c.err(format!(
            "input channels {} not divisible by groups {}",
            x.c, p.groups
        )));
    }
    Ok(ConvOperands { x, filter, bias })
}

/// The filter's spatial size is the kernel's.
fn kernel_matches(c: &OpCheck<'_>, f: Shape4, p: &ConvParams) -> Result<()> {
    if [f.h, f.w] != p.kernel {
        return Err(c.err(format!(
            "filter {} does not match kernel {}x{}",
            f, p.kernel[0], p.kernel[1]
        )));
    }
    Ok(())
}

fn conv(c: &OpCheck<'_>, p: &ConvParams) -> Result<Shape4> {
    let ConvOperands { x, filter: f, bias } = conv_operands(c, p)?;
    if f.n % p.groups != 0 {
        return Err(c.err(format!(
            "output channels {} not divisible by groups {}",
            f.n, p.groups
        )));
    }
    if f.c != x.c / p.groups {
        return Err(c.err(format!(
            "channel mismatch: input has {} channels (groups {}), filter {} expects {} per group",
            x.c, p.groups, f, f.c
        )));
    }
    kernel_matches(c, f, p)?;
    check_bias(bias, f.n).map_err(|r| c.err(r))?;
    let h = conv_out(
        x.h,
        p.pad[0],
        p.pad[2],
        p.kernel[0],
        p.stride[0],
        p.dilation[0],
        "H",
    )
    .map_err(|r| c.err(r))?;
    let w = conv_out(
        x.w,
        p.pad[1],
        p.pad[3],
        p.kernel[1],
        p.stride[1],
        p.dilation[1],
        "W",
    )
    .map_err(|r| c.err(r))?;
    Ok(Shape4::new(x.n, f.n, h, w))
}

fn deconv(c: &OpCheck<'_>, p: &ConvParams, output_pad: &[u64; 2]) -> Result<Shape4> {
    let ConvOperands { x, filter: f, bias } = conv_operands(c, p)?;
    if f.n != x.c {
        return Err(c.err(format!(
            "channel mismatch: input has {} channels, deconv filter {} expects {}",
            x.c, f, f.n
        )));
    }
    kernel_matches(c, f, p)?;
    let c_out =
        f.c.checked_mul(p.groups)
            .ok_or_else(|| c.ovf("deconv output channels"))?;
    check_bias(bias, c_out).map_err(|r| c.err(r))?;
    let h = deconv_out(
        x.h,
        p.pad[0],
        p.pad[2],
        p.kernel[0],
        p.stride[0],
        p.dilation[0],
        output_pad[0],
        "H",
    )
    .map_err(|r| c.err(r))?;
    let w = deconv_out(
        x.w,
        p.pad[1],
        p.pad[3],
        p.kernel[1],
        p.stride[1],
        p.dilation[1],
        output_pad[1],
        "W",
    )
    .map_err(|r| c.err(r))?;
    Ok(Shape4::new(x.n, c_out, h, w))
}

fn pool(c: &OpCheck<'_>, p: &PoolParams) -> Result<Shape4> {
    let x = c.one_input()?;
    c.no_weights()?;
    if p.kernel.contains(&0) || p.stride.contains(&0) {
        return Err(c.err(format!(
            "kernel {:?} and stride {:?} must be positive",
            p.kernel, p.stride
        )));
    }
    let h = pool_out(
        x.h,
        p.pad[0],
        p.pad[2],
        p.kernel[0],
        p.stride[0],
        p.ceil_mode,
        "H",
    )
    .map_err(|r| c.err(r))?;
    let w = pool_out(
        x.w,
        p.pad[1],
        p.pad[3],
        p.kernel[1],
        p.stride[1],
        p.ceil_mode,
        "W",
    )
    .map_err(|r| c.err(r))?;
    Ok(Shape4::new(x.n, x.c, h, w))
}

fn global_pool(c: &OpCheck<'_>) -> Result<Shape4> {
    let x = c.one_input()?;
    c.no_weights()?;
    Ok(Shape4::new(x.n, x.c, 1, 1))
}

fn batch_norm(c: &OpCheck<'_>) -> Result<Shape4> {
    let x = c.one_input()?;
    if c.weights.len() != 2 {
        return Err(c.err(format!(
            "expects 2 c.weights (scale, shift), got {}",
            c.weights.len()
        )));
    }
    for wt in c.weights {
        if *wt != Shape4::new(1, x.c, 1, 1) {
            return Err(c.err(format!("parameter shape {} should be 1x{}x1x1", wt, x.c)));
        }
    }
    Ok(x)
}

fn same_shape(c: &OpCheck<'_>) -> Result<Shape4> {
    let x = c.one_input()?;
    c.no_weights()?;
    Ok(x)
}

fn flatten(c: &OpCheck<'_>) -> Result<Shape4> {
    let x = c.one_input()?;
    c.no_weights()?;
    let k =
        x.c.checked_mul(x.h)
            .and_then(|v| v.checked_mul(x.w))
            .ok_or_else(|| c.ovf("flatten size"))?;
    Ok(Shape4::new(x.n, k, 1, 1))
}

fn binary(c: &OpCheck<'_>) -> Result<Shape4> {
    let operands: Vec<Shape4> = c.inputs.iter().chain(c.weights).copied().collect();
    if c.inputs.is_empty() || operands.len() != 2 {
        return Err(c.err(format!(
            "expects 2 operands (at least one activation), got {} c.inputs and {} c.weights",
            c.inputs.len(),
            c.weights.len()
        )));
    }
    let (a, b) = (operands[0], operands[1]);
    let per_channel = b.h == 1 && b.w == 1 && b.c == a.c && (b.n == 1 || b.n == a.n);
    let scalar = b == Shape4::new(1, 1, 1, 1);
    let batch_bcast = b.n == 1 && b.c == a.c && b.h == a.h && b.w == a.w;
    if a == b || per_channel || scalar || batch_bcast {
        Ok(a)
    } else {
        Err(c.err(format!(
            "operand shapes {a} and {b} do not match (nor broadcast per channel)"
        )))
    }
}

fn concat(c: &OpCheck<'_>) -> Result<Shape4> {
    c.no_weights()?;
    let Some(first) = c.inputs.first() else {
        return Err(c.err("expects at least 1 input, got 0".into()));
    };
    let mut channels: u64 = 0;
    for s in c.inputs {
        if (s.n, s.h, s.w) != (first.n, first.h, first.w) {
            return Err(c.err(format!(
                "c.inputs {first} and {s} differ outside the channel axis (concat is along C only)"
            )));
        }
        channels = channels
            .checked_add(s.c)
            .ok_or_else(|| c.ovf("concat channels"))?;
    }
    Ok(Shape4::new(first.n, channels, first.h, first.w))
}

/// A nearest upsample: no weights, or the one index table an NPU compiler reads
/// ([1, lanes, 1, k] with an index for each output position, as a planner adds it).
fn upsample(c: &OpCheck<'_>, scale_h: &u64, scale_w: &u64) -> Result<Shape4> {
    let x = c.one_input()?;
    if *scale_h == 0 || *scale_w == 0 {
        return Err(c.err(format!(
            "scale factors {scale_h}x{scale_w} must be positive"
        )));
    }
    let h =
        x.h.checked_mul(*scale_h)
            .ok_or_else(|| c.ovf("upsample height"))?;
    let w =
        x.w.checked_mul(*scale_w)
            .ok_or_else(|| c.ovf("upsample width"))?;
    match c.weights {
        [] => {}
        [t] if t.n == 1
            && t.h == 1
            && t.c
                .checked_mul(t.w)
                .is_some_and(|e| e >= h.saturating_mul(w)) => {}
        [t] => {
            return Err(c.err(format!(
                "index table {t} does not hold an index for each of the {h}x{w} output positions"
            )))
        }
        _ => {
            return Err(c.err(format!(
                "expects no weights or one index table, got {}",
                c.weights.len()
            )))
        }
    }
    Ok(Shape4::new(x.n, x.c, h, w))
}

fn gemm(c: &OpCheck<'_>) -> Result<Shape4> {
    let x = c.one_input()?;
    let (wt, bias) = match c.weights {
        [w] => (*w, None),
        [w, b] => (*w, Some(*b)),
        _ => {
            return Err(c.err(format!(
                "expects 1 or 2 c.weights (matrix, bias), got {}",
                c.weights.len()
            )))
        }
    };
    let k =
        x.c.checked_mul(x.h)
            .and_then(|v| v.checked_mul(x.w))
            .ok_or_else(|| c.ovf("gemm K"))?;
    if wt.h != 1 || wt.w != 1 || wt.n != k {
        return Err(c.err(format!(
            "weight {wt} does not match input {x}: expected {k}xFx1x1 (K = c·h·w = {k})"
        )));
    }
    check_bias(bias, wt.c).map_err(|r| c.err(r))?;
    Ok(Shape4::new(x.n, wt.c, 1, 1))
}

/// Checks a reshape of `from` to `to` keeps the element count; `op` names the op.
pub fn check_reshape(op: &str, from: Shape4, to: Shape4) -> Result<()> {
    let ovf = || GraphError::Overflow {
        what: format!("reshape size of op '{op}'"),
    };
    let (a, b) = (
        from.elements().ok_or_else(ovf)?,
        to.elements().ok_or_else(ovf)?,
    );
    if a != b {
        return Err(GraphError::Shape {
            op: op.to_string(),
            kind: "reshape",
            reason: format!("cannot reshape {from} ({a} elements) to {to} ({b} elements)"),
        });
    }
    Ok(())
}

fn check_conv_params(
    kernel: [u64; 2],
    stride: [u64; 2],
    dilation: [u64; 2],
    groups: u64,
) -> std::result::Result<(), String> {
    if kernel.contains(&0) || stride.contains(&0) || dilation.contains(&0) || groups == 0 {
        return Err(format!(
            "kernel {kernel:?}, stride {stride:?}, dilation {dilation:?} and groups {groups} must be positive"
        ));
    }
    Ok(())
}

fn filter_and_bias(weights: &[Shape4]) -> std::result::Result<(Shape4, Option<Shape4>), String> {
    match weights {
        [f] => Ok((*f, None)),
        [f, b] => Ok((*f, Some(*b))),
        _ => Err(format!(
            "expects 1 or 2 weights (filter, bias), got {}",
            weights.len()
        )),
    }
}

fn check_bias(bias: Option<Shape4>, c: u64) -> std::result::Result<(), String> {
    match bias {
        Some(b) if b != Shape4::new(1, c, 1, 1) => {
            Err(format!("bias shape {b} should be 1x{c}x1x1"))
        }
        _ => Ok(()),
    }
}

/// Conv output length along one axis; errors when the dilated kernel is larger than the
/// padded input.
fn conv_out(
    len: u64,
    pa: u64,
    pb: u64,
    k: u64,
    s: u64,
    d: u64,
    axis: &str,
) -> std::result::Result<u64, String> {
    let padded = len
        .checked_add(pa)
        .and_then(|v| v.checked_add(pb))
        .ok_or("padded size overflows u64")?;
    let eff = d
        .checked_mul(k - 1)
        .and_then(|v| v.checked_add(1))
        .ok_or("dilated kernel overflows u64")?;
    if eff > padded {
        return Err(format!(
            "kernel {k} (dilated {eff}) larger than padded input {padded} along {axis} (input {len}, pad {pa}+{pb})"
        ));
    }
    Ok((padded - eff) / s + 1)
}

#[allow(clippy::too_many_arguments)]
fn deconv_out(
    len: u64,
    pa: u64,
    pb: u64,
    k: u64,
    s: u64,
    d: u64,
    op: u64,
    axis: &str,
) -> std::result::Result<u64, String> {
    if len == 0 {
        return Err(format!("empty input along {axis}"));
    }
    let full = (len - 1)
        .checked_mul(s)
        .and_then(|v| v.checked_add(d.checked_mul(k - 1)?))
        .and_then(|v| v.checked_add(op))
        .and_then(|v| v.checked_add(1))
        .ok_or("deconv output overflows u64")?;
    let pads = pa.checked_add(pb).ok_or("padding overflows u64")?;
    if pads >= full {
        return Err(format!(
            "padding {pa}+{pb} removes the whole output ({full}) along {axis}"
        ));
    }
    Ok(full - pads)
}

fn pool_out(
    len: u64,
    pa: u64,
    pb: u64,
    k: u64,
    s: u64,
    ceil: bool,
    axis: &str,
) -> std::result::Result<u64, String> {
    let padded = len
        .checked_add(pa)
        .and_then(|v| v.checked_add(pb))
        .ok_or("padded size overflows u64")?;
    if k > padded {
        return Err(format!(
            "kernel {k} larger than padded input {padded} along {axis} (input {len}, pad {pa}+{pb})"
        ));
    }
    let span = padded - k;
    let floor = span / s + 1;
    if !ceil {
        return Ok(floor);
    }
    // ONNX/PyTorch: with ceil_mode, an extra partial window counts only if it starts
    // inside the input or the leading padding (never fewer windows than floor mode).
    let mut out = span.div_ceil(s) + 1;
    if out > floor && (out - 1).saturating_mul(s) >= len.saturating_add(pa) {
        out -= 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ConvParams, PoolParams};

    fn conv(k: u64, s: u64, p: u64, d: u64, g: u64) -> OpKind {
        OpKind::Conv(ConvParams {
            kernel: [k, k],
            stride: [s, s],
            pad: [p; 4],
            dilation: [d, d],
            groups: g,
        })
    }

    #[test]
    fn conv_shapes() {
        let x = Shape4::new(1, 3, 224, 224);
        let f = Shape4::new(64, 3, 7, 7);
        assert_eq!(
            infer_output("c", &conv(7, 2, 3, 1, 1), &[x], &[f]).unwrap(),
            Shape4::new(1, 64, 112, 112)
        );
        // dilation 2, kernel 3 → effective 5
        let x = Shape4::new(2, 8, 10, 10);
        let f = Shape4::new(8, 8, 3, 3);
        assert_eq!(
            infer_output("c", &conv(3, 1, 0, 2, 1), &[x], &[f]).unwrap(),
            Shape4::new(2, 8, 6, 6)
        );
        // depthwise
        let f = Shape4::new(8, 1, 3, 3);
        assert_eq!(
            infer_output("c", &conv(3, 2, 1, 1, 8), &[x], &[f]).unwrap(),
            Shape4::new(2, 8, 5, 5)
        );
    }

    #[test]
    fn conv_errors_name_the_problem() {
        let x = Shape4::new(1, 3, 5, 5);
        let e =
            infer_output("c1", &conv(3, 1, 0, 1, 1), &[x], &[Shape4::new(4, 4, 3, 3)]).unwrap_err();
        assert!(e.to_string().contains("channel mismatch"), "{e}");
        assert!(e.to_string().contains("c1"), "{e}");
        let e =
            infer_output("c", &conv(7, 1, 0, 1, 1), &[x], &[Shape4::new(4, 3, 7, 7)]).unwrap_err();
        assert!(e.to_string().contains("larger than padded input"), "{e}");
        let e =
            infer_output("c", &conv(3, 1, 0, 1, 2), &[x], &[Shape4::new(4, 1, 3, 3)]).unwrap_err();
        assert!(e.to_string().contains("not divisible by groups"), "{e}");
        let e = infer_output(
            "c",
            &conv(3, 1, 0, 1, 1),
            &[x],
            &[Shape4::new(4, 3, 3, 3), Shape4::new(1, 5, 1, 1)],
        )
        .unwrap_err();
        assert!(e.to_string().contains("bias"), "{e}");
    }

    #[test]
    fn deconv_shapes() {
        let p = ConvParams {
            kernel: [4, 4],
            stride: [2, 2],
            pad: [1; 4],
            dilation: [1, 1],
            groups: 1,
        };
        let k = OpKind::Deconv {
            params: p,
            output_pad: [0, 0],
        };
        let x = Shape4::new(1, 16, 7, 9);
        let out = infer_output("d", &k, &[x], &[Shape4::new(16, 8, 4, 4)]).unwrap();
        assert_eq!(out, Shape4::new(1, 8, 14, 18));
        let k = OpKind::Deconv {
            params: ConvParams {
                kernel: [3, 3],
                stride: [2, 2],
                pad: [1; 4],
                dilation: [1, 1],
                groups: 1,
            },
            output_pad: [1, 1],
        };
        let out = infer_output("d", &k, &[x], &[Shape4::new(16, 8, 3, 3)]).unwrap();
        assert_eq!(out, Shape4::new(1, 8, 14, 18));
    }

    #[test]
    fn pool_shapes_and_ceil_mode() {
        let pool = |k, s, p, ceil| {
            OpKind::MaxPool(PoolParams {
                kernel: [k, k],
                stride: [s, s],
                pad: [p; 4],
                ceil_mode: ceil,
                count_include_pad: false,
            })
        };
        let x = Shape4::new(1, 64, 112, 112);
        assert_eq!(
            infer_output("p", &pool(3, 2, 1, false), &[x], &[]).unwrap(),
            Shape4::new(1, 64, 56, 56)
        );
        let x = Shape4::new(1, 1, 6, 6);
        assert_eq!(
            infer_output("p", &pool(3, 2, 0, false), &[x], &[])
                .unwrap()
                .h,
            2
        );
        assert_eq!(
            infer_output("p", &pool(3, 2, 0, true), &[x], &[])
                .unwrap()
                .h,
            3
        );
        // PyTorch: 5x5, k2 s2 p1 ceil → 3 (not 4: the last window would start in the padding)
        let x = Shape4::new(1, 1, 5, 5);
        assert_eq!(
            infer_output("p", &pool(2, 2, 1, true), &[x], &[])
                .unwrap()
                .h,
            3
        );
        let e =
            infer_output("p", &pool(9, 1, 1, false), &[Shape4::new(1, 1, 5, 5)], &[]).unwrap_err();
        assert!(
            e.to_string()
                .contains("kernel 9 larger than padded input 7"),
            "{e}"
        );
    }

    #[test]
    fn elementwise_concat_gemm() {
        let a = Shape4::new(2, 8, 4, 4);
        assert_eq!(infer_output("a", &OpKind::Add, &[a, a], &[]).unwrap(), a);
        assert_eq!(
            infer_output("a", &OpKind::Mul, &[a, Shape4::new(2, 8, 1, 1)], &[]).unwrap(),
            a
        );
        assert_eq!(
            infer_output("a", &OpKind::Add, &[a], &[Shape4::new(1, 1, 1, 1)]).unwrap(),
            a
        );
        assert!(infer_output("a", &OpKind::Add, &[a, Shape4::new(2, 8, 2, 2)], &[]).is_err());
        let b = Shape4::new(2, 3, 4, 4);
        assert_eq!(
            infer_output("c", &OpKind::Concat, &[a, b], &[]).unwrap(),
            Shape4::new(2, 11, 4, 4)
        );
        let e = infer_output("c", &OpKind::Concat, &[a, Shape4::new(2, 3, 5, 4)], &[]).unwrap_err();
        assert!(e.to_string().contains("outside the channel axis"), "{e}");
        let g = infer_output(
            "g",
            &OpKind::Gemm,
            &[a],
            &[Shape4::new(128, 10, 1, 1), Shape4::new(1, 10, 1, 1)],
        );
        assert_eq!(g.unwrap(), Shape4::new(2, 10, 1, 1));
        assert!(infer_output("g", &OpKind::Gemm, &[a], &[Shape4::new(127, 10, 1, 1)]).is_err());
        assert_eq!(
            infer_output("f", &OpKind::Flatten, &[a], &[]).unwrap(),
            Shape4::new(2, 128, 1, 1)
        );
        let u = OpKind::Upsample {
            scale_h: 2,
            scale_w: 3,
        };
        assert_eq!(
            infer_output("u", &u, &[a], &[]).unwrap(),
            Shape4::new(2, 8, 8, 12)
        );
        assert!(check_reshape("r", a, Shape4::new(1, 256, 1, 1)).is_ok());
        assert!(check_reshape("r", a, Shape4::new(1, 255, 1, 1)).is_err());
    }

    /// Counts output positions by walking the window along one padded axis.
    fn naive_positions(len: u64, pa: u64, pb: u64, eff: u64, s: u64, ceil: bool) -> u64 {
        let padded = len + pa + pb;
        let mut n = 0;
        let mut start = 0;
        loop {
            let fits = start + eff <= padded;
            // ceil mode: one partial window after the last full one, if the full ones
            // leave rows uncovered and it starts inside the input or top padding.
            let partial = ceil && start < len + pa && start >= s && start - s + eff < padded;
            if !(fits || partial) {
                break;
            }
            n += 1;
            start += s;
        }
        n
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn conv_and_pool_sizes_match_window_walk(
            len in 1u64..40, pa in 0u64..4, pb in 0u64..4, k in 1u64..6, s in 1u64..4, d in 1u64..3, ceil: bool,
        ) {
            let eff = d * (k - 1) + 1;
            let c = conv_out(len, pa, pb, k, s, d, "H");
            if eff > len + pa + pb {
                proptest::prop_assert!(c.is_err());
            } else {
                proptest::prop_assert_eq!(c.unwrap(), naive_positions(len, pa, pb, eff, s, false));
            }
            let p = pool_out(len, pa, pb, k, s, ceil, "H");
            if k > len + pa + pb {
                proptest::prop_assert!(p.is_err());
            } else {
                proptest::prop_assert_eq!(p.unwrap(), naive_positions(len, pa, pb, k, s, ceil));
            }
        }

        /// Deconv is the transpose of conv: a conv with the same geometry maps the deconv
        /// output size back to the input size (output_pad covers the rows a strided conv drops).
        #[test]
        fn deconv_inverts_conv(len in 1u64..30, p in 0u64..3, k in 1u64..6, s in 1u64..4, d in 1u64..3, op in 0u64..3) {
            proptest::prop_assume!(op < s);
            if let Ok(out) = deconv_out(len, p, p, k, s, d, op, "H") {
                proptest::prop_assert_eq!(conv_out(out, p, p, k, s, d, "H").unwrap(), len);
            }
        }
    }
}

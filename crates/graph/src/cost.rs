//! Per-op arithmetic cost and weight size.
//!
//! Units:
//! - `macs`: multiply-accumulates done by a MAC array (convolution, deconvolution, gemm);
//!   0 for every other op. This is the figure papers and torchvision quote as "GFLOPS"
//!   for CNNs (ResNet-18: 1.82 G at 224²).
//! - `flops`: floating-point operations counted as `2 · macs` plus one per output
//!   element for each bias add and fused activation; pooling counts one op per window
//!   element per output (`kh · kw` per output; global pooling one per input element);
//!   batch-norm 2 per element (scale and shift); activations, add and mul 1 per element.
//!   Pure data movement (concat, upsample, flatten, reshape) counts 0.
//! - `weight_elements`: elements of the op's weight tensors (filters, biases, batch-norm
//!   scale/shift, gemm matrices) — the parameter count, dtype-agnostic.

use crate::error::{add, mul, GraphError, Result};
use crate::ir::{Graph, Op, OpKind, Shape4};

/// Cost of one op (see the module docs for units).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpCost {
    /// Multiply-accumulates on a MAC array.
    pub macs: u64,
    /// Floating-point operations (2 per MAC plus element-wise work).
    pub flops: u64,
    /// Elements of all weight tensors of the op (parameters).
    pub weight_elements: u64,
}

impl OpCost {
    fn plus(self, o: OpCost) -> Result<OpCost> {
        Ok(OpCost {
            macs: add(self.macs, o.macs, "total MACs")?,
            flops: add(self.flops, o.flops, "total FLOPs")?,
            weight_elements: add(self.weight_elements, o.weight_elements, "total weights")?,
        })
    }
}

fn elems(s: Shape4, what: &str) -> Result<u64> {
    s.elements().ok_or_else(|| GraphError::Overflow {
        what: what.to_string(),
    })
}

fn shape_of(g: &Graph, t: usize, op: &Op) -> Result<Shape4> {
    g.tensors
        .get(t)
        .map(|x| x.shape)
        .ok_or_else(|| GraphError::Invalid {
            graph: g.name.clone(),
            reason: format!("op '{}': tensor id {t} out of range", op.name),
        })
}

/// Cost of `op` in graph `g` (shapes are read from `g`'s tensors).
pub fn op_cost(g: &Graph, op: &Op) -> Result<OpCost> {
    let what = |s: &str| format!("{s} of op '{}'", op.name);
    let first_in = match op.inputs.first() {
        Some(&t) => Some(shape_of(g, t, op)?),
        None => None,
    };
    let out = match op.outputs.first() {
        Some(&t) => shape_of(g, t, op)?,
        None => Shape4::new(0, 0, 0, 0),
    };
    let out_el = elems(out, &what("output size"))?;
    let mut weight_elements = 0u64;
    for &w in &op.weights {
        weight_elements = add(
            weight_elements,
            elems(shape_of(g, w, op)?, &what("weight size"))?,
            &what("weights"),
        )?;
    }
    let x = first_in.unwrap_or(out);
    let in_el = elems(x, &what("input size"))?;
    let has_bias = op.weights.len() >= 2;
    let (macs, base_flops) = match &op.kind {
        OpKind::Conv(p) => {
            let per_out = mul(
                x.c / p.groups.max(1),
                mul(p.kernel[0], p.kernel[1], &what("kernel"))?,
                &what("MACs"),
            )?;
            (mul(out_el, per_out, &what("MACs"))?, 0)
        }
        OpKind::Deconv { params: p, .. } => {
            let per_in = mul(
                out.c / p.groups.max(1),
                mul(p.kernel[0], p.kernel[1], &what("kernel"))?,
                &what("MACs"),
            )?;
            (mul(in_el, per_in, &what("MACs"))?, 0)
        }
        OpKind::Gemm => {
            let k = mul(mul(x.c, x.h, &what("K"))?, x.w, &what("K"))?;
            (mul(out_el, k, &what("MACs"))?, 0)
        }
        OpKind::MaxPool(p) | OpKind::AvgPool(p) => (
            0,
            mul(
                out_el,
                mul(p.kernel[0], p.kernel[1], &what("kernel"))?,
                &what("FLOPs"),
            )?,
        ),
        OpKind::GlobalAvgPool | OpKind::GlobalMaxPool => (0, in_el),
        OpKind::BatchNorm => (0, mul(out_el, 2, &what("FLOPs"))?),
        OpKind::Act(_) | OpKind::Add | OpKind::Mul | OpKind::Cast => (0, out_el),
        OpKind::Concat | OpKind::Upsample { .. } | OpKind::Flatten | OpKind::Reshape => (0, 0),
    };
    let mut flops = add(mul(macs, 2, &what("FLOPs"))?, base_flops, &what("FLOPs"))?;
    let mac_op = matches!(
        op.kind,
        OpKind::Conv(_) | OpKind::Deconv { .. } | OpKind::Gemm
    );
    if mac_op && has_bias {
        flops = add(flops, out_el, &what("FLOPs"))?;
    }
    if op.fused_act.is_some() {
        flops = add(flops, out_el, &what("FLOPs"))?;
    }
    Ok(OpCost {
        macs,
        flops,
        weight_elements,
    })
}

/// Sum of [`op_cost`] over all ops of `g`.
pub fn graph_cost(g: &Graph) -> Result<OpCost> {
    g.ops
        .iter()
        .try_fold(OpCost::default(), |acc, op| acc.plus(op_cost(g, op)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::GraphBuilder;
    use crate::ir::ConvParams;

    /// Naive MAC count: loop over every output element and kernel tap.
    fn naive_conv_macs(x: Shape4, c_out: u64, p: ConvParams) -> u64 {
        let oh =
            (x.h + p.pad[0] + p.pad[2] - p.dilation[0] * (p.kernel[0] - 1) - 1) / p.stride[0] + 1;
        let ow =
            (x.w + p.pad[1] + p.pad[3] - p.dilation[1] * (p.kernel[1] - 1) - 1) / p.stride[1] + 1;
        let mut n = 0;
        for _b in 0..x.n {
            for _co in 0..c_out {
                for _y in 0..oh {
                    for _x in 0..ow {
                        for _ci in 0..x.c / p.groups {
                            for _ky in 0..p.kernel[0] {
                                for _kx in 0..p.kernel[1] {
                                    n += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        n
    }

    #[test]
    fn conv_macs_match_naive_count() {
        for (c_in, c_out, k, s, pad, d, g) in [
            (4, 6, 3, 1, 1, 1, 1),
            (6, 6, 3, 2, 1, 1, 6),
            (4, 8, 3, 1, 2, 2, 2),
            (3, 5, 5, 2, 0, 1, 1),
        ] {
            let x = Shape4::new(2, c_in, 9, 11);
            let p = ConvParams {
                kernel: [k, k],
                stride: [s, s],
                pad: [pad; 4],
                dilation: [d, d],
                groups: g,
            };
            let mut b = GraphBuilder::new("t");
            let xi = b.input("x", x);
            b.conv_with("c", xi, c_out, p, true).unwrap();
            let gr = b.finish().unwrap();
            let c = op_cost(&gr, &gr.ops[0]).unwrap();
            assert_eq!(c.macs, naive_conv_macs(x, c_out, p));
            assert_eq!(c.weight_elements, c_out * (c_in / g) * k * k + c_out);
            let out_el = gr.tensors[gr.ops[0].outputs[0]].shape.elements().unwrap();
            assert_eq!(c.flops, 2 * c.macs + out_el);
        }
    }

    #[test]
    fn deconv_and_gemm_macs() {
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 4, 5, 5));
        let p = ConvParams {
            kernel: [2, 2],
            stride: [2, 2],
            pad: [0; 4],
            dilation: [1, 1],
            groups: 1,
        };
        let y = b.deconv("d", x, 3, p, [0, 0], false).unwrap();
        // 2x2 stride-2 deconv: every output element gets exactly c_in MACs.
        let z = b.gemm("g", y, 7, false).unwrap();
        let _ = z;
        let g = b.finish().unwrap();
        let d = op_cost(&g, &g.ops[0]).unwrap();
        assert_eq!(d.macs, 3 * 10 * 10 * 4);
        let gm = op_cost(&g, &g.ops[1]).unwrap();
        assert_eq!(gm.macs, 300 * 7);
        assert_eq!(gm.weight_elements, 300 * 7);
    }
}

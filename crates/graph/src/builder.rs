//! [`GraphBuilder`]: add inputs, weights and ops one at a time; every op's output shape is
//! inferred ([`crate::infer`]) and every name made unique, so a finished graph is valid
//! by construction (and [`GraphBuilder::finish`] re-checks it with the validator).

use std::collections::HashSet;

use crate::error::{GraphError, Result};
use crate::infer::{check_reshape, infer_output};
use crate::ir::{
    Activation, ConvParams, Graph, Op, OpId, OpKind, PoolParams, Shape4, Tensor, TensorId,
    TensorKind,
};

/// Builds a [`Graph`] op by op, in topological order.
#[derive(Debug, Clone, Default)]
pub struct GraphBuilder {
    graph: Graph,
    tensor_names: HashSet<String>,
    op_names: HashSet<String>,
}

/// Makes `base` unique within `taken` by appending `_1`, `_2`, …; records the result.
pub(crate) fn unique(taken: &mut HashSet<String>, base: &str) -> String {
    let base = if base.is_empty() { "t" } else { base };
    if taken.insert(base.to_string()) {
        return base.to_string();
    }
    let mut i = 1u64;
    loop {
        let candidate = format!("{base}_{i}");
        if taken.insert(candidate.clone()) {
            return candidate;
        }
        i += 1;
    }
}

impl GraphBuilder {
    /// An empty graph named `name`.
    pub fn new(name: &str) -> Self {
        GraphBuilder {
            graph: Graph {
                name: name.to_string(),
                ..Graph::default()
            },
            ..Default::default()
        }
    }

    /// The graph built so far (for reading shapes while building).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Shape of tensor `t` (panics only on an id this builder never returned).
    pub fn shape(&self, t: TensorId) -> Shape4 {
        self.graph.tensors[t].shape
    }

    fn tensor(&mut self, name: &str, shape: Shape4, kind: TensorKind) -> TensorId {
        let name = unique(&mut self.tensor_names, name);
        self.graph.tensors.push(Tensor {
            name,
            shape,
            kind,
            bits: None,
        });
        self.graph.tensors.len() - 1
    }

    /// Adds a network input of `shape` named `name` (made unique).
    pub fn input(&mut self, name: &str, shape: Shape4) -> TensorId {
        let t = self.tensor(name, shape, TensorKind::Activation);
        self.graph.inputs.push(t);
        t
    }

    /// Adds a weight tensor (constant) of `shape` named `name` (made unique).
    pub fn weight(&mut self, name: &str, shape: Shape4) -> TensorId {
        self.tensor(name, shape, TensorKind::Weight)
    }

    /// Marks `t` as a network output.
    pub fn output(&mut self, t: TensorId) {
        if !self.graph.outputs.contains(&t) {
            self.graph.outputs.push(t);
        }
    }

    fn check_ids(&self, op: &str, ids: &[TensorId], kind: TensorKind) -> Result<Vec<Shape4>> {
        ids.iter()
            .map(|&t| match self.graph.tensors.get(t) {
                Some(x) if x.kind == kind => Ok(x.shape),
                Some(x) => Err(GraphError::Invalid {
                    graph: self.graph.name.clone(),
                    reason: format!(
                        "op '{op}': tensor '{}' is a {:?}, expected {:?}",
                        x.name, x.kind, kind
                    ),
                }),
                None => Err(GraphError::Invalid {
                    graph: self.graph.name.clone(),
                    reason: format!("op '{op}': tensor id {t} does not exist"),
                }),
            })
            .collect()
    }

    /// Adds an op named `name` (made unique; empty = generated from the kind), infers its
    /// output shape, and returns the output tensor (named `output_name`, or the op name).
    /// For [`OpKind::Reshape`] use [`GraphBuilder::reshape`].
    pub fn add_op_named(
        &mut self,
        name: &str,
        kind: OpKind,
        inputs: &[TensorId],
        weights: &[TensorId],
        output_name: Option<&str>,
    ) -> Result<TensorId> {
        let base = if name.is_empty() {
            format!("{}_{}", kind.name(), self.graph.ops.len())
        } else {
            name.to_string()
        };
        let in_shapes = self.check_ids(&base, inputs, TensorKind::Activation)?;
        let w_shapes = self.check_ids(&base, weights, TensorKind::Weight)?;
        let out_shape = infer_output(&base, &kind, &in_shapes, &w_shapes)?;
        self.push_op(base, kind, inputs, weights, out_shape, output_name)
    }

    fn push_op(
        &mut self,
        base: String,
        kind: OpKind,
        inputs: &[TensorId],
        weights: &[TensorId],
        out_shape: Shape4,
        output_name: Option<&str>,
    ) -> Result<TensorId> {
        let name = unique(&mut self.op_names, &base);
        let out = self.tensor(
            output_name.unwrap_or(&name),
            out_shape,
            TensorKind::Activation,
        );
        self.graph.ops.push(Op {
            name,
            kind,
            inputs: inputs.to_vec(),
            weights: weights.to_vec(),
            outputs: vec![out],
            fused_act: None,
            source_type: None,
        });
        Ok(out)
    }

    /// [`GraphBuilder::add_op_named`] with the output tensor named like the op.
    pub fn add_op(
        &mut self,
        name: &str,
        kind: OpKind,
        inputs: &[TensorId],
        weights: &[TensorId],
    ) -> Result<TensorId> {
        self.add_op_named(name, kind, inputs, weights, None)
    }

    /// Reshapes `x` to `target` (same element count) with an op named `name`.
    pub fn reshape(
        &mut self,
        name: &str,
        x: TensorId,
        target: Shape4,
        output_name: Option<&str>,
    ) -> Result<TensorId> {
        let base = if name.is_empty() {
            format!("reshape_{}", self.graph.ops.len())
        } else {
            name.to_string()
        };
        let s = self.check_ids(&base, &[x], TensorKind::Activation)?;
        check_reshape(&base, s[0], target)?;
        self.push_op(base, OpKind::Reshape, &[x], &[], target, output_name)
    }

    /// Records the source file's op type of op `op` (see [`Op::source_type`]).
    pub fn set_source_type(&mut self, op: OpId, op_type: &str) {
        if let Some(o) = self.graph.ops.get_mut(op) {
            o.source_type = Some(op_type.to_string());
        }
    }

    /// Sets the fused activation of the op that produced the last output (`op` id).
    pub fn set_fused_act(&mut self, op: OpId, act: Activation) {
        if let Some(o) = self.graph.ops.get_mut(op) {
            o.fused_act = Some(act);
        }
    }

    // ---- convenience layers: they create their own weights named `<op>.weight`/`.bias` ----

    /// Conv of `x` to `c_out` channels with a square `k`×`k` kernel, stride `s`,
    /// symmetric padding `p`, `groups`, dilation 1, optional bias.
    #[allow(clippy::too_many_arguments)]
    pub fn conv(
        &mut self,
        name: &str,
        x: TensorId,
        c_out: u64,
        k: u64,
        s: u64,
        p: u64,
        groups: u64,
        bias: bool,
    ) -> Result<TensorId> {
        let params = ConvParams {
            kernel: [k, k],
            stride: [s, s],
            pad: [p; 4],
            dilation: [1, 1],
            groups,
        };
        self.conv_with(name, x, c_out, params, bias)
    }

    /// Conv of `x` to `c_out` channels with full geometry `params`.
    pub fn conv_with(
        &mut self,
        name: &str,
        x: TensorId,
        c_out: u64,
        params: ConvParams,
        bias: bool,
    ) -> Result<TensorId> {
        let c_in = self.shape(x).c;
        let groups = params.groups.max(1);
        let f = self.weight(
            &format!("{name}.weight"),
            Shape4::new(c_out, c_in / groups, params.kernel[0], params.kernel[1]),
        );
        let mut w = vec![f];
        if bias {
            w.push(self.weight(&format!("{name}.bias"), Shape4::new(1, c_out, 1, 1)));
        }
        self.add_op(name, OpKind::Conv(params), &[x], &w)
    }

    /// Transposed conv of `x` to `c_out` channels.
    pub fn deconv(
        &mut self,
        name: &str,
        x: TensorId,
        c_out: u64,
        params: ConvParams,
        output_pad: [u64; 2],
        bias: bool,
    ) -> Result<TensorId> {
        let c_in = self.shape(x).c;
        let groups = params.groups.max(1);
        let f = self.weight(
            &format!("{name}.weight"),
            Shape4::new(c_in, c_out / groups, params.kernel[0], params.kernel[1]),
        );
        let mut w = vec![f];
        if bias {
            w.push(self.weight(&format!("{name}.bias"), Shape4::new(1, c_out, 1, 1)));
        }
        self.add_op(name, OpKind::Deconv { params, output_pad }, &[x], &w)
    }

    /// Batch-norm of `x` (scale and shift weights, `1×c×1×1` each).
    pub fn batchnorm(&mut self, name: &str, x: TensorId) -> Result<TensorId> {
        let c = self.shape(x).c;
        let scale = self.weight(&format!("{name}.weight"), Shape4::new(1, c, 1, 1));
        let shift = self.weight(&format!("{name}.bias"), Shape4::new(1, c, 1, 1));
        self.add_op(name, OpKind::BatchNorm, &[x], &[scale, shift])
    }

    /// Activation `a` on `x`.
    pub fn act(&mut self, name: &str, x: TensorId, a: Activation) -> Result<TensorId> {
        self.add_op(name, OpKind::Act(a), &[x], &[])
    }

    /// Square max pooling (`k`, stride `s`, padding `p`, floor mode).
    pub fn maxpool(&mut self, name: &str, x: TensorId, k: u64, s: u64, p: u64) -> Result<TensorId> {
        let pp = PoolParams {
            kernel: [k, k],
            stride: [s, s],
            pad: [p; 4],
            ceil_mode: false,
            count_include_pad: false,
        };
        self.add_op(name, OpKind::MaxPool(pp), &[x], &[])
    }

    /// Square average pooling (`k`, stride `s`, padding `p`, floor mode).
    pub fn avgpool(&mut self, name: &str, x: TensorId, k: u64, s: u64, p: u64) -> Result<TensorId> {
        let pp = PoolParams {
            kernel: [k, k],
            stride: [s, s],
            pad: [p; 4],
            ceil_mode: false,
            count_include_pad: false,
        };
        self.add_op(name, OpKind::AvgPool(pp), &[x], &[])
    }

    /// Fully connected layer to `features` outputs (input flattened), with optional bias.
    pub fn gemm(&mut self, name: &str, x: TensorId, features: u64, bias: bool) -> Result<TensorId> {
        let s = self.shape(x);
        let k =
            s.c.checked_mul(s.h)
                .and_then(|v| v.checked_mul(s.w))
                .ok_or_else(|| GraphError::Overflow {
                    what: format!("gemm K of op '{name}'"),
                })?;
        let wt = self.weight(&format!("{name}.weight"), Shape4::new(k, features, 1, 1));
        let mut w = vec![wt];
        if bias {
            w.push(self.weight(&format!("{name}.bias"), Shape4::new(1, features, 1, 1)));
        }
        self.add_op(name, OpKind::Gemm, &[x], &w)
    }

    /// Finishes the graph and validates it ([`crate::validate::validate`]).
    pub fn finish(self) -> Result<Graph> {
        crate::validate::validate(&self.graph)?;
        Ok(self.graph)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_with_unique_names_and_inferred_shapes() {
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 3, 8, 8));
        let y = b.conv("conv", x, 4, 3, 1, 1, 1, true).unwrap();
        let z = b.conv("conv", y, 4, 3, 2, 1, 1, false).unwrap();
        let s = b.add_op("", OpKind::Add, &[z, z], &[]).unwrap();
        b.output(s);
        let g = b.finish().unwrap();
        assert_eq!(g.ops[0].name, "conv");
        assert_eq!(g.ops[1].name, "conv_1");
        assert_eq!(g.ops[2].name, "add_2");
        assert_eq!(g.tensors[z].shape, Shape4::new(1, 4, 4, 4));
        let names: HashSet<_> = g.tensors.iter().map(|t| &t.name).collect();
        assert_eq!(names.len(), g.tensors.len());
    }

    #[test]
    fn rejects_weight_as_input() {
        let mut b = GraphBuilder::new("t");
        let w = b.weight("w", Shape4::new(1, 3, 8, 8));
        let e = b
            .add_op("r", OpKind::Act(Activation::Relu), &[w], &[])
            .unwrap_err();
        assert!(e.to_string().contains("expected Activation"), "{e}");
        let e = b
            .add_op("r", OpKind::Act(Activation::Relu), &[99], &[])
            .unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
    }
}

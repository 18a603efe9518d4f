//! Network inputs that arrive in a wider element type than the network runs in.
//!
//! An ONNX model's inputs are f32. When TPU-MLIR compiles it for F16 or BF16 it keeps
//! the input f32 in global memory (unless `model_deploy --quant_input`) and inserts a
//! cast to the narrow type in front of the first consumers; that cast is an op like any
//! other, which its layer-group pass can put in a group (ResNet-18 at batch 4 on
//! bm1684x: inside the first, H-sliced group) or run alone from global memory. The
//! planner needs it in the graph to cost it and to choose where it runs.

use crate::builder::unique;
use crate::ir::{Graph, Op, OpKind, Tensor, TensorKind};
use std::collections::HashSet;

/// `g` with a [`OpKind::Cast`] after every network input that some op reads: the input
/// tensor keeps its name and gets `bits` ([`Tensor::bits`]); a new tensor
/// `<input>_cast` (the network's element type) replaces it for every consumer, made by
/// an op of the same name placed first. Tensor ids of `g` are unchanged (new ones are
/// appended); op ids shift by the number of casts. Inputs nobody reads stay as they are.
pub fn cast_inputs(g: &Graph, bits: u32) -> Graph {
    let mut out = g.clone();
    let mut casts = Vec::new();
    // new names must differ from every tensor and op name
    let mut taken: HashSet<String> = g
        .tensors
        .iter()
        .map(|t| t.name.clone())
        .chain(g.ops.iter().map(|o| o.name.clone()))
        .collect();
    for &x in &g.inputs {
        let Some(t) = g.tensors.get(x) else { continue };
        if t.kind != TensorKind::Activation || !g.ops.iter().any(|o| o.inputs.contains(&x)) {
            continue;
        }
        let name = unique(&mut taken, &format!("{}_cast", t.name));
        let y = out.tensors.len();
        out.tensors.push(Tensor {
            name: name.clone(),
            shape: t.shape,
            kind: TensorKind::Activation,
            bits: None,
        });
        out.tensors[x].bits = Some(bits);
        for op in &mut out.ops {
            for i in op.inputs.iter_mut().filter(|i| **i == x) {
                *i = y;
            }
        }
        casts.push(Op {
            name,
            kind: OpKind::Cast,
            inputs: vec![x],
            weights: vec![],
            outputs: vec![y],
            fused_act: None,
        });
    }
    casts.append(&mut out.ops);
    out.ops = casts;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::GraphBuilder;
    use crate::ir::Shape4;
    use crate::validate::validate;

    #[test]
    fn every_read_input_gets_a_cast_in_front_and_keeps_its_name() {
        let mut b = GraphBuilder::new("two");
        let x = b.input("x", Shape4::new(2, 3, 8, 8));
        let unused = b.input("unused", Shape4::new(1, 1, 1, 1));
        let y = b.conv("conv", x, 3, 3, 1, 1, 1, false).unwrap();
        b.add_op("sum", OpKind::Add, &[x, y], &[]).unwrap();
        let g = b.finish().unwrap();
        let c = cast_inputs(&g, 32);
        validate(&c).unwrap();
        assert_eq!(c.ops.len(), g.ops.len() + 1);
        assert_eq!(c.ops[0].kind, OpKind::Cast);
        assert_eq!(c.ops[0].name, "x_cast");
        assert_eq!(c.ops[0].inputs, vec![x]);
        assert_eq!(c.tensors[x].bits, Some(32));
        assert_eq!(c.tensors[x].name, "x");
        let xc = c.ops[0].outputs[0];
        assert_eq!(c.tensors[xc].shape, g.tensors[x].shape);
        assert_eq!(c.tensors[xc].bits, None);
        // no op but the cast reads the f32 input any more
        assert!(c.ops[1..].iter().all(|o| !o.inputs.contains(&x)));
        assert!(c.ops[1..].iter().filter(|o| o.inputs.contains(&xc)).count() == 2);
        assert_eq!(
            c.tensors[unused].bits, None,
            "an input nobody reads is left alone"
        );
    }
}

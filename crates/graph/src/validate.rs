//! The graph validator: checks every IR invariant a planner relies on, so a graph from any
//! source (builder, importer, deserialised JSON, a transformation pass) can be trusted.
//!
//! Invariants: tensor/op ids in range; op and tensor names unique; every op has exactly
//! one output; inputs are activations, weights are weights; every activation is either a
//! graph input or produced by exactly one op, never both; ops are in topological order
//! (an op reads only graph inputs and outputs of earlier ops); weights are never
//! produced; every output shape equals the inferred one ([`crate::infer`]); graph outputs
//! exist and are activations.

use std::collections::HashSet;

use crate::error::{GraphError, Result};
use crate::infer::{check_reshape, infer_output};
use crate::ir::{Graph, OpKind, TensorKind};

/// Checks `g` against every IR invariant; the first violation is returned as
/// [`GraphError::Invalid`] (or the shape error from inference).
pub fn validate(g: &Graph) -> Result<()> {
    let bad = |reason: String| GraphError::Invalid {
        graph: g.name.clone(),
        reason,
    };
    let n = g.tensors.len();
    let mut names = HashSet::new();
    for t in &g.tensors {
        if !names.insert(t.name.as_str()) {
            return Err(bad(format!("tensor name '{}' used twice", t.name)));
        }
    }
    let mut op_names = HashSet::new();
    for op in &g.ops {
        if !op_names.insert(op.name.as_str()) {
            return Err(bad(format!("op name '{}' used twice", op.name)));
        }
    }
    // `available[t]`: t can be read by the next op.
    let mut available = vec![false; n];
    let mut produced = vec![false; n];
    for &t in &g.inputs {
        let Some(x) = g.tensors.get(t) else {
            return Err(bad(format!(
                "graph input id {t} out of range ({n} tensors)"
            )));
        };
        if x.kind != TensorKind::Activation {
            return Err(bad(format!("graph input '{}' is a weight", x.name)));
        }
        available[t] = true;
    }
    for (i, t) in g.tensors.iter().enumerate() {
        if t.kind == TensorKind::Weight {
            available[i] = true;
        }
        if t.shape.elements().is_none() {
            return Err(bad(format!(
                "tensor '{}' shape {} overflows u64",
                t.name, t.shape
            )));
        }
    }
    for op in &g.ops {
        let check = |ids: &[usize], kind: TensorKind, role: &str| -> Result<()> {
            for &t in ids {
                let Some(x) = g.tensors.get(t) else {
                    return Err(bad(format!(
                        "op '{}': {role} id {t} out of range ({n} tensors)",
                        op.name
                    )));
                };
                if x.kind != kind {
                    return Err(bad(format!(
                        "op '{}': {role} '{}' is a {:?}, expected {:?}",
                        op.name, x.name, x.kind, kind
                    )));
                }
            }
            Ok(())
        };
        check(&op.inputs, TensorKind::Activation, "input")?;
        check(&op.weights, TensorKind::Weight, "weight")?;
        check(&op.outputs, TensorKind::Activation, "output")?;
        for &t in &op.inputs {
            if !available[t] {
                return Err(bad(format!(
                    "op '{}' reads '{}' before it is produced (ops not in topological order, or tensor never produced)",
                    op.name, g.tensors[t].name
                )));
            }
        }
        let [out] = op.outputs[..] else {
            return Err(bad(format!(
                "op '{}' has {} outputs, expected 1",
                op.name,
                op.outputs.len()
            )));
        };
        if produced[out] || g.inputs.contains(&out) {
            return Err(bad(format!(
                "tensor '{}' is produced more than once",
                g.tensors[out].name
            )));
        }
        produced[out] = true;
        available[out] = true;
        let ins: Vec<_> = op.inputs.iter().map(|&t| g.tensors[t].shape).collect();
        let ws: Vec<_> = op.weights.iter().map(|&t| g.tensors[t].shape).collect();
        let got = g.tensors[out].shape;
        if op.kind == OpKind::Reshape {
            let [x] = ins[..] else {
                return Err(bad(format!(
                    "reshape '{}' has {} inputs, expected 1",
                    op.name,
                    ins.len()
                )));
            };
            if !ws.is_empty() {
                return Err(bad(format!("reshape '{}' has weights", op.name)));
            }
            check_reshape(&op.name, x, got)?;
        } else {
            let want = infer_output(&op.name, &op.kind, &ins, &ws)?;
            if want != got {
                return Err(bad(format!(
                    "op '{}' output '{}' has shape {got}, inference gives {want}",
                    op.name, g.tensors[out].name
                )));
            }
        }
    }
    for (i, t) in g.tensors.iter().enumerate() {
        if t.kind == TensorKind::Activation && !available[i] {
            return Err(bad(format!(
                "activation '{}' is neither a graph input nor produced by an op",
                t.name
            )));
        }
    }
    for &t in &g.outputs {
        match g.tensors.get(t) {
            None => {
                return Err(bad(format!(
                    "graph output id {t} out of range ({n} tensors)"
                )))
            }
            Some(x) if x.kind != TensorKind::Activation => {
                return Err(bad(format!("graph output '{}' is a weight", x.name)))
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::GraphBuilder;
    use crate::ir::{Activation, Shape4};

    fn small() -> Graph {
        let mut b = GraphBuilder::new("small");
        let x = b.input("x", Shape4::new(1, 3, 8, 8));
        let y = b.conv("c1", x, 4, 3, 1, 1, 1, false).unwrap();
        let z = b.act("r1", y, Activation::Relu).unwrap();
        let w = b.conv("c2", z, 4, 3, 1, 1, 1, false).unwrap();
        let s = b.add_op("add", OpKind::Add, &[w, y], &[]).unwrap();
        b.output(s);
        b.finish().unwrap()
    }

    #[test]
    fn accepts_builder_output() {
        validate(&small()).unwrap();
    }

    #[test]
    fn rejects_out_of_order() {
        let mut g = small();
        g.ops.swap(1, 2);
        let e = validate(&g).unwrap_err().to_string();
        assert!(e.contains("before it is produced"), "{e}");
    }

    #[test]
    fn rejects_bad_ids_and_double_production() {
        let mut g = small();
        g.ops[1].inputs[0] = 1000;
        assert!(validate(&g)
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        let mut g = small();
        let out1 = g.ops[1].outputs[0];
        g.ops[2].outputs[0] = out1;
        let e = validate(&g).unwrap_err().to_string();
        assert!(e.contains("produced more than once"), "{e}");
        let mut g = small();
        g.ops[0].inputs[0] = g.ops[0].weights[0];
        assert!(validate(&g)
            .unwrap_err()
            .to_string()
            .contains("expected Activation"));
    }

    #[test]
    fn rejects_wrong_shape_and_dup_names() {
        let mut g = small();
        let t = g.ops[0].outputs[0];
        g.tensors[t].shape.h = 7;
        let e = validate(&g).unwrap_err().to_string();
        assert!(
            e.contains("inference gives") || e.contains("do not match"),
            "{e}"
        );
        let mut g = small();
        g.ops[1].name = "c1".into();
        assert!(validate(&g).unwrap_err().to_string().contains("used twice"));
        let mut g = small();
        g.tensors[1].name = "x".into();
        assert!(validate(&g).unwrap_err().to_string().contains("used twice"));
    }

    #[test]
    fn rejects_orphan_activation() {
        let mut g = small();
        g.inputs.clear();
        let e = validate(&g).unwrap_err().to_string();
        assert!(e.contains("before it is produced"), "{e}");
    }
}

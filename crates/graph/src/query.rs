//! Read-only questions about a [`Graph`]: who produces and who consumes each tensor,
//! which tensors enter or leave a run of consecutive ops. The layer-group planner asks
//! these for every candidate group, so [`Uses`] precomputes them once per graph.

use crate::ir::{Graph, OpId, TensorId, TensorKind};

/// Producer and consumers of every tensor of one graph, computed once (O(ops + edges)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uses {
    /// `producer[t]`: the op that writes tensor `t`, `None` for graph inputs and weights.
    pub producer: Vec<Option<OpId>>,
    /// `consumers[t]`: ops reading tensor `t` as an activation input, in op order
    /// (an op reading it twice appears once).
    pub consumers: Vec<Vec<OpId>>,
    /// `is_output[t]`: tensor `t` is one of the graph's outputs.
    pub is_output: Vec<bool>,
}

impl Uses {
    /// Index `graph`. Tensor ids out of range in ops are ignored (a malformed graph is
    /// the importer's to reject, not this index's).
    pub fn new(graph: &Graph) -> Uses {
        let nt = graph.tensors.len();
        let mut producer = vec![None; nt];
        let mut consumers: Vec<Vec<OpId>> = vec![Vec::new(); nt];
        for (i, op) in graph.ops.iter().enumerate() {
            for &t in &op.outputs {
                if let Some(p) = producer.get_mut(t) {
                    *p = Some(i);
                }
            }
            for &t in &op.inputs {
                if let Some(c) = consumers.get_mut(t) {
                    if c.last() != Some(&i) {
                        c.push(i);
                    }
                }
            }
        }
        let mut is_output = vec![false; nt];
        for &t in &graph.outputs {
            if let Some(o) = is_output.get_mut(t) {
                *o = true;
            }
        }
        Uses {
            producer,
            consumers,
            is_output,
        }
    }

    /// Activation tensors the ops `first..=last` read but do not produce themselves
    /// (they must be loaded from global memory), in first-use order, without repeats.
    pub fn group_inputs(&self, graph: &Graph, first: OpId, last: OpId) -> Vec<TensorId> {
        let mut out = Vec::new();
        for op in graph.ops.iter().take(last + 1).skip(first) {
            for &t in &op.inputs {
                let inside =
                    matches!(self.producer.get(t), Some(Some(p)) if (first..=last).contains(p));
                if !inside && !out.contains(&t) {
                    out.push(t);
                }
            }
        }
        out
    }

    /// Tensors produced by ops `first..=last` that are needed after the run: read by a
    /// later op outside it, or a graph output (they must be stored to global memory).
    pub fn group_outputs(&self, graph: &Graph, first: OpId, last: OpId) -> Vec<TensorId> {
        let mut out = Vec::new();
        for op in graph.ops.iter().take(last + 1).skip(first) {
            for &t in &op.outputs {
                let escapes = self.is_output.get(t).copied().unwrap_or(false)
                    || self
                        .consumers
                        .get(t)
                        .is_some_and(|c| c.iter().any(|&o| !(first..=last).contains(&o)));
                if escapes && !out.contains(&t) {
                    out.push(t);
                }
            }
        }
        out
    }

    /// True if tensor `t` is read by some op outside `first..=last` or is a graph output.
    pub fn escapes(&self, t: TensorId, first: OpId, last: OpId) -> bool {
        self.is_output.get(t).copied().unwrap_or(false)
            || self
                .consumers
                .get(t)
                .is_some_and(|c| c.iter().any(|&o| !(first..=last).contains(&o)))
    }
}

/// Ids of the graph's weight tensors an op reads, skipping ids that are not weights.
pub fn op_weights(graph: &Graph, op: OpId) -> Vec<TensorId> {
    graph
        .ops
        .get(op)
        .map(|o| {
            o.weights
                .iter()
                .copied()
                .filter(|&t| {
                    graph
                        .tensors
                        .get(t)
                        .is_some_and(|x| x.kind == TensorKind::Weight)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The op named `name`, if any.
pub fn op_by_name(graph: &Graph, name: &str) -> Option<OpId> {
    graph.ops.iter().position(|o| o.name == name)
}

/// The tensor named `name`, if any.
pub fn tensor_by_name(graph: &Graph, name: &str) -> Option<TensorId> {
    graph.tensors.iter().position(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::*;

    fn t(name: &str, kind: TensorKind) -> Tensor {
        Tensor {
            name: name.into(),
            shape: Shape4::new(1, 8, 8, 8),
            kind,
            bits: None,
        }
    }

    #[test]
    fn residual_inputs_outputs() {
        // x -> a(relu) -> y ; add(x, y) -> z
        let g = Graph {
            name: "g".into(),
            tensors: vec![
                t("x", TensorKind::Activation),
                t("y", TensorKind::Activation),
                t("z", TensorKind::Activation),
            ],
            ops: vec![
                Op {
                    name: "a".into(),
                    kind: OpKind::Act(Activation::Relu),
                    inputs: vec![0],
                    weights: vec![],
                    outputs: vec![1],
                    fused_act: None,
                    source_type: None,
                },
                Op {
                    name: "b".into(),
                    kind: OpKind::Add,
                    inputs: vec![0, 1],
                    weights: vec![],
                    outputs: vec![2],
                    fused_act: None,
                    source_type: None,
                },
            ],
            inputs: vec![0],
            outputs: vec![2],
        };
        let u = Uses::new(&g);
        assert_eq!(u.producer, vec![None, Some(0), Some(1)]);
        assert_eq!(u.consumers[0], vec![0, 1]);
        assert_eq!(u.group_inputs(&g, 0, 1), vec![0]);
        assert_eq!(u.group_outputs(&g, 0, 1), vec![2]);
        assert_eq!(u.group_outputs(&g, 0, 0), vec![1]);
        assert_eq!(u.group_inputs(&g, 1, 1), vec![0, 1]);
        assert_eq!(op_by_name(&g, "b"), Some(1));
        assert_eq!(tensor_by_name(&g, "q"), None);
    }
}

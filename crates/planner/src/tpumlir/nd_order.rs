//! TPU-MLIR 1.30.2's op order and cast names for a transformer's layers
//! ([`super::nd_form`]): what an exported grouping must follow for TPU-MLIR to take it.

use super::nd_form::TxLayer;
use std::collections::HashMap;
use tpusim_graph::nd::{NdGraph, NdInputKind, Work};

/// Whether TPU-MLIR can run a layer in local memory (for its op order; which of those
/// our plans group is `nd_plan`'s choice): all but gathers, transposes, expands and
/// the other copies.
fn runs_local(l: &TxLayer) -> bool {
    l.work != Work::Move || matches!(l.op_type.as_str(), "Cast" | "Slice" | "Split" | "Concat")
}

/// The layers in TPU-MLIR's topological order (its `--topo-sort`, as
/// `tpusim_graph::order::tpu_mlir_order` gives it for CNNs): ops that can run in local
/// memory and ops that cannot taken in turns, local first, and within a turn the layer
/// made ready last first (those made ready together: latest in graph order first). So
/// three projections of one norm run last to first, as TPU-MLIR lists them
/// (`matmul_35`, `matmul_34`, `matmul_33`), and a group exported to it must be
/// consecutive in this order ("operand does not dominate this use" otherwise).
pub(crate) fn tpu_mlir_order<'g>(g: &'g NdGraph, layers: Vec<TxLayer>) -> Vec<TxLayer> {
    // the output of a node no layer stands for (a view, a folded transpose) stands for
    // its input
    let in_layer: std::collections::HashSet<usize> = layers
        .iter()
        .flat_map(|l| l.nodes.iter().copied())
        .collect();
    let mut alias: HashMap<&'g str, &'g str> = HashMap::new();
    for (_, n) in g
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| !in_layer.contains(i))
    {
        if let Some(e) = n.inputs.iter().find(|e| e.kind == NdInputKind::Activation) {
            for o in &n.outputs {
                alias.insert(o.as_str(), e.name.as_str());
            }
        }
    }
    let root = |name: &str| {
        let mut name = name.to_string();
        for _ in 0..g.nodes.len() {
            match alias.get(name.as_str()) {
                Some(&up) => name = up.to_string(),
                None => break,
            }
        }
        name
    };
    let n = layers.len();
    let mut writer: HashMap<String, usize> = HashMap::new();
    for (i, l) in layers.iter().enumerate() {
        for v in &l.writes {
            writer.insert(root(&v.name), i);
        }
    }
    let mut waiting = vec![0usize; n];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (j, l) in layers.iter().enumerate() {
        let mut from: Vec<usize> = l
            .reads
            .iter()
            .filter_map(|v| writer.get(&root(&v.name)).copied())
            .filter(|&i| i != j)
            .collect();
        from.sort_unstable();
        from.dedup();
        for i in from {
            waiting[j] += 1;
            users[i].push(j);
        }
    }
    let Some(order) = tpusim_graph::order::ping_pong(waiting, &users, |i| runs_local(&layers[i]))
    else {
        return layers;
    };
    let mut slots: Vec<Option<TxLayer>> = layers.into_iter().map(Some).collect();
    order.iter().filter_map(|&i| slots[i].take()).collect()
}

/// TPU-MLIR's names of the casts a lowering added: the producer's name and the
/// reader's joined, then `_f32` for a cast up, `_f16` for a cast down (`_v_209_Gemm` +
/// `pow_70_0_Pow_abs` + `_f32`; `tanh_78_0_Tanh` + `add_80_0_Add` + `_f16`).
pub(crate) fn name_casts(layers: &mut [TxLayer]) {
    let first_loc = |l: &TxLayer| l.locs.first().cloned().unwrap_or_default();
    for i in 0..layers.len() {
        if layers[i].op_type != "Cast" || !layers[i].locs.is_empty() {
            continue;
        }
        let read = layers[i]
            .reads
            .first()
            .map(|v| v.name.clone())
            .unwrap_or_default();
        let wrote = layers[i]
            .writes
            .first()
            .map(|v| v.name.clone())
            .unwrap_or_default();
        let producer = layers[..i]
            .iter()
            .rev()
            .find(|l| l.writes.iter().any(|v| v.name == read))
            .map(first_loc)
            .unwrap_or_default();
        let reader = layers[i + 1..]
            .iter()
            .find(|l| l.reads.iter().any(|v| v.name == wrote))
            .map(first_loc)
            .unwrap_or_default();
        let up = layers[i].wide_out;
        layers[i].locs = vec![format!(
            "{producer}{reader}{}",
            if up { "_f32" } else { "_f16" }
        )];
    }
}

//! TPU-MLIR 1.30.2's op order and cast names for a transformer's layers
//! ([`super::nd_form`]): what an exported grouping must follow for TPU-MLIR to take it.

use super::nd_attention::{view_nodes, ViewNode};
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
///
/// A view from or to a value of at most two dims is an op of its own there, one that
/// cannot run in local memory (TPU-MLIR lists BERT's `unsqueeze_7_0_Unsqueeze` of the
/// [1, s] mask as a global layer): it takes a turn, and the mask's chain waits for it,
/// so TPU-MLIR runs the embeddings' add and norm first and its group holds them and the
/// chain. Other views stand for their inputs.
pub(crate) fn tpu_mlir_order<'g>(g: &'g NdGraph, layers: Vec<TxLayer>) -> Vec<TxLayer> {
    let flat_views: Vec<ViewNode<'g>> = view_nodes(g).filter(|v| v.flat).collect();
    let flat_out: std::collections::HashSet<&str> = flat_views.iter().map(|v| v.output).collect();
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
        .filter(|(_, n)| !n.outputs.iter().any(|o| flat_out.contains(o.as_str())))
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
    // the layers, then the flat views, each with what it reads and writes
    let n = layers.len();
    // a layer also waits for the flat views its graph nodes read (a lowering's input
    // cast can make it read past one: BERT's mask cast reads `attention_mask#f32`, its
    // ONNX node the unsqueezed mask)
    let mut reads: Vec<Vec<String>> = layers
        .iter()
        .map(|l| {
            let viewed = l
                .nodes
                .iter()
                .filter_map(|&i| g.nodes.get(i))
                .flat_map(|n| &n.inputs)
                .filter(|e| flat_out.contains(e.name.as_str()))
                .map(|e| e.name.clone());
            l.reads
                .iter()
                .map(|v| root(&v.name))
                .chain(viewed)
                .collect()
        })
        .collect();
    let mut writes: Vec<Vec<String>> = layers
        .iter()
        .map(|l| l.writes.iter().map(|v| root(&v.name)).collect())
        .collect();
    // a flat view of a network input waits for the input's cast, where there is one
    let input_cast = |name: &str| {
        layers
            .iter()
            .find(|l| {
                l.op_type == "Cast" && l.nodes.is_empty() && l.reads.iter().any(|v| v.name == name)
            })
            .and_then(|l| l.writes.first())
            .map(|v| v.name.clone())
    };
    for v in &flat_views {
        reads.push(vec![input_cast(v.input).unwrap_or_else(|| root(v.input))]);
        writes.push(vec![v.output.to_string()]);
    }
    let total = reads.len();
    let mut writer: HashMap<&str, usize> = HashMap::new();
    for (i, w) in writes.iter().enumerate() {
        for name in w {
            writer.insert(name.as_str(), i);
        }
    }
    let mut waiting = vec![0usize; total];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); total];
    for (j, r) in reads.iter().enumerate() {
        let mut from: Vec<usize> = r
            .iter()
            .filter_map(|name| writer.get(name.as_str()).copied())
            .filter(|&i| i != j)
            .collect();
        from.sort_unstable();
        from.dedup();
        for i in from {
            waiting[j] += 1;
            users[i].push(j);
        }
    }
    let local = |i: usize| i < n && runs_local(&layers[i]);
    let Some(order) = tpusim_graph::order::ping_pong(waiting, &users, local) else {
        return layers;
    };
    let mut slots: Vec<Option<TxLayer>> = layers.into_iter().map(Some).collect();
    order
        .iter()
        .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
        .collect()
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

/// The permutes (0, 2, 1, 3) of `layers` (in TPU-MLIR's order) moved next to the group
/// layers that will fuse them: before the first layer that reads what it writes, when
/// every reader can run in local memory (TPU-MLIR loads llama_d320_s256's Q and K
/// through their permutes into the rotary group); else right after the layer that
/// writes what it reads (LLaMA's V, read by a global expand of its heads, leaves the
/// projections' group through its permute). A permute is global in TPU-MLIR's own order
/// and in an exported cache, so this order changes no export.
pub(crate) fn permutes_beside_their_groups(layers: Vec<TxLayer>) -> Vec<TxLayer> {
    let mut out: Vec<TxLayer> = Vec::with_capacity(layers.len());
    let mut later: Vec<TxLayer> = Vec::new();
    let reads_of = |l: &TxLayer, name: &str| l.reads.iter().any(|v| v.name == name);
    for (i, l) in layers.iter().enumerate() {
        // the permutes waiting for this reader go just before it
        let (now, wait): (Vec<TxLayer>, Vec<TxLayer>) = later
            .drain(..)
            .partition(|p| p.writes.iter().any(|w| reads_of(l, &w.name)));
        out.extend(now);
        later = wait;
        if l.op_type != "Permute" {
            out.push(l.clone());
            continue;
        }
        let readers: Vec<&TxLayer> = layers[i + 1..]
            .iter()
            .filter(|r| l.writes.iter().any(|w| reads_of(r, &w.name)))
            .collect();
        if !readers.is_empty() && readers.iter().all(|r| runs_local(r)) {
            later.push(l.clone());
            continue;
        }
        let producer = out
            .iter()
            .rposition(|p| p.writes.iter().any(|w| reads_of(l, &w.name)));
        match producer {
            Some(at) => out.insert(at + 1, l.clone()),
            None => out.push(l.clone()),
        }
    }
    out.extend(later);
    out
}

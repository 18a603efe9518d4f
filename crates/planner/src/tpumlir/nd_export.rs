//! A transformer plan's grouping (`nd_plan`) as a TPU-MLIR layer-group cache, to force
//! with `LOAD_TPU_GROUP=1`: one `GroupLayer` per group of two or more layers, listing
//! the names TPU-MLIR gives every op it stands for (`nd_form::TxLayer::locs`) and the
//! views around them. Global layers are left out: TPU-MLIR 1.30.2 compiles a cache of
//! groups alone, running every op they do not name as a global layer (its own cache of
//! llama_d256_s128 with its `GlobalLayer` list emptied compiles to the same 7 groups).
//!
//! A view (Reshape, Flatten, Squeeze, Unsqueeze) is listed with a group when it reads what
//! the group writes, or when only the group reads it, right after (or before) the layer
//! it views: TPU-MLIR keeps such views inside and refuses a group that leaves one out
//! or lists it elsewhere (`reshape_49_0_Reshape`, `load_layers.0.k.w_f16`: "operand #0
//! does not dominate this use"). But the views of what the group's last op writes run
//! outside it, as TPU-MLIR's own groups leave them (a global view is a no-op, a local one
//! a copy). A view from or to a 2-D value is left to run outside
//! the group, as TPU-MLIR's own GPT-2 groups leave `_v_199_Reshape` and `add_64_0_Reshape`:
//! inside, the group would move the 2-D value one element a plane (a 128×128 store in
//! 102,353 cycles, a load in 77,647, where its own group's take 800 and 605). A name
//! TPU-MLIR does not know is ignored, so listing a view it folded away is harmless.

use super::cache::{Cache, CacheGroup};
use super::nd_attention::{view_nodes, ViewNode};
use super::nd_form::{lower, TxLayer};
use crate::nd_plan::NdPlan;
use crate::NpuChip;
use std::collections::HashSet;
use tpusim_graph::nd::NdGraph;
use tpusim_layout::ElementType;

/// `plan`'s groups of `g` (planned on `chip` in `dtype`) as a TPU-MLIR cache.
pub fn export_nd(g: &NdGraph, chip: &NpuChip, dtype: ElementType, plan: &NdPlan) -> Cache {
    let layers = lower(g, chip.f32_ops_at(dtype), dtype.bits());
    let mut groups = Vec::new();
    let all: Vec<ViewNode> = view_nodes(g).collect();
    let mut listed: HashSet<&str> = HashSet::new();
    for run in plan.groups.iter().filter(|r| r.end - r.start > 1) {
        let Some(members) = layers.get(run.start..run.end) else {
            continue;
        };
        let locs = group_locs(&all, members, &mut listed);
        groups.push(CacheGroup {
            base_group_idx: groups.len() as i64,
            start_idx: run.start as i64,
            end_idx: run.end as i64 - 1,
            func_start_idx: run.start as i64,
            func_end_idx: run.end as i64 - 1,
            group_cost: run.cycles.min(i64::MAX as u64) as i64,
            index: run.start as i64,
            locs,
            shape_secs: vec![1, run.csecs as i64, 1, run.hsecs as i64, 1],
        });
    }
    Cache {
        opt: 2,
        group_layer: groups,
        global_layer: Vec::new(),
        cycle_prefix_sum: Vec::new(),
    }
}

/// TPU-MLIR's name of a view: `<output>_<type>`.
pub(super) fn view_loc(v: &ViewNode) -> String {
    format!("{}_{}", v.output, v.node.op_type)
}

/// The names to list for a group of `members`, in TPU-MLIR's order: each layer's own,
/// the views that only the group reads just before the layer that reads them, and the
/// views of what a layer writes (and views of those) right after it; each view once in
/// all the groups (`listed`: TPU-MLIR refuses a cache naming an op in two groups).
fn group_locs<'g>(
    all: &[ViewNode<'g>],
    members: &[TxLayer],
    listed: &mut HashSet<&'g str>,
) -> Vec<String> {
    let read: HashSet<&str> = members
        .iter()
        .flat_map(|l| l.reads.iter().map(|v| v.name.as_str()))
        .collect();
    // the group's last op (a permute at its edge is not one)
    let last = members.iter().rposition(|l| l.op_type != "Permute");
    let mut out = Vec::new();
    for (k, l) in members.iter().enumerate() {
        // a permute fused into the group's load or store: TPU-MLIR lists it as a global
        // layer, and with it the views it reads or writes (listed in the group they would
        // read a global layer's output ahead of it: "operand #0 does not dominate")
        if l.op_type == "Permute" {
            continue;
        }
        for v in all {
            let reads_it = l.reads.iter().any(|r| r.name == v.output);
            if reads_it && !v.flat && read.contains(v.output) && listed.insert(v.output) {
                out.push(view_loc(v));
            }
        }
        out.extend(l.locs.iter().cloned());
        // views of what the last op writes run outside, as TPU-MLIR's own
        // llama_d1024_s256 leaves V's `reshape_49_0_Reshape` (a global no-op where in
        // the group it is a copy: its grouping compiled 0.9 % faster without it)
        if Some(k) == last {
            continue;
        }
        let mut from: Vec<&str> = l.writes.iter().map(|v| v.name.as_str()).collect();
        while let Some(name) = from.pop() {
            for v in all.iter().filter(|v| v.input == name && !v.flat) {
                if listed.insert(v.output) {
                    out.push(view_loc(v));
                    from.push(v.output);
                }
            }
        }
    }
    out
}

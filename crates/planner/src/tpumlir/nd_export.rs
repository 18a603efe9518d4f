//! A transformer plan's grouping (`nd_plan`) as a TPU-MLIR layer-group cache, to force
//! with `LOAD_TPU_GROUP=1`: one `GroupLayer` per group of two or more layers, listing
//! the names TPU-MLIR gives every op it stands for (`nd_form::TxLayer::locs`) and the
//! views around them, and one `GlobalLayer` per op of every other layer and view, in op
//! order, `func.return` last, as TPU-MLIR's own caches list them. TPU-MLIR 1.30.2 compiles
//! a cache of groups alone, running every op they do not name as a global layer, but it
//! then takes two groups with no global layer listed between them for neighbours and
//! overlaps the second's loads with the first (`self_down_overlap_op`): its own cache of
//! bert_d128_s64 on bm1688 with the `GlobalLayer` list emptied compiles to 152,294
//! cycles, not 153,447, and computes a wrong output in its cmodel, the QKV projection
//! between the two groups read before it is written. The indices are not read (the
//! same cache with other indices compiles to the same program), nor is
//! `CyclePrefixSum`, which is left empty.
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

use super::cache::{Cache, CacheGlobal, CacheGroup};
use super::nd_attention::{view_nodes, ViewNode};
use super::nd_form::{lower_on, TxLayer};
use crate::nd_plan::NdPlan;
use crate::NpuChip;
use std::collections::HashSet;
use tpusim_graph::nd::NdGraph;
use tpusim_layout::ElementType;

/// `plan`'s groups of `g` (planned on `chip` in `dtype`) as a TPU-MLIR cache.
pub fn export_nd(g: &NdGraph, chip: &NpuChip, dtype: ElementType, plan: &NdPlan) -> Cache {
    let layers = lower_on(g, chip, dtype);
    let all: Vec<ViewNode> = view_nodes(g).collect();
    let mut listed: HashSet<&str> = HashSet::new();
    // the groups first: the views they list are theirs, every other one is global
    let Runs {
        pieces,
        mut groups,
        spans,
    } = runs(plan, &layers, &all, &mut listed);
    let followers = followers(g, &layers, &all, &listed);
    let mut seq = Sequence::default();
    seq.followers_of(&followers, &graph_inputs(&layers, &followers), &mut listed);
    for piece in pieces {
        let members: &[TxLayer] = match piece {
            Piece::Global(i) => {
                let l = &layers[i];
                let cost = plan.layers.get(i).map_or(0, |x| x.cycles);
                for loc in &l.locs {
                    seq.global(loc.clone(), cost);
                }
                std::slice::from_ref(l)
            }
            Piece::Group(k) => {
                seq.group(&mut groups[k]);
                &layers[spans[k].clone()]
            }
        };
        let out: Vec<&str> = members
            .iter()
            .flat_map(|l| l.writes.iter().map(|v| v.name.as_str()))
            .collect();
        seq.followers_of(&followers, &out, &mut listed);
    }
    seq.global("func.return".into(), 0);
    Cache {
        opt: 2,
        group_layer: groups,
        global_layer: seq.globals,
        cycle_prefix_sum: Vec::new(),
    }
}

/// The plan's runs as pieces in op order, its groups (numbered when the sequence is
/// laid out) and each group's layers.
struct Runs {
    pieces: Vec<Piece>,
    groups: Vec<CacheGroup>,
    spans: Vec<std::ops::Range<usize>>,
}

/// `plan`'s runs over `layers`: a run of one layer global, a longer one a group with the
/// names [`group_locs`] gives it (the views it lists marked in `listed`) and the permutes
/// it fuses beside it as global layers: before it those it loads through, after it those
/// it stores through (TPU-MLIR's own llama_d320_s256 lists `transpose_45_0_Transpose`
/// before the rotary group that loads it; after it, the same groups compiled to a
/// program its cmodel stopped in, reading past a lane).
fn runs<'g>(
    plan: &NdPlan,
    layers: &[TxLayer],
    all: &[ViewNode<'g>],
    listed: &mut HashSet<&'g str>,
) -> Runs {
    let mut out = Runs {
        pieces: Vec::new(),
        groups: Vec::new(),
        spans: Vec::new(),
    };
    for run in &plan.groups {
        let Some(members) = layers.get(run.start..run.end) else {
            continue;
        };
        if members.len() < 2 {
            out.pieces.push(Piece::Global(run.start));
            continue;
        }
        // a permute the group loads through goes before it, one it stores through after
        let read: HashSet<&str> = members
            .iter()
            .filter(|l| l.op_type != "Permute")
            .flat_map(|l| l.reads.iter().map(|v| v.name.as_str()))
            .collect();
        let loaded = |l: &TxLayer| l.writes.iter().any(|v| read.contains(v.name.as_str()));
        let permutes = |before: bool| {
            members
                .iter()
                .enumerate()
                .filter(move |(_, l)| l.op_type == "Permute" && loaded(l) == before)
                .map(|(k, _)| Piece::Global(run.start + k))
        };
        out.pieces.extend(permutes(true));
        out.pieces.push(Piece::Group(out.groups.len()));
        out.pieces.extend(permutes(false));
        out.spans.push(run.start..run.end);
        out.groups.push(CacheGroup {
            group_cost: run.cycles.min(i64::MAX as u64) as i64,
            locs: group_locs(all, members, listed),
            shape_secs: vec![run.nsecs as i64, run.csecs as i64, 1, run.hsecs as i64, 1],
            ..CacheGroup::default()
        });
    }
    out
}

/// The views no group lists (`listed`), and the transposes the attention's matmuls fold
/// (TPU-MLIR lists llama_d128_s64's `transpose_40_0_Transpose` as a global layer that
/// takes no time): each goes right after what writes its input. Not those inside an
/// attention TPU-MLIR fuses, which its `tpu.Attention` heads stand for (`nd_fused`), nor
/// a view only views read, which TPU-MLIR merges into them (hf_qkv_static's two
/// Unsqueezes of the mask are one op, named after the second).
fn followers<'g>(
    g: &'g NdGraph,
    layers: &[TxLayer],
    all: &[ViewNode<'g>],
    listed: &HashSet<&str>,
) -> Vec<Follower<'g>> {
    let named: HashSet<&str> = layers
        .iter()
        .flat_map(|l| l.locs.iter().map(String::as_str))
        .collect();
    let fused: HashSet<&str> = layers
        .iter()
        .filter(|l| l.head.is_some())
        .flat_map(|l| l.nodes.iter().filter_map(|&i| g.nodes.get(i)))
        .flat_map(|n| n.outputs.iter().map(String::as_str))
        .collect();
    // how many nodes read each value, and how many of them are views
    let mut readers: std::collections::HashMap<&str, [usize; 2]> = Default::default();
    let view_outputs: HashSet<&str> = all.iter().map(|v| v.output).collect();
    for n in &g.nodes {
        let is_view = n
            .outputs
            .first()
            .is_some_and(|o| view_outputs.contains(o.as_str()));
        for e in &n.inputs {
            let count = readers.entry(e.name.as_str()).or_default();
            count[0] += 1;
            count[1] += usize::from(is_view);
        }
    }
    let viewed_only = |v: &ViewNode| {
        readers
            .get(v.output)
            .is_some_and(|&[all, views]| all > 0 && all == views)
    };
    all.iter()
        .filter(|v| !listed.contains(v.output) && !viewed_only(v))
        .map(|v| Follower {
            input: v.input,
            output: v.output,
            loc: v.loc.clone(),
        })
        .chain(folded_transposes(g, &named))
        .filter(|f| !fused.contains(f.output))
        .collect()
}

/// The values followers read that no layer and no follower writes: the graph's inputs.
fn graph_inputs<'g>(layers: &[TxLayer], followers: &[Follower<'g>]) -> Vec<&'g str> {
    let written: HashSet<&str> = layers
        .iter()
        .flat_map(|l| l.writes.iter().map(|v| v.name.as_str()))
        .collect();
    followers
        .iter()
        .filter(|f| !written.contains(f.input) && !followers.iter().any(|w| w.output == f.input))
        .map(|f| f.input)
        .collect()
}

/// A group of the cache, or a global layer (an index into the lowered layers), in op
/// order.
#[derive(Debug, Clone, Copy)]
enum Piece {
    Group(usize),
    Global(usize),
}

/// The groups and global layers in op order, numbered as TPU-MLIR numbers its own: each
/// piece by its place among them all (`index`), each op by its place in the function.
#[derive(Default)]
struct Sequence {
    pieces: i64,
    ops: i64,
    globals: Vec<CacheGlobal>,
}

impl Sequence {
    fn global(&mut self, loc: String, cycles: u64) {
        self.globals.push(CacheGlobal {
            index: self.pieces,
            func_idx: self.ops,
            group_cost: cycles.min(i64::MAX as u64) as i64,
            loc,
        });
        self.pieces += 1;
        self.ops += 1;
    }

    fn group(&mut self, g: &mut CacheGroup) {
        let last = (g.locs.len() as i64 - 1).max(0);
        g.index = self.pieces;
        g.base_group_idx = self.pieces;
        g.start_idx = 0;
        g.end_idx = last;
        g.func_start_idx = self.ops;
        g.func_end_idx = self.ops + last;
        self.pieces += 1;
        self.ops += last + 1;
    }

    /// The followers of `values`, and the followers of those, each once.
    fn followers_of<'g>(
        &mut self,
        followers: &[Follower<'g>],
        values: &[&str],
        listed: &mut HashSet<&'g str>,
    ) {
        let mut from: Vec<&str> = values.to_vec();
        while let Some(name) = from.pop() {
            for f in followers.iter().filter(|f| f.input == name) {
                if listed.insert(f.output) {
                    self.global(f.loc.clone(), 0);
                    from.push(f.output);
                }
            }
        }
    }
}

/// A global op no layer stands for (a view, a folded transpose), listed right after what
/// writes its input.
struct Follower<'g> {
    input: &'g str,
    output: &'g str,
    loc: String,
}

/// The transposes of `g` no layer names (`named`): those the attention's matmuls fold.
fn folded_transposes<'g>(g: &'g NdGraph, named: &HashSet<&str>) -> Vec<Follower<'g>> {
    g.nodes
        .iter()
        .filter(|n| n.op_type == "Transpose")
        .filter_map(|n| {
            let output = n.outputs.first()?;
            let loc = format!("{output}_Transpose");
            let input = n.inputs.first()?;
            (!named.contains(loc.as_str())).then_some(Follower {
                input: &input.name,
                output,
                loc,
            })
        })
        .collect()
}

/// A view of a value of one row a plane (C = 1: a sequence of one token), which a group
/// would load and view: it runs outside the group. llama_d768_s1_b4's
/// `reshape_117_0_Reshape` of P·V's heads, [4, 1, 12, 64] to [4, 1, 768], listed first in
/// the output projection's group, compiled on bm1684x into a program whose logits were
/// off by two thirds of their range in TPU-MLIR's cmodel; run as a global layer, as
/// TPU-MLIR's own grouping runs it, they are right. (llama_d384_s4_b2's, [2, 4, 6, 64],
/// listed so, compiled right.)
fn views_one_row(v: &ViewNode) -> bool {
    v.node
        .inputs
        .iter()
        .find(|e| e.name == v.input)
        .is_some_and(|e| e.dims.len() >= 3 && e.dims[1] == 1)
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
            let inside = reads_it && !v.flat && !views_one_row(v);
            if inside && read.contains(v.output) && listed.insert(v.output) {
                out.push(v.loc.clone());
            }
        }
        out.extend(l.locs.iter().cloned());
        // views of what the last op writes run outside, as TPU-MLIR's own
        // llama_d1024_s256 leaves V's `reshape_49_0_Reshape` (a global no-op where in
        // the group it is a copy: its grouping compiled 0.9 % faster without it), but
        // for one tied to it (gpt2_d96_s24_b3's `add_26_0_Add_reshape_5`)
        let last_op = Some(k) == last;
        let mut from: Vec<&str> = l.writes.iter().map(|v| v.name.as_str()).collect();
        while let Some(name) = from.pop() {
            for v in all
                .iter()
                .filter(|v| v.input == name && !v.flat && (v.tied || !last_op))
            {
                if listed.insert(v.output) {
                    out.push(v.loc.clone());
                    from.push(v.output);
                }
            }
        }
    }
    out
}

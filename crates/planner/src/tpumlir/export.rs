//! Our plan's grouping as a TPU-MLIR layer-group cache ([`export`]): every op TPU-MLIR
//! lowers the graph to ([`super::lowering`]) is named, in a group or as a global layer,
//! as TPU-MLIR's own cache names them.
//!
//! Where a cast goes (TPU-MLIR compiles a group only if it holds every cast lying
//! between two of its ops; a cast at a group's edge may go either way):
//! - between two ops of one group: in that group;
//! - to f32 (in front of a global average pool): with its producer if the producer
//!   ends a group and the reader starts the next (TPU-MLIR's own small CNN grouping:
//!   703 of 8,867 cycles faster on bm1684x than with the reader, and ResNet-18/34 and
//!   the SE net the same either way, compiled), else with its reader if the reader is
//!   in a group (it loads the 16-bit tensor and casts in local memory), else with its
//!   producer's group;
//! - to 16 bits (after an op run in f32): with its producer if the producer is in a
//!   group (the group stores the narrower tensor), else with its reader's group;
//! - a network output's cast to f32: with the op it follows.
//!
//! Anything else runs global. A view our plan runs global right after a group's last
//! op is listed in that group where that pays ([`trailing_view`]).

use super::cache::{Cache, CacheGlobal, CacheGroup, CachePrefix};
use super::lowering::{lower, Lowered};
use crate::plan::Plan;
use crate::timing::Timing;

/// Where one cast is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Home {
    /// In group `g`, in front of its reader.
    BeforeReader(usize),
    /// In group `g`, right after its producer.
    AfterProducer(usize),
    /// Global, in front of its reader.
    Global,
}

/// Our plan's grouping as a TPU-MLIR cache (op indices are ours; `locs` carry the names
/// TPU-MLIR matches on; `group_cost` our cycle estimate; `func.return` last, as TPU-MLIR
/// lists it).
pub fn export(plan: &Plan) -> Cache {
    let graph = &plan.graph;
    let lowered = lower(graph, &plan.dtype);
    let group_of = group_of_ops(plan);
    let homes = cast_homes(&lowered, &group_of);
    let cost_of = |name: &str| {
        plan.global_costs
            .iter()
            .find(|c| c.op == name)
            .map_or(0, |c| c.cycles as i64)
    };
    let mut out = CacheWriter::default();
    for piece in pieces(&group_of) {
        match piece {
            Piece::Group(gi) => {
                let members: Vec<usize> = (0..graph.ops.len())
                    .filter(|&i| group_of[i] == Some(gi))
                    .collect();
                let locs = group_locs(&lowered, &homes, &members, gi);
                out.group(&plan.groups[gi], &members, locs);
            }
            Piece::Global(i) => {
                let low = &lowered[i];
                let casts = low
                    .casts_in
                    .iter()
                    .zip(&homes[i])
                    .filter(|(_, h)| **h == Home::Global)
                    .map(|(c, _)| (c.loc.clone(), 0));
                let own = std::iter::once((low.loc.clone(), cost_of(&graph.ops[i].name)));
                let cast_out = low.cast_out.iter().map(|l| (l.clone(), 0));
                for (loc, cost) in casts.chain(own).chain(cast_out) {
                    out.global(i, loc, cost);
                }
            }
        }
    }
    out.finish(graph.ops.len())
}

/// The group each op is listed in (a view our plan runs global right after a group
/// goes in that group where [`trailing_view`] says so).
fn group_of_ops(plan: &Plan) -> Vec<Option<usize>> {
    let index_of = |name: &str| plan.graph.ops.iter().position(|o| o.name == name);
    let mut group_of: Vec<Option<usize>> = vec![None; plan.graph.ops.len()];
    for (gi, g) in plan.groups.iter().enumerate() {
        for i in g.ops.iter().filter_map(|n| index_of(n)) {
            group_of[i] = Some(gi);
        }
        let last = g.ops.last().map_or("", |s| s.as_str());
        if let Some(v) = trailing_view(plan, last, g.nsecs) {
            group_of[v] = Some(gi);
        }
    }
    group_of
}

/// Each group at its first op and each global op alone, in op order.
fn pieces(group_of: &[Option<usize>]) -> Vec<Piece> {
    let mut seen = std::collections::HashSet::new();
    group_of
        .iter()
        .enumerate()
        .filter_map(|(i, g)| match g {
            Some(gi) => seen.insert(*gi).then_some(Piece::Group(*gi)),
            None => Some(Piece::Global(i)),
        })
        .collect()
}

/// A cache written piece by piece, with its running cycle sum and positions.
#[derive(Default)]
struct CacheWriter {
    groups: Vec<CacheGroup>,
    globals: Vec<CacheGlobal>,
    prefix: Vec<CachePrefix>,
    sum: i64,
    index: i64,
}

impl CacheWriter {
    /// Group `g`, whose ops (ours, in order) are `members`, listing `locs`.
    fn group(&mut self, g: &crate::plan::GroupPlan, members: &[usize], locs: Vec<String>) {
        let start = members.first().map_or(-1, |&i| i as i64);
        let end = members.last().map_or(-1, |&i| i as i64);
        self.groups.push(CacheGroup {
            base_group_idx: 0,
            start_idx: start,
            end_idx: end,
            func_start_idx: start,
            func_end_idx: end,
            group_cost: g.cycles as i64,
            index: self.index,
            locs,
            shape_secs: vec![g.nsecs as i64, 1, 1, g.hsecs as i64, 1],
        });
        self.advance(end, g.cycles as i64);
    }

    /// One global layer `loc` at our op `op`, of `cost` cycles.
    fn global(&mut self, op: usize, loc: String, cost: i64) {
        self.globals.push(CacheGlobal {
            index: self.index,
            func_idx: op as i64,
            group_cost: cost,
            loc,
        });
        self.advance(op as i64, cost);
    }

    fn advance(&mut self, end: i64, cost: i64) {
        self.sum = self.sum.saturating_add(cost);
        self.prefix.push(CachePrefix {
            index: self.index,
            prefix_end_idx: end,
            cycle_prefix_sum: self.sum,
        });
        self.index += 1;
    }

    /// The cache, with `func.return` (after our `ops` ops) last, as TPU-MLIR lists it.
    fn finish(mut self, ops: usize) -> Cache {
        self.globals.push(CacheGlobal {
            index: self.index,
            func_idx: ops as i64,
            group_cost: 0,
            loc: "func.return".into(),
        });
        Cache {
            opt: 2,
            group_layer: self.groups,
            global_layer: self.globals,
            cycle_prefix_sum: self.prefix,
        }
    }
}

/// A group or a global op, in op order.
#[derive(Debug, Clone, Copy)]
enum Piece {
    Group(usize),
    Global(usize),
}

/// Where each op's input casts go (see the module docs), by op and input cast.
fn cast_homes(lowered: &[Lowered], group_of: &[Option<usize>]) -> Vec<Vec<Home>> {
    lowered
        .iter()
        .enumerate()
        .map(|(reader, low)| {
            low.casts_in
                .iter()
                .map(|c| {
                    let by_reader = group_of[reader];
                    let by_producer = c.producer.and_then(|p| group_of[p]);
                    let ends = |i: usize| group_of.get(i + 1).copied().flatten() != group_of[i];
                    let starts = |i: usize| i == 0 || group_of[i - 1] != group_of[i];
                    let back_to_back = c
                        .producer
                        .is_some_and(|p| p + 1 == reader && ends(p) && starts(reader));
                    match (by_reader, by_producer) {
                        (Some(r), Some(p)) if r == p => Home::BeforeReader(r),
                        (Some(_), Some(p)) if c.to_f32 && back_to_back => Home::AfterProducer(p),
                        (Some(r), _) if c.to_f32 => Home::BeforeReader(r),
                        (_, Some(p)) => Home::AfterProducer(p),
                        (Some(r), None) => Home::BeforeReader(r),
                        (None, None) => Home::Global,
                    }
                })
                .collect()
        })
        .collect()
}

/// The `locs` of group `gi`, whose ops (ours, in order) are `members`: each op's input
/// casts homed in front of it, its own loc, its output cast, then the casts homed right
/// after it for readers elsewhere.
fn group_locs(
    lowered: &[Lowered],
    homes: &[Vec<Home>],
    members: &[usize],
    gi: usize,
) -> Vec<String> {
    let mut locs = Vec::new();
    for &i in members {
        let low = &lowered[i];
        for (c, h) in low.casts_in.iter().zip(&homes[i]) {
            if *h == Home::BeforeReader(gi) {
                locs.push(c.loc.clone());
            }
        }
        locs.push(low.loc.clone());
        locs.extend(low.cast_out.iter().cloned());
        for (reader, low_r) in lowered.iter().enumerate() {
            for (c, h) in low_r.casts_in.iter().zip(&homes[reader]) {
                if *h == Home::AfterProducer(gi) && c.producer == Some(i) {
                    locs.push(c.loc.clone());
                }
            }
        }
    }
    locs
}

/// The view op run global right after op `last` that only `last` feeds (a flatten
/// between a pool and a gemm), if listing it in `last`'s group (cut into `nsecs` N
/// slices) pays under TPU-MLIR.
///
/// In 16-bit plans TPU-MLIR runs a global average pool in f32 (a cast in front), so a
/// group ending in the pool stores the f32 output, and the view and a cast back to
/// 16 bits run global (about 650 cycles on bm1684x). Listed in the group, the cast
/// runs there and the group stores the 16-bit flattened tensor instead, which can be
/// slower: 1×1 planes pay the small-plane floor, which shrinks with the rows a
/// transfer needs (see [`crate::cost::small_plane_units`]). So the view goes in when
/// the 16-bit stores, slice by slice, cost no more than the f32 ones and the global cast
/// (`cost::pool_store_bits`: ResNet-18 and mini-MobileNetV2 at batch 1, 512 and 256
/// channels: equal stores, 639 / 647 cycles saved), and stays global otherwise
/// (MobileNetV2's 1,280 channels: 31,985 vs 15,992 cycles of store; ResNet-50's 2,048
/// and ResNet-18 at batch 4: 51,177 vs 25,588). After any other op the view goes in at
/// batch 1.
fn trailing_view(plan: &Plan, last: &str, nsecs: u64) -> Option<usize> {
    let g = &plan.graph;
    let op = g.ops.iter().find(|o| o.name == last)?;
    let out = *op.outputs.first()?;
    let mut users = g
        .ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.inputs.contains(&out));
    let (vi, v) = users.next()?;
    let shape = g.tensors.get(out)?.shape;
    let pays = if matches!(op.kind, tpusim_graph::OpKind::GlobalAvgPool)
        && matches!(plan.dtype.as_str(), "f16" | "bf16")
    {
        let t = Timing::from_used(&plan.timing, plan.eu_bytes, 16);
        crate::cost::pool_store_bits(&t, shape, 16, nsecs, plan.npu_num) == 16
    } else {
        shape.n == 1
    };
    (users.next().is_none()
        && pays
        && crate::cost::is_view(v)
        && plan.global_ops.iter().any(|n| n == &v.name)
        && v.inputs.len() == 1)
        .then_some(vi)
}

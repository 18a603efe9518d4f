//! A transformer plan whose grouping is given rather than searched (TPU-MLIR's own, read
//! from its cache by `tpumlir::nd_cache`): each requested run is timed by the same model
//! the search uses, at the slicing it asks for, and whether it fits (the live-byte bound,
//! then TPU-MLIR's time steps and allocator, reproduced) is reported, not required, so
//! TPU-MLIR's choice can be priced even where our reproduction would refuse it.
//!
//! A cache lists a transpose at a group's edge as a global layer, and TPU-MLIR runs it
//! as part of the group's load or store; our plans hold it in the group. A permute next
//! to a requested run joins it where our model would put it there: where the grown run
//! fits and costs less than the run and the permute apart, and always where the run
//! would fuse it (`Ctx::fuses_beside`), as TPU-MLIR does. A permute between two runs
//! goes to the later one's load first, as the search puts it.

use super::{
    finish, groupable, too_few, untimed_run, verify_runs, Axis, Ctx, NdGroup, NdPlan, Slicing,
};
use crate::error::{PlanError, Result};
use crate::tpumlir::nd_form::lower_on;
use crate::NpuChip;
use tpusim_graph::nd::NdGraph;
use tpusim_layout::ElementType;

/// A run of layers `start..end` asked to be one group, cut in `nsecs` N slices, `csecs` C
/// slices or `hsecs` H slices (at most one of them above 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdGroupRequest {
    /// First layer (index into the plan's layers).
    pub start: usize,
    /// One past the last layer.
    pub end: usize,
    /// Slices along N.
    pub nsecs: u64,
    /// Slices along C.
    pub csecs: u64,
    /// Slices along H.
    pub hsecs: u64,
}

impl From<&NdGroup> for NdGroupRequest {
    /// The run `grp` covers, at its slicing.
    fn from(grp: &NdGroup) -> NdGroupRequest {
        NdGroupRequest {
            start: grp.start,
            end: grp.end,
            nsecs: grp.nsecs,
            csecs: grp.csecs,
            hsecs: grp.hsecs,
        }
    }
}

/// A plan of a given grouping, and what the model says of the groups it was given.
#[derive(Debug, Clone, PartialEq)]
pub struct NdGivenPlan {
    /// The plan: the requested groups, every other layer global.
    pub plan: NdPlan,
    /// Indices into `plan.groups` of the groups that do not fit by our model: over the
    /// live-byte bound, or refused by our reproduction of TPU-MLIR's allocator.
    pub refused: Vec<usize>,
    /// Indices into `plan.groups` of groups holding a layer the search never groups
    /// (one that reads or writes an activation of at most two dims, a gather, a
    /// transpose).
    pub ungroupable: Vec<usize>,
    /// Indices into `plan.groups` of cut groups that need a value they compute whole for
    /// one reader and in slices for another, or that compute a heads-as-batch matmul's
    /// right operand, which TPU-MLIR refuses (`branches`).
    pub split_shared: Vec<usize>,
}

/// Plan `g` on `chip` in `dtype` with the groups `requests` (in any order; a run of one
/// layer is left global), every other layer global. Errors when runs overlap, leave the
/// graph's layers, or cut along both C and H.
pub fn plan_nd_with_groups(
    g: &NdGraph,
    chip: &NpuChip,
    dtype: ElementType,
    requests: &[NdGroupRequest],
) -> Result<NdGivenPlan> {
    let layers = lower_on(g, chip, dtype);
    let ctx = Ctx::new(g, &layers, chip, dtype)?;
    let mut sorted = requests.to_vec();
    sorted.sort_by_key(|r| r.start);
    let mut next = 0;
    for r in &sorted {
        slicing_of(r, layers.len(), next)?;
        next = r.end;
    }
    absorb_edge_permutes(&ctx, &mut sorted);
    let (mut groups, mut refused, mut ungroupable) = (Vec::new(), Vec::new(), Vec::new());
    let mut split_shared = Vec::new();
    let mut next = 0;
    for r in &sorted {
        let cut = slicing_of(r, layers.len(), next)?;
        groups.extend((next..r.start).map(|i| ctx.global(i)));
        if r.end - r.start == 1 {
            groups.push(ctx.global(r.start));
        } else {
            let grp = ctx.measure(r.start, r.end, cut);
            if !ctx.fits(&grp, cut) {
                refused.push(groups.len());
            }
            if !layers[r.start..r.end].iter().all(groupable)
                || !ctx.permutes_at_edges(r.start, r.end)
            {
                ungroupable.push(groups.len());
            }
            // along N each slice is one sequence of the batch, whatever a slice needs
            // whole lies in it (TPU-MLIR's own bm1688 group of gpt2_d208_s72_b6 computes
            // K and Q·Kᵀ in 6 N slices)
            let refused_slicing = ctx.splits_a_shared_value(r.start, r.end)
                || ctx.computes_a_whole_operand(r.start, r.end);
            if cut.secs > 1 && refused_slicing {
                split_shared.push(groups.len());
            }
            groups.push(grp);
        }
        next = r.end;
    }
    groups.extend((next..layers.len()).map(|i| ctx.global(i)));
    let plan = finish(&ctx, chip, groups)?;
    // the runs as they stand: each timed again from scratch at its own slicing
    verify_runs(&ctx, &plan, |grp| {
        let r = NdGroupRequest::from(grp);
        match (grp.end - grp.start, slicing_of(&r, layers.len(), grp.start)) {
            (1, _) => Some(ctx.global(grp.start)),
            (_, Ok(cut)) => Some(ctx.measure(grp.start, grp.end, cut)),
            (_, Err(_)) => None,
        }
    })?;
    Ok(NdGivenPlan {
        plan,
        refused,
        ungroupable,
        split_shared,
    })
}

/// The slicing `r` asks for, once it is checked to be a run of layers of the `n` there
/// are, starting at or after `next`.
fn slicing_of(r: &NdGroupRequest, n: usize, next: usize) -> Result<Slicing> {
    let bad = |why: String| {
        Err(PlanError::Infeasible {
            group: format!("layers {}..{}", r.start, r.end),
            why,
        })
    };
    if r.start < next || r.end <= r.start || r.end > n {
        return bad(format!("overlaps another group or leaves the {n} layers"));
    }
    let nsecs = r.nsecs.max(1);
    match (r.csecs > 1, r.hsecs > 1) {
        (true, true) => bad(format!(
            "cut in {} C and {} H slices; a transformer group is cut along the batch and one of C and H",
            r.csecs, r.hsecs
        )),
        (false, true) => Ok(Slicing::new(nsecs, Axis::H, r.hsecs)),
        _ => Ok(Slicing::new(nsecs, Axis::C, r.csecs.max(1))),
    }
}

/// Grow the runs of `sorted` (in order, checked) over the permutes next to them, where
/// our model would fuse them into a run's load or store (`Ctx::permutes_at_edges`):
/// each block of consecutive permutes no run holds is shared between the run that ends
/// at it and the run that starts after it, some left global, however costs least (so a
/// plan's export, which lists those permutes as global, reads back as the plan).
fn absorb_edge_permutes(ctx: &Ctx, sorted: &mut [NdGroupRequest]) {
    let n = ctx.layers.len();
    let free = |p: usize, runs: &[NdGroupRequest]| {
        ctx.layers[p].op_type == "Permute" && !runs.iter().any(|r| (r.start..r.end).contains(&p))
    };
    let mut p = 0;
    while p < n {
        if !free(p, sorted) {
            p += 1;
            continue;
        }
        let mut q = p;
        while q < n && free(q, sorted) {
            q += 1;
        }
        share_permutes(ctx, sorted, p, q);
        p = q;
    }
}

/// Share the free permutes `p..q` between the run ending at `p` (it takes `p..a`) and
/// the run starting at `q` (it takes `b..q`), `a ≤ b`, the rest global: the cheapest
/// split; on a tie the fewest permutes moved, then the most to the run before (as the
/// search's dynamic program breaks its ties).
fn share_permutes(ctx: &Ctx, sorted: &mut [NdGroupRequest], p: usize, q: usize) {
    let before = sorted.iter().position(|r| r.end == p);
    let after = sorted.iter().position(|r| r.start == q);
    // a run's cycles grown to `start..end`; as it stands, whether it fits or not
    let cost = |k: usize, start: usize, end: usize| -> Option<u64> {
        let r = NdGroupRequest {
            start,
            end,
            ..sorted[k]
        };
        let grown = (start, end) != (sorted[k].start, sorted[k].end);
        group_cycles(ctx, &r, grown)
    };
    let a_max = if before.is_some() { q } else { p };
    let b_min = |a: usize| if after.is_some() { a } else { q };
    let mut best: Option<(u64, usize, usize, usize)> = None;
    for a in p..=a_max {
        for b in b_min(a)..=q {
            let first = before.map_or(Some(0), |k| cost(k, sorted[k].start, a));
            let second = after.map_or(Some(0), |k| cost(k, b, sorted[k].end));
            let (Some(x), Some(y)) = (first, second) else {
                continue;
            };
            let global: u64 = (a..b).map(|i| ctx.global(i).cycles).sum();
            // TPU-MLIR fuses a global permute beside a group into that group's transfer
            let beside = a < b
                && (before.is_some_and(|k| ctx.fuses_beside(a, &untimed_run(sorted[k].start, a)))
                    || after
                        .is_some_and(|k| ctx.fuses_beside(b - 1, &untimed_run(b, sorted[k].end))));
            let total = x
                .saturating_add(y)
                .saturating_add(global)
                .saturating_add(if beside { u64::MAX / 2 } else { 0 });
            let moved = (a - p) + (q - b);
            let key = (total, moved, std::cmp::Reverse(a));
            if best.map_or(true, |(t, m, ba, _)| key < (t, m, std::cmp::Reverse(ba))) {
                best = Some((total, moved, a, b));
            }
        }
    }
    if let Some((_, _, a, b)) = best {
        if let Some(k) = before {
            sorted[k].end = a;
        }
        if let Some(k) = after {
            sorted[k].start = b;
        }
    }
}

/// Cycles of the run `r` as a group (a single layer: its global cost), if it may be one
/// and, `must_fit`, fits.
fn group_cycles(ctx: &Ctx, r: &NdGroupRequest, must_fit: bool) -> Option<u64> {
    if r.end - r.start == 1 {
        return Some(ctx.global(r.start).cycles);
    }
    let cut = slicing_of(r, ctx.layers.len(), r.start).ok()?;
    let members = &ctx.layers[r.start..r.end];
    if too_few(members)
        || !members.iter().all(groupable)
        || ctx.straddles_a_flat_view(members)
        || !ctx.permutes_at_edges(r.start, r.end)
    {
        return None;
    }
    let g = ctx.measure(r.start, r.end, cut);
    (!must_fit || ctx.fits(&g, cut)).then_some(g.cycles)
}

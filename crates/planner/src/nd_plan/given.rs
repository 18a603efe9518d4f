//! A transformer plan whose grouping is given rather than searched (TPU-MLIR's own, read
//! from its cache by `tpumlir::nd_cache`): each requested run is timed by the same model
//! the search uses, at the slicing it asks for, and whether it fits (the live-byte bound,
//! then TPU-MLIR's time steps and allocator, reproduced) is reported, not required, so
//! TPU-MLIR's choice can be priced even where our reproduction would refuse it.
//!
//! A cache lists a transpose at a group's edge as a global layer, and TPU-MLIR runs it
//! as part of the group's load or store; our plans hold it in the group. A permute next
//! to a requested run joins it where our model would put it there: where the grown run
//! fits and costs less than the run and the permute apart. A permute between two runs
//! goes to the later one's load first, as the search puts it.

use super::{finish, groupable, too_few, verify_runs, Axis, Ctx, NdPlan, Slicing};
use crate::error::{PlanError, Result};
use crate::tpumlir::nd_form::lower;
use crate::NpuChip;
use tpusim_graph::nd::NdGraph;
use tpusim_layout::ElementType;

/// A run of layers `start..end` asked to be one group, cut in `csecs` C slices or `hsecs`
/// H slices (at most one of them above 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdGroupRequest {
    /// First layer (index into the plan's layers).
    pub start: usize,
    /// One past the last layer.
    pub end: usize,
    /// Slices along C.
    pub csecs: u64,
    /// Slices along H.
    pub hsecs: u64,
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
}

/// Plan `g` on `chip` in `dtype` with the groups `requests` (in any order; a run of one
/// layer is left global), every other layer global. Errors when runs overlap, leave the
/// graph's layers, or cut along both axes.
pub fn plan_nd_with_groups(
    g: &NdGraph,
    chip: &NpuChip,
    dtype: ElementType,
    requests: &[NdGroupRequest],
) -> Result<NdGivenPlan> {
    let layers = lower(g, chip.f32_ops_at(dtype), dtype.bits());
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
            if !layers[r.start..r.end].iter().all(groupable) {
                ungroupable.push(groups.len());
            }
            groups.push(grp);
        }
        next = r.end;
    }
    groups.extend((next..layers.len()).map(|i| ctx.global(i)));
    let plan = finish(&ctx, chip, groups)?;
    // the runs as they stand: each timed again from scratch at its own slicing
    verify_runs(&ctx, &plan, |grp| {
        let r = NdGroupRequest {
            start: grp.start,
            end: grp.end,
            csecs: grp.csecs,
            hsecs: grp.hsecs,
        };
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
    match (r.csecs.max(1), r.hsecs.max(1)) {
        (1, 1) => Ok(Slicing::WHOLE),
        (1, h) => Ok(Slicing {
            axis: Axis::H,
            secs: h,
        }),
        (c, 1) => Ok(Slicing {
            axis: Axis::C,
            secs: c,
        }),
        (c, h) => bad(format!(
            "cut in {c} C slices and {h} H slices; a transformer group is cut along one axis"
        )),
    }
}

/// Grow the runs of `sorted` (in order, checked) over the permutes at their edges, where
/// our model would fuse them (see the module docs): each permute no run holds, in
/// order, joins the run it ends or the run it starts, whichever saves more cycles, if
/// either saves any (so a plan's export, which lists those permutes as global, reads
/// back as the plan).
fn absorb_edge_permutes(ctx: &Ctx, sorted: &mut [NdGroupRequest]) {
    let n = ctx.layers.len();
    for p in 0..n {
        if ctx.layers[p].op_type != "Permute"
            || sorted.iter().any(|r| (r.start..r.end).contains(&p))
        {
            continue;
        }
        let before = sorted.iter().position(|r| r.end == p);
        let after = sorted.iter().position(|r| r.start == p + 1);
        let grow = |k: usize| {
            let r = sorted[k];
            let grown = if r.end == p {
                NdGroupRequest { end: p + 1, ..r }
            } else {
                NdGroupRequest { start: p, ..r }
            };
            saving(ctx, &r, &grown, p).map(|s| (s, k, grown))
        };
        let best = [before, after]
            .into_iter()
            .flatten()
            .filter_map(grow)
            .max_by_key(|&(s, k, _)| (s, std::cmp::Reverse(k)));
        if let Some((_, k, grown)) = best {
            sorted[k] = grown;
        }
    }
}

/// The cycles `grown` (`r` and the permute `p`) saves against `r` with `p` global, if it
/// may be a group, fits and saves any.
fn saving(ctx: &Ctx, r: &NdGroupRequest, grown: &NdGroupRequest, p: usize) -> Option<u64> {
    let Ok(cut) = slicing_of(grown, ctx.layers.len(), grown.start) else {
        return None;
    };
    let members = &ctx.layers[grown.start..grown.end];
    if too_few(members) || !members.iter().all(groupable) || ctx.straddles_a_flat_view(members) {
        return None;
    }
    let with = ctx.measure(grown.start, grown.end, cut);
    if !ctx.fits(&with, cut) {
        return None;
    }
    let apart = if r.end - r.start == 1 {
        ctx.global(r.start).cycles
    } else {
        ctx.measure(r.start, r.end, cut).cycles
    };
    apart
        .saturating_add(ctx.global(p).cycles)
        .checked_sub(with.cycles)
        .filter(|&s| s > 0)
}

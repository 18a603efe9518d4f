//! # tpusim-planner
//!
//! Layer groups, TPU-MLIR style: cut a network into runs of consecutive ops that execute
//! slice by slice entirely in NPU local memory, so intermediate tensors never go back to
//! global memory. Contract: `docs/spec/05-layer-group.md`.
//!
//! ## Using it
//!
//! ```
//! use tpusim_planner::{plan, PlanOptions};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let graph = tpusim_planner::testnets::conv_chain(1, 16, 56, 3);
//! let chip = tpusim_planner::NpuChip::preset("bm1684x")?;
//! let p = plan(&graph, &chip, &PlanOptions::default())?;   // verified before it is returned
//! assert!(p.cycles <= p.cycles_all_global);
//! println!("{} groups, {} cycles, {} GMEM bytes", p.groups.len(), p.cycles, p.gmem_bytes);
//! # Ok(()) }
//! ```
//!
//! A report component calls [`plan()`] with a graph, an [`NpuChip`] (the chip file:
//! geometry, [`timing`] figures, TPU-MLIR calibration) and options
//! (dtype) and reads [`Plan::groups`] (ops, slices, `cycles`, `gmem_bytes` per group),
//! [`Plan::global_costs`] and the totals (`cycles`, `seconds`, `gmem_bytes`).
//!
//! ## The façade and the machinery behind it
//!
//! Public: [`prepare`], [`plan()`] (and [`plan_with`], [`plan_with_progress`],
//! [`plan_with_groups`]), the plan types ([`plan`](mod@plan)), [`options`], [`error`],
//! the chip ([`NpuChip`]: one chip file, read whole), the NPU's timing in one place
//! ([`timing`]), [`verify`], [`svg`] (the time × address picture), [`text`] (the plan in words) and
//! [`tpumlir`] (TPU-MLIR reproduced: its cache in and out, its steps, allocator,
//! calibration and placer, with every difference listed).
//!
//! Crate-private, and naming no TPU-MLIR (`cost` and `timestep` model the NPU and its
//! backend's kernels, which the compiler calls; its layer-group pass is `tpumlir`): `range`
//! (backward row ranges, the N/H split, the h/2 rule) → `slicing` (a candidate group's
//! tensors and their ranges in every slice) → `timestep` (the time-step table, each
//! block's lifetime and size from the lmem crate) → a placer (`ctx::Placer`; the
//! planner's own is `place::SpanPlacer` over `alloc` and `balance`) → `cost` (GDMA and
//! compute cycles) and `group_cost` (a placed group over its slices); `group` runs one
//! candidate group end to end and `search` is the dynamic program choosing the groups
//! (fewest cycles, then fewest GMEM bytes).
//!
//! Invariants: a library never prints, exits or reads the environment; every plan
//! returned by [`plan()`] or [`plan_with_groups`] has passed [`verify::verify`]; ops are
//! never dropped (ops that cannot be grouped are global).
#![deny(missing_docs)]

// the generic machinery, crate-private, naming no TPU-MLIR: its reproduction is `tpumlir`
mod alloc;
mod balance;
mod cost;
mod ctx;
mod global_upsample;
mod group;
mod group_cost;
mod inplace_concat;
mod lane_copy;
mod place;
mod pool_cast;
mod pool_edges;
mod range;
mod search;
mod slicing;
mod timestep;
mod upsample;

// the façade
pub mod error;
pub mod nd_global;
pub mod nd_plan;
pub mod norm_kernel;
pub mod npu_chip;
pub mod options;
pub mod plan;
pub mod svg;
pub mod testnets;
pub mod text;
pub mod timing;
pub mod tpumlir;
pub mod verify;

pub use cost::{is_view, op_cycles, GlobalOpCost};
pub use ctx::{ComputeModel, Progress};
pub use error::{PlanError, Result};
pub use npu_chip::NpuChip;
pub use options::{Allocator, PlanOptions, Search, MAX_GROUP_OPS};
pub use plan::{Block, BlockKind, GlobalCost, GroupPlan, Plan, Slice, TensorRange, TimeStep};
pub use search::Piece;
pub use slicing::own_part;
pub use timestep::{lane_size, tensor_type, weight_local_shape};
pub use timing::{ChipTiming, Timing, TimingUsed};

use alloc::LaneGeometry;
use ctx::{Ctx, Placer};
use place::SpanPlacer;
use tpumlir::{Calibration, PipelinedPlacer};
use tpusim_graph::query::Uses;
use tpusim_graph::Graph;

/// Largest batch the planner accepts: N slicings are tried one by one (1..=N) and each
/// slice's ranges are materialised, so work and memory grow with N.
pub const MAX_BATCH: u64 = 4096;

fn check_graph(graph: &Graph) -> Result<()> {
    let nt = graph.tensors.len();
    for op in &graph.ops {
        for &t in op.inputs.iter().chain(&op.weights).chain(&op.outputs) {
            if t >= nt {
                return Err(PlanError::BadGraph(format!(
                    "op '{}' refers to tensor {t}, but the graph has {nt}",
                    op.name
                )));
            }
        }
        if op.outputs.len() != 1 {
            return Err(PlanError::BadGraph(format!(
                "op '{}' has {} outputs (expected 1)",
                op.name,
                op.outputs.len()
            )));
        }
    }
    for t in &graph.tensors {
        if t.kind == tpusim_graph::TensorKind::Activation && t.shape.n > MAX_BATCH {
            return Err(PlanError::BadGraph(format!(
                "tensor '{}' has batch {}, above the planner's limit of {MAX_BATCH} \
                 (N is sliced sample by sample; plan a smaller batch and scale)",
                t.name, t.shape.n
            )));
        }
        if t.shape.elements().map_or(true, |e| e == 0) {
            return Err(PlanError::BadGraph(format!(
                "tensor '{}' has shape {} (empty or overflowing)",
                t.name, t.shape
            )));
        }
    }
    Ok(())
}

/// The placer `opts` name for `chip`. `margin`: a group placed as TPU-MLIR places it
/// must also fit with a slower timing of its transfer moves (see [`tpumlir`]).
fn placer_for(chip: &NpuChip, opts: &PlanOptions, margin: bool) -> Box<dyn Placer> {
    match opts.allocator {
        Allocator::TpuMlir => Box::new(PipelinedPlacer {
            calib: Calibration::of(&chip.tpu_mlir, &chip.timing),
            margin,
        }),
        Allocator::Spec => Box::new(SpanPlacer),
    }
}

fn context<'a>(
    graph: &'a Graph,
    chip: &'a NpuChip,
    opts: &'a PlanOptions,
    placer: &'a dyn Placer,
) -> Result<Ctx<'a>> {
    opts.validate()?;
    chip.validate()?;
    check_graph(graph)?;
    let geometry = &chip.geometry;
    let uses = Uses::new(graph);
    let inplace_concat =
        inplace_concat::inplace_concats(graph, &uses, &geometry.name, opts.dtype.bits());
    Ok(Ctx {
        graph,
        uses,
        chip: geometry,
        dtype: opts.dtype,
        timing: chip.timing_at(opts.dtype)?,
        opts,
        geo: LaneGeometry {
            lane_bytes: geometry.lane_bytes,
            align: geometry.eu_bytes,
            bank_bytes: geometry.bank_bytes(),
        },
        placer,
        progress: None,
        compute: None,
        inplace_concat,
    })
}

/// Plan `graph` on `chip`: search the groups, slice, place and cost them, verify the
/// result. Errors: a malformed graph, bad options, or (internal) a plan the verifier
/// rejects.
pub fn plan(graph: &Graph, chip: &NpuChip, opts: &PlanOptions) -> Result<Plan> {
    plan_with(graph, chip, opts, Hooks::default())
}

/// What a caller may add to a plan: a progress callback and its own compute model.
#[derive(Clone, Copy, Default)]
pub struct Hooks<'a> {
    /// Told (ops searched, ops in all) as the group search goes (it may go through the
    /// network twice: see the comment in [`plan_with`]).
    pub progress: Option<&'a Progress<'a>>,
    /// Compute cycles of an op slice in place of the planner's NPU model (the report
    /// gives a TPU's MXU and VPU timing).
    pub compute: Option<&'a ComputeModel<'a>>,
}

/// [`plan()`], telling `progress` (ops searched, ops in all) as the group search goes.
pub fn plan_with_progress(
    graph: &Graph,
    chip: &NpuChip,
    opts: &PlanOptions,
    progress: &Progress<'_>,
) -> Result<Plan> {
    plan_with(
        graph,
        chip,
        opts,
        Hooks {
            progress: Some(progress),
            compute: None,
        },
    )
}

/// [`plan()`] with the caller's [`Hooks`].
pub fn plan_with(
    graph: &Graph,
    chip: &NpuChip,
    opts: &PlanOptions,
    hooks: Hooks<'_>,
) -> Result<Plan> {
    let indexed = upsample::with_index_tables(graph, chip);
    let graph = &indexed;
    // Groups placed by TPU-MLIR's allocator must also fit with a slower timing of its
    // transfer moves (a margin, see `Ctx::margin`). Checking that for every candidate
    // of the search tripled the planning time, so the search first runs without it and
    // is repeated with it only if a group it chose fails it.
    let (exact_placer, safe_placer) = (placer_for(chip, opts, false), placer_for(chip, opts, true));
    let exact = Ctx {
        progress: hooks.progress,
        compute: hooks.compute,
        ..context(graph, chip, opts, exact_placer.as_ref())?
    };
    let safe = Ctx {
        progress: hooks.progress,
        compute: hooks.compute,
        ..context(graph, chip, opts, safe_placer.as_ref())?
    };
    let mut pieces = search::search(&exact)?;
    for (_, first, last, nsecs, hsecs) in groups_of(&pieces) {
        let gt = slicing::GroupTensors::new(graph, &safe.uses, first, last);
        if safe.attempt(&gt, nsecs, hsecs)?.is_none() {
            pieces = search::search(&safe)?;
            break;
        }
    }
    if opts.search == Search::DpBestSlicing {
        // do better than the first fitting slicing: keep the cheapest of the chosen
        // one and the first few fitting slicings of each chosen group
        for (i, first, last, nsecs, hsecs) in groups_of(&pieces) {
            let gt = slicing::GroupTensors::new(graph, &safe.uses, first, last);
            let chosen = safe
                .attempt(&gt, nsecs, hsecs)?
                .map_or(u64::MAX, |a| a.cycles);
            if let Some(a) = safe.best(first, last)?.filter(|a| a.cycles < chosen) {
                pieces[i] = Piece::Group {
                    first,
                    last,
                    nsecs: a.nsecs,
                    hsecs: a.hsecs,
                };
            }
        }
    }
    assemble(&exact, &pieces)
}

/// The groups among `pieces`: (position, first op, last op, nsecs, hsecs).
fn groups_of(pieces: &[Piece]) -> Vec<(usize, usize, usize, u64, u64)> {
    pieces
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match *p {
            Piece::Group {
                first,
                last,
                nsecs,
                hsecs,
            } => Some((i, first, last, nsecs, hsecs)),
            Piece::Global(_) => None,
        })
        .collect()
}

/// A group requested by the caller: op ids `first..=last` (consecutive) and optionally
/// a slicing to use; without one (or if it does not fit) the planner searches one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupRequest {
    /// First op id.
    pub first: usize,
    /// Last op id (inclusive).
    pub last: usize,
    /// `(nsecs, hsecs)` to try first.
    pub secs: Option<(u64, u64)>,
}

/// `graph` with its ops in TPU-MLIR's topological order ([`tpusim_graph::order::tpu_mlir_order`],
/// local = `group::groupable`): the order `tpusim plan` and the report plan in, so an
/// exported grouping is runs of consecutive ops for TPU-MLIR too.
pub fn tpu_mlir_order(graph: &Graph) -> Graph {
    tpusim_graph::order::tpu_mlir_order(graph, |op| group::groupable(&op.kind))
}

/// How a network is made ready to plan (see [`prepare`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preparation {
    /// Fold batch-norm and activations into their producers and merge linear 1×1 convs
    /// (TPU-MLIR's inference form); `false` plans the layers as written.
    pub fuse: bool,
    /// Bits the network's inputs arrive in, and its outputs leave in, when they differ
    /// from the planned type: cast ops then convert them on the chip, first and last
    /// (TPU-MLIR keeps both f32 under F16 unless told to quantize them). `None`: they
    /// arrive and leave in it.
    pub input_bits: Option<u32>,
    /// Ops the chip's compiler computes in f32 under the planned 16-bit type: they run
    /// in f32 between explicit casts ([`NpuChip::f32_ops_at`]; empty: none).
    pub f32_ops: tpumlir::F32Ops,
}

/// The one recipe every verb plans a network by: fuse (when asked), cast the inputs
/// (when they arrive in another type), run the chip's f32 ops in f32 between casts,
/// cast the outputs computed narrower than they leave in, then TPU-MLIR's op order,
/// once.
pub fn prepare(
    graph: &Graph,
    how: Preparation,
) -> std::result::Result<Graph, tpusim_graph::GraphError> {
    let fused;
    let g = if how.fuse {
        fused = tpusim_graph::fuse::fuse(graph)?;
        &fused
    } else {
        graph
    };
    let cast;
    let g = match how.input_bits {
        Some(bits) => {
            cast = tpusim_graph::cast::cast_inputs(g, bits);
            &cast
        }
        None => g,
    };
    // an output computed narrower than it leaves in: under a 16-bit plan with f32 ops,
    // whatever TPU-MLIR does not compute in f32 (`tpumlir::lowering`), else by its bits
    let sixteen = !how.f32_ops.is_empty();
    let out_cast = |g: &Graph| match how.input_bits {
        Some(bits) => tpusim_graph::cast::cast_outputs(g, bits, |y| {
            if sixteen {
                !tpumlir::lowering::computed_in_f32(g, y)
            } else {
                g.tensors[y].bits.map_or(true, |b| b < bits)
            }
        }),
        None => g.clone(),
    };
    if how.f32_ops.is_empty() {
        return Ok(tpu_mlir_order(&out_cast(g)));
    }
    // a global average pool computes in f32 from either width (TPU-MLIR casts a 16-bit
    // input in front of it, implicitly here: see `tpumlir::lowering`), so it reads an
    // f32 op's output as it is (an SE block after a SiLU)
    let width = |op: &tpusim_graph::Op| {
        use tpusim_graph::cast::Width;
        if how.f32_ops.runs_in_f32(op) {
            Width::Wide
        } else if matches!(op.kind, tpusim_graph::OpKind::GlobalAvgPool) {
            Width::Either
        } else {
            Width::Narrow
        }
    };
    let wide = tpusim_graph::cast::cast_wide_by(g, width, 32);
    Ok(tpu_mlir_order(&out_cast(&wide)))
}

/// Plan `graph` with a given grouping (e.g. one imported from TPU-MLIR's cache);
/// every op not in a requested group is global. Errors if groups overlap, are out of
/// order, contain an op that cannot be grouped, or fit at no slicing. Unlike
/// [`plan()`], a group placed by TPU-MLIR's allocator is admitted on our single best
/// timing of TPU-MLIR's transfer moves (no margin), so TPU-MLIR's own groupings
/// import at its own slicings.
pub fn plan_with_groups(
    graph: &Graph,
    chip: &NpuChip,
    opts: &PlanOptions,
    groups: &[GroupRequest],
) -> Result<Plan> {
    let indexed = upsample::with_index_tables(graph, chip);
    let graph = &indexed;
    // requested groups (e.g. TPU-MLIR's own) fit as TPU-MLIR's allocator fits them
    let placer = placer_for(chip, opts, false);
    let ctx = context(graph, chip, opts, placer.as_ref())?;
    let mut pieces = Vec::new();
    let mut next = 0usize;
    let mut sorted = groups.to_vec();
    sorted.sort_by_key(|g| g.first);
    for r in &sorted {
        let label = || {
            format!(
                "{}..{}",
                graph.ops.get(r.first).map_or("?", |o| &o.name),
                graph.ops.get(r.last).map_or("?", |o| &o.name)
            )
        };
        if r.first < next || r.last < r.first || r.last >= graph.ops.len() {
            return Err(PlanError::Infeasible {
                group: label(),
                why: "overlaps another group or is out of range".into(),
            });
        }
        if r.last - r.first >= options::MAX_GROUP_OPS {
            return Err(PlanError::Infeasible {
                group: label(),
                why: format!(
                    "{} ops; a group holds at most {}",
                    r.last - r.first + 1,
                    options::MAX_GROUP_OPS
                ),
            });
        }
        if let Some(o) = (r.first..=r.last).find(|&o| !group::groupable(&graph.ops[o].kind)) {
            return Err(PlanError::Infeasible {
                group: label(),
                why: format!("op '{}' cannot run in local memory", graph.ops[o].name),
            });
        }
        pieces.extend((next..r.first).map(Piece::Global));
        if r.first == r.last && !group::groups_alone(&graph.ops[r.first].kind, ctx.dtype.bits()) {
            pieces.push(Piece::Global(r.first));
        } else {
            let gt = slicing::GroupTensors::new(graph, &ctx.uses, r.first, r.last);
            let forced = match r.secs {
                Some((n, h)) if n >= 1 && h >= 1 => ctx.attempt(&gt, n, h)?,
                _ => None,
            };
            let a = match forced {
                Some(a) => a,
                None => ctx
                    .best(r.first, r.last)?
                    .ok_or_else(|| PlanError::Infeasible {
                        group: label(),
                        why: "no N/H slicing fits in local memory".into(),
                    })?,
            };
            pieces.push(Piece::Group {
                first: r.first,
                last: r.last,
                nsecs: a.nsecs,
                hsecs: a.hsecs,
            });
        }
        next = r.last + 1;
    }
    pieces.extend((next..graph.ops.len()).map(Piece::Global));
    assemble(&ctx, &pieces)
}

fn assemble(ctx: &Ctx, pieces: &[Piece]) -> Result<Plan> {
    let g = ctx.graph;
    let npu = ctx.chip.npu_num;
    let mut groups = Vec::new();
    let mut global_ops = Vec::new();
    let mut global_costs = Vec::new();
    let (mut cycles, mut gmem) = (0u64, 0u64);
    for p in pieces {
        match *p {
            Piece::Global(o) => {
                let c = ctx.global_cost(&g.ops[o]);
                global_ops.push(g.ops[o].name.clone());
                global_costs.push(GlobalCost {
                    op: g.ops[o].name.clone(),
                    gmem_bytes: c.bytes,
                    cycles: c.cycles,
                    compute_cycles: c.compute_cycles,
                    dma_cycles: c.dma_cycles,
                });
                cycles = error::add(cycles, c.cycles, "plan cycles")?;
                gmem = error::add(gmem, c.bytes, "plan GMEM bytes")?;
            }
            Piece::Group {
                first,
                last,
                nsecs,
                hsecs,
            } => {
                let gt = slicing::GroupTensors::new(g, &ctx.uses, first, last);
                let a = ctx.attempt(&gt, nsecs, hsecs)?.ok_or_else(|| {
                    PlanError::Invalid(format!(
                        "group {}..{} no longer fits at nsecs {nsecs} hsecs {hsecs}",
                        g.ops[first].name, g.ops[last].name
                    ))
                })?;
                let gp = ctx.group_plan(first, last, &a);
                cycles = error::add(cycles, gp.cycles, "plan cycles")?;
                gmem = error::add(gmem, gp.gmem_bytes, "plan GMEM bytes")?;
                groups.push(gp);
            }
        }
    }
    let (mut cag, mut gag) = (0u64, 0u64);
    for op in &g.ops {
        let c = ctx.global_cost(op);
        cag = error::add(cag, c.cycles, "all-global cycles")?;
        gag = error::add(gag, c.bytes, "all-global GMEM bytes")?;
    }
    let clock = ctx.timing.used.clock_hz;
    let plan = Plan {
        chip: ctx.chip.name.clone(),
        dtype: ctx.dtype.name().to_string(),
        npu_num: npu,
        eu_bytes: ctx.chip.eu_bytes,
        lane_bytes: ctx.chip.lane_bytes,
        banks: ctx.chip.banks,
        h_half_rule: ctx.opts.h_half_rule,
        groups,
        global_ops,
        global_costs,
        gmem_bytes: gmem,
        gmem_bytes_all_global: gag,
        cycles,
        cycles_all_global: cag,
        seconds: cycles as f64 / clock,
        seconds_all_global: cag as f64 / clock,
        timing: ctx.timing.used.clone(),
        graph: g.clone(),
    };
    verify::verify_with_chip(&plan, ctx.chip)?;
    Ok(plan)
}

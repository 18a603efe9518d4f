//! One planning run's context, and the seam between the search and a placer.
//!
//! The search ([`crate::search`]) and the group machinery ([`crate::group`]) ask a
//! [`Placer`] to place the blocks of a sliced group in local memory; the placer
//! answers with a [`Fitted`]: the [`Placement`] (blocks, step table, lane addresses) and,
//! when the group is timed by another schedule than the one placed, that [`Schedule`].
//! The planner's own placer is [`crate::place::SpanPlacer`]; the façade chooses which
//! placer a run uses from [`PlanOptions::allocator`](crate::PlanOptions).

use crate::alloc::LaneGeometry;
use crate::error::Result;
use crate::options::PlanOptions;
use crate::slicing::{GroupTensors, Slicing};
use crate::timestep::{BlockSpec, Steps};
use crate::timing::Timing;
use tpusim_graph::query::Uses;
use tpusim_graph::Graph;
use tpusim_layout::ElementType;
use tpusim_lmem::Chip;

/// Everything the planner needs about one planning run.
pub struct Ctx<'a> {
    /// The network.
    pub graph: &'a Graph,
    /// Producers/consumers of its tensors.
    pub uses: Uses,
    /// The chip.
    pub chip: &'a Chip,
    /// Element type.
    pub dtype: ElementType,
    /// Timing figures.
    pub timing: Timing,
    /// Options.
    pub opts: &'a PlanOptions,
    /// Lane geometry for the allocator.
    pub geo: LaneGeometry,
    /// How a sliced group is placed in local memory.
    pub placer: &'a dyn Placer,
    /// Told (ops searched, ops in all) as the group search moves through the network.
    pub progress: Option<&'a Progress<'a>>,
    /// The caller's compute time of an op, used in place of the planner's own model.
    pub compute: Option<&'a ComputeModel<'a>>,
    /// By op: a Concat TPU-MLIR runs in place when it is global
    /// ([`crate::inplace_concat`]), which then costs nothing.
    pub inplace_concat: Vec<bool>,
}

/// A progress callback: (ops done, ops in all).
pub type Progress<'a> = dyn Fn(usize, usize) + Sync + 'a;

/// A compute model given by the caller: cycles (at the chip's clock) of `op` computing
/// `n` output batches × `h` output rows. The report gives its TPU timing (the systolic
/// model on the MXUs), so the search chooses by the times the report will show.
pub type ComputeModel<'a> = dyn Fn(&tpusim_graph::Op, u64, u64) -> f64 + Sync + 'a;

/// How the blocks of a sliced group are placed in local memory.
pub trait Placer: Sync {
    /// Place `gt` sliced as `slicing`: a placement (none if it does not fit) and, when
    /// the group is timed by another schedule than the placed one, that schedule.
    fn fit(&self, ctx: &Ctx<'_>, gt: &GroupTensors, slicing: &Slicing) -> Result<Fitted>;
}

/// A placed group: its blocks, step table, lane addresses and exposed transfers.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The blocks, as the step table holds them.
    pub blocks: Vec<BlockSpec>,
    /// Which op computes and which blocks move in each step.
    pub steps: Steps,
    /// Lane address of each block.
    pub addrs: Vec<u64>,
    /// Whether each block's transfer is exposed (not hidden under compute).
    pub exposed: Vec<bool>,
}

/// The schedule a group is timed by when it differs from the placed one.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// The blocks, as this schedule holds them.
    pub blocks: Vec<BlockSpec>,
    /// Which op computes and which blocks move in each step.
    pub steps: Steps,
    /// Whether each block's transfer is exposed.
    pub exposed: Vec<bool>,
}

/// What a [`Placer`] answers.
#[derive(Debug, Clone, Default)]
pub struct Fitted {
    /// The placement, or `None` if the group does not fit.
    pub placement: Option<Placement>,
    /// The schedule to time the group by, if not the placement's own.
    pub timed_by: Option<Schedule>,
}

impl Fitted {
    /// A placement timed by its own schedule (or no fit).
    pub fn placed(placement: Option<Placement>) -> Fitted {
        Fitted {
            placement,
            timed_by: None,
        }
    }
}

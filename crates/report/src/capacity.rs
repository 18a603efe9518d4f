//! Does the network fit the chip's off-chip memory (HBM on a TPU)?
//!
//! The bytes a run needs are the weights plus the activations live at the worst point
//! of the op order, every tensor at its stored off-chip size (XLA's tiled allocation on
//! a TPU, the logical size in an NPU's contiguous GMEM). An activation is live from the
//! op that writes it (a network input: from the start) to the last op that reads it (a
//! network output: to the end); a view (flatten, reshape) writes nothing of its own and
//! keeps its source live as long as it is read. This is what a runtime that keeps each
//! op's output until its last reader must hold; XLA may need less where it fuses
//! producers into consumers (tests/data/xla/README.md).

use crate::error::{ReportError, Result};
use crate::machine::Machine;
pub use crate::model::{CapacityReport, ChipFit};
use crate::request::Request;
use crate::storage::{stored, Stored};
use tpusim_graph::{Graph, TensorKind};
use tpusim_layout::ElementType;
use tpusim_planner::Preparation;

/// Weights and peak live activations of `graph` with its tensors stored as `stored`.
pub struct Needed {
    /// Weights, bytes.
    pub weights: u64,
    /// Peak live activations, bytes.
    pub peak_activations: u64,
    /// Op index of the peak.
    pub peak_at: usize,
}

impl Needed {
    /// Weights plus peak activations, bytes.
    pub fn total(&self) -> Result<u64> {
        self.weights
            .checked_add(self.peak_activations)
            .ok_or_else(|| ReportError::Overflow("bytes needed".into()))
    }
}

/// The bytes `graph` needs off-chip (see the module docs).
pub fn needed(graph: &Graph, stored: &[Stored]) -> Result<Needed> {
    let n_ops = graph.ops.len();
    let nt = graph.tensors.len();
    // a view's output is its source's storage
    let mut root: Vec<usize> = (0..nt).collect();
    for op in &graph.ops {
        if tpusim_planner::is_view(op) {
            if let (Some(&x), Some(&y)) = (op.inputs.first(), op.outputs.first()) {
                root[y] = root[x];
            }
        }
    }
    let mut first = vec![usize::MAX; nt];
    let mut last = vec![0usize; nt];
    let mut used = vec![false; nt];
    let mut touch = |t: usize, i: usize| {
        let r = root[t];
        used[r] = true;
        first[r] = first[r].min(i);
        last[r] = last[r].max(i);
    };
    for &t in &graph.inputs {
        touch(t, 0);
    }
    for (i, op) in graph.ops.iter().enumerate() {
        for &t in op.inputs.iter().chain(&op.outputs) {
            touch(t, i);
        }
    }
    for &t in &graph.outputs {
        touch(t, n_ops.saturating_sub(1));
    }
    let mut delta = vec![0i128; n_ops + 1];
    let mut weights = 0u64;
    for t in 0..nt {
        let bytes = stored[t].bytes_moved;
        if graph.tensors[t].kind == TensorKind::Weight {
            weights = weights
                .checked_add(bytes)
                .ok_or_else(|| ReportError::Overflow("weight bytes".into()))?;
        } else if root[t] == t && used[t] {
            delta[first[t].min(n_ops)] += bytes as i128;
            delta[(last[t] + 1).min(n_ops)] -= bytes as i128;
        }
    }
    let (mut live, mut peak, mut peak_at) = (0i128, 0i128, 0usize);
    for (i, d) in delta.iter().take(n_ops).enumerate() {
        live += d;
        if live > peak {
            (peak, peak_at) = (live, i);
        }
    }
    Ok(Needed {
        weights,
        peak_activations: u64::try_from(peak)
            .map_err(|_| ReportError::Overflow("activation bytes".into()))?,
        peak_at,
    })
}

/// Bytes `req`'s network needs at `batch` on `machine`.
fn needed_at(
    req: &Request,
    how: Preparation,
    machine: &Machine,
    dtype: ElementType,
    batch: u64,
) -> Result<u64> {
    let written = req.model.graph(batch, req.resolution)?;
    let graph = tpusim_planner::prepare(&written, how).map_err(|e| req.model.lower(e))?;
    let stored_all: Vec<Stored> = (0..graph.tensors.len())
        .map(|t| stored(machine, &graph, t, dtype))
        .collect::<Result<_>>()?;
    needed(&graph, &stored_all)?.total()
}

/// Fill in what would fit when `req` does not: the largest batch on this chip (a
/// binary search below the requested batch; the need grows with the batch) and the
/// built-in TPUs whose HBM holds the network at this batch.
pub fn suggest(
    req: &Request,
    how: Preparation,
    machine: &Machine,
    dtype: ElementType,
    out: &mut CapacityReport,
) -> Result<()> {
    let Some(cap) = machine.offchip_capacity_bytes() else {
        return Ok(());
    };
    let fits = |b: u64| -> Result<bool> { Ok(needed_at(req, how, machine, dtype, b)? <= cap) };
    out.largest_batch_that_fits = if req.batch > 1 && fits(1)? {
        // fits(lo), !fits(hi)
        let (mut lo, mut hi) = (1u64, req.batch);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid)? {
                lo = mid
            } else {
                hi = mid
            }
        }
        Some(lo)
    } else {
        None
    };
    let mut chips = Vec::new();
    // the built-in database parses (a test proves it); were it not to, no chip is named
    for chip in tpusim_chip::builtin().unwrap_or_default() {
        if chip.name == machine.name() || chip.hbm_bytes <= cap {
            continue;
        }
        let hbm = chip.hbm_bytes;
        let Ok(other) = Machine::from_tpu(chip, None) else {
            continue; // not a TPU the report models
        };
        let need = needed_at(req, how, &other, dtype, req.batch)?;
        if need <= hbm {
            chips.push(ChipFit {
                chip: other.name().to_string(),
                hbm_bytes: hbm,
                bytes_needed: need,
            });
        }
    }
    chips.sort_by(|a, b| a.hbm_bytes.cmp(&b.hbm_bytes).then(a.chip.cmp(&b.chip)));
    out.chips_that_fit = chips;
    Ok(())
}

//! Whole-model timing from the planner's plan.
//!
//! A layer group runs its loop iterations (slices) one after another; one iteration has
//! steps 0..=k+1 (step 0 loads, step j computes op j−1 while loading for op j and
//! storing for op j−2, step k+1 stores), as the planner's time-step table says. A step
//! takes max(DMA, compute): DMA = bytes of the step's loads and stores / off-chip
//! bandwidth, compute = the op's time on that slice ([`crate::timing`]).
//!
//! - Unsliced group: Σ over steps 0..=k+1 of max(DMA, compute).
//! - Sliced group (software pipelined): fill = the first slice's step-0 loads; every
//!   slice then runs steps 1..=k, where the next slice's step-0 loads overlap step k
//!   and the previous slice's step-(k+1) stores overlap step 1; drain = the last
//!   slice's step-(k+1) stores. Weights are loaded in the first slice only (resident).
//! - A global op (not in any group): max(compute, memory) of the op alone.
//!
//! Bytes of a slice of an activation are the tensor's stored bytes × the slice's share
//! of its N·H rows (tiles and lanes cut N and H, not C or W); stores write each output
//! slice's own part (the planner's `own_part`, an exact partition).

use crate::error::{ReportError, Result};
use crate::model::{BlockReport, GroupReport};
use crate::storage::Stored;
use crate::timing::Timer;
use std::collections::HashMap;
use tpusim_graph::{Graph, OpId, TensorId};
use tpusim_planner::{BlockKind, GroupPlan};

/// What the schedule needs to know about the graph and its tensors.
pub struct Scheduler<'a> {
    /// The (fused) graph the plan was made for.
    pub graph: &'a Graph,
    /// Stored form of every tensor, indexed by tensor id.
    pub stored: &'a [Stored],
    /// Op timer.
    pub timer: &'a Timer<'a>,
    /// Off-chip bandwidth, bytes/s.
    pub bw: f64,
    /// Op ids by name.
    pub ops: HashMap<&'a str, OpId>,
    /// Tensor ids by name.
    pub tensors: HashMap<&'a str, TensorId>,
}

impl<'a> Scheduler<'a> {
    /// Index the graph's names.
    pub fn new(
        graph: &'a Graph,
        stored: &'a [Stored],
        timer: &'a Timer<'a>,
        bw: f64,
    ) -> Scheduler<'a> {
        Scheduler {
            graph,
            stored,
            timer,
            bw,
            ops: graph
                .ops
                .iter()
                .enumerate()
                .map(|(i, o)| (o.name.as_str(), i))
                .collect(),
            tensors: graph
                .tensors
                .iter()
                .enumerate()
                .map(|(i, t)| (t.name.as_str(), i))
                .collect(),
        }
    }

    fn part(&self, t: TensorId, n: [u64; 2], h: [u64; 2]) -> f64 {
        let s = self.graph.tensors[t].shape;
        let rows = (s.n.saturating_mul(s.h)).max(1) as f64;
        let share = (n[1].saturating_sub(n[0]) as f64) * (h[1].saturating_sub(h[0]) as f64) / rows;
        self.stored[t].bytes_moved as f64 * share
    }

    /// Time one group of the plan.
    pub fn group(&self, gp: &GroupPlan) -> Result<GroupReport> {
        let bad = |why: String| ReportError::Lower {
            context: format!("timing group {}", gp.ops.join(",")),
            message: why,
        };
        let k = gp.ops.len();
        if gp.timesteps.len() != k + 2 {
            return Err(bad(format!(
                "{} time steps for {k} ops (expected k+2)",
                gp.timesteps.len()
            )));
        }
        let kinds: HashMap<&str, BlockKind> = gp
            .blocks
            .iter()
            .map(|b| (b.name.as_str(), b.kind))
            .collect();
        let sliced = gp.slices.len() > 1;
        let tensor = |name: &str| {
            self.tensors
                .get(name)
                .copied()
                .ok_or_else(|| bad(format!("unknown tensor '{name}'")))
        };
        // per slice: dma seconds per step and compute seconds per step; an op's time
        // depends only on its part's size, which most slices share
        let mut op_seconds: HashMap<(OpId, u64, u64), f64> = HashMap::new();
        let mut dma: Vec<Vec<f64>> = Vec::with_capacity(gp.slices.len());
        let mut comp: Vec<Vec<f64>> = Vec::with_capacity(gp.slices.len());
        for s in &gp.slices {
            let ranges: HashMap<&str, ([u64; 2], [u64; 2])> = s
                .tensors
                .iter()
                .map(|r| (r.tensor.as_str(), (r.n, r.h)))
                .collect();
            let first = (s.n_idx, s.h_idx) == (0, 0);
            let mut d = vec![0.0; k + 2];
            let mut c = vec![0.0; k + 2];
            for (j, step) in gp.timesteps.iter().enumerate() {
                for name in &step.loads {
                    let t = tensor(name)?;
                    let bytes = match kinds.get(name.as_str()) {
                        Some(BlockKind::Weight) => {
                            if !sliced || first {
                                self.stored[t].bytes_moved as f64
                            } else {
                                0.0
                            }
                        }
                        Some(BlockKind::Buffer) => 0.0,
                        _ => {
                            let (n, h) = ranges
                                .get(name.as_str())
                                .copied()
                                .ok_or_else(|| bad(format!("no range for '{name}'")))?;
                            self.part(t, n, h)
                        }
                    };
                    d[j] += bytes / self.bw;
                }
                for name in &step.stores {
                    let t = tensor(name)?;
                    if let Some((n, h)) = tpusim_planner::own_part(
                        self.graph, t, gp.nsecs, gp.hsecs, s.n_idx, s.h_idx,
                    ) {
                        d[j] += self.part(t, n, h) / self.bw;
                    }
                }
                if let Some(op_name) = &step.compute {
                    let o = *self
                        .ops
                        .get(op_name.as_str())
                        .ok_or_else(|| bad(format!("unknown op '{op_name}'")))?;
                    let op = &self.graph.ops[o];
                    let y = op
                        .outputs
                        .first()
                        .map(|&y| self.graph.tensors[y].name.as_str())
                        .unwrap_or("");
                    let (n, h) = ranges
                        .get(y)
                        .copied()
                        .ok_or_else(|| bad(format!("no range for output '{y}'")))?;
                    let part = (o, n[1] - n[0], h[1] - h[0]);
                    c[j] = match op_seconds.get(&part) {
                        Some(&secs) => secs,
                        None => {
                            let secs = self.timer.compute(op, part.1, part.2)?.seconds;
                            op_seconds.insert(part, secs);
                            secs
                        }
                    };
                }
            }
            dma.push(d);
            comp.push(c);
        }
        let mut time = 0.0;
        let ns = gp.slices.len();
        if !sliced {
            for j in 0..k + 2 {
                time += comp[0][j].max(dma[0][j]);
            }
        } else {
            time += dma[0][0] + comp[0][0];
            for si in 0..ns {
                for j in 1..=k {
                    let mut d = dma[si][j];
                    if j == 1 && si > 0 {
                        d += dma[si - 1][k + 1];
                    }
                    if j == k && si + 1 < ns {
                        d += dma[si + 1][0];
                    }
                    time += comp[si][j].max(d);
                }
            }
            time += dma[ns - 1][k + 1] + comp[ns - 1][k + 1];
        }
        let last = (k + 1) as u64;
        let mut g = GroupReport {
            ops: gp.ops.clone(),
            time_s: 0.0,
            global: false,
            nsecs: gp.nsecs,
            hsecs: gp.hsecs,
            dma_s: 0.0,
            compute_s: 0.0,
            exposed_dma_s: 0.0,
            blocks: gp
                .blocks
                .iter()
                .map(|b| BlockReport {
                    name: b.name.clone(),
                    kind: b.kind.name().to_string(),
                    addr: b.addr,
                    size: b.size,
                    start_ts: b.start_ts,
                    end_ts: b.end_ts.unwrap_or(last),
                })
                .collect(),
        };
        g.set_times(
            time,
            comp.iter().flatten().sum(),
            dma.iter().flatten().sum(),
        );
        Ok(g)
    }
}

//! One candidate group: try slicings (N first, then H), place its blocks, and cost it.

use crate::cost::{act_dma_cycles, filter_load_cycles, part_bytes, weight_load_cycles, Dir};
use crate::ctx::{Ctx, Fitted, Placement};
use crate::error::Result;
use crate::options::Search;
use crate::plan::{Block, BlockKind, GroupPlan, Slice, TensorRange, TimeStep};
use crate::slicing::{
    own_part, recomputed_rows, slice_group, slicing_sequence, GroupTensors, NPartsMemo,
    SliceRanges, Slicing,
};
use crate::timestep::{BlockSpec, Steps};
use tpusim_graph::{OpId, OpKind};

/// Ops that can run from local memory inside a group.
pub fn groupable(kind: &OpKind) -> bool {
    !matches!(kind, OpKind::Gemm | OpKind::Flatten | OpKind::Reshape)
}

/// Whether an op of `kind` forms a group by itself in a plan of `bits`-bit data (any
/// op does as part of a longer run): a global average pool under 8- or 16-bit types.
/// The chip's compiler runs that pool in f32 behind a cast, so the pool alone is a
/// group of the cast and the pool (and, where an export lists them, the flatten and the
/// cast back): ResNet-18 b1 on bm1684x, the compiler's own grouping ends in such a 4-op
/// group, 591,722 cycles compiled, against 592,305 with the pool at the end of the
/// group before it.
pub fn groups_alone(kind: &OpKind, bits: u32) -> bool {
    matches!(kind, OpKind::GlobalAvgPool) && bits < 32
}

/// A placed, costed slicing of a group.
pub struct Attempt {
    /// Batch parts.
    pub nsecs: u64,
    /// Height parts.
    pub hsecs: u64,
    /// The slicing (its slices are made by [`Slicing::slices`]).
    pub slicing: Slicing,
    /// Blocks.
    pub blocks: Vec<BlockSpec>,
    /// Step table.
    pub steps: Steps,
    /// Address of each block.
    pub addrs: Vec<u64>,
    /// Estimated cycles.
    pub cycles: u64,
    /// Global-memory bytes.
    pub gmem: u64,
    /// Compute cycles of all slices, summed (no overlap).
    pub compute_cycles: u64,
    /// DMA cycles of all slices, summed (no overlap).
    pub dma_cycles: u64,
}

impl<'a> Ctx<'a> {
    /// Try one slicing of `gt`; `Ok(None)` if it is refused or does not fit.
    pub fn attempt(&self, gt: &GroupTensors, nsecs: u64, hsecs: u64) -> Result<Option<Attempt>> {
        self.attempt_with(gt, nsecs, hsecs, &mut NPartsMemo::default())
    }

    /// [`Ctx::attempt`], reusing the N parts of the previous attempt on the same group.
    fn attempt_with(
        &self,
        gt: &GroupTensors,
        nsecs: u64,
        hsecs: u64,
        memo: &mut NPartsMemo,
    ) -> Result<Option<Attempt>> {
        let h_half_rule = self.opts.h_half_rule;
        let Ok(slicing) = slice_group(self.graph, gt, nsecs, hsecs, h_half_rule, memo) else {
            return Ok(None);
        };
        let fitted = self.placer.fit(self, gt, &slicing)?;
        self.finish(gt, &slicing, fitted)
    }

    /// Cost a placed layout into an [`Attempt`] (no placement passes through as `None`).
    fn finish(
        &self,
        gt: &GroupTensors,
        slicing: &Slicing,
        fitted: Fitted,
    ) -> Result<Option<Attempt>> {
        let Some(Placement {
            blocks,
            steps,
            addrs,
            exposed,
        }) = fitted.placement
        else {
            return Ok(None);
        };
        let cost = match &fitted.timed_by {
            Some(s) => self.group_cost(gt, slicing, &s.blocks, &s.steps, &s.exposed),
            None => self.group_cost(gt, slicing, &blocks, &steps, &exposed),
        };
        let cast_back = self.pool_casts_after(gt, slicing.nsecs);
        Ok(Some(Attempt {
            nsecs: slicing.nsecs,
            hsecs: slicing.hsecs,
            slicing: slicing.clone(),
            blocks,
            steps,
            addrs,
            cycles: cost.cycles.saturating_add(cast_back),
            gmem: cost.gmem,
            compute_cycles: cost.compute_cycles,
            // the casts after the group are its transfers' as much as its time's
            dma_cycles: cost.dma_cycles.saturating_add(cast_back),
        }))
    }

    /// The best slicing of ops `first..=last` as a group, or `None` if no slicing fits.
    pub fn best(&self, first: OpId, last: OpId) -> Result<Option<Attempt>> {
        let extra = match self.opts.search {
            Search::Dp => 0,
            Search::DpBestSlicing => 4,
        };
        self.best_with(first, last, extra)
    }

    /// Like [`Ctx::best`]: the slicings in order, unsliced first; after the first that
    /// fits, `extra` more are tried and the cheapest kept. Every candidate group starts
    /// from the unsliced one: a greedy allocation is not monotone in the group's
    /// length, so a longer group can fit with fewer slices than a shorter one needed
    /// (ResNet-50 b1 on bm1688: its 16-op layer-1 group fits cut in 2 H slices where
    /// the group one op shorter needed 3; starting the longer one's search at 3 missed
    /// it, 6,179,566 cycles in our model against 6,156,079, and 1.0 % slower compiled).
    pub fn best_with(&self, first: OpId, last: OpId, extra: usize) -> Result<Option<Attempt>> {
        let gt = GroupTensors::new(self.graph, &self.uses, first, last);
        let (mut nmax, mut hmax) = (u64::MAX, u64::MAX);
        for &t in &gt.escaping {
            let s = self.graph.tensors[t].shape;
            nmax = nmax.min(s.n);
            hmax = hmax.min(s.h);
        }
        if gt.escaping.is_empty() {
            return Ok(None);
        }
        let mut best: Option<Attempt> = None;
        let mut after_first = 0;
        let mut memo = NPartsMemo::default();
        for (n, h) in slicing_sequence(nmax, hmax.min(512)) {
            if best.is_some() {
                if after_first >= extra {
                    break;
                }
                after_first += 1;
            }
            if let Some(a) = self.attempt_with(&gt, n, h, &mut memo)? {
                if best.as_ref().map_or(true, |b| a.cycles < b.cycles) {
                    best = Some(a);
                }
            }
        }
        Ok(best)
    }

    /// (bytes, DMA cycles) of loading block `b` for slice `s` (weights: whole, and only
    /// in the first slice when `sliced` and resident; streamed weights in every slice).
    pub(crate) fn block_load(
        &self,
        gt: &GroupTensors,
        sliced: bool,
        s: &SliceRanges,
        b: &BlockSpec,
    ) -> (u64, f64) {
        let (g, t) = (self.graph, &self.timing);
        let Some(ti) = b.tensor else { return (0, 0.0) };
        let bits = b.bits;
        let shape = g.tensors[ti].shape;
        match b.kind {
            BlockKind::Weight => {
                if sliced && b.end.is_none() && (s.n_idx, s.h_idx) != (0, 0) {
                    (0, 0.0)
                } else {
                    let cycles = if self.is_filter(gt, ti) {
                        filter_load_cycles(t, shape, bits)
                    } else {
                        weight_load_cycles(t, shape, bits)
                    };
                    (part_bytes(shape, [0, shape.n], [0, shape.h], bits), cycles)
                }
            }
            _ => {
                let (n, h) = s.ranges[gt.pos[&ti]];
                let lanes = self.spread_lanes(gt);
                let bits = crate::pool_cast::transfer_bits(g, &self.uses, ti, bits);
                (
                    part_bytes(shape, n, h, bits),
                    act_dma_cycles(t, Dir::Load, shape, n, h, bits, lanes),
                )
            }
        }
    }

    /// Whether weight `ti` is the filter (first weight) of a conv of `gt`'s group.
    fn is_filter(&self, gt: &GroupTensors, ti: tpusim_graph::TensorId) -> bool {
        self.graph.ops[gt.first..=gt.last].iter().any(|op| {
            matches!(op.kind, tpusim_graph::OpKind::Conv(_)) && op.weights.first() == Some(&ti)
        })
    }

    /// Lanes each (n, c) plane of an activation is split over in `gt`'s transfers: all
    /// of them in a group laid over the lanes ([`GroupTensors::spread`]), else one.
    fn spread_lanes(&self, gt: &GroupTensors) -> u64 {
        if gt.spread {
            self.chip.npu_num.max(1)
        } else {
            1
        }
    }

    /// Cycles of the global casts run after the group: one for each global average
    /// pool's output it stores at 32 bits ([`crate::cost::pool_store_bits`]), cast back
    /// for its readers ([`crate::pool_cast`]).
    fn pool_casts_after(&self, gt: &GroupTensors, nsecs: u64) -> u64 {
        let g = self.graph;
        let bits = self.dtype.bits();
        gt.escaping
            .iter()
            .filter_map(|&ti| {
                let o = self.uses.producer.get(ti).copied().flatten()?;
                if !matches!(g.ops[o].kind, tpusim_graph::OpKind::GlobalAvgPool) {
                    return None;
                }
                let shape = g.tensors[ti].shape;
                let lanes = self.chip.npu_num;
                let stored = crate::cost::pool_store_bits(&self.timing, shape, bits, nsecs, lanes);
                (stored == 32).then(|| {
                    crate::pool_cast::pool_output_cast_cycles(
                        g,
                        &g.ops[o],
                        bits,
                        self.chip,
                        &self.timing,
                    )
                })
            })
            .fold(0u64, u64::saturating_add)
    }

    /// (bytes, DMA cycles) of storing the part of block `b` slice `s` owns.
    pub(crate) fn block_store(
        &self,
        gt: &GroupTensors,
        nsecs: u64,
        hsecs: u64,
        s: &SliceRanges,
        b: &BlockSpec,
    ) -> (u64, f64) {
        let (g, t) = (self.graph, &self.timing);
        let Some(ti) = b.tensor else { return (0, 0.0) };
        // a global average pool's output leaves the group at the width the export
        // stores it (16 or 32 bits, see `pool_store_bits`)
        let from_pool = self
            .uses
            .producer
            .get(ti)
            .copied()
            .flatten()
            .is_some_and(|o| matches!(g.ops[o].kind, tpusim_graph::OpKind::GlobalAvgPool));
        let bits = if from_pool {
            crate::cost::pool_store_bits(t, g.tensors[ti].shape, b.bits, nsecs, self.chip.npu_num)
        } else {
            crate::pool_cast::transfer_bits(g, &self.uses, ti, b.bits)
        };
        let shape = g.tensors[ti].shape;
        let lanes = self.spread_lanes(gt);
        own_part(g, ti, nsecs, hsecs, s.n_idx, s.h_idx)
            .map(|(n, h)| {
                (
                    part_bytes(shape, n, h, bits),
                    act_dma_cycles(t, Dir::Store, shape, n, h, bits, lanes),
                )
            })
            .unwrap_or((0, 0.0))
    }

    pub(crate) fn op_slice_cycles(&self, gt: &GroupTensors, s: &SliceRanges, o: OpId) -> f64 {
        self.op_slice_cycles_as(gt, s, o, crate::cost::OpModel::Profiled)
    }

    /// [`Ctx::op_slice_cycles`] under `model` (see [`crate::cost::op_cycles_as`]).
    pub(crate) fn op_slice_cycles_as(
        &self,
        gt: &GroupTensors,
        s: &SliceRanges,
        o: OpId,
        model: crate::cost::OpModel,
    ) -> f64 {
        let op = &self.graph.ops[o];
        let Some(&y) = op.outputs.first() else {
            return 0.0;
        };
        let (n, h) = s.ranges[gt.pos[&y]];
        if let Some(f) = self.compute {
            return f(op, n[1] - n[0], h[1] - h[0]);
        }
        let in_h = op
            .inputs
            .first()
            .and_then(|x| gt.pos.get(x))
            .map(|&p| s.ranges[p].1)
            .map(|r| r[1] - r[0]);
        let part = crate::cost::OpPart {
            n: n[1] - n[0],
            h: h[1] - h[0],
            in_h,
            spread: gt.spread,
        };
        let cycles =
            crate::cost::op_cycles_as(self.graph, op, part, self.chip.npu_num, &self.timing, model);
        // a global average pool run in f32 inside a group: its input cast to f32 at the
        // wider rate, then the pool at that rate, four times its pool at the plan's type
        // (TPU-MLIR 1.30.2's profiles of the zoo's hswish_se_90 on bm1688: [1, 64, 23,
        // 23] cast in 266 cycles, pooled in 276, cast back in 2, where the f16 pool is 132)
        let f32_pool = self.timing.avgpool_f32
            && model != crate::cost::OpModel::Plain
            && matches!(op.kind, tpusim_graph::OpKind::GlobalAvgPool);
        if f32_pool {
            cycles * 4.0
        } else {
            cycles
        }
    }

    /// Compute cycles of the whole of `op` (the caller's model if given).
    pub(crate) fn whole_op_cycles(&self, op: &tpusim_graph::Op) -> f64 {
        let Some(y) = op.outputs.first().and_then(|&o| self.graph.tensors.get(o)) else {
            return 0.0;
        };
        match self.compute {
            Some(f) => f(op, y.shape.n, y.shape.h),
            None => crate::cost::op_cycles(
                self.graph,
                op,
                y.shape.n,
                y.shape.h,
                self.chip.npu_num,
                &self.timing,
            ),
        }
    }

    /// Compute cycles `op` takes at least, whole, wherever it runs: [`Ctx::whole_op_cycles`],
    /// or the less of that and its compute run global, where a cast or an activation
    /// runs over every lane as in a group of element-wise ops alone
    /// ([`crate::cost::global_compute`]). A bound from below for the search's pruning.
    pub(crate) fn least_op_cycles(&self, op: &tpusim_graph::Op) -> f64 {
        let own = self.whole_op_cycles(op);
        let y = op.outputs.first().and_then(|&o| self.graph.tensors.get(o));
        match y {
            Some(y) if self.compute.is_none() => own.min(crate::cost::global_compute(
                self.graph,
                op,
                y.shape,
                self.chip.npu_num,
                &self.timing,
            )),
            _ => own,
        }
    }

    /// [`crate::cost::global_cost`] of `op` (with the caller's compute model if given).
    /// A Concat run in place ([`crate::inplace_concat`]) costs nothing.
    pub(crate) fn global_cost(&self, op: &tpusim_graph::Op) -> crate::cost::GlobalOpCost {
        let id = op
            .outputs
            .first()
            .and_then(|&t| self.uses.producer.get(t))
            .copied();
        if id
            .flatten()
            .is_some_and(|i| self.inplace_concat.get(i) == Some(&true))
        {
            return crate::cost::GlobalOpCost::default();
        }
        let bits = self.dtype.bits();
        let compute = self.compute.map(|_| self.whole_op_cycles(op));
        crate::cost::global_cost(self.graph, op, bits, self.chip, &self.timing, compute)
    }

    /// The plan record of a placed group.
    pub fn group_plan(&self, first: OpId, last: OpId, a: &Attempt) -> GroupPlan {
        let g = self.graph;
        let gt = GroupTensors::new(g, &self.uses, first, last);
        let blocks: Vec<Block> = a
            .blocks
            .iter()
            .zip(&a.addrs)
            .map(|(b, &addr)| Block {
                name: b.name.clone(),
                kind: b.kind,
                addr,
                size: b.size,
                start_ts: b.start,
                end_ts: b.end,
                placer_ts: b.placer_ts,
            })
            .collect();
        let names = |v: &Vec<usize>| {
            v.iter()
                .map(|&b| a.blocks[b].name.clone())
                .collect::<Vec<_>>()
        };
        let timesteps = (0..a.steps.compute.len())
            .map(|j| TimeStep {
                compute: a.steps.compute[j].map(|o| g.ops[o].name.clone()),
                loads: names(&a.steps.loads[j]),
                stores: names(&a.steps.stores[j]),
            })
            .collect();
        let slices = a.slicing.slices();
        let recomputed = recomputed_rows(g, &gt, &slices, a.nsecs);
        let slices = slices
            .iter()
            .map(|s| Slice {
                n_idx: s.n_idx,
                h_idx: s.h_idx,
                tensors: gt
                    .all
                    .iter()
                    .zip(&s.ranges)
                    .map(|(&t, r)| TensorRange {
                        tensor: g.tensors[t].name.clone(),
                        n: r.0,
                        h: r.1,
                    })
                    .collect(),
            })
            .collect();
        GroupPlan {
            ops: (first..=last).map(|o| g.ops[o].name.clone()).collect(),
            nsecs: a.nsecs,
            hsecs: a.hsecs,
            lmem_peak: blocks.iter().map(|b| b.addr + b.size).max().unwrap_or(0),
            blocks,
            timesteps,
            slices,
            gmem_bytes: a.gmem,
            cycles: a.cycles,
            compute_cycles: a.compute_cycles,
            dma_cycles: a.dma_cycles,
            recomputed_rows: recomputed,
        }
    }
}

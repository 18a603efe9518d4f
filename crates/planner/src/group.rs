//! One candidate group: try slicings (N first, then H), place its blocks, and cost it.

use crate::alloc::{allocate, peak_lower_bound, AllocItem, LaneGeometry};
use crate::balance::{balance_loads, StepCosts};
use crate::cost::{act_dma_cycles, part_bytes, weight_load_cycles, Dir};
use crate::error::Result;
use crate::options::{Allocator, PlanOptions, Search, Timing};
use crate::plan::{Block, BlockKind, GroupPlan, Slice, TensorRange, TimeStep};
use crate::slicing::{
    own_part, recomputed_rows, slice_group, GroupTensors, NPartsMemo, SliceRanges, Slicing,
};
use crate::timestep::{build, fold_step, occupancy, BlockSpec, Steps};
use tpusim_graph::query::Uses;
use tpusim_graph::{Graph, OpId, OpKind};
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
    /// Admit a group placed by TPU-MLIR's allocator only if it also fits with a second,
    /// slower timing of TPU-MLIR's transfer moves (the search: a margin for TPU-MLIR's
    /// unknown cycle estimates); `false` when reproducing a grouping TPU-MLIR chose.
    pub margin: bool,
    /// Told (ops searched, ops in all) as the group search moves through the network.
    pub progress: Option<&'a Progress<'a>>,
    /// The caller's compute time of an op, used in place of the planner's own model.
    pub compute: Option<&'a ComputeModel<'a>>,
}

/// A progress callback: (ops done, ops in all).
pub type Progress<'a> = dyn Fn(usize, usize) + Sync + 'a;

/// A compute model given by the caller: cycles (at the chip's clock) of `op` computing
/// `n` output batches × `h` output rows. The report gives its TPU timing (the systolic
/// model on the MXUs), so the search chooses by the times the report will show.
pub type ComputeModel<'a> = dyn Fn(&tpusim_graph::Op, u64, u64) -> f64 + Sync + 'a;

/// Ops that can run from local memory inside a group.
pub fn groupable(kind: &OpKind) -> bool {
    !matches!(kind, OpKind::Gemm | OpKind::Flatten | OpKind::Reshape)
}

/// Whether an op of `kind` forms a group by itself in a plan of `bits`-bit data (any
/// op does as part of a longer run): a global average pool under 8- or 16-bit types.
/// TPU-MLIR runs that pool in f32 behind a cast, so for it the pool alone is a group of
/// the cast and the pool (and, where the export lists them, the flatten and the cast
/// back): ResNet-18 b1 on bm1684x, TPU-MLIR's own grouping ends in such a 4-op group,
/// 591,722 cycles compiled, against 592,305 with the pool at the end of the group
/// before it.
pub fn groups_alone(kind: &OpKind, bits: u32) -> bool {
    matches!(kind, OpKind::GlobalAvgPool) && bits < 32
}

/// Blocks, step table, lane addresses and exposed transfers of a placed group.
pub(crate) type Placed = (Vec<BlockSpec>, Steps, Vec<u64>, Vec<bool>);

/// The schedule a group is timed by when it differs from the placed one: blocks, steps
/// and exposed transfers.
type CostView = (Vec<BlockSpec>, Steps, Vec<bool>);

/// A placement and, if it differs, the schedule it is timed by.
type Fitted = (Option<Placed>, Option<CostView>);

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

/// Candidate (nsecs, hsecs) pairs in the order tried: N first up to `nmax`, then H.
/// Both counts step by one up to 8, then ever coarser (see [`next_count`]); `nmax`
/// itself is always tried, so N is always cut down to one sample before H is cut.
pub fn slicing_sequence(nmax: u64, hmax: u64) -> Vec<(u64, u64)> {
    let nmax = nmax.max(1);
    let mut v = Vec::new();
    let mut n = 1u64;
    while n < nmax {
        v.push((n, 1));
        n = next_count(n);
    }
    v.push((nmax, 1));
    let mut h = 2u64;
    while h <= hmax {
        v.push((nmax, h));
        h = next_count(h);
    }
    v
}

/// The next slice count to try after `c`: +1 below 8, +2 below 16, +4 below 32, +8
/// below 64, then +25 %, so a batch or height of N costs O(log N) attempts.
fn next_count(c: u64) -> u64 {
    if c < 8 {
        c + 1
    } else if c < 16 {
        c + 2
    } else if c < 32 {
        c + 4
    } else if c < 64 {
        c + 8
    } else {
        c + c / 4
    }
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
        let (placed, cost_view) = if gt.last > gt.first && self.opts.allocator == Allocator::TpuMlir
        {
            self.fit_pipelined(gt, &slicing)?
        } else {
            let mut placed = self.fit(gt, &slicing, false)?;
            if placed.is_none() && slicing.is_sliced() {
                // resident weights do not fit: reload them in every slice instead
                placed = self.fit(gt, &slicing, true)?;
            }
            (placed, None)
        };
        self.finish(gt, &slicing, placed, cost_view)
    }

    /// A group of two or more ops placed as TPU-MLIR places it ([`crate::pipelined`]):
    /// when sliced, weights stay resident unless together they fill the lane (then
    /// every slice reloads them), as TPU-MLIR decides. Also returns the schedule our
    /// cost model times: where our cycles match TPU-MLIR's own estimates (the chip's
    /// `cycles_match_tpu_mlir`), TPU-MLIR's schedule as reproduced, its loads and
    /// stores moved by cycle slack, sliced or not (bm1684x: MobileNetV2's 63-op group
    /// 522k cycles in our model, 518k compiled; our balancer said 513k, which made that
    /// group look better than TPU-MLIR's 50 + 13, 12,932 cycles faster compiled);
    /// elsewhere, unsliced, the same blocks with the loads moved to earlier steps with
    /// DMA time to spare by our own balancer ([`crate::balance`]). Should TPU-MLIR's
    /// placement ever break a rule of our
    /// verifier, the group is placed by our own allocator with every pipelined
    /// transfer held throughout instead.
    fn fit_pipelined(&self, gt: &GroupTensors, slicing: &Slicing) -> Result<Fitted> {
        let sliced = slicing.is_sliced();
        let (mut blocks, mut steps) = build(self.graph, self.chip, self.dtype, gt, slicing, false)?;
        let weights = blocks
            .iter()
            .filter(|b| b.kind == BlockKind::Weight)
            .fold(0u64, |a, b| a.saturating_add(b.size));
        let stream = sliced && weights >= self.geo.lane_bytes;
        if stream {
            (blocks, steps) = build(self.graph, self.chip, self.dtype, gt, slicing, true)?;
        }
        // where our cycles are not TPU-MLIR's (see `pipelined`), a group must also fit,
        // searching, with the moves timed by our full DMA cycles: with the fitted
        // fraction alone one group it could not allocate (ResNet-50 batch 8, 32 ops
        // unsliced) looked feasible before bm1684x's cycles matched TPU-MLIR's.
        let exact = self.timing.cycles_match_tpu_mlir;
        let best = if exact {
            None
        } else {
            Some(crate::pipelined::TPU_MLIR_DMA_ESTIMATE)
        };
        let p = self.place_pipelined(gt, slicing, blocks.clone(), steps.clone(), best);
        let slow_fits = p.is_none()
            || exact
            || !self.margin
            || self
                .place_pipelined(gt, slicing, blocks.clone(), steps.clone(), Some(1.0))
                .is_some();
        let Some(p) = p.filter(|_| slow_fits) else {
            return Ok((None, None));
        };
        if !crate::verify::blocks_apart(self.graph, gt.first, &p.0, &p.2, p.1.k, sliced) {
            let mut placed = self.fit(gt, slicing, stream)?;
            if placed.is_none() && sliced && !stream {
                placed = self.fit(gt, slicing, true)?;
            }
            return Ok((placed, None));
        }
        if exact {
            // the cost model times TPU-MLIR's reproduced schedule, its stage-1 transfers
            // moved by slack: the placement itself (sliced too: ResNet-50 b4 on bm1684x,
            // TPU-MLIR's 33-op group cut in 2 compiles in 1,038,271 cycles; our own
            // balancer of the unmoved steps said 1,142,499, this says 1,068,054, and the
            // search now finds TPU-MLIR's own grouping, 1.1 % faster compiled)
            return Ok((Some(p), None));
        }
        let (cb, cs) = if sliced {
            (blocks, steps)
        } else {
            self.balanced(gt, &slicing.first(), &blocks, &steps, self.geo.lane_bytes)
                .unwrap_or((blocks, steps))
        };
        let exposed = cb
            .iter()
            .map(|b| crate::timestep::occupancy(b.start, b.end, cs.k, sliced).1)
            .collect();
        Ok((Some(p), Some((cb, cs, exposed))))
    }

    /// Cost a placed layout into an [`Attempt`] (`None` passes through).
    fn finish(
        &self,
        gt: &GroupTensors,
        slicing: &Slicing,
        placed: Option<Placed>,
        cost_view: Option<CostView>,
    ) -> Result<Option<Attempt>> {
        let Some((blocks, steps, addrs, exposed)) = placed else {
            return Ok(None);
        };
        let cost = match &cost_view {
            Some((b, s, x)) => self.group_cost(gt, slicing, b, s, x),
            None => self.group_cost(gt, slicing, &blocks, &steps, &exposed),
        };
        Ok(Some(Attempt {
            nsecs: slicing.nsecs,
            hsecs: slicing.hsecs,
            slicing: slicing.clone(),
            blocks,
            steps,
            addrs,
            cycles: cost.cycles,
            gmem: cost.gmem,
            compute_cycles: cost.compute_cycles,
            dma_cycles: cost.dma_cycles,
        }))
    }

    /// Blocks, steps and lane addresses of `gt` sliced as `slicing` (weights reloaded in
    /// every slice when `stream_weights`), or `None` if they do not fit.
    fn fit(
        &self,
        gt: &GroupTensors,
        slicing: &Slicing,
        stream_weights: bool,
    ) -> Result<Option<Placed>> {
        let (blocks, steps) = build(
            self.graph,
            self.chip,
            self.dtype,
            gt,
            slicing,
            stream_weights,
        )?;
        let sliced = slicing.is_sliced();
        // unsliced: loads moved to earlier steps with DMA time to spare, if that layout
        // still fits; otherwise the plain step table
        let mut placed = None;
        if !sliced {
            let first = slicing.first();
            // the balancer only counts bytes per step; if alignment or fragmentation
            // defeats the allocator, balance again within a smaller budget
            for frac in [1.0, 0.9, 0.75, 0.5] {
                let budget = (self.geo.lane_bytes as f64 * frac) as u64;
                let Some((bb, bs)) = self.balanced(gt, &first, &blocks, &steps, budget) else {
                    break;
                };
                placed = self.place(gt, &bb, &bs, sliced).map(|p| (bb, bs, p));
                if placed.is_some() {
                    break;
                }
            }
        }
        if placed.is_none() {
            placed = self
                .place(gt, &blocks, &steps, sliced)
                .map(|p| (blocks, steps, p));
        }
        Ok(placed.map(|(b, s, (a, e))| (b, s, a, e)))
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
    /// from the unsliced one: TPU-MLIR's allocation is not monotone in the group's
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

    /// Lane addresses of `blocks` (and which transfers are exposed), or `None` if they
    /// do not fit.
    fn place(
        &self,
        gt: &GroupTensors,
        blocks: &[BlockSpec],
        steps: &Steps,
        sliced: bool,
    ) -> Option<(Vec<u64>, Vec<bool>)> {
        let k = steps.k;
        let mut items = Vec::with_capacity(blocks.len());
        let mut exposed = Vec::with_capacity(blocks.len());
        for b in blocks {
            // TPU-MLIR software-pipelines every group of two or more ops, sliced or not,
            // and allocates it so: an unsliced group's input and output blocks too
            // hold their bytes across the loop body (its 13-op unsliced bm1688 group
            // of layers 2–3 failed to allocate in TPU-MLIR while fitting a plain span
            // allocation; tests/tpumlir.rs). Timing stays unpipelined when unsliced.
            let (mask, ex) = occupancy(b.start, b.end, k, sliced || k > 1);
            let mut dma = 0u128;
            for s in b.load_step.iter().chain(b.store_step.iter()) {
                dma |= 1u128 << fold_step(*s, k, sliced);
            }
            let comp = b.compute_steps.iter().fold(0u128, |m, &s| m | 1u128 << s);
            items.push(AllocItem {
                size: b.size,
                mask,
                dma_mask: dma,
                compute_mask: comp,
                resident: b.end.is_none(),
                start: b.start,
                span: b.end.map(|e| e - b.start + 1).unwrap_or(u64::MAX),
            });
            exposed.push(ex);
        }
        // in place: an element-wise op's output takes its first input's bytes when the
        // two are held together only in that op's step (TPU-MLIR's allocator does this;
        // it let TPU-MLIR's own ResNet-50 batch-8 group of layers 1–3 fit with N cut in 4)
        let mut alias: Vec<usize> = (0..blocks.len()).collect();
        for o in gt.first..=gt.last {
            let op = &self.graph.ops[o];
            if !op.is_binary_elementwise() {
                continue;
            }
            let s = (o - gt.first) as u64 + 1;
            let bx = blocks
                .iter()
                .position(|b| b.tensor == Some(op.inputs[0]) && b.kind == BlockKind::Activation);
            let by = blocks
                .iter()
                .position(|b| b.tensor == Some(op.outputs[0]) && b.kind == BlockKind::Activation);
            if let (Some(bx), Some(by)) = (bx, by) {
                // chains (a residual add feeding the next block's add) share one root
                let r = alias[bx];
                if alias[by] == by
                    && by != r
                    && blocks[by].size <= blocks[bx].size
                    && blocks[by].size <= items[r].size
                    && items[r].mask & items[by].mask == 1u128 << s
                {
                    alias[by] = r;
                    let (m, d, c) = (items[by].mask, items[by].dma_mask, items[by].compute_mask);
                    let end = blocks[by].end.unwrap_or(u64::MAX);
                    let it = &mut items[r];
                    it.mask |= m;
                    it.dma_mask |= d;
                    it.compute_mask |= c;
                    it.span = it.span.saturating_add(end.saturating_sub(s));
                    items[by].mask = 0;
                    items[by].size = 0;
                }
            }
        }
        if peak_lower_bound(&items, k + 2) > self.geo.lane_bytes {
            return None;
        }
        allocate(&items, self.geo).map(|mut addrs| {
            for (i, &a) in alias.iter().enumerate() {
                if a != i {
                    addrs[i] = addrs[a];
                }
            }
            (addrs, exposed)
        })
    }

    /// The step table of an unsliced group with loads moved to earlier steps that have
    /// DMA time to spare ([`crate::balance`]), holding at most `budget` bytes per lane
    /// in any step; `None` if nothing moved.
    fn balanced(
        &self,
        gt: &GroupTensors,
        s: &SliceRanges,
        blocks: &[BlockSpec],
        steps: &Steps,
        budget: u64,
    ) -> Option<(Vec<BlockSpec>, Steps)> {
        let (nsecs, hsecs) = (1, 1);
        let n = steps.compute.len();
        let load: Vec<f64> = blocks
            .iter()
            .map(|b| self.block_load(gt, false, s, b).1)
            .collect();
        let mut cost = StepCosts {
            compute: (0..n)
                .map(|j| steps.compute[j].map_or(0.0, |o| self.op_slice_cycles(gt, s, o)))
                .collect(),
            dma: (0..n)
                .map(|j| {
                    steps.loads[j].iter().map(|&b| load[b]).sum::<f64>()
                        + steps.stores[j]
                            .iter()
                            .map(|&b| self.block_store(nsecs, hsecs, s, &blocks[b]).1)
                            .sum::<f64>()
                })
                .collect(),
        };
        let mut bb = blocks.to_vec();
        let mut bs = steps.clone();
        let pipelined = bs.k > 1;
        balance_loads(&mut bb, &mut bs, &mut cost, &load, budget, pipelined).then_some((bb, bs))
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
                    (
                        part_bytes(shape, [0, shape.n], [0, shape.h], bits),
                        weight_load_cycles(t, shape, bits),
                    )
                }
            }
            _ => {
                let (n, h) = s.ranges[gt.pos[&ti]];
                (
                    part_bytes(shape, n, h, bits),
                    act_dma_cycles(t, Dir::Load, shape, n, h, bits),
                )
            }
        }
    }

    /// (bytes, DMA cycles) of storing the part of block `b` slice `s` owns.
    pub(crate) fn block_store(
        &self,
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
            crate::cost::pool_store_bits(t, g.tensors[ti].shape, b.bits)
        } else {
            b.bits
        };
        let shape = g.tensors[ti].shape;
        own_part(g, ti, nsecs, hsecs, s.n_idx, s.h_idx)
            .map(|(n, h)| {
                (
                    part_bytes(shape, n, h, bits),
                    act_dma_cycles(t, Dir::Store, shape, n, h, bits),
                )
            })
            .unwrap_or((0, 0.0))
    }

    pub(crate) fn op_slice_cycles(&self, gt: &GroupTensors, s: &SliceRanges, o: OpId) -> f64 {
        self.op_slice_cycles_as(gt, s, o, false)
    }

    /// [`Ctx::op_slice_cycles`], `plain` as in [`crate::cost::op_cycles_as`].
    pub(crate) fn op_slice_cycles_as(
        &self,
        gt: &GroupTensors,
        s: &SliceRanges,
        o: OpId,
        plain: bool,
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
        };
        crate::cost::op_cycles_as(self.graph, op, part, self.chip.npu_num, &self.timing, plain)
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

    /// [`crate::cost::global_cost`] of `op` (with the caller's compute model if given).
    pub(crate) fn global_cost(&self, op: &tpusim_graph::Op) -> crate::cost::GlobalOpCost {
        let bits = self.dtype.bits();
        let own = crate::cost::global_cost(self.graph, op, bits, self.chip.npu_num, &self.timing);
        match self.compute {
            None => own,
            Some(_) => crate::cost::with_compute(own, self.whole_op_cycles(op), &self.timing),
        }
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
                tpu_mlir_ts: b.tpu_mlir_ts,
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

#[cfg(test)]
mod sequence_tests {
    use super::slicing_sequence;

    #[test]
    fn n_is_cut_to_one_sample_before_h_and_counts_grow() {
        for (nmax, hmax) in [(1, 1), (1, 224), (8, 56), (9, 7), (100, 1), (4096, 512)] {
            let seq = slicing_sequence(nmax, hmax);
            let first_h = seq.iter().position(|&(_, h)| h > 1).unwrap_or(seq.len());
            // every N-only candidate comes first, ending at nmax; H parts keep N at nmax
            assert_eq!(seq[first_h - 1], (nmax, 1));
            assert!(seq[first_h..].iter().all(|&(n, _)| n == nmax));
            // strictly increasing slice counts, never beyond the dims
            assert!(seq.windows(2).all(|w| w[0].0 * w[0].1 < w[1].0 * w[1].1));
            assert!(seq.iter().all(|&(n, h)| n <= nmax && h <= hmax.max(1)));
            // small counts are all tried
            let small: Vec<u64> = seq[..first_h]
                .iter()
                .map(|p| p.0)
                .filter(|&n| n <= 8)
                .collect();
            assert_eq!(small, (1..=nmax.min(8)).collect::<Vec<_>>());
        }
        assert!(slicing_sequence(4096, 512).len() < 100);
    }
}

//! The planner's own placer: every block holds its bytes over the span of steps it is
//! live in (a load's step to its last use, or to its store), and the blocks are packed
//! into the lane by [`crate::alloc`] (resident weights first, longest lifetime,
//! largest; bank aware; an element-wise op's output in its first input's place). An
//! unsliced group first tries its loads moved to earlier steps with DMA time to spare
//! ([`crate::balance`]); a sliced group whose resident weights do not fit reloads them
//! in every slice.

use crate::alloc::{allocate, peak_lower_bound, AllocItem};
use crate::balance::{balance_loads, StepCosts};
use crate::ctx::{Ctx, Fitted, Placement, Placer};
use crate::error::Result;
use crate::plan::BlockKind;
use crate::slicing::{GroupTensors, SliceRanges, Slicing};
use crate::timestep::{build, fold_step, occupancy, BlockSpec, Steps};

/// The planner's own placer (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct SpanPlacer;

impl Placer for SpanPlacer {
    fn fit(&self, ctx: &Ctx<'_>, gt: &GroupTensors, slicing: &Slicing) -> Result<Fitted> {
        let mut placed = ctx.fit_spans(gt, slicing, false)?;
        if placed.is_none() && slicing.is_sliced() {
            // resident weights do not fit: reload them in every slice instead
            placed = ctx.fit_spans(gt, slicing, true)?;
        }
        Ok(Fitted::placed(placed))
    }
}

impl Ctx<'_> {
    /// Blocks, steps and lane addresses of `gt` sliced as `slicing` (weights reloaded in
    /// every slice when `stream_weights`), or `None` if they do not fit.
    pub(crate) fn fit_spans(
        &self,
        gt: &GroupTensors,
        slicing: &Slicing,
        stream_weights: bool,
    ) -> Result<Option<Placement>> {
        let (blocks, steps) = build(
            self.graph,
            self.chip,
            self.dtype,
            gt,
            slicing,
            stream_weights,
            self.timing.ic_parallel,
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
                placed = self.place(gt, bb, bs, sliced);
                if placed.is_some() {
                    break;
                }
            }
        }
        if placed.is_none() {
            placed = self.place(gt, blocks, steps, sliced);
        }
        Ok(placed)
    }

    /// `blocks` placed at lane addresses (with which transfers are exposed), or `None`
    /// if they do not fit.
    fn place(
        &self,
        gt: &GroupTensors,
        blocks: Vec<BlockSpec>,
        steps: Steps,
        sliced: bool,
    ) -> Option<Placement> {
        let k = steps.k;
        let mut items = Vec::with_capacity(blocks.len());
        let mut exposed = Vec::with_capacity(blocks.len());
        for b in &blocks {
            // a group of two or more ops runs as a software-pipelined loop, sliced or
            // not, so an unsliced group's input and output blocks too hold their bytes
            // across the loop body (a 13-op unsliced bm1688 group of ResNet layers 2–3
            // fitted a plain span allocation and failed to allocate on the chip's
            // compiler; the integration tests keep the case). Timing stays unpipelined when
            // unsliced.
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
        // two are held together only in that op's step (this let a ResNet-50 batch-8
        // group of layers 1–3 fit with N cut in 4, as the chip's compiler fits it)
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
            Placement {
                blocks,
                steps,
                addrs,
                exposed,
            }
        })
    }

    /// The step table of an unsliced group with loads moved to earlier steps that have
    /// DMA time to spare ([`crate::balance`]), holding at most `budget` bytes per lane
    /// in any step; `None` if nothing moved.
    pub(crate) fn balanced(
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
                            .map(|&b| self.block_store(gt, nsecs, hsecs, s, &blocks[b]).1)
                            .sum::<f64>()
                })
                .collect(),
        };
        let mut bb = blocks.to_vec();
        let mut bs = steps.clone();
        let pipelined = bs.k > 1;
        balance_loads(&mut bb, &mut bs, &mut cost, &load, budget, pipelined).then_some((bb, bs))
    }
}

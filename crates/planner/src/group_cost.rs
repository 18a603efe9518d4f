//! Timing a placed group over its slices: per step, compute against the DMA of that
//! step, with the pipelining rules of [`crate::timestep`].
//!
//! A slice's own figures (its compute per step, its transfers, its bytes) depend only
//! on the lengths of its ranges, so they are worked out once per class of alike slices
//! ([`Slicing::part_classes`]; the first slice is a class of its own, as it alone loads
//! the resident weights) and the walk over the slices only adds them up, in slice
//! order as before: a batch of 4,096 cut one sample a slice is timed from one slice's
//! figures instead of 4,096 times over.

use crate::ctx::Ctx;
use crate::slicing::{GroupTensors, SliceRanges, Slicing};
use crate::timestep::{BlockSpec, Steps};

/// What [`Ctx::group_cost`] finds for a placed group: its pipelined cycles and the
/// compute and DMA they overlap.
pub struct GroupCost {
    /// Cycles of the whole group: Σ over steps of max(compute, DMA), fill and drain.
    pub cycles: u64,
    /// Bytes moved between global and local memory.
    pub gmem: u64,
    /// Compute cycles, all slices summed.
    pub compute_cycles: u64,
    /// DMA cycles, all slices summed.
    pub dma_cycles: u64,
}

/// One slice's own figures, before it is overlapped with its neighbours.
struct SliceFigures {
    /// Bytes it loads and stores.
    gmem: u64,
    /// DMA cycles per step (steps `0..=k+1`), the pipelined step-0 loads and step-k+1
    /// stores excluded when sliced.
    dma: Vec<f64>,
    /// Step-0 loads that may move under compute ("merged"), and exposed ones.
    load0_merged: f64,
    load0_exposed: f64,
    /// Step-k+1 stores that may move under compute, and exposed ones.
    store_last_merged: f64,
    store_last_exposed: f64,
    /// The movable step-k+1 stores, one by one (issued during the next slice).
    movable_stores: Vec<Neighbour>,
    /// The movable step-0 loads, one by one (issued during the previous slice).
    movable_loads: Vec<Neighbour>,
    /// Compute cycles of steps `1..=k`.
    compute: Vec<f64>,
}

/// A transfer one slice issues during a neighbouring slice's steps.
#[derive(Clone, Copy)]
struct Neighbour {
    cycles: f64,
    /// The step it runs beside, where the placer knows it
    /// ([`BlockSpec::neighbour_step`]); else the step with the most DMA slack.
    step: Option<u64>,
}

impl Ctx<'_> {
    /// Cycles, global-memory bytes and the compute/DMA split of a placed group (see the
    /// module docs of [`crate::timestep`] for the pipelining rules).
    pub fn group_cost(
        &self,
        gt: &GroupTensors,
        slicing: &Slicing,
        blocks: &[BlockSpec],
        steps: &Steps,
        exposed: &[bool],
    ) -> GroupCost {
        if !slicing.is_sliced() {
            return self.unsliced_cost(gt, &slicing.first(), blocks, steps);
        }
        let k = steps.k as usize;
        let hsecs = slicing.hsecs as usize;
        let ns = (slicing.nsecs as usize).saturating_mul(hsecs);
        let classes = slicing.part_classes(self.graph, gt);
        // figures by class: N class × H class, and the first slice on its own
        let h_classes = classes.h.iter().max().map_or(0, |&c| c + 1);
        let n_classes = classes.n.iter().max().map_or(0, |&c| c + 1);
        let first_slot = n_classes * h_classes;
        let slot = |si: usize| -> usize {
            if si == 0 {
                first_slot
            } else {
                classes.n[si / hsecs] * h_classes + classes.h[si % hsecs]
            }
        };
        let mut figures: Vec<Option<SliceFigures>> = Vec::new();
        figures.resize_with(first_slot + 1, || None);
        for si in 0..ns {
            let f = &mut figures[slot(si)];
            if f.is_none() {
                let s = slicing.slice(si / hsecs, si % hsecs);
                *f = Some(self.slice_figures(gt, slicing, &s, blocks, steps, exposed));
            }
        }
        let figure = |si: usize| figures[slot(si)].as_ref().expect("every slot filled above");
        let (mut gmem, mut cyc, mut compute_sum, mut dma_sum) = (0u64, 0f64, 0f64, 0f64);
        let mut prev_stores: &[Neighbour] = &[];
        let (mut d, mut floating) = (Vec::with_capacity(k), Vec::new());
        for si in 0..ns {
            let f = figure(si);
            gmem = gmem.saturating_add(f.gmem);
            dma_sum += f.dma.iter().sum::<f64>()
                + f.load0_merged
                + f.load0_exposed
                + f.store_last_merged
                + f.store_last_exposed;
            // the first slice's step-0 loads are the pipeline fill; a later slice's are
            // issued during the previous slice (below), as its last-step stores are
            // during the next one
            if si == 0 {
                cyc += f.load0_merged + f.load0_exposed;
            } else {
                cyc += f.load0_exposed;
            }
            // those transfers of the previous and the next slice go to the step where the
            // placer found TPU-MLIR runs them (its moves by slack, reproduced:
            // preact_resnet_b3 on bm1684x, N cut in 3, loads the next slice's input
            // beside the last conv with slack in TPU-MLIR's estimates, not our most idle
            // step), else, largest first, each to the step with the most DMA slack left
            // (ResNet-50 batch 8, [cast, conv1, pool] cut 8×2: its profile 339,269
            // cycles, TIU-bound; ours 444,454 with them fixed to the first and last
            // steps, 315,602 so)
            let comp = &f.compute;
            d.clear();
            d.extend_from_slice(&f.dma[1..=k]);
            floating.clear();
            let next_loads = if si + 1 < ns {
                &figure(si + 1).movable_loads[..]
            } else {
                &[]
            };
            for x in prev_stores.iter().chain(next_loads) {
                match x.step.map(|s| s as usize) {
                    Some(s) if (1..=k).contains(&s) => d[s - 1] += x.cycles,
                    // beside no compute: the row of its own TPU-MLIR gives it
                    Some(_) => cyc += x.cycles,
                    None => floating.push(x.cycles),
                }
            }
            floating.sort_by(|a, b| b.total_cmp(a));
            for &x in &floating {
                let j = (0..k)
                    .max_by(|&a, &b| (comp[a] - d[a]).total_cmp(&(comp[b] - d[b])))
                    .unwrap_or(0);
                if let Some(dj) = d.get_mut(j) {
                    *dj += x;
                }
            }
            for j in 0..k {
                cyc += comp[j].max(d[j]);
            }
            compute_sum += comp.iter().sum::<f64>();
            cyc += f.store_last_exposed;
            prev_stores = &f.movable_stores;
            if si + 1 == ns {
                cyc += f.store_last_merged;
            }
        }
        GroupCost {
            cycles: cyc.ceil() as u64,
            gmem,
            compute_cycles: compute_sum.round() as u64,
            dma_cycles: dma_sum.round() as u64,
        }
    }

    /// A group run as one slice: per step, max(compute, DMA).
    fn unsliced_cost(
        &self,
        gt: &GroupTensors,
        s: &SliceRanges,
        blocks: &[BlockSpec],
        steps: &Steps,
    ) -> GroupCost {
        let mut gmem = 0u64;
        let mut dma = vec![0f64; steps.k as usize + 2];
        for (j, list) in steps.loads.iter().enumerate() {
            for &b in list {
                let (x, c) = self.block_load(gt, false, s, &blocks[b]);
                gmem = gmem.saturating_add(x);
                dma[j] += c;
            }
        }
        for (j, list) in steps.stores.iter().enumerate() {
            for &b in list {
                let (x, c) = self.block_store(gt, 1, 1, s, &blocks[b]);
                gmem = gmem.saturating_add(x);
                dma[j] += c;
            }
        }
        let (mut cyc, mut compute_sum) = (0f64, 0f64);
        for (j, &dj) in dma.iter().enumerate() {
            let comp = steps.compute[j]
                .map(|o| self.op_slice_cycles(gt, s, o))
                .unwrap_or(0.0);
            compute_sum += comp;
            cyc += comp.max(dj);
        }
        GroupCost {
            cycles: cyc.ceil() as u64,
            gmem,
            compute_cycles: compute_sum.round() as u64,
            dma_cycles: dma.iter().sum::<f64>().round() as u64,
        }
    }

    /// Slice `s`'s own figures in a sliced group.
    fn slice_figures(
        &self,
        gt: &GroupTensors,
        slicing: &Slicing,
        s: &SliceRanges,
        blocks: &[BlockSpec],
        steps: &Steps,
        exposed: &[bool],
    ) -> SliceFigures {
        let k = steps.k as usize;
        let mut f = SliceFigures {
            gmem: 0,
            dma: vec![0f64; k + 2],
            load0_merged: 0.0,
            load0_exposed: 0.0,
            store_last_merged: 0.0,
            store_last_exposed: 0.0,
            movable_stores: Vec::new(),
            movable_loads: Vec::new(),
            compute: Vec::with_capacity(k),
        };
        for (j, list) in steps.loads.iter().enumerate() {
            for &b in list {
                let (x, c) = self.block_load(gt, true, s, &blocks[b]);
                f.gmem = f.gmem.saturating_add(x);
                match (j, exposed[b]) {
                    (0, true) => f.load0_exposed += c,
                    (0, false) => {
                        f.load0_merged += c;
                        f.movable_loads.push(Neighbour {
                            cycles: c,
                            step: blocks[b].neighbour_step,
                        });
                    }
                    _ => f.dma[j] += c,
                }
            }
        }
        for (j, list) in steps.stores.iter().enumerate() {
            for &b in list {
                let (x, c) = self.block_store(gt, slicing.nsecs, slicing.hsecs, s, &blocks[b]);
                f.gmem = f.gmem.saturating_add(x);
                match (j == k + 1, exposed[b]) {
                    (true, true) => f.store_last_exposed += c,
                    (true, false) => {
                        f.store_last_merged += c;
                        f.movable_stores.push(Neighbour {
                            cycles: c,
                            step: blocks[b].neighbour_step,
                        });
                    }
                    _ => f.dma[j] += c,
                }
            }
        }
        f.compute = (1..=k)
            .map(|j| {
                steps.compute[j]
                    .map(|o| self.op_slice_cycles(gt, s, o))
                    .unwrap_or(0.0)
            })
            .collect();
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slicing::{slice_group, NPartsMemo};
    use crate::timestep::{build, occupancy};
    use crate::PlanOptions;

    /// The slice-by-slice timing this module replaced: every slice's figures worked
    /// out on their own.
    fn naive(
        ctx: &Ctx,
        gt: &GroupTensors,
        slices: &[SliceRanges],
        blocks: &[BlockSpec],
        steps: &Steps,
        exposed: &[bool],
    ) -> GroupCost {
        let k = steps.k as usize;
        let ns = slices.len();
        let sliced = ns > 1;
        let nsecs = slices.iter().map(|s| s.n_idx).max().unwrap_or(0) + 1;
        let hsecs = slices.iter().map(|s| s.h_idx).max().unwrap_or(0) + 1;
        let load = |s: &SliceRanges, b: &BlockSpec| ctx.block_load(gt, sliced, s, b);
        let store = |s: &SliceRanges, b: &BlockSpec| ctx.block_store(gt, nsecs, hsecs, s, b);
        let mut gmem = 0u64;
        // per slice: DMA cycles per step (normal), load0 (mergeable, exposed), store k+1
        let mut cyc = 0f64;
        let (mut compute_sum, mut dma_sum) = (0f64, 0f64);
        let mut prev_stores: Vec<f64> = Vec::new();
        for (si, s) in slices.iter().enumerate() {
            let mut cur_stores: Vec<f64> = Vec::new();
            let mut dma = vec![0f64; k + 2];
            let (mut l0m, mut l0x, mut skm, mut skx) = (0f64, 0f64, 0f64, 0f64);
            for (j, list) in steps.loads.iter().enumerate() {
                for &b in list {
                    let (x, c) = load(s, &blocks[b]);
                    gmem = gmem.saturating_add(x);
                    if j == 0 && sliced {
                        if exposed[b] {
                            l0x += c
                        } else {
                            l0m += c
                        }
                    } else {
                        dma[j] += c;
                    }
                }
            }
            for (j, list) in steps.stores.iter().enumerate() {
                for &b in list {
                    let (x, c) = store(s, &blocks[b]);
                    gmem = gmem.saturating_add(x);
                    if j == k + 1 && sliced {
                        if exposed[b] {
                            skx += c
                        } else {
                            skm += c;
                            cur_stores.push(c);
                        }
                    } else {
                        dma[j] += c;
                    }
                }
            }
            dma_sum += dma.iter().sum::<f64>() + l0m + l0x + skm + skx;
            if !sliced {
                for (j, &dj) in dma.iter().enumerate() {
                    let comp = steps.compute[j]
                        .map(|o| ctx.op_slice_cycles(gt, s, o))
                        .unwrap_or(0.0);
                    compute_sum += comp;
                    cyc += comp.max(dj);
                }
                continue;
            }
            // the first slice's step-0 loads are the pipeline fill; a later slice's are
            // issued during the previous slice (below), as its last-step stores are
            // during the next one
            if si == 0 {
                cyc += l0m + l0x;
            } else {
                cyc += l0x;
            }
            // those transfers of the previous and the next slice go, largest first, each
            // to the step with the most DMA slack left: the chip's compiler moves them by
            // slack
            // too (ResNet-50 batch 8, [cast, conv1, pool] cut 8×2: its profile 339,269
            // cycles, TIU-bound; ours 444,454 with them fixed to the first and last
            // steps, 315,602 so)
            let comp: Vec<f64> = (1..=k)
                .map(|j| {
                    steps.compute[j]
                        .map(|o| ctx.op_slice_cycles(gt, s, o))
                        .unwrap_or(0.0)
                })
                .collect();
            let mut d: Vec<f64> = (1..=k).map(|j| dma[j]).collect();
            let mut floating: Vec<f64> = Vec::new();
            if si > 0 {
                floating.extend(prev_stores.iter().copied());
            }
            if let Some(n) = slices.get(si + 1) {
                floating.extend(
                    steps.loads[0]
                        .iter()
                        .filter(|&&b| !exposed[b])
                        .map(|&b| load(n, &blocks[b]).1),
                );
            }
            floating.sort_by(|a, b| b.total_cmp(a));
            for f in floating {
                let j = (0..k)
                    .max_by(|&a, &b| (comp[a] - d[a]).total_cmp(&(comp[b] - d[b])))
                    .unwrap_or(0);
                if let Some(x) = d.get_mut(j) {
                    *x += f;
                }
            }
            for j in 0..k {
                cyc += comp[j].max(d[j]);
            }
            compute_sum += comp.iter().sum::<f64>();
            cyc += skx;
            prev_stores = cur_stores;
            if si + 1 == ns {
                cyc += skm;
            }
        }
        GroupCost {
            cycles: cyc.ceil() as u64,
            gmem,
            compute_cycles: compute_sum.round() as u64,
            dma_cycles: dma_sum.round() as u64,
        }
    }

    #[test]
    fn classes_of_alike_slices_time_a_group_as_slice_by_slice() {
        let opts = PlanOptions::default();
        let mut compared = 0;
        for (model, batch, res, chip) in [
            ("resnet18", 6, 64, "bm1684x"),
            ("mobilenetv2", 5, 32, "cv183x"),
            ("resnet18", 9, 32, "cv180x"),
        ] {
            let g = tpusim_graph::load(model, batch, (res, res)).unwrap();
            let chip = crate::NpuChip::preset(chip).unwrap();
            let ctx = crate::context(&g, &chip, &opts, &crate::place::SpanPlacer).unwrap();
            let n = g.ops.len();
            for first in (0..n).step_by(4) {
                for len in [1, 3, 6] {
                    let last = (first + len - 1).min(n - 1);
                    let gt = GroupTensors::new(&g, &ctx.uses, first, last);
                    if gt.escaping.is_empty() {
                        continue;
                    }
                    for (ns, hs) in [(1, 1), (2, 1), (batch, 1), (3, 2), (4, 5), (batch, 7)] {
                        let Ok(slicing) =
                            slice_group(&g, &gt, ns, hs, false, &mut NPartsMemo::default())
                        else {
                            continue;
                        };
                        for stream in [false, true] {
                            let (blocks, steps) = build(
                                &g,
                                &chip.geometry,
                                opts.dtype,
                                &gt,
                                &slicing,
                                stream,
                                ctx.timing.ic_parallel,
                            )
                            .unwrap();
                            let exposed: Vec<bool> = blocks
                                .iter()
                                .map(|b| occupancy(b.start, b.end, steps.k, slicing.is_sliced()).1)
                                .collect();
                            let fast = ctx.group_cost(&gt, &slicing, &blocks, &steps, &exposed);
                            let slow =
                                naive(&ctx, &gt, &slicing.slices(), &blocks, &steps, &exposed);
                            let figures =
                                |c: &GroupCost| (c.cycles, c.gmem, c.compute_cycles, c.dma_cycles);
                            assert_eq!(
                                figures(&fast),
                                figures(&slow),
                                "{model} ops {first}..={last} at {ns}x{hs}"
                            );
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert!(compared > 200, "{compared}");
    }

    /// A global average pool inside a group, on a chip that runs average pools in f32:
    /// its input cast to f32, then pooled at the f32 rate, four times the pool at F16.
    /// TPU-MLIR 1.30.2's profile of held-out hswish_se_90 on bm1688, [1, 64, 23, 23]:
    /// cast 266, pool 276, cast back 2 cycles (544), where F16 would take 132.
    #[test]
    fn a_global_average_pool_in_a_group_runs_in_f32() {
        use tpusim_graph::{builder::GraphBuilder, OpKind, Shape4};
        use tpusim_layout::ElementType;
        let mut b = GraphBuilder::new("gap");
        let x = b.input("x", Shape4::new(1, 64, 23, 23));
        let y = b.add_op("gap", OpKind::GlobalAvgPool, &[x], &[]).unwrap();
        b.output(y);
        let g = b.finish().unwrap();
        for (chip, dtype, f32_cycles) in [
            ("bm1688", ElementType::F16, Some(544.0)),
            ("bm1684x", ElementType::F16, None),
            ("bm1688", ElementType::F32, None),
        ] {
            let npu = crate::NpuChip::preset(chip).unwrap();
            let opts = PlanOptions {
                dtype,
                ..PlanOptions::default()
            };
            let ctx = crate::context(&g, &npu, &opts, &crate::place::SpanPlacer).unwrap();
            let gt = GroupTensors::new(&g, &ctx.uses, 0, 0);
            let slicing = slice_group(&g, &gt, 1, 1, false, &mut NPartsMemo::default()).unwrap();
            let ours = ctx.op_slice_cycles(&gt, &slicing.first(), 0);
            let t = &ctx.timing;
            let alone = crate::cost::op_cycles(&g, &g.ops[0], 1, 1, npu.geometry.npu_num, t);
            let factor = if dtype == ElementType::F16 { 4.0 } else { 1.0 };
            assert_eq!(ours, factor * alone, "{chip} {dtype:?}");
            if let Some(profiled) = f32_cycles {
                assert!(
                    (ours / profiled - 1.0).abs() < 0.05,
                    "{chip}: {ours} for {profiled}"
                );
            }
        }
    }
}

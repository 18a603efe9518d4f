//! Placing a group of two or more ops as TPU-MLIR places it: its software-pipelined
//! time steps with transfers moved by cycle slack ([`crate::tpumlir_steps`], costed by
//! our cost model), and its allocator ([`crate::tpumlir_alloc`]). A group TPU-MLIR
//! cannot allocate is refused here too (the planner slices it more), so an exported
//! plan allocates in TPU-MLIR at the exported slicing (within the accuracy of the
//! reproduction, see [`TPU_MLIR_DMA_ESTIMATE`]); a group it can allocate gets
//! TPU-MLIR's addresses.

use crate::cost::Dir;
use crate::group::{Ctx, Placed};
use crate::plan::BlockKind;
use crate::slicing::{GroupTensors, Slicing};
use crate::timestep::{occupancy, BlockSpec, Steps};
use crate::tpumlir_alloc::{allocate, Buf, BufKind, Lane, Mode, StepOp};
use crate::tpumlir_steps::{lifetimes, move_by_slack, pipeline, step_table};
use std::collections::HashMap;

/// TPU-MLIR moves transfers by its own cycle estimates of each op and transfer (logged
/// by its layer-group pass with `debugger=3`, a debugger file whose
/// `conditional_debug_types` list `cycle_slack`, and `--debug-only=cycle_slack`). Where
/// our cycle model matches them (the chip's `cycles_match_tpu_mlir`) the moves are
/// timed with our op cycles as they are and our transfer cycles turned into its
/// estimates ([`crate::options::Timing::tpu_mlir_dma_estimate`]: on bm1684x they are
/// its profile's cycles, on bm1688 everything but the set-up 1.6× faster). Of the
/// lifetimes TPU-MLIR logged for the groups of `tests/data/tpumlir_lmem_alloc.json`,
/// 261 of 269 on bm1684x and 307 of 340 on bm1688 are reproduced
/// (`tests/tpumlir_alloc.rs`; bm1684x's 30-op ResNet-50 batch-8 group 71 of 77, and a
/// 32-op bm1684x group and a 6-op bm1688 group it refused are refused).
/// On a chip without such figures the moves are timed with the plainer op model
/// ([`crate::cost::op_cycles_as`]) and this fraction of our DMA cycles, fitted on
/// bm1688 before its estimates were known (294 of its 340 lifetimes then; with full
/// cycles a group TPU-MLIR allocated did not fit), and `tpusim plan` also requires a
/// fit with the full DMA cycles (`Ctx::margin`).
pub(crate) const TPU_MLIR_DMA_ESTIMATE: f64 = 0.25;

impl Ctx<'_> {
    /// Blocks, steps, addresses and exposed transfers of `gt` (`k ≥ 2` ops) sliced as
    /// `slicing`, placed as TPU-MLIR places it; `None` if TPU-MLIR's allocator finds no
    /// room. The loads and stores TPU-MLIR moves to other steps move in the returned
    /// step table too (stage-0 loads and stage-2 stores stay in the first and last
    /// step, where our cost model runs them).
    pub(crate) fn place_pipelined(
        &self,
        gt: &GroupTensors,
        slicing: &Slicing,
        mut blocks: Vec<BlockSpec>,
        mut steps: Steps,
        dma_estimate: Option<f64>,
    ) -> Option<Placed> {
        let k = steps.k as usize;
        let sliced = slicing.is_sliced();
        let first = slicing.first();
        let s0 = &first;
        // TPU-MLIR's buffer order: weights, activations, op buffers
        let rank = |b: &BlockSpec| match b.kind {
            BlockKind::Weight => 0,
            BlockKind::Activation => 1,
            BlockKind::Buffer => 2,
        };
        let mut perm: Vec<usize> = (0..blocks.len()).collect();
        perm.sort_by_key(|&i| rank(&blocks[i]));
        let mut pos = vec![0usize; blocks.len()];
        for (i, &b) in perm.iter().enumerate() {
            pos[b] = i;
        }
        let by_tensor: HashMap<usize, usize> = blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.tensor.map(|t| (t, pos[i])))
            .collect();
        let imm: HashMap<usize, usize> = blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.op.map(|o| (o, pos[i])))
            .collect();
        // the nearest table: our steps 0..=k+1
        let mut ops = vec![Vec::new(); k + 2];
        for (j, c) in steps.compute.iter().enumerate() {
            let Some(o) = *c else { continue };
            let op = &self.graph.ops[o];
            let operands: Vec<usize> = op
                .inputs
                .iter()
                .chain(&op.weights)
                .filter_map(|t| by_tensor.get(t).copied())
                .collect();
            let results: Vec<usize> = op
                .outputs
                .iter()
                .filter_map(|t| by_tensor.get(t).copied())
                .collect();
            let inplace = op.is_binary_elementwise()
                && op.inputs.first().is_some_and(|&x| {
                    self.uses.consumers.get(x).is_some_and(|c| c.len() == 1)
                        && op.outputs.first().is_some_and(|&y| {
                            self.graph.tensors[y].shape.elements()
                                <= self.graph.tensors[x].shape.elements()
                        })
                });
            ops[j].push(StepOp {
                operands,
                results,
                imm: imm.get(&o).copied(),
                inplace,
            });
        }
        let dma: Vec<Vec<(usize, Mode)>> = (0..k + 2)
            .map(|j| {
                steps.loads[j]
                    .iter()
                    .map(|&b| (pos[b], Mode::Load))
                    .chain(steps.stores[j].iter().map(|&b| (pos[b], Mode::Store)))
                    .collect()
            })
            .collect();
        let mut table = pipeline(ops, dma);
        // costs: row r < k computes op r; per buffer, its transfer of the first slice
        let (nsecs, hsecs) = (slicing.nsecs, slicing.hsecs);
        let row_cycles: Vec<i64> = (0..table.ops.len())
            .map(|r| {
                steps
                    .compute
                    .get(r + 1)
                    .copied()
                    .flatten()
                    .filter(|_| r < k)
                    .map_or(0, |o| {
                        let plain = !self.timing.cycles_match_tpu_mlir;
                        self.op_slice_cycles_as(gt, s0, o, plain).round() as i64
                    })
            })
            .collect();
        let mut dma_cycles = vec![0i64; blocks.len()];
        for (i, b) in blocks.iter().enumerate() {
            let (dir, c) = if b.store_step.is_some() {
                (Dir::Store, self.block_store(nsecs, hsecs, s0, b).1)
            } else {
                (Dir::Load, self.block_load(gt, sliced, s0, b).1)
            };
            let c = match dma_estimate {
                Some(f) => c * f,
                None => self.timing.tpu_mlir_dma_estimate(dir, c),
            };
            dma_cycles[pos[i]] = c.round() as i64;
        }
        let bytes: Vec<u64> = perm.iter().map(|&b| blocks[b].size).collect();
        move_by_slack(&mut table, &row_cycles, &dma_cycles, &bytes);
        let n = table.ops.len();
        let life = lifetimes(&table, blocks.len());
        let bufs: Vec<Buf> = perm
            .iter()
            .zip(&life)
            .map(|(&b, l)| {
                let bl = &blocks[b];
                let (start, end) = l.unwrap_or((0, n.saturating_sub(1)));
                Buf {
                    kind: match bl.kind {
                        BlockKind::Weight => BufKind::Weight,
                        BlockKind::Activation => BufKind::Activation,
                        BlockKind::Buffer => BufKind::Operation,
                    },
                    size: bl.size,
                    start,
                    end,
                    hold: bl.kind == BlockKind::Weight && bl.end.is_none(),
                    always: bl.op.is_some_and(|o| {
                        crate::timestep::is_3ic_conv(
                            &self.graph.ops[o].kind,
                            self.graph.ops[o]
                                .inputs
                                .first()
                                .map_or(0, |&x| self.graph.tensors[x].shape.c),
                        )
                    }),
                }
            })
            .collect();
        let lane = Lane {
            bytes: self.geo.lane_bytes,
            align: self.geo.align,
            bank: self.geo.bank_bytes,
        };
        // the moves, in our step numbering: row r runs with step r + 1
        let perm_ref = &perm;
        let moved: Vec<(usize, Mode, u64)> = table
            .dma
            .iter()
            .enumerate()
            .flat_map(|(r, row)| {
                row.iter()
                    .filter(|x| x.stage == 1)
                    .map(move |x| (perm_ref[x.buf], x.mode, (r + 1) as u64))
            })
            .collect();
        let at = allocate(&bufs, &step_table(table), lane, !sliced).ok()?;
        let mut addrs = vec![0u64; blocks.len()];
        for (i, &b) in perm.iter().enumerate() {
            addrs[b] = at[i];
            blocks[b].tpu_mlir_ts = Some([bufs[i].start as u64, bufs[i].end as u64]);
        }
        for (b, mode, step) in moved {
            let bl = &mut blocks[b];
            match mode {
                Mode::Load => {
                    bl.start = step;
                    bl.load_step = Some(step);
                }
                Mode::Store => {
                    bl.store_step = Some(step);
                    bl.end = bl.end.map(|e| e.max(step));
                }
            }
        }
        for l in steps.loads.iter_mut().chain(steps.stores.iter_mut()) {
            l.clear();
        }
        for (i, b) in blocks.iter().enumerate() {
            if let Some(s) = b.load_step {
                steps.loads[s as usize].push(i);
            }
            if let Some(s) = b.store_step {
                steps.stores[s as usize].push(i);
            }
        }
        let exposed = blocks
            .iter()
            .map(|b| occupancy(b.start, b.end, steps.k, sliced).1)
            .collect();
        Some((blocks, steps, addrs, exposed))
    }
}

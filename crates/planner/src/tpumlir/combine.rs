//! TPU-MLIR's time-step combine (1.30.2, `TimeStepCombine.cpp`) on a group run in one
//! loop, reproduced: after the allocator has placed the group, transfers move out of
//! rows they dominate and adjacent rows merge, so a weight's load runs beside more than
//! one op. Only the rows' timing reads the result (`nd_place::one_loop_cycles`); the
//! allocation check of a group is made on the rows before it, as TPU-MLIR's own is.
//!
//! The rules, read from TPU-MLIR's source:
//! - `reassign_timestep_tensors`: each row whose transfers take longer than its compute,
//!   first to last, may give one transfer (not a held weight's) to the row where moving
//!   it gains the most cycles (the first such row on a tie), where `tensor_can_move`
//!   allows: a load past no op that reads it, a store after its producer and its
//!   buffer's start. The row taking it takes no other. Then at most one pair swaps: the
//!   first row's first load (not a held weight's) goes as late as a store in a later row
//!   can come to it without losing cycles. Each move stands only if the allocator
//!   places the group again.
//! - `merge_timesteps`: from the first row, row `r` and row `r + 1` are tried unless both compute more than
//!   10 % longer than they transfer. After each merge the walk starts again from the
//!   first row.
//! - `layer_can_merge_backward`: no transfer of one row feeds or drains an op of the
//!   other, and no op of row `r` reads a buffer whose life ends in row `r + 1`. (TPU-MLIR
//!   excepts a held weight loaded after the first row; a matmul would then read its
//!   weight while it loads. Its compiled groups never show that: gpt2_d128_s128's final
//!   norm and head on bm1688 keep the head's 4 KiB-a-lane weight load a step before the
//!   matmul, where with the exception this reproduction merged them and hid the load.)
//! - `lmem_alloc_by_timestep_merge`: every buffer that starts in row `r + 1` must find
//!   new room in row `r`. A buffer the next row loads never does (TPU-MLIR counts those
//!   placed in a counter it never raises), so such a merge always fails. An op's result
//!   or scratch buffer is placed, largest first, in the first gap between two buffers
//!   the row's ops use within one bank, else at the start of a bank nothing uses; after
//!   a placement in an unused bank no further buffer is tried, so any left fail it.
//! - Lifetimes then shift down by one past row `r`.
//! - If the allocator cannot place the merged rows, every merge is undone.

use super::alloc::{allocate, Buf, BufKind, Lane, Mode};
use super::steps::{step_table, PipeTable};
use crate::alloc::align_up;
use std::collections::{BTreeMap, VecDeque};

/// Buffers as the merge walks them: lifetimes (row indices, `end < start` wrapping) and
/// addresses.
#[derive(Clone)]
struct Placement<'a> {
    bufs: &'a [Buf],
    start: Vec<usize>,
    end: Vec<usize>,
    addr: Vec<u64>,
}

/// Move transfers between the rows of `t` and merge rows as TPU-MLIR's time-step
/// combine does, by their compute cycles `compute` and TPU-MLIR's estimate of each
/// buffer's transfer `dma_of`; `bufs` are the buffers as the allocator placed them at
/// `addrs` on the rows as they are.
pub fn combine_rows(
    t: &mut PipeTable,
    compute: &mut Vec<i64>,
    dma_of: &dyn Fn(usize) -> i64,
    bufs: &[Buf],
    addrs: Vec<u64>,
    lane: Lane,
) {
    let mut p = Placement {
        bufs,
        start: bufs.iter().map(|b| b.start).collect(),
        end: bufs.iter().map(|b| b.end).collect(),
        addr: addrs,
    };
    reassign(t, compute, dma_of, &mut p, lane);
    swap_load_and_store(t, compute, dma_of, &mut p, lane);
    merge(t, compute, dma_of, p, lane);
}

/// TPU-MLIR's `merge_timesteps` on rows placed as `p` says.
fn merge(
    t: &mut PipeTable,
    compute: &mut Vec<i64>,
    dma_of: &dyn Fn(usize) -> i64,
    mut p: Placement<'_>,
    lane: Lane,
) {
    let (before_rows, before_compute) = (t.clone(), compute.clone());
    let mut merged = false;
    let mut r = 0;
    while r + 1 < t.ops.len() {
        let busy = |row: usize| {
            let tiu = compute[row] as f64;
            let dma = t.dma[row].iter().map(|x| dma_of(x.buf)).sum::<i64>() as f64;
            dma <= tiu && (tiu - dma) / tiu > 0.1
        };
        if (busy(r) && busy(r + 1)) || !can_merge(t, &p, r) || !p.replace_for_merge(t, r, lane) {
            r += 1;
            continue;
        }
        p.shift_past(r, t.ops.len());
        let ops = t.ops.remove(r + 1);
        t.ops[r].extend(ops);
        let dma = t.dma.remove(r + 1);
        t.dma[r].extend(dma);
        let c = compute.remove(r + 1);
        compute[r] += c;
        merged = true;
        r = 0;
    }
    if merged && p.placed(t, lane).is_none() {
        *t = before_rows;
        *compute = before_compute;
    }
}

fn row_dma(t: &PipeTable, row: usize, dma_of: &dyn Fn(usize) -> i64) -> i64 {
    t.dma[row].iter().map(|x| dma_of(x.buf)).sum()
}

/// TPU-MLIR's first half of `reassign_timestep_tensors`: transfers out of rows they
/// dominate.
fn reassign(
    t: &mut PipeTable,
    compute: &[i64],
    dma_of: &dyn Fn(usize) -> i64,
    p: &mut Placement<'_>,
    lane: Lane,
) {
    let n = t.ops.len();
    let mut excluded = vec![false; n];
    for ts in 0..n {
        let src_slack = compute[ts] - row_dma(t, ts, dma_of);
        if src_slack >= 0 || excluded[ts] {
            continue;
        }
        // the transfer gaining the most, and the first row it gains that in
        let mut best: Option<(usize, usize)> = None;
        let mut best_profit = 0;
        for (i, x) in t.dma[ts].iter().enumerate() {
            if p.held(x.buf) {
                continue;
            }
            let c = dma_of(x.buf);
            let src_after = (src_slack + c).min(0);
            for dst in (0..n).filter(|&d| d != ts && can_move(t, p, x.buf, x.mode, ts, d)) {
                let dst_after = (compute[dst] - row_dma(t, dst, dma_of) - c).min(0);
                let profit = dst_after + src_after - src_slack;
                if profit > best_profit {
                    best_profit = profit;
                    best = Some((i, dst));
                }
            }
        }
        excluded[ts] = true;
        let Some((i, dst)) = best else {
            continue;
        };
        let x = t.dma[ts][i];
        let mut moved = t.clone();
        moved.dma[ts].remove(i);
        moved.dma[dst].push(x);
        let mut q = p.clone();
        q.moved(x.buf, x.mode, dst);
        if keep_if_placed(t, p, moved, q, lane) {
            excluded[dst] = true;
        }
    }
}

/// Take the rows `moved` and the buffers `q` on them if the allocator places them (TPU-MLIR
/// keeps a move only then); whether it did.
fn keep_if_placed<'a>(
    t: &mut PipeTable,
    p: &mut Placement<'a>,
    moved: PipeTable,
    mut q: Placement<'a>,
    lane: Lane,
) -> bool {
    let Some(addrs) = q.placed(&moved, lane) else {
        return false;
    };
    q.addr = addrs;
    *t = moved;
    *p = q;
    true
}

/// TPU-MLIR's second half of `reassign_timestep_tensors`: one load later and one store
/// earlier, swapped, where that loses no cycles.
fn swap_load_and_store(
    t: &mut PipeTable,
    compute: &[i64],
    dma_of: &dyn Fn(usize) -> i64,
    p: &mut Placement<'_>,
    lane: Lane,
) {
    let n = t.ops.len();
    let slack = |t: &PipeTable, row: usize| compute[row] - row_dma(t, row, dma_of);
    for src in 0..n {
        let Some(li) = t.dma[src]
            .iter()
            .position(|x| x.mode == Mode::Load && !p.held(x.buf))
        else {
            continue;
        };
        let load = t.dma[src][li];
        let pair = (src + 1..n).rev().find_map(|dst| {
            if !can_move(t, p, load.buf, Mode::Load, src, dst) {
                return None;
            }
            let si = t.dma[dst].iter().position(|y| {
                if y.mode != Mode::Store || !can_move(t, p, y.buf, Mode::Store, dst, src) {
                    return false;
                }
                let (lc, sc) = (dma_of(load.buf), dma_of(y.buf));
                let (s0, d0) = (slack(t, src), slack(t, dst));
                let after = (s0 - sc + lc).min(0) + (d0 + sc - lc).min(0);
                after >= s0.min(0) + d0.min(0)
            })?;
            Some((dst, si))
        });
        let Some((dst, si)) = pair else {
            continue;
        };
        let store = t.dma[dst][si];
        let mut moved = t.clone();
        moved.dma[src].remove(li);
        moved.dma[dst].remove(si);
        moved.dma[dst].push(load);
        moved.dma[src].push(store);
        let mut q = p.clone();
        q.moved(load.buf, Mode::Load, dst);
        q.moved(store.buf, Mode::Store, src);
        if keep_if_placed(t, p, moved, q, lane) {
            return;
        }
    }
}

/// TPU-MLIR's `tensor_can_move`: whether buffer `b`'s transfer may go from row `src`
/// to row `dst`.
fn can_move(
    t: &PipeTable,
    p: &Placement<'_>,
    b: usize,
    mode: Mode,
    src: usize,
    dst: usize,
) -> bool {
    let (start, end) = (p.start[b], p.end[b]);
    match mode {
        Mode::Load => {
            // the rows it passes: dst..src moving up, src + 1..=dst moving down
            let (from, to) = if dst < src {
                (dst, src)
            } else {
                (src + 1, dst + 1)
            };
            !(from..to).any(|r| t.ops[r].iter().any(|o| o.operands.contains(&b)))
        }
        Mode::Store => {
            if start < end && dst <= start {
                return false;
            }
            if start > end && ((src > start && dst <= start) || (src < start && dst >= start)) {
                return false;
            }
            let producer =
                (0..t.ops.len()).find(|&r| t.ops[r].iter().any(|o| o.results.contains(&b)));
            !matches!(producer, Some(r) if r != start && start < end && dst <= r)
        }
    }
}

/// TPU-MLIR's `layer_can_merge_backward` for rows `r` and `r + 1`.
fn can_merge(t: &PipeTable, p: &Placement<'_>, r: usize) -> bool {
    let reads = |row: usize, b: usize| t.ops[row].iter().any(|o| o.operands.contains(&b));
    let writes = |row: usize, b: usize| t.ops[row].iter().any(|o| o.results.contains(&b));
    let apart = |from: usize, to: usize| {
        t.dma[from].iter().all(|x| match x.mode {
            Mode::Load => !reads(to, x.buf),
            Mode::Store => !writes(to, x.buf),
        })
    };
    if !apart(r, r + 1) || !apart(r + 1, r) {
        return false;
    }
    let ends_next = |b: usize| {
        p.bufs[b].kind != BufKind::Operation && p.end.get(b).is_some_and(|&e| e == r + 1)
    };
    t.ops[r]
        .iter()
        .all(|o| o.operands.iter().all(|&b| !ends_next(b)))
}

/// Whether a buffer held from `s` to `e` is live in row `ts`, as TPU-MLIR asks it.
fn live_at(s: usize, e: usize, ts: usize) -> bool {
    (ts >= s && ts <= e) || (s > e && (ts >= s || ts < e))
}

impl Placement<'_> {
    fn held(&self, b: usize) -> bool {
        self.bufs
            .get(b)
            .is_some_and(|x| x.hold && x.kind != BufKind::Operation)
    }

    /// TPU-MLIR's `update_mem_buffer_by_tensor_move`: buffer `b`'s transfer now in row
    /// `dst`.
    fn moved(&mut self, b: usize, mode: Mode, dst: usize) {
        let (start, end) = (self.start[b], self.end[b]);
        match mode {
            Mode::Load => self.start[b] = dst,
            Mode::Store => {
                if (start < end && dst > end) || (start > end && dst > end && dst < start) {
                    self.end[b] = dst;
                }
            }
        }
    }

    /// The allocator's addresses for the buffers on rows `t`, if it places them.
    fn placed(&self, t: &PipeTable, lane: Lane) -> Option<Vec<u64>> {
        let bufs: Vec<Buf> = self
            .bufs
            .iter()
            .enumerate()
            .map(|(b, buf)| Buf {
                start: self.start[b],
                end: self.end[b],
                ..buf.clone()
            })
            .collect();
        allocate(&bufs, &step_table(t.clone()), lane, true).ok()
    }

    /// TPU-MLIR's `lmem_alloc_by_timestep_merge` for rows `ts` and `ts + 1`: new room
    /// in row `ts` for every buffer starting in row `ts + 1`; the new addresses are
    /// kept when all find it.
    fn replace_for_merge(&mut self, t: &PipeTable, ts: usize, lane: Lane) -> bool {
        let moved_in = |row: usize, b: usize| t.dma[row].iter().any(|x| x.buf == b);
        // buffers to place, by size (one per size, as TPU-MLIR's map keeps them)
        let mut to_place: BTreeMap<u64, usize> = BTreeMap::new();
        let mut used: BTreeMap<u64, u64> = BTreeMap::new();
        let mut used_by_dma: BTreeMap<u64, u64> = BTreeMap::new();
        for (b, buf) in self.bufs.iter().enumerate() {
            let op_buffer = buf.kind == BufKind::Operation;
            let (s, e) = (self.start[b], self.end[b]);
            if s == ts + 1 {
                if !op_buffer && !buf.hold && moved_in(ts + 1, b) {
                    return false;
                }
                if op_buffer || !buf.hold {
                    to_place.insert(buf.size, b);
                }
            } else if live_at(s, e, ts) {
                if !op_buffer && moved_in(ts, b) {
                    used_by_dma.insert(self.addr[b], buf.size);
                } else {
                    used.insert(self.addr[b], buf.size);
                }
            }
            if !op_buffer && buf.hold {
                used_by_dma.insert(self.addr[b], buf.size);
            }
        }
        let bank = lane.bank.max(1);
        let mut used_banks = std::collections::BTreeSet::new();
        for map in [&mut used, &mut used_by_dma] {
            let banks: Vec<u64> = map.keys().map(|a| a / bank).collect();
            for k in banks {
                used_banks.insert(k);
                map.entry(k * bank).or_insert(0);
            }
        }
        let mut unused: VecDeque<u64> = (0..lane.bytes / bank)
            .filter(|k| !used_banks.contains(k))
            .collect();
        let mut placed: Vec<(usize, u64)> = Vec::new();
        for (&size, &b) in to_place.iter().rev() {
            let blocks: Vec<(u64, u64)> = used.iter().map(|(&a, &s)| (a, s)).collect();
            let gap = blocks.windows(2).find_map(|w| {
                let ((pa, ps), (na, _)) = (w[0], w[1]);
                let bound = if na / bank == pa / bank {
                    na
                } else {
                    (pa / bank + 1) * bank
                };
                let offset = align_up(pa + ps, lane.align.max(1));
                (offset + size <= bound).then_some(offset)
            });
            if let Some(offset) = gap {
                used.insert(offset, size);
                placed.push((b, offset));
                continue;
            }
            if let Some(&k) = unused.front() {
                if size <= bank {
                    used.insert(k * bank, size);
                    placed.push((b, k * bank));
                    unused.pop_front();
                    // TPU-MLIR leaves its loop over the buffers here
                    break;
                }
            }
        }
        if placed.len() != to_place.len() {
            return false;
        }
        for (b, a) in placed {
            self.addr[b] = a;
        }
        true
    }

    /// TPU-MLIR's `update_mem_buffer_by_timestep_merge`: lifetimes past row `ts` move
    /// down a row (`n`: rows before the merge).
    fn shift_past(&mut self, ts: usize, n: usize) {
        for (b, buf) in self.bufs.iter().enumerate() {
            let (s, e) = (self.start[b], self.end[b]);
            if buf.kind == BufKind::Operation {
                if s > ts {
                    self.start[b] = s - 1;
                    self.end[b] = e.saturating_sub(1);
                }
                continue;
            }
            let ns = s - usize::from(s > ts);
            let ne = e - usize::from(e > ts);
            self.start[b] = if s == e + 1 && ns == ne {
                if s + 1 >= n {
                    0
                } else {
                    s
                }
            } else {
                ns
            };
            self.end[b] = ne;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpumlir::steps::Transfer;
    use crate::tpumlir::tests::fixtures::{op, LANE};

    fn buf(kind: BufKind, start: usize, end: usize) -> Buf {
        Buf {
            kind,
            size: 1024,
            start,
            end,
            hold: kind == BufKind::Weight,
            always: false,
        }
    }

    fn load(buf: usize, stage: u8) -> Transfer {
        Transfer {
            buf,
            mode: Mode::Load,
            stage,
        }
    }

    /// Buffers 0 x (the next loop's input), 1 w (C's weight), 2 a, 3 b, 4 c, 5 y; ops
    /// A: x → a, B: a → b, C: b, w (and y, `with_y`) → c. Row 0 computes A beside w's
    /// 1,000-cycle load, row 1 B (1,000 cycles), row 2 C beside x's load; with `with_y`
    /// row 1 also loads y for C.
    fn rows(with_y: bool) -> (PipeTable, Vec<Buf>) {
        let c_reads = if with_y { vec![3, 1, 5] } else { vec![3, 1] };
        let t = PipeTable {
            ops: vec![
                vec![op(vec![0], 2)],
                vec![op(vec![2], 3)],
                vec![op(c_reads, 4)],
            ],
            dma: vec![
                vec![load(1, 1)],
                if with_y { vec![load(5, 1)] } else { vec![] },
                vec![load(0, 0)],
            ],
        };
        let bufs = vec![
            buf(BufKind::Activation, 2, 0),
            buf(BufKind::Weight, 0, 2),
            buf(BufKind::Activation, 0, 1),
            buf(BufKind::Activation, 1, 2),
            buf(BufKind::Activation, 2, 2),
            buf(BufKind::Activation, 1, 2),
        ];
        (t, bufs)
    }

    fn merged(with_y: bool) -> (PipeTable, Vec<i64>) {
        let (mut t, bufs) = rows(with_y);
        let addrs = allocate(&bufs, &step_table(t.clone()), LANE, true).unwrap();
        let mut compute = vec![100, 1000, 100];
        let dma = |b: usize| [50, 1000, 0, 0, 0, 300][b];
        merge(
            &mut t,
            &mut compute,
            &dma,
            Placement {
                bufs: &bufs,
                start: bufs.iter().map(|b| b.start).collect(),
                end: bufs.iter().map(|b| b.end).collect(),
                addr: addrs,
            },
            LANE,
        );
        (t, compute)
    }

    /// Row 0 transfers longer than it computes, and nothing it moves feeds row 1: B joins
    /// A's row and hides w's load. C then stays in a row of its own (w feeds it).
    #[test]
    fn a_row_its_transfer_dominates_takes_the_next_op() {
        let (t, compute) = merged(false);
        assert_eq!(t.ops.len(), 2);
        assert_eq!(compute, [1100, 100]);
    }

    /// Row 1 loads y, which starts its life there: TPU-MLIR never re-places such a
    /// buffer for a merge, so no row merges.
    #[test]
    fn a_row_that_loads_an_activation_is_not_merged_into() {
        let (t, compute) = merged(true);
        assert_eq!(t.ops.len(), 3);
        assert_eq!(compute, [100, 1000, 100]);
    }
}

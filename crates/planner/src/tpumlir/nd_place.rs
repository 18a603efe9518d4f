//! Whether TPU-MLIR 1.30.2 can allocate a transformer layer group: its time-step table
//! (nearest assignment, software pipelining, transfers moved by cycle slack:
//! [`super::steps`]) and its allocator ([`super::alloc`]), the same reproductions the
//! CNN planner places its groups with, fed the group's values, weights and op buffers.
//!
//! A live-byte count is not enough: the loads of the next slice wrap round the table,
//! TPU-MLIR keeps an op's operands, results and buffer out of each other's banks where
//! it can, and it places greedily with no backtracking. llama_d320_s256's masked scores
//! on bm1684x fit a live-byte count in 3 H slices, and TPU-MLIR needs 4; its FFN on
//! bm1688 allocates in 3 C slices by our cycle timing, and TPU-MLIR needs 4.

use super::alloc::{allocate, Buf, BufKind, Lane, Mode, StepOp};
use super::calib::Calibration;
use super::combine::combine_rows;
use super::steps::{lifetimes, move_by_slack, pipeline, step_table, PipeTable};
use crate::cost::Dir;

/// A buffer of a group: a value, a weight or an op's scratch buffer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupBuf {
    /// What it holds.
    pub kind: BufKind,
    /// A weight held throughout the loop over a cut group's slices (loaded once).
    pub hold: bool,
    /// Bytes of every lane (one slice of a cut value).
    pub size: u64,
    /// Loaded from global memory before this op (an index into the group's ops) first
    /// reads it.
    pub loaded_for: Option<usize>,
    /// Stored to global memory after this op writes it.
    pub stored_after: Option<usize>,
    /// Cycles of its transfer.
    pub dma_cycles: i64,
}

/// An op of a group: the buffers it reads and writes, its scratch buffer and cycles.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupOp {
    /// Buffers it reads, operand 0 first.
    pub operands: Vec<usize>,
    /// Buffers it writes.
    pub results: Vec<usize>,
    /// Its scratch buffer.
    pub imm: Option<usize>,
    /// It may write its result over operand 0 (element-wise, operand 0 read by it
    /// alone and no smaller than the result).
    pub inplace: bool,
    /// Compute cycles.
    pub cycles: i64,
}

/// A group's buffers in TPU-MLIR's order (weights, activations, op buffers) and its
/// time steps as TPU-MLIR builds them: nearest assignment, software pipelining and
/// transfers moved by cycle slack.
struct Rows {
    /// `perm[i]`: the group buffer at position `i` of TPU-MLIR's order.
    perm: Vec<usize>,
    /// The rows, buffers named by their position in `perm`.
    table: PipeTable,
    /// Compute cycles of each row.
    compute: Vec<i64>,
}

/// TPU-MLIR's estimate of `buf`'s transfer (`calib`), by which it moves transfers.
fn estimate_of(buf: &GroupBuf, calib: &Calibration) -> i64 {
    let dir = if buf.loaded_for.is_some() {
        Dir::Load
    } else {
        Dir::Store
    };
    calib.dma_estimate(dir, buf.dma_cycles as f64).round() as i64
}

/// TPU-MLIR's rows of `ops` (two or more) over `bufs`, its transfers moved by its own
/// estimates of them (`calib`).
fn rows(bufs: &[GroupBuf], ops: &[GroupOp], calib: &Calibration) -> Rows {
    let k = ops.len();
    // TPU-MLIR's buffer order: weights, activations, op buffers
    let mut perm: Vec<usize> = (0..bufs.len()).collect();
    perm.sort_by_key(|&b| bufs[b].kind);
    let mut pos = vec![0usize; bufs.len()];
    for (i, &b) in perm.iter().enumerate() {
        pos[b] = i;
    }
    let at = |b: &usize| pos[*b];
    // the nearest table: row 0 loads op 0's inputs, row j + 1 computes op j, loads op
    // j + 1's and stores op j − 1's outputs, the last row stores the last op's
    let mut rows = vec![Vec::new(); k + 2];
    for (j, o) in ops.iter().enumerate() {
        rows[j + 1].push(StepOp {
            operands: o.operands.iter().map(at).collect(),
            results: o.results.iter().map(at).collect(),
            imm: o.imm.map(|b| pos[b]),
            inplace: o.inplace,
        });
    }
    let mut dma: Vec<Vec<(usize, Mode)>> = vec![Vec::new(); k + 2];
    for (b, buf) in bufs.iter().enumerate() {
        if let Some(j) = buf.loaded_for.filter(|&j| j < k) {
            dma[j].push((pos[b], Mode::Load));
        }
        if let Some(j) = buf.stored_after.filter(|&j| j < k) {
            dma[j + 2].push((pos[b], Mode::Store));
        }
    }
    let mut table = pipeline(rows, dma);
    let compute = row_compute(&table, ops);
    let dma_cycles: Vec<i64> = perm.iter().map(|&b| estimate_of(&bufs[b], calib)).collect();
    let bytes: Vec<u64> = perm.iter().map(|&b| bufs[b].size).collect();
    move_by_slack(&mut table, &compute, &dma_cycles, &bytes);
    Rows {
        perm,
        table,
        compute,
    }
}

/// Compute cycles of each row of `table`: its ops in order, from the first row with one
/// (pipelining keeps an empty first row when op 0 touches a last store).
fn row_compute(table: &PipeTable, ops: &[GroupOp]) -> Vec<i64> {
    let first = table.ops.iter().position(|r| !r.is_empty()).unwrap_or(0);
    (0..table.ops.len())
        .map(|r| {
            r.checked_sub(first)
                .filter(|_| !table.ops[r].is_empty())
                .and_then(|j| ops.get(j))
                .map_or(0, |o| o.cycles)
        })
        .collect()
}

/// The group's buffers as the allocator sees them on `table`: each with its lifetime in
/// its rows, in TPU-MLIR's order `perm`.
fn buffers_on(bufs: &[GroupBuf], perm: &[usize], table: &PipeTable) -> Vec<Buf> {
    let n = table.ops.len();
    let life = lifetimes(table, bufs.len());
    perm.iter()
        .zip(&life)
        .map(|(&b, l)| {
            let (start, end) = l.unwrap_or((0, n.saturating_sub(1)));
            Buf {
                kind: bufs[b].kind,
                size: bufs[b].size,
                start,
                end,
                hold: bufs[b].hold,
                always: false,
            }
        })
        .collect()
}

/// Whether a cut group may hold anything through its loop of slices, by TPU-MLIR
/// 1.30.2's rule (`LmemAllocator::assignLmemAddr`, `allow_hold_in_lmem`): only when all
/// it would hold takes less than a lane (`lane_bytes`, its `LMEM_BYTES`); otherwise
/// nothing is held and every weight loads in each slice. Its own bm1688 group of
/// bert_d288_s160_b3, the whole 2-layer network in 2 N slices, holds 147 KiB of weights a
/// lane by our count and fits in 126,304 bytes, loading them slice by slice.
pub fn may_hold(held_bytes: u64, lane_bytes: u64) -> bool {
    held_bytes < lane_bytes
}

/// `bufs` with nothing held where [`may_hold`] says so of what they hold.
pub fn release_holds_beyond(bufs: &mut [GroupBuf], lane_bytes: u64) {
    let held = bufs
        .iter()
        .filter(|b| b.hold && b.kind != BufKind::Operation)
        .map(|b| b.size)
        .fold(0u64, u64::saturating_add);
    if !may_hold(held, lane_bytes) {
        for b in bufs.iter_mut() {
            b.hold = false;
        }
    }
}

/// Whether TPU-MLIR's allocator finds room for `bufs` used by `ops` (two or more), in
/// one loop or, `sliced`, pipelined over slices (the `hold` weights held throughout),
/// its transfers moved by its estimates (`calib`): on bm1688, where it estimates them
/// 1.6 times faster than they run, it finds slack for more of them earlier, and holds
/// more at once (llama_d512_s96_b3's FFN-down…QKV group in 3 C slices: its log loads
/// the next layer's three projection weights together, four rows early).
pub fn allocates(
    bufs: &[GroupBuf],
    ops: &[GroupOp],
    lane: Lane,
    sliced: bool,
    calib: &Calibration,
) -> bool {
    if ops.len() < 2 || room_for_any_placement(bufs, lane) {
        return true;
    }
    allocates_in_steps(bufs, ops, lane, sliced, calib)
}

/// [`allocates`] by TPU-MLIR's time steps and allocator, with no shortcut.
fn allocates_in_steps(
    bufs: &[GroupBuf],
    ops: &[GroupOp],
    lane: Lane,
    sliced: bool,
    calib: &Calibration,
) -> bool {
    let Rows { perm, table, .. } = rows(bufs, ops, calib);
    let placed = buffers_on(bufs, &perm, &table);
    allocate(&placed, &step_table(table), lane, !sliced).is_ok()
}

/// Whether the lane is so roomy that TPU-MLIR's allocator places `bufs` whatever their
/// time steps and order, so there is no need to run it. Buffer `i`'s free space is the
/// lane less the blocks of the buffers placed before it (each at an aligned address,
/// its end rounded up to the alignment), in at most one block more than those: at
/// least `lane − Σ_{j≠i} align_up(size_j)` bytes in at most `n` blocks, for `n`
/// buffers. When that is `n · size_i` or more, one block holds `size_i` (pigeonhole),
/// and the allocator takes a block that holds it (bank avoidance only chooses among
/// such blocks; an in-place result only adds one). A bert_tiny mutant's groups at a
/// sequence of 16 fit so, and the allocator ran twice for each of them.
pub fn room_for_any_placement(bufs: &[GroupBuf], lane: Lane) -> bool {
    let n = bufs.len() as u64;
    let aligned = |b: &GroupBuf| crate::alloc::align_up(b.size, lane.align.max(1));
    let all = bufs.iter().map(aligned).fold(0u64, u64::saturating_add);
    bufs.iter().all(|b| {
        let others = all - aligned(b);
        n.checked_mul(b.size)
            .and_then(|need| need.checked_add(others))
            .is_some_and(|total| total <= lane.bytes)
    })
}

/// Cycles of a group of two or more `ops` run in one loop (a single slice) as TPU-MLIR
/// runs it: its rows, adjacent ones merged as TPU-MLIR's time-step combine merges them
/// once the group is placed ([`super::combine`]), three times over: the first pass
/// moving the stage-0 loads, the second computing each row's ops beside its stage-1
/// transfers, the third moving the stage-2 stores. Every row waits for the longer of its
/// compute and its transfers (TPU-MLIR syncs both engines at each time step):
/// gpt2_d768_s64's last group on bm1684x, compiled, holds each matmul back until the
/// 2.4 MB weight loading beside the one before is in, where transfers run back to back
/// would hide it.
///
/// TPU-MLIR decides its moves and merges by its own estimate of each transfer (`calib`:
/// on bm1688 1.6 times faster than it runs); the rows are timed by ours.
pub fn one_loop_cycles(bufs: &[GroupBuf], ops: &[GroupOp], lane: Lane, calib: &Calibration) -> f64 {
    let total = pipelined_cycles(bufs, ops, lane, calib, 1, &[]);
    debug_assert!(
        total >= one_loop_floor(bufs, ops) as f64,
        "a group beat its floor"
    );
    total
}

/// Cycles of a group of two or more `ops`, one slice of it (`bufs` and `ops` a slice's
/// buffers, transfers and compute), run over `slices` slices as TPU-MLIR
/// software-pipelines them: its rows ([`one_loop_cycles`]) `slices + 2` times over,
/// the k-th pass moving slice k's stage-0 loads, computing slice k − 1 beside its
/// stage-1 transfers and moving slice k − 2's stage-2 stores; a buffer it holds
/// (`hold`: a weight, or what every slice reads whole) loads in the first slice alone.
/// Each row waits for the longer of its compute and its transfers. `shares[k]`: slice
/// k's size against the one `bufs` and `ops` describe, which its compute and the
/// transfers of its activations (not weights, nor what it holds) scale by; empty, every
/// slice alike. TPU-MLIR cuts N the larger first, and a row's longer side is not the
/// mean slice's: 3 sequences in 2 slices, a row computing 1.5 sequences' worth beside a
/// weight's load of as many cycles takes its compute in the first slice and the load in
/// the second.
pub fn pipelined_cycles(
    bufs: &[GroupBuf],
    ops: &[GroupOp],
    lane: Lane,
    calib: &Calibration,
    slices: u64,
    shares: &[f64],
) -> f64 {
    let Rows {
        perm,
        mut table,
        mut compute,
    } = rows(bufs, ops, calib);
    let dma_of = |b: usize| perm.get(b).map_or(0, |&g| bufs[g].dma_cycles);
    let held = |b: usize| perm.get(b).is_some_and(|&g| bufs[g].hold);
    let scales = |b: usize| {
        perm.get(b)
            .is_some_and(|&g| bufs[g].kind == BufKind::Activation && !bufs[g].hold)
    };
    let share = |slice: i64| {
        usize::try_from(slice)
            .ok()
            .and_then(|k| shares.get(k))
            .copied()
            .unwrap_or(1.0)
    };
    let estimate = |b: usize| perm.get(b).map_or(0, |&g| estimate_of(&bufs[g], calib));
    let placed = buffers_on(bufs, &perm, &table);
    if let Ok(addrs) = allocate(&placed, &step_table(table.clone()), lane, slices <= 1) {
        combine_rows(&mut table, &mut compute, &estimate, &placed, addrs, lane);
    }
    // (no loop is longer than 2⁶²: the passes below count up to slices + 1 in an i64)
    let slices = i64::try_from(slices.clamp(1, 1 << 62)).unwrap_or(1 << 62);
    let pass_cycles = |pass: i64| -> i64 {
        let mut total = 0i64;
        for (r, moved) in table.dma.iter().enumerate() {
            let tiu = if (1..=slices).contains(&pass) {
                (compute[r] as f64 * share(pass - 1)).round() as i64
            } else {
                0
            };
            let dma: i64 = moved
                .iter()
                .filter_map(|x| {
                    let slice = pass - i64::from(x.stage);
                    let moves = (0..slices).contains(&slice) && (slice == 0 || !held(x.buf));
                    let scale = if scales(x.buf) { share(slice) } else { 1.0 };
                    moves.then(|| (dma_of(x.buf) as f64 * scale).round() as i64)
                })
                .sum();
            total = total.saturating_add(tiu.max(dma));
        }
        total
    };
    let sum = |passes: &[i64]| {
        passes
            .iter()
            .map(|&p| pass_cycles(p))
            .fold(0i64, i64::saturating_add)
    };
    let total = if slices < 4 || !shares.is_empty() {
        sum(&(0..slices + 2).collect::<Vec<_>>())
    } else {
        // passes 3 to slices − 1 are alike (every stage busy, no first slice among
        // them), so a loop of many slices is timed in six passes
        sum(&[0, 1, 2, slices, slices + 1])
            .saturating_add(pass_cycles(3).saturating_mul(slices - 3))
    };
    total as f64
}

/// A bound from below on [`one_loop_cycles`], without the rows. Every op computes in
/// some row of the middle pass (rows merge, their compute adds up) and every transfer
/// moves in some row of one of the three passes, each row taking the longer of its
/// compute and its transfers; the first pass (the loads of op 0's operands, stage 0) and
/// the last (the stores of the last op's results, stage 2) compute nothing. So the
/// cycles are at least those two passes' transfers plus the larger of the ops' compute
/// and the other transfers (at a sequence of 16, a bert_tiny group's loads for its
/// first op are a fifth of its cycles; the larger of compute and all transfers alone
/// left them out).
pub fn one_loop_floor(bufs: &[GroupBuf], ops: &[GroupOp]) -> i64 {
    let k = ops.len();
    let compute = ops
        .iter()
        .map(|o| o.cycles.max(0))
        .fold(0i64, i64::saturating_add);
    let (mut first, mut last, mut middle) = (0i64, 0i64, 0i64);
    for b in bufs {
        let cycles = b.dma_cycles.max(0);
        match b.loaded_for.filter(|&j| j < k) {
            Some(0) => first = first.saturating_add(cycles),
            Some(_) => middle = middle.saturating_add(cycles),
            None => {}
        }
        match b.stored_after.filter(|&j| j < k) {
            Some(j) if j + 1 == k => last = last.saturating_add(cycles),
            Some(_) => middle = middle.saturating_add(cycles),
            None => {}
        }
    }
    first
        .saturating_add(compute.max(middle))
        .saturating_add(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpumlir::tests::fixtures::LANE;

    fn held_weight(size: u64) -> GroupBuf {
        GroupBuf {
            kind: BufKind::Weight,
            hold: true,
            size,
            loaded_for: Some(0),
            stored_after: None,
            dma_cycles: 0,
        }
    }

    #[test]
    fn a_cut_group_holds_nothing_once_what_it_holds_fills_a_lane() {
        let mut under = vec![held_weight(60_000), held_weight(71_071)];
        release_holds_beyond(&mut under, 131_072);
        assert!(under.iter().all(|b| b.hold));
        let mut at = vec![held_weight(60_000), held_weight(71_072)];
        release_holds_beyond(&mut at, 131_072);
        assert!(at.iter().all(|b| !b.hold));
    }

    /// A chip whose transfers TPU-MLIR estimates as they run.
    const EXACT: Calibration = Calibration {
        cycles_match: true,
        dma_speedup: 1.0,
        load_setup_cycles: 0.0,
        store_setup_cycles: 0.0,
    };

    fn buf(
        kind: BufKind,
        loaded_for: Option<usize>,
        stored_after: Option<usize>,
        dma: i64,
    ) -> GroupBuf {
        GroupBuf {
            kind,
            hold: kind == BufKind::Weight,
            size: 1024,
            loaded_for,
            stored_after,
            dma_cycles: dma,
        }
    }

    fn op(operands: Vec<usize>, result: usize, cycles: i64) -> GroupOp {
        GroupOp {
            operands,
            results: vec![result],
            imm: None,
            inplace: false,
            cycles,
        }
    }

    /// The group of the next two tests: an input for op 0, a weight for op 1 and op 1's
    /// result stored.
    fn two_ops() -> ([GroupBuf; 4], [GroupOp; 2]) {
        let bufs = [
            buf(BufKind::Activation, Some(0), None, 50),
            buf(BufKind::Weight, Some(1), None, 1000),
            buf(BufKind::Activation, None, None, 0),
            buf(BufKind::Activation, None, Some(1), 200),
        ];
        (bufs, [op(vec![0], 2, 100), op(vec![2, 1], 3, 500)])
    }

    /// An input (50 cycles in) for op 0, a weight (1,000) for op 1 and op 1's result
    /// stored (200): TPU-MLIR's rows are op 0 beside the weight's load and the store of
    /// the loop before, then op 1 beside the next loop's input. The weight feeds the
    /// next row, so the rows do not merge: 50 + max(100, 1,200) + 500.
    #[test]
    fn a_row_waits_for_the_longer_of_its_compute_and_its_transfers() {
        let (bufs, ops) = two_ops();
        assert_eq!(
            one_loop_cycles(&bufs, &ops, LANE, &EXACT),
            50.0 + 1200.0 + 500.0
        );
    }

    /// Slices of unequal sizes (TPU-MLIR's N slices, the larger first): alike, they time
    /// as the mean slice; a row's longer side may change from one slice to the next, so
    /// where a weight's load competes with compute they take longer than the mean slice
    /// run twice, and where only compute counts, as long.
    #[test]
    fn unequal_slices_are_timed_each_at_its_size() {
        let (mut bufs, ops) = two_ops();
        let at = |bufs: &[GroupBuf], shares: &[f64]| {
            pipelined_cycles(bufs, &ops, LANE, &EXACT, 2, shares)
        };
        assert_eq!(at(&bufs, &[1.0, 1.0]), at(&bufs, &[]));
        // the weight reloaded in every slice, as a group holding a lane's worth does
        bufs[1].hold = false;
        bufs[1].dma_cycles = 130;
        let uneven = [4.0 / 3.0, 2.0 / 3.0];
        assert!(at(&bufs, &uneven) > at(&bufs, &[]));
        for b in bufs.iter_mut() {
            b.dma_cycles = 0;
        }
        assert_eq!(at(&bufs, &uneven), at(&bufs, &[]));
    }

    /// The group above run in slices: each pass loads one slice's input, computes the
    /// slice before and stores the one before that; the held weight loads once.
    #[test]
    fn slices_overlap_in_the_rows_of_one_loop() {
        let (bufs, ops) = two_ops();
        let one = one_loop_cycles(&bufs, &ops, LANE, &EXACT);
        assert_eq!(pipelined_cycles(&bufs, &ops, LANE, &EXACT, 1, &[]), one);
        // each slice more adds one steady pass, whatever the count
        let at = |s| pipelined_cycles(&bufs, &ops, LANE, &EXACT, s, &[]);
        let step = at(5) - at(4);
        assert!(step > 0.0);
        for s in 5..12 {
            assert_eq!(at(s + 1) - at(s), step, "{s} slices");
        }
        // a steady pass: op 0 beside the store of two slices before, op 1 beside the
        // next slice's input, max(100, 200) + max(500, 50)
        assert_eq!(step, 700.0);
        // never below either engine's work, nor above the slices run one by one
        for s in 1..12u64 {
            let t = at(s);
            assert!(
                t >= (600 * s) as f64 && t <= one * s as f64,
                "{s} slices: {t}"
            );
        }
        // a loop of any size is timed in a few passes, not one a slice
        assert!(at(u64::MAX) > 0.0);
    }

    /// A seeded xorshift: each call a number below its argument.
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |m| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        }
    }

    /// Chains of element-wise ops with loads and stores of every size: a group's time is
    /// never below [`one_loop_floor`] (by which the planner leaves a group untimed),
    /// itself never below its compute or its transfers alone, nor above the two run in
    /// turn.
    #[test]
    fn a_group_takes_between_its_longer_engine_and_both_in_turn() {
        let mut next = xorshift(0x9e37_79b9);
        for _ in 0..300 {
            let k = 2 + next(8) as usize;
            let mut bufs = vec![buf(BufKind::Activation, Some(0), None, next(3000) as i64)];
            let mut ops = Vec::new();
            let mut prev = 0;
            for j in 0..k {
                let mut operands = vec![prev];
                if next(2) == 0 {
                    bufs.push(buf(BufKind::Weight, Some(j), None, next(5000) as i64));
                    operands.push(bufs.len() - 1);
                }
                let stored = (next(3) == 0 || j + 1 == k).then_some(j);
                bufs.push(buf(BufKind::Activation, None, stored, next(3000) as i64));
                prev = bufs.len() - 1;
                ops.push(op(operands, prev, next(4000) as i64));
            }
            let tiu: i64 = ops.iter().map(|o| o.cycles).sum();
            let dma: i64 = bufs
                .iter()
                .filter(|b| b.loaded_for.is_some() || b.stored_after.is_some())
                .map(|b| b.dma_cycles)
                .sum();
            let floor = one_loop_floor(&bufs, &ops);
            assert!(floor >= tiu.max(dma), "the planner's floor {floor}");
            let t = one_loop_cycles(&bufs, &ops, LANE, &EXACT);
            assert!(
                t >= floor as f64 && t <= (tiu + dma) as f64,
                "{t} {floor} {tiu} {dma}"
            );
        }
    }

    /// Random groups (chains of ops that also read any earlier value, with weights and
    /// scratch buffers, any transfer times) on a lane just large enough for
    /// [`room_for_any_placement`]: the allocator, run in TPU-MLIR's time steps, places
    /// every one of them, cut or not; one byte less and the shortcut no longer claims
    /// it. (On 60 % of the lane where the buffers fit side by side, some fail.)
    #[test]
    fn a_lane_with_room_for_any_placement_allocates_without_the_allocator() {
        let mut next = xorshift(0x2545_f491);
        for case in 0..400 {
            let k = 2 + next(10) as usize;
            let sized = |kind, loaded, stored, dma: u64, size: u64| GroupBuf {
                size: 1 + size,
                ..buf(kind, loaded, stored, dma as i64)
            };
            let mut bufs = vec![sized(
                BufKind::Activation,
                Some(0),
                None,
                next(4000),
                next(3000),
            )];
            let mut ops = Vec::new();
            let mut prev = 0;
            let mut values = vec![0];
            for j in 0..k {
                // and any earlier value: lifetimes that span the group
                let earlier = values[next(values.len() as u64) as usize];
                let mut operands = vec![prev, earlier];
                operands.dedup();
                if next(2) == 0 {
                    bufs.push(sized(
                        BufKind::Weight,
                        Some(j),
                        None,
                        next(4000),
                        next(3000),
                    ));
                    operands.push(bufs.len() - 1);
                }
                let stored = (next(3) == 0 || j + 1 == k).then_some(j);
                bufs.push(sized(
                    BufKind::Activation,
                    None,
                    stored,
                    next(4000),
                    next(3000),
                ));
                prev = bufs.len() - 1;
                values.push(prev);
                let mut o = op(operands, prev, next(4000) as i64);
                if next(3) == 0 {
                    bufs.push(sized(BufKind::Operation, None, None, 0, next(3000)));
                    o.imm = Some(bufs.len() - 1);
                }
                o.inplace = next(2) == 0;
                ops.push(o);
            }
            let n = bufs.len() as u64;
            let aligned = |b: &GroupBuf| b.size.div_ceil(LANE.align) * LANE.align;
            let all: u64 = bufs.iter().map(aligned).sum();
            let bytes = bufs
                .iter()
                .map(|b| all - aligned(b) + n * b.size)
                .max()
                .unwrap();
            let lane = Lane { bytes, ..LANE };
            assert!(room_for_any_placement(&bufs, lane), "case {case}");
            let short = Lane {
                bytes: bytes - 1,
                ..LANE
            };
            assert!(!room_for_any_placement(&bufs, short), "case {case}");
            for sliced in [false, true] {
                assert!(
                    allocates_in_steps(&bufs, &ops, lane, sliced, &EXACT),
                    "case {case}, sliced {sliced}: {bufs:?} {ops:?}"
                );
            }
        }
    }
}

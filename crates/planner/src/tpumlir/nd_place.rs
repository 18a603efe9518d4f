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
use super::steps::{lifetimes, move_by_slack, pipeline, step_table};

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

/// Whether TPU-MLIR's allocator finds room for `bufs` used by `ops` (two or more), in
/// one loop or, `sliced`, pipelined over slices (the `hold` weights held throughout).
pub fn allocates(bufs: &[GroupBuf], ops: &[GroupOp], lane: Lane, sliced: bool) -> bool {
    let k = ops.len();
    if k < 2 {
        return true;
    }
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
    let row_cycles: Vec<i64> = (0..table.ops.len())
        .map(|r| ops.get(r).map_or(0, |o| o.cycles))
        .collect();
    let dma_cycles: Vec<i64> = perm.iter().map(|&b| bufs[b].dma_cycles).collect();
    let bytes: Vec<u64> = perm.iter().map(|&b| bufs[b].size).collect();
    move_by_slack(&mut table, &row_cycles, &dma_cycles, &bytes);
    let n = table.ops.len();
    let life = lifetimes(&table, bufs.len());
    let placed: Vec<Buf> = perm
        .iter()
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
        .collect();
    allocate(&placed, &step_table(table), lane, !sliced).is_ok()
}

//! Choosing groups: a dynamic program over cuts of the op sequence into runs of
//! consecutive ops. `best[j]` is the cheapest plan of ops `0..j`; the last piece is
//! either op `j−1` alone (a global op: full global-memory traffic) or a group
//! `i..j` of at least two groupable ops placed by [`Ctx::best`]. Candidates are grown
//! from the tail toward the head (as the spec describes); growth stops at the first
//! length that does not fit at any slicing, at an op that cannot be grouped, or at
//! `max_group_ops`.

use crate::cost::global_cost;
use crate::error::Result;
use crate::group::{groupable, Ctx};

/// One piece of the chosen cut: ops `first..=last`, grouped with a slicing or global.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// A single op run from global memory.
    Global(usize),
    /// A layer group of ops `first..=last` with `(nsecs, hsecs)`.
    Group {
        /// First op.
        first: usize,
        /// Last op (inclusive).
        last: usize,
        /// Batch parts.
        nsecs: u64,
        /// Height parts.
        hsecs: u64,
    },
}

/// The cheapest cut of the whole op sequence.
pub fn search(ctx: &Ctx) -> Result<Vec<Piece>> {
    let g = ctx.graph;
    let n = g.ops.len();
    let bits = ctx.dtype.bits();
    let mut best: Vec<u64> = vec![u64::MAX; n + 1];
    let mut choice: Vec<Piece> = vec![Piece::Global(0); n + 1];
    best[0] = 0;
    let global: Vec<u64> = g.ops.iter().map(|op| global_cost(g, op, bits, ctx.chip.npu_num, &ctx.timing).1).collect();
    for j in 1..=n {
        let last = j - 1;
        best[j] = best[last].saturating_add(global[last]);
        choice[j] = Piece::Global(last);
        if !groupable(&g.ops[last].kind) {
            continue;
        }
        let lo = j.saturating_sub(ctx.opts.max_group_ops);
        let mut skip = 0;
        for first in (lo..last).rev() {
            if !groupable(&g.ops[first].kind) {
                break;
            }
            let Some((a, fit)) = ctx.best_from(first, last, skip, 0)? else { break };
            skip = fit;
            let c = best[first].saturating_add(a.cycles);
            if c < best[j] {
                best[j] = c;
                choice[j] = Piece::Group { first, last, nsecs: a.nsecs, hsecs: a.hsecs };
            }
        }
    }
    let mut pieces = Vec::new();
    let mut j = n;
    while j > 0 {
        let p = choice[j];
        pieces.push(p);
        j = match p {
            Piece::Global(o) => o,
            Piece::Group { first, .. } => first,
        };
    }
    pieces.reverse();
    Ok(pieces)
}

//! Choosing groups: a dynamic program over cuts of the op sequence into runs of
//! consecutive ops. `best[j]` is the cheapest plan of ops `0..j`; the last piece is
//! either op `j−1` alone (a global op: full global-memory traffic) or a group
//! `i..j` of at least two groupable ops (or one that groups alone, see
//! [`crate::group::groups_alone`]) placed by [`Ctx::best`]. Candidates are grown
//! from the tail toward the head (as the spec describes); growth stops after
//! [`GROW_PAST_MISSES`] + 1 lengths in a row that fit at no slicing, at an op that
//! cannot be grouped, or at `max_group_ops`. Plans are compared by cycles, then by
//! global-memory bytes: where
//! our model sees a tie (a global op whose DMA hides under its compute costs what it
//! costs in a group), the cut that moves fewer bytes wins — the chip's compiler runs
//! such an op alone with its load and store exposed (bm1688 ResNet-18: `conv8` alone
//! 139,848 cycles in its profile, 112,896 of them compute), so grouping it is the
//! better choice there too.

use crate::cost::bytes_of;
use crate::ctx::Ctx;
use crate::error::Result;
use crate::group::{groupable, groups_alone};

/// How many lengths in a row a candidate keeps growing that fit at no slicing: with
/// a placer that allocates greedily, a longer group can fit where a shorter one did not (a block
/// freed earlier, another order of placement). ResNet-50 batch 8 on bm1684x, when this
/// was added: 0 → 5,049,762 cycles in our model (5,278,704 compiled), 3 →
/// 4,813,653 (5,135,479).
const GROW_PAST_MISSES: usize = 3;

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
    // (cycles, GMEM bytes) of the best plan of ops 0..j, compared in that order
    let mut best: Vec<(u64, u64)> = vec![(u64::MAX, u64::MAX); n + 1];
    let mut choice: Vec<Piece> = vec![Piece::Global(0); n + 1];
    best[0] = (0, 0);
    let global: Vec<(u64, u64)> = g
        .ops
        .iter()
        .map(|op| {
            let c = ctx.global_cost(op);
            (c.cycles, c.bytes)
        })
        .collect();
    let add = |a: (u64, u64), b: (u64, u64)| (a.0.saturating_add(b.0), a.1.saturating_add(b.1));
    // prefix sums of each op's whole-tensor compute cycles and weight bytes: a group
    // costs at least its compute and the time to load its weights once (lower bound
    // used to skip candidates that cannot beat the best cut found so far)
    let mut comp_prefix = vec![0f64; n + 1];
    let mut wbytes_prefix = vec![0u64; n + 1];
    for (i, op) in g.ops.iter().enumerate() {
        comp_prefix[i + 1] = comp_prefix[i] + ctx.least_op_cycles(op);
        let w: u64 = op
            .weights
            .iter()
            .filter_map(|&w| g.tensors.get(w))
            .map(|t| bytes_of(t.shape.elements().unwrap_or(0), bits))
            .sum();
        wbytes_prefix[i + 1] = wbytes_prefix[i].saturating_add(w);
    }
    for j in 1..=n {
        if let Some(p) = ctx.progress {
            p(j - 1, n);
        }
        let last = j - 1;
        best[j] = add(best[last], global[last]);
        choice[j] = Piece::Global(last);
        if !groupable(&g.ops[last].kind) {
            continue;
        }
        let lo = j.saturating_sub(ctx.opts.max_group_ops);
        let mut misses = 0;
        let from = if groups_alone(&g.ops[last].kind, bits) {
            last + 1
        } else {
            last
        };
        let mut links = Links::default();
        if from == last {
            links.add(&g.ops[last], last);
        }
        for first in (lo..from).rev() {
            if !groupable(&g.ops[first].kind) {
                break;
            }
            // ops that share no tensor with the rest gain nothing from a group (their
            // data never stays on chip); skip such candidates, which also keeps a
            // topology of independent layers linear
            if !links.add(&g.ops[first], first) {
                continue;
            }
            let comp_lb = comp_prefix[j] - comp_prefix[first];
            let dma_lb = (wbytes_prefix[j] - wbytes_prefix[first]) as f64
                / ctx.timing.used.gdma_bytes_per_cycle;
            if best[first].0 as f64 + comp_lb.max(dma_lb) > best[j].0 as f64 {
                continue;
            }
            let Some(a) = ctx.best_with(first, last, 0)? else {
                misses += 1;
                if misses > GROW_PAST_MISSES {
                    break;
                }
                continue;
            };
            misses = 0;
            let c = add(best[first], (a.cycles, a.gmem));
            if c < best[j] {
                best[j] = c;
                choice[j] = Piece::Group {
                    first,
                    last,
                    nsecs: a.nsecs,
                    hsecs: a.hsecs,
                };
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

/// Which ops of a candidate group (grown from its last op towards its first) are
/// linked through the activation tensors they read or write: a union-find over the
/// group's ops.
#[derive(Default)]
struct Links {
    /// A group op that touches each tensor seen so far.
    by_tensor: std::collections::HashMap<usize, usize>,
    /// Union-find parents, by op id.
    parent: std::collections::HashMap<usize, usize>,
    /// Connected components among the ops added.
    components: usize,
}

impl Links {
    fn root(&mut self, mut o: usize) -> usize {
        while let Some(&p) = self.parent.get(&o) {
            if p == o {
                break;
            }
            let gp = self.parent.get(&p).copied().unwrap_or(p);
            self.parent.insert(o, gp);
            o = p;
        }
        o
    }

    /// Add op `id`; whether the ops added so far are one connected group.
    fn add(&mut self, op: &tpusim_graph::Op, id: usize) -> bool {
        self.parent.insert(id, id);
        self.components += 1;
        for &t in op.inputs.iter().chain(&op.outputs) {
            match self.by_tensor.get(&t).copied() {
                Some(other) => {
                    let (a, b) = (self.root(id), self.root(other));
                    if a != b {
                        self.parent.insert(a, b);
                        self.components -= 1;
                    }
                }
                None => {
                    self.by_tensor.insert(t, id);
                }
            }
        }
        self.components == 1
    }
}

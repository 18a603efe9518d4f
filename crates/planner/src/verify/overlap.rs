//! The address rule, shared by the verifier and the search: no two blocks held in a
//! common time step overlap in address, except an element-wise op's result written over
//! its first operand when the two share only that op's step. The pipelined placer
//! checks a placement it did not make itself with [`blocks_apart`] before using it.

use crate::plan::BlockKind;
use crate::timestep::BlockSpec;
use tpusim_graph::Graph;

/// Where a block lies in the lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    /// Lane address.
    pub addr: u64,
    /// Bytes per lane.
    pub size: u64,
}

/// An element-wise op's result allowed over its first operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InPlace {
    /// The operand's block.
    pub operand: usize,
    /// The result's block.
    pub result: usize,
    /// The op's time step.
    pub step: usize,
}

/// Steps `0..=k+1` a block holds, folded when pipelined; a block meeting its own next
/// copy holds every compute step.
pub(crate) fn held_steps(start: u64, end: Option<u64>, k: u64, sliced: bool) -> Vec<bool> {
    let mut v = vec![false; (k + 2) as usize];
    let Some(end) = end else {
        return vec![true; (k + 2) as usize];
    };
    for s in start..=end.min(k + 1) {
        let f = if !sliced {
            s
        } else if s == 0 {
            k
        } else if s == k + 1 {
            1
        } else {
            s
        };
        if v[f as usize] {
            // folded onto itself: the next slice's copy meets this one
            for x in v.iter_mut().take(k as usize + 1).skip(1) {
                *x = true;
            }
        }
        v[f as usize] = true;
    }
    v
}

/// Pairs of blocks (indices) held in a common step whose bytes overlap. Allowed: an
/// element-wise op's result written over its operand 0 (`in_place`) at the same
/// address, no larger, and held together only in that step (the chip's compiler
/// allocates so).
pub(crate) fn clashes(
    held: &[Vec<bool>],
    span: &[Span],
    in_place: &[InPlace],
) -> Vec<(usize, usize)> {
    // held steps as bit words, so that a pair is tested in a few AND operations
    let words: Vec<Vec<u128>> = held
        .iter()
        .map(|h| {
            let mut w = vec![0u128; h.len().div_ceil(128)];
            for (j, &x) in h.iter().enumerate() {
                if x {
                    w[j / 128] |= 1u128 << (j % 128);
                }
            }
            w
        })
        .collect();
    let common = |i: usize, j: usize| -> Vec<u128> {
        words[i].iter().zip(&words[j]).map(|(a, b)| a & b).collect()
    };
    let allowed = |x: usize, y: usize, both: &[u128]| {
        in_place.iter().any(|p| {
            p.operand == x
                && p.result == y
                && span[x].addr == span[y].addr
                && span[y].size <= span[x].size
                && both.iter().enumerate().all(|(w, &m)| {
                    let s = p.step;
                    let own = if s / 128 == w { 1u128 << (s % 128) } else { 0 };
                    m & !own == 0
                })
        })
    };
    let mut out = Vec::new();
    for i in 0..span.len() {
        for j in i + 1..span.len() {
            let (a, b) = (span[i], span[j]);
            if a.size == 0 || b.size == 0 {
                continue;
            }
            let overlap =
                a.addr < b.addr.saturating_add(b.size) && b.addr < a.addr.saturating_add(a.size);
            if !overlap {
                continue;
            }
            let both = common(i, j);
            if both.iter().any(|&m| m != 0) && !allowed(i, j, &both) && !allowed(j, i, &both) {
                out.push((i, j));
            }
        }
    }
    out
}

/// The in-place pairs of the element-wise ops among `k` ops from `first`: `block_of`
/// finds a tensor's block.
pub(crate) fn in_place_pairs(
    g: &Graph,
    first: usize,
    k: usize,
    block_of: impl Fn(usize) -> Option<usize>,
) -> Vec<InPlace> {
    let mut pairs = Vec::new();
    for i in 0..k {
        let Some(op) = g.ops.get(first + i) else {
            continue;
        };
        if !op.is_binary_elementwise() {
            continue;
        }
        let operand = op.inputs.first().and_then(|&t| block_of(t));
        let result = op.outputs.first().and_then(|&t| block_of(t));
        if let (Some(operand), Some(result)) = (operand, result) {
            pairs.push(InPlace {
                operand,
                result,
                step: i + 1,
            });
        }
    }
    pairs
}

/// Whether the blocks of a group starting at op `first` (`k` ops), at `addrs`, pass
/// the verifier's address rule.
pub(crate) fn blocks_apart(
    g: &Graph,
    first: usize,
    blocks: &[BlockSpec],
    addrs: &[u64],
    k: u64,
    sliced: bool,
) -> bool {
    let held: Vec<Vec<bool>> = blocks
        .iter()
        .map(|b| held_steps(b.start, b.end, k, sliced))
        .collect();
    let span: Vec<Span> = blocks
        .iter()
        .zip(addrs)
        .map(|(b, &addr)| Span { addr, size: b.size })
        .collect();
    let act = |t: usize| {
        blocks
            .iter()
            .position(|b| b.tensor == Some(t) && b.kind == BlockKind::Activation)
    };
    let in_place = in_place_pairs(g, first, k as usize, act);
    let fits = blocks
        .iter()
        .zip(addrs)
        .all(|(b, &a)| a.checked_add(b.size).is_some());
    fits && clashes(&held, &span, &in_place).is_empty()
}

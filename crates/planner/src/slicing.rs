//! Slicing a candidate group: N parts first, then H parts, and the backward pass that
//! gives every activation tensor of the group its (n, h) range in every slice.

use crate::range::{backward_h, backward_n, h_half_rule_ok, hull, split, Range};
use tpusim_graph::query::Uses;
use tpusim_graph::{Graph, OpId, OpKind, TensorId};

/// The activation tensors of a group `first..=last`: loaded inputs first (first-use
/// order), then every op output in op order; `pos` maps a tensor id to its index.
#[derive(Debug, Clone)]
pub struct GroupTensors {
    /// First op of the group.
    pub first: OpId,
    /// Last op of the group (inclusive).
    pub last: OpId,
    /// Tensors produced inside the group.
    pub produced: Vec<TensorId>,
    /// Produced tensors that are needed after the group (stored).
    pub escaping: Vec<TensorId>,
    /// Every activation tensor: those loaded from global memory (in first-use order),
    /// then `produced`.
    pub all: Vec<TensorId>,
    /// Tensor id → index in `all`.
    pub pos: TensorPos,
    /// The group holds element-wise ops alone (casts and activations): the backend
    /// lays its tensors over all lanes whatever their channels, in compute
    /// (`cost::OpPart::spread`) and in transfers (`cost::act_dma_cycles`).
    pub spread: bool,
}

/// Tensor id → index in a group's `all` list: a vector indexed by tensor id (the
/// planner looks these up in its innermost loops, where hashing cost a fifth of the
/// planning time at large batch sizes).
#[derive(Debug, Clone, Default)]
pub struct TensorPos(Vec<usize>);

impl TensorPos {
    /// Index of tensor `t` in `all`, if it is a tensor of the group.
    pub fn get(&self, t: &TensorId) -> Option<&usize> {
        self.0.get(*t).filter(|&&p| p != usize::MAX)
    }
}

impl std::ops::Index<&TensorId> for TensorPos {
    type Output = usize;

    /// Index of tensor `t` in `all` (`t` must be a tensor of the group).
    fn index(&self, t: &TensorId) -> &usize {
        self.get(t)
            .unwrap_or_else(|| panic!("tensor {t} is not in the group"))
    }
}

impl GroupTensors {
    /// Collect the tensors of ops `first..=last`.
    pub fn new(graph: &Graph, uses: &Uses, first: OpId, last: OpId) -> GroupTensors {
        let inputs = uses.group_inputs(graph, first, last);
        let mut produced = Vec::new();
        let mut escaping = Vec::new();
        for op in graph.ops.iter().take(last + 1).skip(first) {
            for &t in &op.outputs {
                if !produced.contains(&t) {
                    produced.push(t);
                    // dead outputs (no consumer at all) are stored too: never dropped
                    let dead = uses.consumers.get(t).map_or(true, |c| c.is_empty());
                    if uses.escapes(t, first, last) || dead {
                        escaping.push(t);
                    }
                }
            }
        }
        let all: Vec<TensorId> = inputs.iter().chain(produced.iter()).copied().collect();
        let mut pos = vec![usize::MAX; all.iter().max().map_or(0, |&m| m + 1)];
        for (i, &t) in all.iter().enumerate() {
            pos[t] = i;
        }
        let pos = TensorPos(pos);
        let spread = crate::timestep::is_small_c_group(graph, first..=last);
        GroupTensors {
            first,
            last,
            produced,
            escaping,
            all,
            pos,
            spread,
        }
    }
}

/// Ranges of one slice: `(n range, h range)` per tensor of [`GroupTensors::all`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceRanges {
    /// N part index.
    pub n_idx: u64,
    /// H part index.
    pub h_idx: u64,
    /// `(n, h)` per tensor, indexed like `GroupTensors::all`.
    pub ranges: Vec<(Range, Range)>,
}

/// Why a slicing was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SliceRefusal {
    /// More parts than rows/batches of an output (a part would be empty).
    TooManyParts,
    /// A global pooling op cannot be cut along H.
    GlobalPoolCutH,
    /// The h/2 rule failed for the named tensor.
    HalfRule(TensorId),
    /// A tensor ended up with an empty range in some slice.
    Empty(TensorId),
}

/// The own part of a stored tensor in slice (ni, hi): `split(N)` × `split(H)`.
pub fn own_part(
    graph: &Graph,
    t: TensorId,
    nsecs: u64,
    hsecs: u64,
    ni: u64,
    hi: u64,
) -> Option<(Range, Range)> {
    let s = graph.tensors.get(t)?.shape;
    Some((split(s.n, nsecs, ni)?, split(s.h, hsecs, hi)?))
}

/// A group cut into `nsecs × hsecs` slices, held by axis: slice (ni, hi) gives every
/// tensor the N range of part `ni` and the H range of part `hi`. Deciding whether a
/// slicing fits needs only the first slice and each tensor's largest extents, so the
/// `nsecs × hsecs` slices themselves are made ([`Slicing::slices`]) only for slicings
/// that fit: a batch of 1,024 cut one sample a slice, tried with ever more H parts,
/// would otherwise build millions of slices that are thrown away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slicing {
    /// Batch parts.
    pub nsecs: u64,
    /// Height parts.
    pub hsecs: u64,
    /// Per N part, every tensor's N range (indexed like `GroupTensors::all`).
    n_parts: Vec<Vec<Range>>,
    /// Per H part, every tensor's H range.
    h_parts: Vec<Vec<Range>>,
}

impl Slicing {
    /// More than one slice: the group is pipelined over its slices.
    pub fn is_sliced(&self) -> bool {
        self.nsecs.saturating_mul(self.hsecs) > 1
    }

    /// Slice (ni, hi).
    pub fn slice(&self, ni: usize, hi: usize) -> SliceRanges {
        SliceRanges {
            n_idx: ni as u64,
            h_idx: hi as u64,
            ranges: self.n_parts[ni]
                .iter()
                .zip(&self.h_parts[hi])
                .map(|(&n, &h)| (n, h))
                .collect(),
        }
    }

    /// Every tensor's H range in H part `hi`, indexed like `GroupTensors::all`.
    pub fn h_ranges(&self, hi: usize) -> &[Range] {
        &self.h_parts[hi]
    }

    /// The first slice, (0, 0): the largest part on both axes.
    pub fn first(&self) -> SliceRanges {
        self.slice(0, 0)
    }

    /// Every tensor's largest (n, h) extent over the slices, indexed like
    /// `GroupTensors::all`.
    pub fn extents(&self) -> Vec<(u64, u64)> {
        let widest = |parts: &[Vec<Range>]| -> Vec<u64> {
            let mut w = vec![0u64; parts.first().map_or(0, Vec::len)];
            for p in parts {
                for (x, r) in w.iter_mut().zip(p) {
                    *x = (*x).max(r[1] - r[0]);
                }
            }
            w
        };
        widest(&self.n_parts)
            .into_iter()
            .zip(widest(&self.h_parts))
            .collect()
    }

    /// Which N parts and which H parts cost alike: parts whose every tensor has a range
    /// of the same length, and an own part of the same length, get one class. Every
    /// cost of a slice (compute, transfers, bytes) depends on those lengths only, so a
    /// batch cut into 1,024 one-sample parts is one class (two when the cut is uneven).
    pub fn part_classes(&self, graph: &Graph, gt: &GroupTensors) -> PartClasses {
        let classes = |parts: &[Vec<Range>], own: &dyn Fn(TensorId, u64) -> Option<Range>| {
            let mut ids: std::collections::HashMap<Vec<u64>, usize> = Default::default();
            parts
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let key: Vec<u64> = p
                        .iter()
                        .map(|r| r[1] - r[0])
                        .chain(
                            gt.all
                                .iter()
                                .map(|&t| own(t, i as u64).map_or(u64::MAX, |r| r[1] - r[0])),
                        )
                        .collect();
                    let next = ids.len();
                    *ids.entry(key).or_insert(next)
                })
                .collect()
        };
        let shape = |t: TensorId| graph.tensors[t].shape;
        PartClasses {
            n: classes(&self.n_parts, &|t, i| split(shape(t).n, self.nsecs, i)),
            h: classes(&self.h_parts, &|t, i| split(shape(t).h, self.hsecs, i)),
        }
    }

    /// Every slice, N part by N part, H parts within each.
    pub fn slices(&self) -> Vec<SliceRanges> {
        (0..self.n_parts.len())
            .flat_map(|ni| (0..self.h_parts.len()).map(move |hi| self.slice(ni, hi)))
            .collect()
    }
}

/// The cost class of every N part and every H part of a [`Slicing`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartClasses {
    /// Class of each N part.
    pub n: Vec<usize>,
    /// Class of each H part.
    pub h: Vec<usize>,
}

/// Backward slicing of group `gt` into `nsecs × hsecs` slices. For each slice, stored
/// tensors get their own part; going from the last op to the first, each op's output
/// range is the hull of its consumers' needs and its own part (when the tensor has one
/// per slice: at least as many rows as H parts), and its inputs get the backward ranges
/// of that output range.
pub fn slice_group(
    graph: &Graph,
    gt: &GroupTensors,
    nsecs: u64,
    hsecs: u64,
    h_half_rule: bool,
    memo: &mut NPartsMemo,
) -> Result<Slicing, SliceRefusal> {
    if nsecs == 0 || hsecs == 0 {
        return Err(SliceRefusal::TooManyParts);
    }
    if hsecs > 1 {
        for op in graph.ops.iter().take(gt.last + 1).skip(gt.first) {
            if matches!(op.kind, OpKind::GlobalAvgPool | OpKind::GlobalMaxPool) {
                return Err(SliceRefusal::GlobalPoolCutH);
            }
        }
    }
    // every stored tensor gets one own part per slice: refuse impossible counts before
    // allocating anything (a cache file may ask for any number)
    for &t in &gt.escaping {
        let s = graph.tensors[t].shape;
        if nsecs == 0 || hsecs == 0 || nsecs > s.n || hsecs > s.h {
            return Err(SliceRefusal::TooManyParts);
        }
    }
    // The two axes are independent: which tensors have a range depends only on the part
    // counts (`split` refuses a count, never an index), hulls are taken per axis, and
    // the backward N and H ranges each read only their own axis. So slice (ni, hi) is
    // N ranges of part ni × H ranges of part hi: (nsecs + hsecs) backward passes
    // instead of nsecs × hsecs.
    let n_parts = memo.n_parts(graph, gt, nsecs, hsecs)?;
    let h_parts = (0..hsecs)
        .map(|hi| slice_demand(graph, gt, nsecs, hsecs, 0, hi))
        .collect::<Result<Vec<_>, _>>()?;
    let non_empty = |r: &Range| r[1] > r[0];
    let n_ok = n_parts
        .iter()
        .all(|d| d.iter().all(|r| r.is_some_and(|r| non_empty(&r))));
    let h_ok = h_parts
        .iter()
        .all(|d| d.iter().all(|r| r.is_some_and(|r| non_empty(&r.1))));
    if !(n_ok && h_ok) {
        // some slice has an empty range: name the first one as the slice-by-slice
        // pass finds it
        return Err(first_empty(graph, gt, nsecs, hsecs));
    }
    // the H ranges are the same in every N part: check the h/2 rule on one
    if h_half_rule && hsecs > 1 {
        for (i, &t) in gt.all.iter().enumerate() {
            let h = graph.tensors[t].shape.h;
            let hs: Vec<Range> = h_parts.iter().filter_map(|d| d[i].map(|r| r.1)).collect();
            if !h_half_rule_ok(&hs, h) {
                return Err(SliceRefusal::HalfRule(t));
            }
        }
    }
    Ok(Slicing {
        nsecs,
        hsecs,
        n_parts: n_parts
            .iter()
            .map(|d| d.iter().flatten().copied().collect())
            .collect(),
        h_parts: h_parts
            .into_iter()
            .map(|d| d.into_iter().flatten().map(|r| r.1).collect())
            .collect(),
    })
}

/// The N ranges of every N part of one group (`None` where no op of the group needs a
/// tensor), kept while only the H count changes. They depend on the H count only
/// through which tensors are cut at all (those at least `hsecs` rows high have an own
/// part): a run of H counts at one N count, as [`crate::ctx::Ctx::best_with`] tries
/// them, computes them once per such set rather than once per count, which at a batch
/// of 1,024 cut one sample a part was most of the planning time.
#[derive(Debug, Default)]
pub struct NPartsMemo {
    /// (N count, tensors shorter than the H count) the parts were computed for.
    key: Option<(u64, usize)>,
    /// The parts, or why the N count was refused.
    parts: Option<Result<Vec<Vec<Option<Range>>>, SliceRefusal>>,
}

impl NPartsMemo {
    /// The N parts of `gt` cut `nsecs × hsecs`: from the memo when only the H count
    /// changed and no tensor became too short to be cut.
    fn n_parts(
        &mut self,
        graph: &Graph,
        gt: &GroupTensors,
        nsecs: u64,
        hsecs: u64,
    ) -> Result<&[Vec<Option<Range>>], SliceRefusal> {
        let short = gt
            .all
            .iter()
            .filter(|&&t| graph.tensors[t].shape.h < hsecs)
            .count();
        if self.key != Some((nsecs, short)) || self.parts.is_none() {
            let parts = (0..nsecs)
                .map(|ni| {
                    slice_demand(graph, gt, nsecs, hsecs, ni, 0)
                        .map(|d| d.into_iter().map(|r| r.map(|r| r.0)).collect())
                })
                .collect::<Result<Vec<_>, _>>();
            self.key = Some((nsecs, short));
            self.parts = Some(parts);
        }
        match self.parts.as_ref() {
            Some(Ok(p)) => Ok(p),
            Some(Err(e)) => Err(e.clone()),
            None => unreachable!("set above"),
        }
    }
}

/// The backward pass of one slice (ni, hi): every tensor's (n, h) range, `None` where
/// no op of the group needs it.
fn slice_demand(
    graph: &Graph,
    gt: &GroupTensors,
    nsecs: u64,
    hsecs: u64,
    ni: u64,
    hi: u64,
) -> Result<Vec<Option<(Range, Range)>>, SliceRefusal> {
    let mut demand: Vec<Option<(Range, Range)>> = vec![None; gt.all.len()];
    for &t in &gt.escaping {
        let own = own_part(graph, t, nsecs, hsecs, ni, hi).ok_or(SliceRefusal::TooManyParts)?;
        demand[gt.pos[&t]] = Some(own);
    }
    for op in graph.ops[gt.first..=gt.last].iter().rev() {
        let Some(&o) = op.outputs.first() else {
            continue;
        };
        let Some(oi) = gt.pos.get(&o).copied() else {
            continue;
        };
        // every output also covers its own part, so the slices cover the whole
        // tensor even where no consumer reads some rows (a 3×3 stride-2 conv
        // without padding never reads the last row of an even-height input)
        if let Some(own) = own_part(graph, o, nsecs, hsecs, ni, hi) {
            demand[oi] = Some(hull(demand[oi], own));
        }
        let Some(r) = demand[oi] else {
            return Err(SliceRefusal::Empty(o));
        };
        let out_shape = graph.tensors[o].shape;
        for &u in &op.inputs {
            let Some(&ui) = gt.pos.get(&u) else { continue };
            let in_shape = graph.tensors[u].shape;
            let need = (
                backward_n(r.0, in_shape.n, out_shape.n),
                backward_h(&op.kind, r.1, in_shape.h, out_shape.h),
            );
            demand[ui] = Some(hull(demand[ui], need));
        }
    }
    Ok(demand)
}

/// The refusal of the first slice, in (ni, hi) order, with an empty range: its first
/// tensor without one.
fn first_empty(graph: &Graph, gt: &GroupTensors, nsecs: u64, hsecs: u64) -> SliceRefusal {
    for ni in 0..nsecs {
        for hi in 0..hsecs {
            let demand = match slice_demand(graph, gt, nsecs, hsecs, ni, hi) {
                Ok(d) => d,
                Err(e) => return e,
            };
            for (i, d) in demand.into_iter().enumerate() {
                match d {
                    Some(r) if r.0[1] > r.0[0] && r.1[1] > r.1[0] => {}
                    _ => return SliceRefusal::Empty(gt.all[i]),
                }
            }
        }
    }
    SliceRefusal::TooManyParts
}

/// Rows computed more than once: for every produced tensor and N part, Σ h lengths −
/// height (never negative).
pub fn recomputed_rows(
    graph: &Graph,
    gt: &GroupTensors,
    slices: &[SliceRanges],
    nsecs: u64,
) -> u64 {
    let mut total = 0u64;
    let mut sums = vec![0u64; nsecs as usize];
    for &t in &gt.produced {
        let i = gt.pos[&t];
        let h = graph.tensors[t].shape.h;
        sums.iter_mut().for_each(|s| *s = 0);
        for s in slices {
            if let Some(sum) = sums.get_mut(s.n_idx as usize) {
                *sum += s.ranges[i].1[1] - s.ranges[i].1[0];
            }
        }
        for sum in &sums {
            total = total.saturating_add(sum.saturating_sub(h));
        }
    }
    total
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The slice-by-slice backward pass as it was written before the axes were
    /// separated: every (ni, hi) walked on its own, the h/2 rule checked in every N part.
    fn naive(
        graph: &Graph,
        gt: &GroupTensors,
        nsecs: u64,
        hsecs: u64,
        h_half_rule: bool,
    ) -> Result<Vec<SliceRanges>, SliceRefusal> {
        if hsecs > 1
            && graph.ops[gt.first..=gt.last]
                .iter()
                .any(|op| matches!(op.kind, OpKind::GlobalAvgPool | OpKind::GlobalMaxPool))
        {
            return Err(SliceRefusal::GlobalPoolCutH);
        }
        for &t in &gt.escaping {
            let s = graph.tensors[t].shape;
            if nsecs > s.n || hsecs > s.h {
                return Err(SliceRefusal::TooManyParts);
            }
        }
        let mut out = Vec::new();
        for ni in 0..nsecs {
            for hi in 0..hsecs {
                let demand = slice_demand(graph, gt, nsecs, hsecs, ni, hi)?;
                let mut ranges = Vec::new();
                for (i, d) in demand.into_iter().enumerate() {
                    match d {
                        Some(r) if r.0[1] > r.0[0] && r.1[1] > r.1[0] => ranges.push(r),
                        _ => return Err(SliceRefusal::Empty(gt.all[i])),
                    }
                }
                out.push(SliceRanges {
                    n_idx: ni,
                    h_idx: hi,
                    ranges,
                });
            }
        }
        if h_half_rule && hsecs > 1 {
            for (i, &t) in gt.all.iter().enumerate() {
                for ni in 0..nsecs {
                    let hs: Vec<Range> = out
                        .iter()
                        .filter(|s| s.n_idx == ni)
                        .map(|s| s.ranges[i].1)
                        .collect();
                    if !h_half_rule_ok(&hs, graph.tensors[t].shape.h) {
                        return Err(SliceRefusal::HalfRule(t));
                    }
                }
            }
        }
        Ok(out)
    }

    #[test]
    fn separated_axes_equal_the_slice_by_slice_pass() {
        for (model, batch, res) in [("resnet18", 4, 64), ("mobilenetv2", 3, 32)] {
            let g = tpusim_graph::load(model, batch, (res, res)).unwrap();
            let uses = Uses::new(&g);
            let n = g.ops.len();
            let (mut compared, mut sliced_ok) = (0, 0);
            for first in (0..n).step_by(3) {
                for len in [1, 2, 5, 9] {
                    let last = (first + len - 1).min(n - 1);
                    let gt = GroupTensors::new(&g, &uses, first, last);
                    if gt.escaping.is_empty() {
                        continue;
                    }
                    for (ns, hs) in [(1, 1), (2, 1), (3, 2), (4, 3), (1, 7), (2, 64)] {
                        for rule in [false, true] {
                            let fast =
                                slice_group(&g, &gt, ns, hs, rule, &mut NPartsMemo::default())
                                    .map(|s| s.slices());
                            let slow = naive(&g, &gt, ns, hs, rule);
                            assert_eq!(fast, slow, "{model} ops {first}..={last} at {ns}x{hs}");
                            compared += 1;
                            sliced_ok += usize::from(ns > 1 && hs > 1 && fast.is_ok());
                        }
                    }
                }
            }
            assert!(compared > 100 && sliced_ok > 20, "{compared} {sliced_ok}");
        }
    }

    #[test]
    fn n_parts_kept_across_h_counts_equal_fresh_ones() {
        let g = tpusim_graph::load("resnet18", 5, (64, 64)).unwrap();
        let uses = Uses::new(&g);
        let mut reused = 0;
        for first in (0..g.ops.len()).step_by(2) {
            let last = (first + 4).min(g.ops.len() - 1);
            let gt = GroupTensors::new(&g, &uses, first, last);
            if gt.escaping.is_empty() {
                continue;
            }
            let mut memo = NPartsMemo::default();
            for (ns, hs) in slicing_sequence(5, 64) {
                let before = memo.key;
                let kept = slice_group(&g, &gt, ns, hs, true, &mut memo);
                let fresh = slice_group(&g, &gt, ns, hs, true, &mut NPartsMemo::default());
                assert_eq!(kept, fresh, "ops {first}..={last} at {ns}x{hs}");
                reused += usize::from(before == memo.key);
            }
        }
        assert!(reused > 50, "{reused}");
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

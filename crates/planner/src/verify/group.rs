//! One group's checks, one function per invariant, each reading the facts
//! [`Facts`] derives independently from the plan's graph.

use super::overlap::{clashes, held_steps, in_place_pairs, Span};
use crate::plan::{BlockKind, GroupPlan, Plan, TimeStep};
use crate::range::{backward_h, backward_n, hull, split, Range};
use crate::timestep::{
    is_small_c_group, lane_size, small_c_dims, tensor_type, weight_block_size, wide_bias,
};
use std::collections::{HashMap, HashSet};
use tpusim_graph::query::Uses;
use tpusim_graph::{Graph, TensorKind};
use tpusim_layout::ElementType;
use tpusim_lmem::Chip;

/// Violations found, in the order found.
type Violations = Vec<String>;

/// The plan and chip a group is checked against.
pub(super) struct Setting<'a> {
    /// The whole plan.
    pub plan: &'a Plan,
    /// The chip.
    pub chip: &'a Chip,
    /// The plan's element type.
    pub dtype: ElementType,
    /// The plan's graph.
    pub graph: &'a Graph,
    /// Its producers and consumers.
    pub uses: &'a Uses,
    /// Op ids by name.
    pub op_id: &'a HashMap<&'a str, usize>,
}

/// Check one group; the violations found, if any.
pub(super) fn check_group(set: &Setting<'_>, gr: &GroupPlan) -> Result<(), Violations> {
    let ids = op_ids(set, gr)?;
    let k = ids.len() as u64;
    step_count(gr, k)?;
    let mut e = step_order(gr, k);
    slice_count(gr)?;
    e.extend(slice_indices(gr));
    let f = Facts::new(set, gr, ids);
    let extents = f.slice_ranges(&mut e);
    f.coverage(&extents.all, &mut e);
    let by_name = f.block_records(&mut e);
    f.moved_blocks_known(&by_name, &mut e);
    f.activation_blocks(&by_name, &extents.largest, &mut e);
    f.weight_blocks(&by_name, &mut e);
    f.overlaps(&by_name, &mut e);
    f.peak(&mut e);
    if e.is_empty() {
        Ok(())
    } else {
        Err(e)
    }
}

/// The group's op ids: known, and consecutive in graph order.
fn op_ids(set: &Setting<'_>, gr: &GroupPlan) -> Result<Vec<usize>, Violations> {
    let ids: Vec<usize> = gr
        .ops
        .iter()
        .filter_map(|n| set.op_id.get(n.as_str()).copied())
        .collect();
    if ids.len() != gr.ops.len() || ids.is_empty() {
        return Err(vec!["names unknown ops".into()]);
    }
    let first = ids[0];
    if ids.iter().enumerate().any(|(i, &o)| o != first + i) {
        return Err(vec!["ops are not consecutive in graph order".into()]);
    }
    Ok(ids)
}

/// `k` ops have `k + 2` time steps.
fn step_count(gr: &GroupPlan, k: u64) -> Result<(), Violations> {
    if gr.timesteps.len() as u64 != k + 2 {
        return Err(vec![format!(
            "{} time steps for {k} ops (expected {})",
            gr.timesteps.len(),
            k + 2
        )]);
    }
    Ok(())
}

/// Step `j` (1..=k) computes op `j − 1`; the first and last steps compute nothing.
fn step_order(gr: &GroupPlan, k: u64) -> Violations {
    let mut e = Vec::new();
    for (j, ts) in gr.timesteps.iter().enumerate() {
        let want = if j >= 1 && j as u64 <= k {
            Some(&gr.ops[j - 1])
        } else {
            None
        };
        if ts.compute.as_ref() != want {
            e.push(format!(
                "time step {j} computes {:?}, expected {:?}",
                ts.compute, want
            ));
        }
    }
    e
}

/// The slices are exactly `nsecs × hsecs`, both at least 1.
fn slice_count(gr: &GroupPlan) -> Result<(), Violations> {
    if gr.nsecs == 0 || gr.hsecs == 0 {
        return Err(vec![format!(
            "nsecs {} / hsecs {} must be at least 1",
            gr.nsecs, gr.hsecs
        )]);
    }
    let nslices = gr.nsecs.saturating_mul(gr.hsecs);
    if gr.slices.len() as u64 != nslices {
        return Err(vec![format!(
            "{} slices, expected nsecs × hsecs = {nslices}",
            gr.slices.len()
        )]);
    }
    Ok(())
}

/// Every slice index is in range and appears once.
fn slice_indices(gr: &GroupPlan) -> Violations {
    let mut e = Vec::new();
    let mut idx = HashSet::new();
    for s in &gr.slices {
        if s.n_idx >= gr.nsecs || s.h_idx >= gr.hsecs || !idx.insert((s.n_idx, s.h_idx)) {
            e.push(format!(
                "slice index ({}, {}) out of range or repeated",
                s.n_idx, s.h_idx
            ));
        }
    }
    e
}

/// What the slices give each tensor: its largest extent (n, h) and every range.
struct Extents {
    largest: HashMap<usize, (u64, u64)>,
    all: HashMap<usize, Vec<(Range, Range)>>,
}

/// A group's facts, derived from the graph, that the checks read.
struct Facts<'a> {
    set: &'a Setting<'a>,
    gr: &'a GroupPlan,
    g: &'a Graph,
    ids: Vec<usize>,
    first: usize,
    last: usize,
    k: u64,
    sliced: bool,
    /// Every activation tensor an op of the group reads or writes, in first-touch order.
    acts: Vec<usize>,
}

impl<'a> Facts<'a> {
    fn new(set: &'a Setting<'a>, gr: &'a GroupPlan, ids: Vec<usize>) -> Facts<'a> {
        let g = set.graph;
        let mut acts: Vec<usize> = Vec::new();
        for &o in &ids {
            for &t in g.ops[o].inputs.iter().chain(&g.ops[o].outputs) {
                if !acts.contains(&t) {
                    acts.push(t);
                }
            }
        }
        Facts {
            set,
            gr,
            g,
            first: ids[0],
            last: ids[ids.len() - 1],
            k: ids.len() as u64,
            sliced: gr.nsecs.saturating_mul(gr.hsecs) > 1,
            ids,
            acts,
        }
    }

    fn step_of(&self, o: usize) -> u64 {
        (o - self.first) as u64 + 1
    }

    /// The group's op producing `t`, if any.
    fn produced(&self, t: usize) -> Option<usize> {
        self.set
            .uses
            .producer
            .get(t)
            .copied()
            .flatten()
            .filter(|&p| (self.first..=self.last).contains(&p))
    }

    /// Whether `t` is produced here and needed after the group (or is a graph output).
    fn stored(&self, t: usize) -> bool {
        let uses = self.set.uses;
        self.produced(t).is_some()
            && (uses.escapes(t, self.first, self.last)
                || uses.consumers.get(t).map_or(true, |c| c.is_empty()))
    }

    /// The group's ops reading `t`.
    fn consumers(&self, t: usize) -> Vec<usize> {
        (self.first..=self.last)
            .filter(|&o| self.g.ops[o].inputs.contains(&t))
            .collect()
    }

    /// Steps whose `list` (loads or stores) names `name`.
    fn steps_moving(&self, list: fn(&TimeStep) -> &Vec<String>, name: &str) -> Vec<u64> {
        self.gr
            .timesteps
            .iter()
            .enumerate()
            .filter(|(_, ts)| list(ts).iter().any(|x| x == name))
            .map(|(j, _)| j as u64)
            .collect()
    }

    /// Every tensor's range in every slice is in its shape and is the backward range
    /// of its consumers in the group (the hull, plus its own part when produced here).
    fn slice_ranges(&self, e: &mut Violations) -> Extents {
        let (g, gr) = (self.g, self.gr);
        let mut ext = Extents {
            largest: HashMap::new(),
            all: HashMap::new(),
        };
        let mut tensor_named: HashMap<&str, usize> = HashMap::new();
        for (i, t) in g.tensors.iter().enumerate() {
            tensor_named.entry(t.name.as_str()).or_insert(i);
        }
        for s in &gr.slices {
            let mut r: HashMap<usize, (Range, Range)> = HashMap::new();
            for tr in &s.tensors {
                match tensor_named.get(tr.tensor.as_str()).copied() {
                    Some(t) => {
                        r.insert(t, (tr.n, tr.h));
                    }
                    None => e.push(format!("slice names unknown tensor '{}'", tr.tensor)),
                }
            }
            for &t in &self.acts {
                let Some(&(n, h)) = r.get(&t) else {
                    e.push(format!(
                        "slice ({}, {}) has no range for tensor '{}'",
                        s.n_idx, s.h_idx, g.tensors[t].name
                    ));
                    continue;
                };
                let sh = g.tensors[t].shape;
                if n[0] >= n[1] || h[0] >= h[1] || n[1] > sh.n || h[1] > sh.h {
                    e.push(format!(
                        "tensor '{}' range n {:?} h {:?} is empty or outside {}",
                        g.tensors[t].name, n, h, sh
                    ));
                    continue;
                }
                let m = ext.largest.entry(t).or_insert((0, 0));
                *m = (m.0.max(n[1] - n[0]), m.1.max(h[1] - h[0]));
                ext.all.entry(t).or_default().push((n, h));
                // backward: hull over consumers in the group, plus own part when
                // produced here (required when stored)
                let mut want: Option<(Range, Range)> = None;
                if self.produced(t).is_some() {
                    match (
                        split(sh.n, gr.nsecs, s.n_idx),
                        split(sh.h, gr.hsecs, s.h_idx),
                    ) {
                        (Some(a), Some(b)) => want = Some((a, b)),
                        _ if !self.stored(t) => {}
                        _ => e.push(format!(
                            "stored tensor '{}' ({sh}) cannot be cut into {}×{} parts",
                            g.tensors[t].name, gr.nsecs, gr.hsecs
                        )),
                    }
                }
                for o in self.consumers(t) {
                    let op = &g.ops[o];
                    let y = op.outputs[0];
                    let Some(&(yn, yh)) = r.get(&y) else { continue };
                    let ys = g.tensors[y].shape;
                    want = Some(hull(
                        want,
                        (
                            backward_n(yn, sh.n, ys.n),
                            backward_h(&op.kind, yh, sh.h, ys.h),
                        ),
                    ));
                }
                if let Some(w) = want {
                    if w != (n, h) {
                        e.push(format!(
                            "slice ({}, {}): tensor '{}' has n {:?} h {:?}, but its consumers need n {:?} h {:?}",
                            s.n_idx, s.h_idx, g.tensors[t].name, n, h, w.0, w.1
                        ));
                    }
                }
            }
        }
        ext
    }

    /// Every op's output slices cover its whole output.
    fn coverage(&self, all: &HashMap<usize, Vec<(Range, Range)>>, e: &mut Violations) {
        for &t in &self.acts {
            if self.produced(t).is_none() {
                continue;
            }
            let sh = self.g.tensors[t].shape;
            let rs = all.get(&t).cloned().unwrap_or_default();
            let mut ns: Vec<Range> = rs.iter().map(|r| r.0).collect();
            let mut ok = covers(&mut ns, sh.n);
            // the H ranges of each N part, gathered in one pass (a batch of 1,024 cut one
            // sample a part made the pass per part quadratic)
            let mut by_n_part: HashMap<Range, Vec<Range>> = HashMap::new();
            for r in &rs {
                by_n_part.entry(r.0).or_default().push(r.1);
            }
            for hs in by_n_part.values_mut() {
                ok &= covers(hs, sh.h);
            }
            if !ok {
                e.push(format!(
                    "the slices of '{}' do not cover its output {sh}",
                    self.g.tensors[t].name
                ));
            }
        }
    }

    /// Each block once, EU-aligned, inside the lane, with a lifetime inside the steps;
    /// only the weights of a sliced group resident. Returns the blocks by name.
    fn block_records(&self, e: &mut Violations) -> HashMap<&'a str, usize> {
        let (plan, gr, k) = (self.set.plan, self.gr, self.k);
        let mut by_name: HashMap<&str, usize> = HashMap::new();
        for (i, b) in gr.blocks.iter().enumerate() {
            if by_name.insert(b.name.as_str(), i).is_some() {
                e.push(format!("block '{}' appears twice", b.name));
            }
            if b.addr % plan.eu_bytes.max(1) != 0 {
                e.push(format!(
                    "block '{}' at {} is not EU_BYTES ({}) aligned",
                    b.name, b.addr, plan.eu_bytes
                ));
            }
            if b.addr
                .checked_add(b.size)
                .map_or(true, |end| end > plan.lane_bytes)
            {
                e.push(format!(
                    "block '{}' [{}, +{}) exceeds the lane ({} bytes)",
                    b.name, b.addr, b.size, plan.lane_bytes
                ));
            }
            if b.start_ts > k + 1 || b.end_ts.is_some_and(|x| x < b.start_ts || x > k + 1) {
                e.push(format!(
                    "block '{}' lifetime [{}, {:?}] is outside steps 0..={}",
                    b.name,
                    b.start_ts,
                    b.end_ts,
                    k + 1
                ));
            }
            if b.end_ts.is_none() && !(b.kind == BlockKind::Weight && self.sliced) {
                e.push(format!(
                    "block '{}' is resident but only weights of sliced groups may be",
                    b.name
                ));
            }
        }
        by_name
    }

    /// Every block a step loads or stores exists.
    fn moved_blocks_known(&self, by_name: &HashMap<&str, usize>, e: &mut Violations) {
        for ts in &self.gr.timesteps {
            for n in ts.loads.iter().chain(&ts.stores) {
                if !by_name.contains_key(n.as_str()) {
                    e.push(format!("time step moves unknown block '{n}'"));
                }
            }
        }
    }

    /// Every activation has a block as large as its largest slice; a loaded one is
    /// loaded before its first use and held until its last; a produced one is held from
    /// its production through its uses, and stored after it while held when it leaves.
    fn activation_blocks(
        &self,
        by_name: &HashMap<&str, usize>,
        largest: &HashMap<usize, (u64, u64)>,
        e: &mut Violations,
    ) {
        let (g, chip, dtype) = (self.g, self.set.chip, self.set.dtype);
        // a group of element-wise ops alone holds its tensors over every lane
        // (TPU-MLIR's GROUP_SMALL_C)
        let spread = is_small_c_group(g, self.ids.iter().copied());
        for &t in &self.acts {
            let ty = tensor_type(g, t, dtype);
            let lane = |n: u64, c: u64, h: u64, w: u64| {
                let (n, c, h, w) = if spread {
                    small_c_dims(n, c, h, w, chip.npu_num)
                } else {
                    (n, c, h, w)
                };
                lane_size(chip, ty, n, c, h, w).ok()
            };
            let name = g.tensors[t].name.as_str();
            let Some(&bi) = by_name.get(name) else {
                e.push(format!("tensor '{name}' has no block"));
                continue;
            };
            let b = &self.gr.blocks[bi];
            let sh = g.tensors[t].shape;
            if let Some(&(mn, mh)) = largest.get(&t) {
                if let Some(need) = lane(mn, sh.c, mh, sh.w) {
                    if b.size < need {
                        e.push(format!(
                            "block '{name}' has {} bytes/lane, its largest slice needs {need}",
                            b.size
                        ));
                    }
                }
            }
            let uses_at: Vec<u64> = self
                .consumers(t)
                .into_iter()
                .map(|o| self.step_of(o))
                .collect();
            let last_use = uses_at.iter().copied().max();
            let end = b.end_ts.unwrap_or(u64::MAX);
            match self.produced(t) {
                None => {
                    let loads = self.steps_moving(|ts| &ts.loads, name);
                    let first_use = uses_at.iter().copied().min().unwrap_or(0);
                    match loads.first() {
                        Some(&l) if l < first_use && b.start_ts <= l => {}
                        _ => e.push(format!("input '{name}' is not loaded (inside its block's lifetime) before its first use at step {first_use}")),
                    }
                    if last_use.is_some_and(|u| end < u) {
                        e.push(format!(
                            "block '{name}' is freed at step {end} before its last use"
                        ));
                    }
                }
                Some(p) => {
                    let ps = self.step_of(p);
                    if b.start_ts > ps || last_use.is_some_and(|u| end < u) {
                        e.push(format!("block '{name}' [{}, {end}] does not span its production (step {ps}) and uses", b.start_ts));
                    }
                    let stores = self.steps_moving(|ts| &ts.stores, name);
                    if self.stored(t) {
                        match stores.first() {
                            Some(&s) if s > ps && end >= s => {}
                            _ => e.push(format!("output '{name}' is not stored after it is produced (step {ps}) while held")),
                        }
                    }
                }
            }
        }
    }

    /// Every weight has a block of its size, loaded before and held through its use.
    fn weight_blocks(&self, by_name: &HashMap<&str, usize>, e: &mut Violations) {
        let (g, chip, dtype) = (self.g, self.set.chip, self.set.dtype);
        for &o in &self.ids {
            for (wi, &w) in g.ops[o].weights.iter().enumerate() {
                let Some(t) = g.tensors.get(w) else { continue };
                if t.kind != TensorKind::Weight {
                    continue;
                }
                let Some(&bi) = by_name.get(t.name.as_str()) else {
                    e.push(format!("weight '{}' has no block", t.name));
                    continue;
                };
                let b = &self.gr.blocks[bi];
                // a depthwise conv may hold its bias in the plan's type (no timing here
                // to tell the pooling unit's from the CONV unit's: `wide_bias`)
                let wide = wide_bias(g, &g.ops[o], wi, t.shape, 0, chip.npu_num);
                if let Ok(need) = weight_block_size(chip, dtype, t.shape, wide) {
                    if b.size < need {
                        e.push(format!(
                            "weight block '{}' has {} bytes/lane, needs {need}",
                            t.name, b.size
                        ));
                    }
                }
                let us = self.step_of(o);
                let loads = self.steps_moving(|ts| &ts.loads, &t.name);
                if !loads.first().is_some_and(|&l| l < us && b.start_ts <= l)
                    || b.end_ts.is_some_and(|x| x < us)
                {
                    e.push(format!(
                        "weight '{}' is not loaded before, and held through, its use at step {us}",
                        t.name
                    ));
                }
            }
        }
    }

    /// No two blocks held in a common step overlap (the address rule of
    /// [`super::overlap`]).
    fn overlaps(&self, by_name: &HashMap<&str, usize>, e: &mut Violations) {
        let gr = self.gr;
        let held: Vec<Vec<bool>> = gr
            .blocks
            .iter()
            .map(|b| held_steps(b.start_ts, b.end_ts, self.k, self.sliced))
            .collect();
        let span: Vec<Span> = gr
            .blocks
            .iter()
            .map(|b| Span {
                addr: b.addr,
                size: b.size,
            })
            .collect();
        let block_named = |t: usize| {
            self.g
                .tensors
                .get(t)
                .and_then(|t| by_name.get(t.name.as_str()).copied())
        };
        let in_place = in_place_pairs(self.g, self.first, self.ids.len(), block_named);
        for (i, j) in clashes(&held, &span, &in_place) {
            e.push(format!(
                "blocks '{}' and '{}' are held at the same time and overlap in address",
                gr.blocks[i].name, gr.blocks[j].name
            ));
        }
    }

    /// The recorded peak is the highest block end.
    fn peak(&self, e: &mut Violations) {
        let gr = self.gr;
        let highest = gr
            .blocks
            .iter()
            .map(|b| b.addr.saturating_add(b.size))
            .max();
        if gr.lmem_peak != highest.unwrap_or(0) {
            e.push(format!(
                "lmem_peak {} is not the highest block end",
                gr.lmem_peak
            ));
        }
    }
}

/// Whether `ranges` cover `[0, size)`.
fn covers(ranges: &mut [Range], size: u64) -> bool {
    ranges.sort();
    let mut reach = 0;
    for r in ranges.iter() {
        if r[0] > reach {
            return false;
        }
        reach = reach.max(r[1]);
    }
    reach >= size
}

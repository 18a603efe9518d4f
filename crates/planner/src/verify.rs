//! The plan verifier: an independent check of any [`Plan`] (one the planner just made
//! or one read from a file). It re-derives from the plan's own graph which tensors each
//! group loads, produces and stores, and checks:
//!
//! - every op is planned exactly once, each group is a run of consecutive ops and its
//!   time-step table computes them in order (load-only first step, store-only last);
//! - every block fits the lane, starts on an EU_BYTES boundary, is at least as large as
//!   the lmem crate's aligned size of the largest slice it holds, and no two blocks
//!   held in a common time step (pipelining folds the first and last steps onto the
//!   neighbouring slices' compute steps) overlap in address, except an element-wise
//!   op's output written over its first input when the two share only that op's step
//!   (in place, as the chip's compiler allocates);
//! - the slices are exactly `nsecs × hsecs`; every op's output slices cover its whole
//!   output, and a stored tensor's own parts (which partition it exactly once) lie
//!   inside its slices;
//! - every tensor's range in every slice is the backward range of its consumers in the
//!   group (the hull, plus its own part when stored);
//! - loads precede uses: each loaded block is loaded in an earlier step than its first
//!   use and held until its last; produced blocks are held from their producing step
//!   through their last use and store, and stored after they are produced;
//! - the totals are the sums of the groups' and global ops' figures.

use crate::error::{PlanError, Result};
use crate::plan::{BlockKind, GroupPlan, Plan};
use crate::range::{backward_h, backward_n, hull, split, Range};
use crate::timestep::{is_bias, lane_size, tensor_type, weight_block_size};
use std::collections::{HashMap, HashSet};
use tpusim_graph::query::Uses;
use tpusim_graph::{Graph, TensorKind};
use tpusim_layout::ElementType;
use tpusim_lmem::Chip;

/// The chip a plan was made for: its preset if the name is built in and the figures
/// agree, else a chip with the plan's own figures.
pub fn chip_of(plan: &Plan) -> Result<Chip> {
    if let Ok(c) = Chip::preset(&plan.chip) {
        if (c.npu_num, c.eu_bytes, c.lane_bytes, c.banks)
            == (plan.npu_num, plan.eu_bytes, plan.lane_bytes, plan.banks)
        {
            return Ok(c);
        }
    }
    let chip = Chip::new(
        &plan.chip,
        plan.npu_num,
        plan.eu_bytes,
        plan.lane_bytes,
        plan.banks,
    );
    chip.validate()?;
    Ok(chip)
}

/// Verify `plan` against the chip figures it records.
pub fn verify(plan: &Plan) -> Result<()> {
    let chip = chip_of(plan)?;
    verify_with_chip(plan, &chip)
}

/// Verify `plan` on `chip`. Returns [`PlanError::Invalid`] listing the first
/// violations found.
pub fn verify_with_chip(plan: &Plan, chip: &Chip) -> Result<()> {
    let mut errs: Vec<String> = Vec::new();
    let g = &plan.graph;
    // a plan file is user input: its graph must be a valid one before anything indexes it
    tpusim_graph::validate::validate(g).map_err(|e| PlanError::BadFile {
        what: "plan JSON",
        why: format!("its graph is invalid: {e}"),
    })?;
    let dtype: ElementType = plan.dtype.parse().map_err(|_| PlanError::BadFile {
        what: "plan JSON",
        why: format!("unknown dtype '{}'", plan.dtype),
    })?;
    if (chip.npu_num, chip.eu_bytes, chip.lane_bytes, chip.banks)
        != (plan.npu_num, plan.eu_bytes, plan.lane_bytes, plan.banks)
    {
        errs.push(format!(
            "plan figures (npu {}, eu {}, lane {}, banks {}) differ from chip '{}'",
            plan.npu_num, plan.eu_bytes, plan.lane_bytes, plan.banks, chip.name
        ));
    }
    let op_id: HashMap<&str, usize> = g
        .ops
        .iter()
        .enumerate()
        .map(|(i, o)| (o.name.as_str(), i))
        .collect();
    let mut seen = vec![0u32; g.ops.len()];
    for name in plan
        .global_ops
        .iter()
        .chain(plan.groups.iter().flat_map(|gr| gr.ops.iter()))
    {
        match op_id.get(name.as_str()) {
            Some(&i) => seen[i] += 1,
            None => errs.push(format!("op '{name}' is not in the graph")),
        }
    }
    for (i, &n) in seen.iter().enumerate() {
        if n != 1 {
            errs.push(format!(
                "op '{}' is planned {n} times (must be exactly once)",
                g.ops[i].name
            ));
        }
    }
    let uses = Uses::new(g);
    for (gi, gr) in plan.groups.iter().enumerate() {
        if let Err(e) = check_group(plan, chip, dtype, g, &uses, &op_id, gr) {
            errs.extend(e.into_iter().map(|m| {
                format!(
                    "group {gi} ({}…): {m}",
                    gr.ops.first().map_or("", |s| s.as_str())
                )
            }));
        }
        if errs.len() > 20 {
            break;
        }
    }
    // totals
    if plan
        .global_costs
        .iter()
        .map(|c| &c.op)
        .ne(plan.global_ops.iter())
    {
        errs.push("global_costs do not list the global_ops in order".into());
    }
    let cyc: u128 = plan.groups.iter().map(|g| g.cycles as u128).sum::<u128>()
        + plan
            .global_costs
            .iter()
            .map(|c| c.cycles as u128)
            .sum::<u128>();
    if cyc != plan.cycles as u128 {
        errs.push(format!(
            "cycles {} is not the sum of the groups' and global ops' cycles ({cyc})",
            plan.cycles
        ));
    }
    let gm: u128 = plan
        .groups
        .iter()
        .map(|g| g.gmem_bytes as u128)
        .sum::<u128>()
        + plan
            .global_costs
            .iter()
            .map(|c| c.gmem_bytes as u128)
            .sum::<u128>();
    if gm != plan.gmem_bytes as u128 {
        errs.push(format!(
            "gmem_bytes {} is not the sum of the groups' and global ops' bytes ({gm})",
            plan.gmem_bytes
        ));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        let n = errs.len();
        errs.truncate(6);
        Err(PlanError::Invalid(format!(
            "{} violation(s): {}",
            n,
            errs.join("; ")
        )))
    }
}

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

/// Steps `0..=k+1` a block holds, folded when pipelined; a block meeting its own next
/// copy holds every compute step.
fn held_steps(start: u64, end: Option<u64>, k: u64, sliced: bool) -> Vec<bool> {
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
/// element-wise op's result written over its operand 0 (`in_place`: operand block,
/// result block, the op's step) at the same address, no larger, and held together
/// only in that step (the chip's compiler allocates so). `span`: (address, size).
fn clashes(
    held: &[Vec<bool>],
    span: &[(u64, u64)],
    in_place: &[(usize, usize, usize)],
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
        in_place.iter().any(|&(a, b, s)| {
            a == x
                && b == y
                && span[x].0 == span[y].0
                && span[y].1 <= span[x].1
                && both.iter().enumerate().all(|(w, &m)| {
                    let own = if s / 128 == w { 1u128 << (s % 128) } else { 0 };
                    m & !own == 0
                })
        })
    };
    let mut out = Vec::new();
    for i in 0..span.len() {
        for j in i + 1..span.len() {
            let (a, b) = (span[i], span[j]);
            if a.1 == 0 || b.1 == 0 {
                continue;
            }
            let overlap = a.0 < b.0.saturating_add(b.1) && b.0 < a.0.saturating_add(a.1);
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

/// Whether the blocks of a group starting at op `first` (`k` ops), at `addrs`, pass
/// the verifier's address rule (the planner checks a placement it did not make
/// itself before using it).
pub(crate) fn blocks_apart(
    g: &Graph,
    first: usize,
    blocks: &[crate::timestep::BlockSpec],
    addrs: &[u64],
    k: u64,
    sliced: bool,
) -> bool {
    let held: Vec<Vec<bool>> = blocks
        .iter()
        .map(|b| held_steps(b.start, b.end, k, sliced))
        .collect();
    let span: Vec<(u64, u64)> = blocks
        .iter()
        .zip(addrs)
        .map(|(b, &a)| (a, b.size))
        .collect();
    let act = |t: usize| {
        blocks
            .iter()
            .position(|b| b.tensor == Some(t) && b.kind == BlockKind::Activation)
    };
    let mut in_place = Vec::new();
    for i in 0..k as usize {
        let Some(op) = g.ops.get(first + i) else {
            continue;
        };
        if !op.is_binary_elementwise() {
            continue;
        }
        if let (Some(x), Some(y)) = (act(op.inputs[0]), op.outputs.first().and_then(|&t| act(t))) {
            in_place.push((x, y, i + 1));
        }
    }
    let fits = blocks
        .iter()
        .zip(addrs)
        .all(|(b, &a)| a.checked_add(b.size).is_some());
    fits && clashes(&held, &span, &in_place).is_empty()
}

fn check_group(
    plan: &Plan,
    chip: &Chip,
    dtype: ElementType,
    g: &Graph,
    uses: &Uses,
    op_id: &HashMap<&str, usize>,
    gr: &GroupPlan,
) -> std::result::Result<(), Vec<String>> {
    let mut e: Vec<String> = Vec::new();
    let ids: Vec<usize> = gr
        .ops
        .iter()
        .filter_map(|n| op_id.get(n.as_str()).copied())
        .collect();
    if ids.len() != gr.ops.len() || ids.is_empty() {
        return Err(vec!["names unknown ops".into()]);
    }
    let (first, last) = (ids[0], ids[ids.len() - 1]);
    if ids.iter().enumerate().any(|(i, &o)| o != first + i) {
        return Err(vec!["ops are not consecutive in graph order".into()]);
    }
    let k = ids.len() as u64;
    if gr.timesteps.len() as u64 != k + 2 {
        return Err(vec![format!(
            "{} time steps for {k} ops (expected {})",
            gr.timesteps.len(),
            k + 2
        )]);
    }
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
    let mut idx = HashSet::new();
    for s in &gr.slices {
        if s.n_idx >= gr.nsecs || s.h_idx >= gr.hsecs || !idx.insert((s.n_idx, s.h_idx)) {
            e.push(format!(
                "slice index ({}, {}) out of range or repeated",
                s.n_idx, s.h_idx
            ));
        }
    }
    let sliced = nslices > 1;
    let step_of = |o: usize| (o - first) as u64 + 1;
    // the group's tensors, derived independently from the graph
    let in_group = |o: usize| (first..=last).contains(&o);
    let mut acts: Vec<usize> = Vec::new();
    for &o in &ids {
        for &t in g.ops[o].inputs.iter().chain(&g.ops[o].outputs) {
            if !acts.contains(&t) {
                acts.push(t);
            }
        }
    }
    let produced = |t: usize| {
        uses.producer
            .get(t)
            .copied()
            .flatten()
            .filter(|&p| in_group(p))
    };
    let stored = |t: usize| {
        produced(t).is_some()
            && (uses.escapes(t, first, last)
                || uses.consumers.get(t).map_or(true, |c| c.is_empty()))
    };
    let consumers = |t: usize| -> Vec<usize> {
        (first..=last)
            .filter(|&o| g.ops[o].inputs.contains(&t))
            .collect()
    };
    // slices: ranges, backward rule, coverage
    let mut max_ext: HashMap<usize, (u64, u64)> = HashMap::new();
    let mut all_ranges: HashMap<usize, Vec<(Range, Range)>> = HashMap::new();
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
        for &t in &acts {
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
            let m = max_ext.entry(t).or_insert((0, 0));
            *m = (m.0.max(n[1] - n[0]), m.1.max(h[1] - h[0]));
            all_ranges.entry(t).or_default().push((n, h));
            // backward: hull over consumers in the group, plus own part when produced
            // here (required when stored)
            let mut want: Option<(Range, Range)> = None;
            if produced(t).is_some() {
                match (
                    split(sh.n, gr.nsecs, s.n_idx),
                    split(sh.h, gr.hsecs, s.h_idx),
                ) {
                    (Some(a), Some(b)) => want = Some((a, b)),
                    _ if !stored(t) => {}
                    _ => e.push(format!(
                        "stored tensor '{}' ({sh}) cannot be cut into {}×{} parts",
                        g.tensors[t].name, gr.nsecs, gr.hsecs
                    )),
                }
            }
            for o in consumers(t) {
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
    for &t in &acts {
        if produced(t).is_none() {
            continue;
        }
        let sh = g.tensors[t].shape;
        let rs = all_ranges.get(&t).cloned().unwrap_or_default();
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
                g.tensors[t].name
            ));
        }
    }
    // blocks
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
        if b.end_ts.is_none() && !(b.kind == BlockKind::Weight && sliced) {
            e.push(format!(
                "block '{}' is resident but only weights of sliced groups may be",
                b.name
            ));
        }
    }
    let step_named = |list: fn(&crate::plan::TimeStep) -> &Vec<String>, name: &str| -> Vec<u64> {
        gr.timesteps
            .iter()
            .enumerate()
            .filter(|(_, ts)| list(ts).iter().any(|x| x == name))
            .map(|(j, _)| j as u64)
            .collect()
    };
    for ts in &gr.timesteps {
        for n in ts.loads.iter().chain(&ts.stores) {
            if !by_name.contains_key(n.as_str()) {
                e.push(format!("time step moves unknown block '{n}'"));
            }
        }
    }
    for &t in &acts {
        let ty = tensor_type(g, t, dtype);
        let lane = |n: u64, c: u64, h: u64, w: u64| lane_size(chip, ty, n, c, h, w).ok();
        let name = g.tensors[t].name.as_str();
        let Some(&bi) = by_name.get(name) else {
            e.push(format!("tensor '{name}' has no block"));
            continue;
        };
        let b = &gr.blocks[bi];
        let sh = g.tensors[t].shape;
        if let Some(&(mn, mh)) = max_ext.get(&t) {
            if let Some(need) = lane(mn, sh.c, mh, sh.w) {
                if b.size < need {
                    e.push(format!(
                        "block '{name}' has {} bytes/lane, its largest slice needs {need}",
                        b.size
                    ));
                }
            }
        }
        let uses_at: Vec<u64> = consumers(t).into_iter().map(step_of).collect();
        let last_use = uses_at.iter().copied().max();
        let end = b.end_ts.unwrap_or(u64::MAX);
        match produced(t) {
            None => {
                let loads = step_named(|ts| &ts.loads, name);
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
                let ps = step_of(p);
                if b.start_ts > ps || last_use.is_some_and(|u| end < u) {
                    e.push(format!("block '{name}' [{}, {end}] does not span its production (step {ps}) and uses", b.start_ts));
                }
                let stores = step_named(|ts| &ts.stores, name);
                if stored(t) {
                    match stores.first() {
                        Some(&s) if s > ps && end >= s => {}
                        _ => e.push(format!("output '{name}' is not stored after it is produced (step {ps}) while held")),
                    }
                }
            }
        }
    }
    for &o in &ids {
        for (wi, &w) in g.ops[o].weights.iter().enumerate() {
            let Some(t) = g.tensors.get(w) else { continue };
            if t.kind != TensorKind::Weight {
                continue;
            }
            let Some(&bi) = by_name.get(t.name.as_str()) else {
                e.push(format!("weight '{}' has no block", t.name));
                continue;
            };
            let b = &gr.blocks[bi];
            if let Ok(need) = weight_block_size(chip, dtype, t.shape, is_bias(wi, t.shape)) {
                if b.size < need {
                    e.push(format!(
                        "weight block '{}' has {} bytes/lane, needs {need}",
                        t.name, b.size
                    ));
                }
            }
            let us = step_of(o);
            let loads = step_named(|ts| &ts.loads, &t.name);
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
    // no two blocks held in a common step overlap
    let held: Vec<Vec<bool>> = gr
        .blocks
        .iter()
        .map(|b| held_steps(b.start_ts, b.end_ts, k, sliced))
        .collect();
    let span: Vec<(u64, u64)> = gr.blocks.iter().map(|b| (b.addr, b.size)).collect();
    let block_named = |t: usize| {
        g.tensors
            .get(t)
            .and_then(|t| by_name.get(t.name.as_str()).copied())
    };
    let mut in_place: Vec<(usize, usize, usize)> = Vec::new();
    for (i, &o) in ids.iter().enumerate() {
        let op = &g.ops[o];
        if !op.is_binary_elementwise() {
            continue;
        }
        if let (Some(x), Some(y)) = (
            block_named(op.inputs[0]),
            op.outputs.first().and_then(|&t| block_named(t)),
        ) {
            in_place.push((x, y, i + 1));
        }
    }
    for (i, j) in clashes(&held, &span, &in_place) {
        e.push(format!(
            "blocks '{}' and '{}' are held at the same time and overlap in address",
            gr.blocks[i].name, gr.blocks[j].name
        ));
    }
    if gr.lmem_peak != gr.blocks.iter().map(|b| b.addr + b.size).max().unwrap_or(0) {
        e.push(format!(
            "lmem_peak {} is not the highest block end",
            gr.lmem_peak
        ));
    }
    if e.is_empty() {
        Ok(())
    } else {
        Err(e)
    }
}

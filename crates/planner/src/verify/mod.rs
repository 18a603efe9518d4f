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
//!
//! The checks of one group are `group.rs`, one function per invariant; the address
//! rule is `overlap.rs`, which the pipelined placer shares.

mod group;
pub(crate) mod overlap;

use crate::error::{PlanError, Result};
use crate::plan::Plan;
use std::collections::HashMap;
use tpusim_graph::query::Uses;
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
    let setting = group::Setting {
        plan,
        chip,
        dtype,
        graph: g,
        uses: &uses,
        op_id: &op_id,
    };
    for (gi, gr) in plan.groups.iter().enumerate() {
        if let Err(e) = group::check_group(&setting, gr) {
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

//! Moving loads to earlier time steps that have DMA time to spare (the chip's compiler
//! does the same after assigning time steps): a step costs the larger of its compute and its
//! DMA, so a weight load that makes its step DMA-bound is better issued during an
//! earlier compute-bound step, if local memory can hold the block that much longer.
//!
//! Applied to unsliced groups (one loop iteration), where weights are loaded once and
//! the deep layers of a CNN are bound by their weight loads.

use crate::timestep::{occupancy, BlockSpec, Steps};

/// Per-step costs of one loop iteration, cycles.
pub struct StepCosts {
    /// Compute cycles of each step.
    pub compute: Vec<f64>,
    /// DMA cycles of each step (loads and stores).
    pub dma: Vec<f64>,
}

/// Move loads earlier where that lowers Σ max(compute, DMA). `load_cycles[b]` is the
/// DMA time of block `b`'s load; `lane_bytes` bounds the bytes held in any step (a
/// block moved from step j to j′ is also held in steps j′..j; with `pipelined`, steps
/// are held as [`occupancy`] folds them, as the allocator will see them). Steps are visited
/// first to last; in each, while it is DMA-bound, the load whose move saves the most
/// goes to the step that saves the most (the latest of equals: the shortest extension).
/// Returns whether anything moved.
pub fn balance_loads(
    blocks: &mut [BlockSpec],
    steps: &mut Steps,
    cost: &mut StepCosts,
    load_cycles: &[f64],
    lane_bytes: u64,
    pipelined: bool,
) -> bool {
    let n = steps.compute.len();
    let k = steps.k;
    let held = |start: u64, end: Option<u64>| occupancy(start, end, k, pipelined).0;
    let mut live = vec![0u64; n];
    for b in blocks.iter() {
        let m = held(b.start, b.end);
        for (j, l) in live.iter_mut().enumerate() {
            if m >> j & 1 == 1 {
                *l = l.saturating_add(b.size);
            }
        }
    }
    let step_cost =
        |c: &StepCosts, j: usize, dma: f64| c.compute[j].max(dma) - c.compute[j].max(c.dma[j]);
    let mut moved = false;
    for j in 1..n {
        loop {
            if cost.dma[j] <= cost.compute[j] {
                break;
            }
            // best (saving, block, target step)
            let mut best: Option<(f64, usize, usize)> = None;
            for &b in &steps.loads[j] {
                let bl = &blocks[b];
                if bl.end.is_none() || bl.start as usize != j || bl.load_step != Some(j as u64) {
                    continue;
                }
                let c = load_cycles[b];
                if c <= 0.0 {
                    continue;
                }
                let here = step_cost(cost, j, cost.dma[j] - c);
                // steps already checked to have room (the held steps only grow as
                // the load moves earlier)
                let mut checked = held(bl.start, bl.end);
                for j2 in (0..j).rev() {
                    let mut fresh = held(j2 as u64, bl.end) & !checked;
                    checked |= fresh;
                    let mut full = false;
                    while fresh != 0 {
                        let x = fresh.trailing_zeros() as usize;
                        fresh &= fresh - 1;
                        if live
                            .get(x)
                            .is_some_and(|l| l.saturating_add(bl.size) > lane_bytes)
                        {
                            full = true;
                            break;
                        }
                    }
                    if full {
                        break;
                    }
                    let delta = here + step_cost(cost, j2, cost.dma[j2] + c);
                    if delta < -0.5 && best.map_or(true, |(d, _, _)| delta < d) {
                        best = Some((delta, b, j2));
                    }
                }
            }
            let Some((_, b, j2)) = best else {
                break;
            };
            let c = load_cycles[b];
            cost.dma[j] -= c;
            cost.dma[j2] += c;
            let mut added = held(j2 as u64, blocks[b].end) & !held(blocks[b].start, blocks[b].end);
            while added != 0 {
                let x = added.trailing_zeros() as usize;
                added &= added - 1;
                if let Some(l) = live.get_mut(x) {
                    *l = l.saturating_add(blocks[b].size);
                }
            }
            blocks[b].start = j2 as u64;
            blocks[b].load_step = Some(j2 as u64);
            steps.loads[j].retain(|&x| x != b);
            steps.loads[j2].push(b);
            moved = true;
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::BlockKind;

    fn block(start: u64, end: u64, size: u64) -> BlockSpec {
        BlockSpec {
            name: format!("b{start}"),
            kind: BlockKind::Weight,
            tensor: None,
            op: None,
            size,
            bits: 16,
            start,
            end: Some(end),
            load_step: Some(start),
            store_step: None,
            compute_steps: vec![end],
            placer_ts: None,
            neighbour_step: None,
        }
    }

    fn steps(loads: Vec<Vec<usize>>) -> Steps {
        let n = loads.len();
        Steps {
            k: n as u64 - 2,
            compute: (0..n)
                .map(|j| (j >= 1 && j + 1 < n).then(|| j - 1))
                .collect(),
            loads,
            stores: vec![Vec::new(); n],
        }
    }

    /// `balance_loads` on a 1,000-byte lane.
    fn run(b: &mut [BlockSpec], s: &mut Steps, c: &mut StepCosts, l: &[f64], pipe: bool) -> bool {
        balance_loads(b, s, c, l, 1000, pipe)
    }

    fn total(c: &StepCosts) -> f64 {
        c.compute.iter().zip(&c.dma).map(|(a, b)| a.max(*b)).sum()
    }

    #[test]
    fn a_load_moves_into_an_earlier_compute_bound_step() {
        // step 1 computes 100 with no DMA; step 2 computes 10 while loading 90 for step 3
        let mut blocks = vec![block(2, 3, 10)];
        let mut st = steps(vec![vec![], vec![], vec![0], vec![], vec![]]);
        let mut c = StepCosts {
            compute: vec![0.0, 100.0, 10.0, 10.0, 0.0],
            dma: vec![0.0, 0.0, 90.0, 0.0, 0.0],
        };
        let before = total(&c);
        assert!(run(&mut blocks, &mut st, &mut c, &[90.0], false));
        assert_eq!((blocks[0].start, blocks[0].load_step), (1, Some(1)));
        assert_eq!(st.loads[1], vec![0]);
        assert!(st.loads[2].is_empty());
        assert_eq!(before, 200.0);
        assert_eq!(total(&c), 120.0);
    }

    #[test]
    fn no_move_when_memory_is_full_or_nothing_is_gained() {
        let mk = || {
            (
                vec![block(2, 3, 10)],
                steps(vec![vec![], vec![], vec![0], vec![], vec![]]),
            )
        };
        // the earlier step holds a big block already: the move would overflow the lane
        let (mut blocks, mut st) = mk();
        blocks.push(BlockSpec {
            start: 0,
            end: Some(1),
            load_step: None,
            ..block(0, 1, 995)
        });
        let mut c = StepCosts {
            compute: vec![0.0, 100.0, 10.0, 10.0, 0.0],
            dma: vec![0.0, 0.0, 90.0, 0.0, 0.0],
        };
        assert!(!run(&mut blocks, &mut st, &mut c, &[90.0, 0.0], false));
        // every earlier step is DMA-bound too: nothing to gain
        let (mut blocks, mut st) = mk();
        let mut c = StepCosts {
            compute: vec![0.0, 5.0, 10.0, 10.0, 0.0],
            dma: vec![0.0, 50.0, 90.0, 0.0, 0.0],
        };
        assert!(!run(&mut blocks, &mut st, &mut c, &[90.0], false));
        assert_eq!(blocks[0].start, 2);
    }

    #[test]
    fn pipelined_groups_count_the_next_iterations_loads_in_every_step() {
        // 3 ops: the group input (600 bytes) is loaded at step 0 for step 1; a 500-byte
        // weight is loaded at step 3, its use, making step 3 DMA-bound. Moving that load
        // into the compute-bound step 2 fits a 1,000-byte lane when the input is held
        // over steps 0–1 only; pipelined, the input is also held in steps 2–3 (the next
        // iteration's load), and the move would overflow step 2.
        let mk = || {
            let mut input = block(0, 1, 600);
            input.compute_steps = vec![1];
            let mut w = block(3, 3, 500);
            w.compute_steps = vec![3];
            let st = steps(vec![vec![0], vec![], vec![], vec![1], vec![]]);
            let c = StepCosts {
                compute: vec![0.0, 10.0, 100.0, 10.0, 0.0],
                dma: vec![60.0, 0.0, 0.0, 90.0, 0.0],
            };
            (vec![input, w], st, c)
        };
        let (mut blocks, mut st, mut c) = mk();
        assert!(run(&mut blocks, &mut st, &mut c, &[60.0, 90.0], false));
        assert_eq!(blocks[1].start, 2);
        let (mut blocks, mut st, mut c) = mk();
        assert!(!run(&mut blocks, &mut st, &mut c, &[60.0, 90.0], true));
        assert_eq!(blocks[1].start, 3);
    }
}

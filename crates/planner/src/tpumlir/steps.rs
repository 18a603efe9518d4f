//! TPU-MLIR's time-step table of a group of two or more ops, reproduced (TPU-MLIR
//! 1.30.2, `TimeStepMethod` and `SoftwarePipeline`), for the lifetimes its allocator
//! ([`super::alloc`]) sees:
//! 1. Nearest assignment (`k + 2` rows): row 0 loads op 0's inputs, row `i + 1`
//!    computes op `i`, loads op `i + 1`'s inputs and stores op `i − 1`'s group
//!    outputs, the last row stores the last op's outputs.
//! 2. Software pipelining: row-0 loads become stage 0 (the next slice's), last-row
//!    stores stage 2 (the previous slice's), everything else stage 1; the last row's
//!    stores move into op 0's row and row 0's loads into the last op's row (into a row
//!    of their own after it when the last op reads them), so `k` ops give `k` rows.
//! 3. DMA moves by cycle slack (`memory_aware_timestep_assignment`): slack = compute
//!    cycles − DMA cycles of a row; rows are visited first to last, and while a row's
//!    slack is negative the transfer whose move gains the most goes, one row at a
//!    time, towards a row with slack to spare: loads to earlier rows (no earlier than
//!    one after their last earlier use, never wrapping), stores to later ones (before
//!    their producer's next run, skipping rows whose op touches them).
//! 4. Lifetimes (`gen_all_mem_buffer_ts`): stage-0 loads first, then the ops, then
//!    stage-2 stores, so a stage-0 load used in an earlier row, or a stage-2 store in
//!    a row before its producer, gets a lifetime that wraps round the table.

use super::alloc::{Mode, StepOp, StepTable};

/// A transfer in a pipelined table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    /// The buffer moved.
    pub buf: usize,
    /// Load or store.
    pub mode: Mode,
    /// Software-pipeline stage: 0 = for the next slice, 1 = this slice, 2 = for the
    /// previous slice.
    pub stage: u8,
}

/// The rows of a pipelined group: ops and transfers per time step.
#[derive(Debug, Clone, Default)]
pub struct PipeTable {
    /// Ops of each row.
    pub ops: Vec<Vec<StepOp>>,
    /// Transfers of each row.
    pub dma: Vec<Vec<Transfer>>,
}

/// Software-pipeline a nearest table (`ops`, `dma`: `k + 2` rows, row 0 and the last
/// without ops) into TPU-MLIR's rows.
pub fn pipeline(ops: Vec<Vec<StepOp>>, dma: Vec<Vec<(usize, Mode)>>) -> PipeTable {
    let rows = ops.len();
    let mut t = PipeTable {
        ops,
        dma: dma
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let stage = if i == 0 {
                    0
                } else if i + 1 == rows {
                    2
                } else {
                    1
                };
                l.into_iter()
                    .map(|(buf, mode)| Transfer { buf, mode, stage })
                    .collect()
            })
            .collect(),
    };
    if rows < 3 {
        return t;
    }
    let last = t.dma.pop().unwrap_or_default();
    t.ops.pop();
    let first = std::mem::take(&mut t.dma[0]);
    // (a) the last stores into op 0's row, unless op 0 touches them
    let mut rest_last = Vec::new();
    for x in last {
        let touched = t.ops[1]
            .iter()
            .any(|o| o.operands.contains(&x.buf) || o.results.contains(&x.buf));
        if touched {
            rest_last.push(x);
        } else {
            t.dma[1].push(x);
        }
    }
    if rest_last.is_empty() {
        t.ops.remove(0);
        t.dma.remove(0);
    } else {
        t.dma[0] = rest_last;
    }
    // (b) the first loads into the last op's row, unless that op reads them
    let lr = t.ops.len() - 1;
    let mut rest_first = Vec::new();
    for x in first {
        if t.ops[lr].iter().any(|o| o.operands.contains(&x.buf)) {
            rest_first.push(x);
        } else {
            t.dma[lr].push(x);
        }
    }
    if !rest_first.is_empty() {
        t.ops.push(Vec::new());
        t.dma.push(rest_first);
    }
    t
}

fn reads(t: &PipeTable, row: usize, b: usize) -> bool {
    t.ops[row].iter().any(|o| o.operands.contains(&b))
}

fn touches(t: &PipeTable, row: usize, b: usize) -> bool {
    t.ops[row]
        .iter()
        .any(|o| o.operands.contains(&b) || o.results.contains(&b))
}

/// TPU-MLIR's `get_tensor_range_end`: how far a transfer in row `cur` may move.
fn range_end(t: &PipeTable, x: &Transfer, cur: usize) -> i64 {
    let n = t.ops.len() as i64;
    match x.mode {
        Mode::Load => (0..=cur)
            .rev()
            .find(|&r| reads(t, r, x.buf))
            .map_or(0, |r| r as i64 + 1),
        Mode::Store => (cur..t.ops.len())
            .find(|&r| t.ops[r].iter().any(|o| o.results.contains(&x.buf)))
            .map_or(n - 1, |r| (n - 1).min(r as i64 - 1)),
    }
}

fn next_row(cur: i64, mode: Mode, end: i64) -> Option<i64> {
    match mode {
        Mode::Load => (cur > end).then_some(cur - 1),
        Mode::Store => (cur < end).then_some(cur + 1),
    }
}

/// Move transfers between rows by cycle slack (step 3 of the module docs).
/// `op_cycles[r]`: compute cycles of row `r`; `dma_cycles[b]`, `bytes[b]`: cycles and
/// bytes per lane of buffer `b`'s transfer.
pub fn move_by_slack(t: &mut PipeTable, op_cycles: &[i64], dma_cycles: &[i64], bytes: &[u64]) {
    let n = t.ops.len();
    if n == 0 {
        return;
    }
    let cyc = |b: usize| dma_cycles.get(b).copied().unwrap_or(0);
    let size = |b: usize| bytes.get(b).copied().unwrap_or(0) as i64;
    let mut slack: Vec<i64> = (0..n)
        .map(|r| {
            op_cycles.get(r).copied().unwrap_or(0)
                - t.dma[r].iter().map(|x| cyc(x.buf)).sum::<i64>()
        })
        .collect();
    let mut cur = 0usize;
    // every move takes a transfer strictly closer to where it gains; bound the work
    let mut budget = 64 * n * n + 1024;
    while cur < n && budget > 0 {
        budget -= 1;
        if slack[cur] >= 0 {
            cur += 1;
            continue;
        }
        // get_best_ts
        let mut best: Option<(usize, i64)> = None; // (position in row, target row)
        let (mut max_profit, mut best_area) = (0i64, 0i64);
        for (p, x) in t.dma[cur].iter().enumerate() {
            let c = cyc(x.buf);
            let src = (slack[cur] + c).min(0) - slack[cur];
            let end = range_end(t, x, cur);
            let mut nx = next_row(cur as i64, x.mode, end);
            while let Some(r) = nx {
                let ru = r as usize;
                nx = next_row(r, x.mode, end);
                if x.mode == Mode::Store && touches(t, ru, x.buf) {
                    continue;
                }
                if slack[ru] > 0 {
                    let profit = src + (slack[ru] - c).min(0);
                    let area = size(x.buf) * ((r - cur as i64).abs() + 1);
                    if profit > max_profit
                        || (profit == max_profit && best.is_some() && area < best_area)
                    {
                        max_profit = profit;
                        best = Some((p, r));
                        best_area = area;
                    }
                }
            }
        }
        let Some((mut p, best_row)) = best else {
            cur += 1;
            continue;
        };
        // bubble_tensor_to_best_ts
        let mode = t.dma[cur][p].mode;
        let mut sel = t.dma[cur][p].buf;
        let mut pre = cur;
        let mut nx = next_row(cur as i64, mode, best_row);
        while let Some(r) = nx {
            let ru = r as usize;
            let x = t.dma[pre].remove(p);
            t.dma[ru].push(x);
            slack[ru] -= cyc(sel);
            slack[pre] += cyc(sel);
            if r == best_row {
                break;
            }
            if mode == Mode::Store && touches(t, ru, sel) {
                p = t.dma[ru].len() - 1;
            } else {
                let mut max_profit = 0i64;
                let mut found = None;
                for (q, y) in t.dma[ru].iter().enumerate() {
                    if y.mode != mode {
                        continue;
                    }
                    let e = range_end(t, y, ru);
                    if (mode == Mode::Load && e > best_row)
                        || (mode == Mode::Store
                            && (e < best_row || touches(t, best_row as usize, y.buf)))
                    {
                        continue;
                    }
                    let c = cyc(y.buf);
                    let profit = ((slack[ru] + c).min(0) - slack[ru].min(0))
                        + (slack[best_row as usize] - c).min(0);
                    if profit > max_profit || (profit == max_profit && size(y.buf) < size(sel)) {
                        max_profit = profit;
                        found = Some(q);
                        sel = y.buf;
                    }
                }
                match found {
                    Some(q) => p = q,
                    None => break,
                }
            }
            pre = ru;
            nx = next_row(r, mode, best_row);
        }
    }
}

/// Each buffer's lifetime `(start, end)` in the rows of `t` (`end < start` wraps);
/// `None` for buffers the table never mentions. `nbufs`: number of buffers.
pub fn lifetimes(t: &PipeTable, nbufs: usize) -> Vec<Option<(usize, usize)>> {
    let n = t.ops.len();
    let mut life: Vec<Option<(usize, Option<usize>)>> = vec![None; nbufs];
    for stage in 0..3u8 {
        for r in 0..n {
            if stage == 1 {
                for o in &t.ops[r] {
                    for &y in &o.results {
                        if let Some(l) = life.get_mut(y) {
                            *l = Some((r, None));
                        }
                    }
                    for &x in &o.operands {
                        if let Some(Some(l)) = life.get_mut(x) {
                            l.1 = Some(r);
                        }
                    }
                    if let Some(l) = o.imm.and_then(|i| life.get_mut(i)) {
                        *l = Some((r, Some(r)));
                    }
                }
            }
            for x in t.dma[r].iter().filter(|x| x.stage == stage) {
                let Some(l) = life.get_mut(x.buf) else {
                    continue;
                };
                match x.mode {
                    Mode::Load => *l = Some((r, None)),
                    Mode::Store => {
                        if let Some(v) = l.as_mut() {
                            v.1 = Some(r);
                        }
                    }
                }
            }
        }
    }
    life.into_iter()
        .map(|l| l.map(|(s, e)| (s, e.unwrap_or(n.saturating_sub(1)))))
        .collect()
}

/// The allocator's view of a pipelined table (the stages dropped).
pub fn step_table(t: PipeTable) -> StepTable {
    StepTable {
        ops: t.ops,
        dma: t
            .dma
            .into_iter()
            .map(|l| l.into_iter().map(|x| (x.buf, x.mode)).collect())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpumlir::tests::fixtures::op;

    /// The load of buffer 0 for the next slice.
    fn next_input() -> Transfer {
        Transfer {
            buf: 0,
            mode: Mode::Load,
            stage: 0,
        }
    }

    /// TPU-MLIR's first ResNet-50 b8 group (its debug log): cast, conv, pool; buffers
    /// 0 input, 1 cast out, 2 filter, 3 bias, 4 conv out, 5 pool out.
    fn resnet_head() -> PipeTable {
        let ops = vec![
            vec![],
            vec![op(vec![0], 1)],
            vec![op(vec![1, 2, 3], 4)],
            vec![op(vec![4], 5)],
            vec![],
        ];
        let dma = vec![
            vec![(0, Mode::Load)],
            vec![(2, Mode::Load), (3, Mode::Load)],
            vec![],
            vec![],
            vec![(5, Mode::Store)],
        ];
        pipeline(ops, dma)
    }

    #[test]
    fn pipelining_gives_k_rows_with_stages_as_tpu_mlir_logs_them() {
        let t = resnet_head();
        assert_eq!(t.ops.len(), 3);
        // ts 0: cast, weights for the conv (stage 1), the pool output's store (stage 2)
        assert_eq!(
            t.dma[0],
            vec![
                Transfer {
                    buf: 2,
                    mode: Mode::Load,
                    stage: 1
                },
                Transfer {
                    buf: 3,
                    mode: Mode::Load,
                    stage: 1
                },
                Transfer {
                    buf: 5,
                    mode: Mode::Store,
                    stage: 2
                },
            ]
        );
        // ts 2: pool and the next slice's input (stage 0)
        assert_eq!(t.dma[2], vec![next_input()]);
        // lifetimes as logged before the moves: input 2→0 wraps, pool out 2→0
        let l = lifetimes(&t, 6);
        assert_eq!(l[0], Some((2, 0)));
        assert_eq!(l[2], Some((0, 1)));
        assert_eq!(l[4], Some((1, 2)));
        assert_eq!(l[5], Some((2, 0)));
    }

    #[test]
    fn moves_follow_slack_and_range_limits() {
        // TPU-MLIR's log: the input load moves 2 → 1 (the cast at ts 0 reads it) and
        // the pool store 0 → 1 (its producer runs at ts 2): lifetimes 1→0 and 2→1
        let mut t = resnet_head();
        let ops = [10, 100, 10];
        let dma = [50, 0, 5, 5, 0, 20];
        move_by_slack(&mut t, &ops, &dma, &[100, 50, 1, 1, 10, 5]);
        let l = lifetimes(&t, 6);
        assert_eq!(l[0], Some((1, 0)), "{t:?}");
        assert_eq!(l[5], Some((2, 1)), "{t:?}");
        // weights stay: nothing earlier than ts 0
        assert_eq!(l[2], Some((0, 1)));
    }

    #[test]
    fn a_last_op_reading_the_group_input_gets_a_row_of_its_own() {
        // conv(x) then add(x, conv): x is loaded before op 0 and read by the last op
        let ops = vec![
            vec![],
            vec![op(vec![0], 1)],
            vec![op(vec![0, 1], 2)],
            vec![],
        ];
        let dma = vec![
            vec![(0, Mode::Load)],
            vec![],
            vec![],
            vec![(2, Mode::Store)],
        ];
        let t = pipeline(ops, dma);
        assert_eq!(t.ops.len(), 3);
        assert!(t.ops[2].is_empty());
        assert_eq!(t.dma[2], vec![next_input()]);
        assert_eq!(lifetimes(&t, 3)[0], Some((2, 1)));
    }
}

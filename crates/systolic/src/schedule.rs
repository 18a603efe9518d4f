//! Composing folds into a timeline: when each fold may start, given how the stationary
//! operand is loaded (ws/is) or drained (os), with or without double buffering.
//!
//! The rules (the same for the analytic model and the engine):
//!
//! * **Not double-buffered.** ws/is: a fold's R-cycle weight load starts when the
//!   previous fold's last result has left the array; os: a fold starts when the previous
//!   fold's R-cycle drain is over. Folds never overlap.
//! * **Double-buffered** (each PE holds a second, shadow register). ws/is: the load of
//!   fold f+1 into the shadow registers starts as soon as the loader is free (fold f's
//!   load is done) *and* the shadow slot it overwrites — fold f−1's — is no longer used
//!   (fold f−1's last MAC is done); fold f+1 starts streaming once its load is done and
//!   fold f's last input has entered. os: fold f+1 starts once fold f's last input
//!   has entered, as long as the shadow accumulators that receive fold f+1's... results
//!   are free: fold f's drain (one at a time, R cycles each) must finish before fold
//!   f+1's first PE completes its reduction.
//!
//! `weight_load_cycles` is every cycle in which no fold is computing (loading or
//! draining only); `compute_cycles` the rest.

use crate::fold::FoldTiming;
use crate::shape::Dataflow;

/// The composed timeline of a sequence of folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timeline {
    /// Total cycles from the first load to the last result leaving the array.
    pub cycles: u64,
    /// Cycles in which at least one fold is streaming or computing.
    pub compute_cycles: u64,
    /// Cycles in which the array only loads (ws/is) or drains (os) stationary data.
    pub weight_load_cycles: u64,
}

/// Incremental scheduler: feed folds in execution order with [`Scheduler::push`], then
/// read the [`Timeline`] with [`Scheduler::finish`]. O(1) memory.
#[derive(Debug, Clone)]
pub struct Scheduler {
    df: Dataflow,
    double_buffer: bool,
    n: u64,
    // previous fold
    off_prev: u64,
    stream_prev: u64,
    end_prev: u64,
    // ws/is double buffering
    load_start_prev: u64,
    pre_prev: u64,
    last_use_prev2: u64,
    last_use_prev: u64,
    // os double buffering
    drain_start_prev: u64,
    post_prev: u64,
    // timeline
    end_max: u64,
    busy_union: u64,
    union_open: u64,
    union_close: u64,
}

impl Scheduler {
    /// A scheduler for folds of this dataflow.
    pub fn new(df: Dataflow, double_buffer: bool) -> Self {
        Scheduler {
            df,
            double_buffer,
            n: 0,
            off_prev: 0,
            stream_prev: 0,
            end_prev: 0,
            load_start_prev: 0,
            pre_prev: 0,
            last_use_prev2: 0,
            last_use_prev: 0,
            drain_start_prev: 0,
            post_prev: 0,
            end_max: 0,
            busy_union: 0,
            union_open: 0,
            union_close: 0,
        }
    }

    /// Schedule the next fold; returns its start cycle (first streaming cycle).
    pub fn push(&mut self, t: &FoldTiming) -> u64 {
        let first = self.n == 0;
        let s = t.shape.stream;
        let off = match (self.df, self.double_buffer) {
            (Dataflow::Ws | Dataflow::Is, false) => {
                if first {
                    t.pre
                } else {
                    self.end_prev + t.pre
                }
            }
            (Dataflow::Ws | Dataflow::Is, true) => {
                let load_start = if first {
                    0
                } else {
                    (self.load_start_prev + self.pre_prev).max(self.last_use_prev2)
                };
                self.load_start_prev = load_start;
                self.pre_prev = t.pre;
                let ready = load_start + t.pre;
                if first {
                    ready
                } else {
                    ready.max(self.off_prev + self.stream_prev)
                }
            }
            (Dataflow::Os, false) => {
                if first {
                    0
                } else {
                    self.end_prev + self.post_prev
                }
            }
            (Dataflow::Os, true) => {
                if first {
                    0
                } else {
                    // shadow free (previous drain done) before this fold's first PE
                    // finishes its reduction at off + s
                    let shadow_free = self.drain_start_prev + self.post_prev;
                    (self.off_prev + self.stream_prev).max(shadow_free.saturating_sub(s))
                }
            }
        };
        let end = off + t.span;
        // the os drain path: one drain at a time
        let mut fold_end = end;
        if self.df == Dataflow::Os {
            let drain_start = if first || !self.double_buffer {
                end
            } else {
                end.max(self.drain_start_prev + self.post_prev)
            };
            self.drain_start_prev = drain_start;
            fold_end = drain_start + t.post;
        }
        // union of compute intervals [off, end)
        if first || off > self.union_close {
            self.busy_union += self.union_close - self.union_open;
            self.union_open = off;
            self.union_close = end;
        } else {
            self.union_close = self.union_close.max(end);
        }
        self.end_max = self.end_max.max(fold_end);
        self.last_use_prev2 = self.last_use_prev;
        self.last_use_prev = off + t.last_mac_end;
        self.off_prev = off;
        self.stream_prev = s;
        self.end_prev = end;
        self.post_prev = t.post;
        self.n += 1;
        off
    }

    /// The times `push` reads back, and whether this mode reads each: `off_prev`,
    /// `end_prev`, `last_use_prev2`, `last_use_prev`, `union_close`, `end_max`,
    /// `load_start_prev` (ws/is double-buffered only), `drain_start_prev` (os only).
    pub(crate) fn times(&self) -> ([u64; 8], [bool; 8]) {
        let wsis_db = self.df != Dataflow::Os && self.double_buffer;
        let os = self.df == Dataflow::Os;
        (
            [
                self.off_prev,
                self.end_prev,
                self.last_use_prev2,
                self.last_use_prev,
                self.union_close,
                self.end_max,
                self.load_start_prev,
                self.drain_start_prev,
            ],
            [true, true, true, true, true, true, wsis_db, os],
        )
    }

    /// What only accumulates: `union_open`, `busy_union`, `n`, and the last fold's
    /// durations (stream, pre, post).
    pub(crate) fn tallies(&self) -> [u64; 6] {
        [
            self.union_open,
            self.busy_union,
            self.n,
            self.stream_prev,
            self.pre_prev,
            self.post_prev,
        ]
    }

    /// Move the schedule `steps` periods on, each period shifting every time the mode
    /// reads by `shift` and each tally by its own `per_tally` (see
    /// `analytic::push_repeated`, which checks that this is exactly what pushing them
    /// would do). `None` on overflow.
    pub(crate) fn advance(&mut self, shift: u64, per_tally: [u64; 6], steps: u64) -> Option<()> {
        let by = shift.checked_mul(steps)?;
        let (_, read) = self.times();
        let fields = [
            &mut self.off_prev,
            &mut self.end_prev,
            &mut self.last_use_prev2,
            &mut self.last_use_prev,
            &mut self.union_close,
            &mut self.end_max,
            &mut self.load_start_prev,
            &mut self.drain_start_prev,
        ];
        for (f, used) in fields.into_iter().zip(read) {
            if used {
                *f = f.checked_add(by)?;
            }
        }
        let tallies = [&mut self.union_open, &mut self.busy_union, &mut self.n];
        for (f, d) in tallies.into_iter().zip(per_tally) {
            *f = f.checked_add(d.checked_mul(steps)?)?;
        }
        Some(())
    }

    /// The timeline of every fold pushed so far.
    pub fn finish(&self) -> Timeline {
        let compute = self.busy_union + (self.union_close - self.union_open);
        Timeline {
            cycles: self.end_max,
            compute_cycles: compute,
            weight_load_cycles: self.end_max - compute,
        }
    }
}

//! SCALE-Sim's double-buffered OFMAP write buffer (`memory/write_buffer.py`), replayed
//! demand row by demand row.
//!
//! Facts: writes fill lines of `width` words (C in CALC mode, `Bandwidth` in USER
//! mode). Each write takes one word of free space; when a write leaves less than the
//! active half free and no drain is running, the held lines (the partial line forced
//! out) are drained, up to ⌈drain half / width⌉ lines, one line per cycle from the
//! current cycle, freeing their words (a line's unused tail is only discounted for the
//! last line of a drain). While a drain runs, a write that leaves no free space stalls
//! the array until the drain's last cycle. After the last row everything held is
//! drained back to back.

use super::report::Access;
use std::collections::VecDeque;

/// The write buffer's state.
pub(crate) struct WriteBuffer {
    drain_half: u64,
    active: i64,
    width: u64,
    free: i64,
    /// valid words per held (not yet drained) line
    lines: VecDeque<u64>,
    cur: u64,
    drain_end: u64,
    first: Option<i64>,
    last: i64,
    count: u64,
}

impl WriteBuffer {
    /// A buffer of `total` words draining `width` words per cycle.
    pub(crate) fn new(total: u64, width: u64) -> Self {
        let active = total.div_ceil(2);
        WriteBuffer {
            drain_half: total - active,
            active: active as i64,
            width,
            free: total as i64,
            lines: VecDeque::new(),
            cur: 0,
            drain_end: 0,
            first: None,
            last: 0,
            count: 0,
        }
    }

    fn force(&mut self) {
        if self.cur > 0 {
            self.lines.push_back(self.cur);
            self.cur = 0;
        }
    }

    /// Write back up to a drain half's worth of lines from `start`; returns the last
    /// cycle used.
    fn drain(&mut self, start: u64) -> u64 {
        let per = self.drain_half.div_ceil(self.width) as usize;
        let n = per.min(self.lines.len());
        if n == 0 {
            return start;
        }
        let last_valid = self.lines[n - 1];
        self.lines.drain(..n);
        let data = n as u64 * self.width - (self.width - last_valid);
        self.count += data;
        self.first.get_or_insert(start as i64);
        let stop = start + n as u64 - 1;
        self.last = self.last.max(stop as i64);
        self.free += data as i64;
        stop
    }

    /// `k` writes that trigger nothing: fill lines.
    fn put(&mut self, k: u64) {
        let t = self.cur + k;
        for _ in 0..t / self.width {
            self.lines.push_back(self.width);
        }
        self.cur = t % self.width;
        self.free -= k as i64;
    }

    /// One demand row arriving at `cycle` with `n` valid writes; returns the cycle the
    /// row is serviced at (later than `cycle` when the row stalled). Writes between
    /// two events are taken in bulk.
    pub(crate) fn row(&mut self, cycle: u64, n: u64) -> u64 {
        let mut cur = cycle;
        let mut left = n;
        while left > 0 {
            // writes that leave the state as is: inside a drain, those leaving free
            // space; otherwise those leaving at least the active half free
            let quiet = if cur < self.drain_end {
                self.free - 1
            } else {
                self.free - self.active
            };
            let k = left.min(quiet.max(0) as u64);
            self.put(k);
            left -= k;
            if left == 0 {
                break;
            }
            self.put(1);
            left -= 1;
            if cur < self.drain_end {
                // no free word left while draining: stall until the drain ends
                cur = self.drain_end;
            } else {
                self.force();
                self.drain_end = self.drain(cur);
            }
        }
        cur
    }

    /// Drain everything left from `last_cycle` on; the DRAM OFMAP access.
    pub(crate) fn finish(mut self, last_cycle: u64) -> Access {
        self.force();
        let mut cycle = last_cycle;
        while !self.lines.is_empty() {
            self.drain_end = self.drain(cycle);
            cycle = self.drain_end + 1;
        }
        Access {
            start: self.first.unwrap_or(0),
            stop: self.last,
            count: self.count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// SCALE-Sim's write buffer one write at a time (write_buffer.py, literally).
    fn naive(total: u64, width: u64, rows: &[u64]) -> (Vec<u64>, Access) {
        let active = total.div_ceil(2) as i64;
        let per = (total - total.div_ceil(2)).div_ceil(width) as usize;
        let (mut free, mut lines, mut cur_line) = (total as i64, Vec::<u64>::new(), 0u64);
        let (mut start_line, mut drain_end, mut count) = (0usize, 0u64, 0u64);
        let mut cycles: Vec<u64> = Vec::new();
        let mut drain = |lines: &Vec<u64>, start_line: &mut usize, free: &mut i64, at: u64| {
            let end = (*start_line + per).min(lines.len());
            let n = end - *start_line;
            if n == 0 {
                return at;
            }
            let data = n as u64 * width - (width - lines[end - 1]);
            count += data;
            *free += data as i64;
            cycles.extend(at..at + n as u64);
            *start_line = end;
            at + n as u64 - 1
        };
        let mut outs = Vec::new();
        let (mut stalls, mut last) = (0u64, 0u64);
        for (i, &n) in rows.iter().enumerate() {
            let mut cur = i as u64 + stalls;
            let arrive = cur;
            for _ in 0..n {
                cur_line += 1;
                free -= 1;
                if cur_line == width {
                    lines.push(width);
                    cur_line = 0;
                }
                if cur < drain_end {
                    if free <= 0 {
                        cur = drain_end;
                    }
                } else if free < active {
                    if cur_line > 0 {
                        lines.push(cur_line);
                        cur_line = 0;
                    }
                    drain_end = drain(&lines, &mut start_line, &mut free, cur);
                }
            }
            stalls += cur - arrive;
            outs.push(cur);
            last = cur;
        }
        if cur_line > 0 {
            lines.push(cur_line);
        }
        let mut at = last;
        while start_line < lines.len() {
            at = drain(&lines, &mut start_line, &mut free, at) + 1;
        }
        let a = Access {
            start: cycles.first().map_or(0, |&c| c as i64),
            stop: cycles.iter().max().map_or(0, |&c| c as i64),
            count,
        };
        (outs, a)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The bulk replay equals the write-at-a-time one, stalls included.
        #[test]
        fn bulk_equals_naive(
            total in 2u64..200, width in 1u64..20,
            rows in proptest::collection::vec(0u64..40, 1..120)
        ) {
            let (want_outs, want) = naive(total, width, &rows);
            let mut wb = WriteBuffer::new(total, width);
            let mut stalls = 0u64;
            let mut outs = Vec::new();
            for (i, &n) in rows.iter().enumerate() {
                let cycle = i as u64 + stalls;
                let out = wb.row(cycle, n);
                stalls += out - cycle;
                outs.push(out);
            }
            prop_assert_eq!(&outs, &want_outs);
            prop_assert_eq!(wb.finish(*outs.last().unwrap()), want);
        }
    }
}

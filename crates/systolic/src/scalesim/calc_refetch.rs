//! SCALE-Sim's CALC-mode read buffer (`ReadBufferEstimateBw`) when an operand does not
//! fit the active half of its SRAM: which DRAM reads it reports, and when.
//!
//! Facts (SCALE-Sim 3.0.0, `memory/read_buffer_estimate_bw.py`):
//!
//! * The buffer never stalls the array (every SRAM read hits after 1 cycle).
//! * It groups the *new* addresses of the demand stream, in order, into sets of
//!   `ips = ⌊SRAM bytes / 100⌋` words; an address is new unless it is already in the
//!   current window's completed sets or in the set being filled.
//! * When the 50th set of a window completes (at cycle `X`), that window is
//!   "prefetched" and the window moves on to the *next* 50 sets, which are still empty:
//!   so the windows are epochs of `50·ips` new addresses, and an address seen in an
//!   earlier epoch is new again (refetched).
//! * The first epoch's prefetch ends just before the operand's first demand cycle `F`:
//!   its trace rows start at `F − ⌈50·ips / 10⌉` (10 words/cycle). Each later epoch is
//!   fetched over the interval between the two previous triggers, the final partial
//!   epoch over the interval ending at the last trigger `X`: the DRAM trace stops at
//!   `X + 1`. DRAM reads are all the new-address events (`50·ips` per full epoch plus
//!   the last epoch's).
//! * Two triggers in one cycle make SCALE-Sim divide by zero (it crashes); we refuse
//!   that case.
//!
//! Without any trigger (fewer than `50·ips` distinct addresses) the closed form in
//! `compat.rs` applies; the replay agrees with it (tested).

use super::report::Access;

/// Largest operand address space replayed (stamps are 4 bytes per address: 256 MiB).
pub(crate) const MAX_SPACE: u64 = 1 << 26;

/// The epoch replay of one operand's CALC-mode read buffer.
pub(crate) struct CalcReadBuffer {
    ips: u64,
    cap: u64,
    stamp: Vec<u32>,
    epoch: u32,
    fresh: u64,
    total: u64,
    first: Option<u64>,
    last_trigger: Option<u64>,
}

impl CalcReadBuffer {
    /// A buffer with `ips ≥ 1` words per set over `space` addresses (at most
    /// [`MAX_SPACE`]).
    pub(crate) fn new(ips: u64, space: u64) -> Self {
        CalcReadBuffer {
            ips,
            cap: ips.saturating_mul(50),
            stamp: vec![0; space as usize],
            epoch: 1,
            fresh: 0,
            total: 0,
            first: None,
            last_trigger: None,
        }
    }

    /// One demand read of `addr` at `cycle`; `Err(why)` where SCALE-Sim crashes.
    pub(crate) fn read(&mut self, addr: u64, cycle: u64) -> Result<(), String> {
        self.first.get_or_insert(cycle);
        let st = &mut self.stamp[addr as usize];
        if *st == self.epoch {
            return Ok(());
        }
        *st = self.epoch;
        self.fresh += 1;
        self.total += 1;
        if self.fresh == self.cap {
            if self.last_trigger == Some(cycle) {
                return Err(format!(
                    "two read-buffer prefetch triggers in cycle {cycle} (SCALE-Sim 3.0.0 divides by zero there)"
                ));
            }
            self.last_trigger = Some(cycle);
            self.fresh = 0;
            self.epoch += 1;
        }
        Ok(())
    }

    /// The DRAM access SCALE-Sim reports for this operand.
    pub(crate) fn finish(self) -> Access {
        let Some(f) = self.first else {
            return Access::default();
        };
        match self.last_trigger {
            None => {
                // one prefetch of all sets before cycle 0
                let sets = self.total.div_ceil(self.ips);
                let cycles = (sets * self.ips).div_ceil(10);
                Access {
                    start: -(cycles as i64),
                    stop: -1,
                    count: self.total,
                }
            }
            Some(x) => Access {
                start: f as i64 - self.cap.div_ceil(10) as i64,
                stop: x as i64 + 1,
                count: self.total,
            },
        }
    }
}

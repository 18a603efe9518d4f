//! SCALE-Sim's USER-mode read buffer with a custom layout (`memory/read_buffer.py`
//! with `enable_layout_evaluation`): SRAM lines, banks and their conflicts.
//!
//! Facts (SCALE-Sim 3.0.0):
//!
//! * The prefetch matrix is the layout's fetch order (`layout_order.rs`), −1 padding
//!   included, folded into lines of `bw = …SRAMBankBandwidth` words. Its valid words
//!   are cut, in order, into sets of `bw` words (the last partial, possibly empty):
//!   `L` sets. The active window holds `A = min(L, ⌈active half / bw⌉)` sets, the
//!   prefetch window the next `P = min(L − A, ⌈drain half / bw⌉)`.
//! * Before cycle 0, `min(⌈active half / bw⌉, fetch lines)` lines are read, ending at
//!   cycle −1. A demand word outside the active window slides it by `P` sets and reads
//!   `⌈drain half / bw⌉` more lines right after the previous fetch (`last += lines +
//!   1`); the row's offset (1, the hit latency) becomes `last − cycle` when that is
//!   larger — stalls counted once, unlike the plain USER buffer.
//! * Banks: a word's bank is its position in `list(set)` (CPython's set order, see
//!   `pyset.rs`) divided by `bw / …SRAMBankNum`. Per demand row, each bank serves the
//!   distinct sets its words come from; the row's offset grows by
//!   `⌈max sets in one bank / …SRAMBankPort⌉ − 1` (so a row without words is serviced
//!   one cycle early, which no report shows).
//! * DRAM: as the plain buffer: from the first fetch's first line to `last`, `bw` words
//!   per line fetched.

use super::demand::{Mapping, Operand};
use super::layout_order::LayoutOrder;
use super::pyset::iteration_order;
use super::report::Access;
use super::user_refetch::MAX_ELEMS;

/// The SRAM a custom layout is read into: its size, lines, banks and ports.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BankedSram {
    /// SRAM bytes (= words).
    pub(crate) bytes: u64,
    /// Words per line (`…SRAMBankBandwidth`).
    pub(crate) line_words: u64,
    /// `…SRAMBankNum`.
    pub(crate) banks: u64,
    /// `…SRAMBankPort`.
    pub(crate) ports: u64,
    /// Added to a word's number to give the address SCALE-Sim hashes (`FilterOffset`
    /// for the FILTER, 0 for the IFMAP).
    pub(crate) address_offset: u64,
}

/// Marks a word the layout does not hold.
const ABSENT: u32 = u32::MAX;

/// The state of one operand's custom-layout read buffer.
pub(crate) struct LayoutReadBuffer {
    set_of: Vec<u32>,
    bank_of: Vec<u32>,
    sets: u64,
    active: u64,
    slide: u64,
    start: u64,
    lines_per_refetch: u64,
    sram: BankedSram,
    last: i64,
    first_lines: u64,
    refetches: u64,
    row_banks: Vec<(u32, u32)>,
}

impl LayoutReadBuffer {
    /// The buffer of an operand laid out by `order` in `sram`. `Err(why)` for
    /// configurations SCALE-Sim cannot run or that exceed the replay limits.
    pub(crate) fn new(order: &LayoutOrder, sram: BankedSram) -> Result<Self, String> {
        let bw = sram.line_words;
        if sram.ports == 0 {
            return Err(
                "SCALE-Sim 3.0.0 fails: ZeroDivisionError: division by zero (0 bank ports)".into(),
            );
        }
        let active = sram.bytes.div_ceil(2);
        let drain = sram.bytes - active;
        if drain == 0 {
            return Err(format!("a {}-byte SRAM has no room to refetch", sram.bytes));
        }
        let words = order.words();
        if words > MAX_ELEMS {
            return Err(format!(
                "{words} laid-out words exceed the replay limit ({MAX_ELEMS})"
            ));
        }
        let per_bank = bw / sram.banks.max(1);
        if per_bank == 0 || per_bank * sram.banks != bw {
            return Err(format!(
                "SCALE-Sim 3.0.0 fails: AssertionError: overall bandwidth must be divisible by total number of banks ({bw} words over {} banks)",
                sram.banks
            ));
        }
        let mut me = LayoutReadBuffer {
            set_of: vec![ABSENT; words as usize],
            bank_of: vec![0; words as usize],
            sets: 0,
            active: 0,
            slide: 0,
            start: 0,
            lines_per_refetch: drain.div_ceil(bw),
            sram,
            last: -1,
            first_lines: 0,
            refetches: 0,
            row_banks: Vec::new(),
        };
        let mut set: Vec<u64> = Vec::new();
        let mut total = 0u64;
        order.for_each(|w| {
            total += 1;
            if let Some(w) = w {
                set.push(w);
                if set.len() as u64 == bw {
                    me.close_set(&set, per_bank);
                    set.clear();
                }
            }
        });
        me.close_set(&set, per_bank);
        me.active = me.sets.min(active.div_ceil(bw));
        me.slide = (me.sets - me.active).min(drain.div_ceil(bw));
        me.first_lines = active.div_ceil(bw).min(total.div_ceil(bw));
        Ok(me)
    }

    /// Records a completed set: its words' set id and bank.
    fn close_set(&mut self, words: &[u64], per_bank: u64) {
        let id = self.sets as u32;
        self.sets += 1;
        let off = self.sram.address_offset;
        let keys: Vec<u64> = words.iter().map(|w| w + off).collect();
        for (pos, key) in iteration_order(&keys).into_iter().enumerate() {
            let w = (key - off) as usize;
            self.set_of[w] = id;
            self.bank_of[w] = (pos as u64 / per_bank) as u32;
        }
    }

    fn in_window(&self, set: u32) -> bool {
        (u64::from(set) + self.sets - self.start) % self.sets < self.active
    }

    /// The demand reads of one row arriving at `cycle`; returns the cycle the row is
    /// serviced at. `Err(why)` where SCALE-Sim would loop forever.
    pub(crate) fn row(
        &mut self,
        map: &Mapping,
        op: Operand,
        row: u64,
        cycle: u64,
    ) -> Result<i64, String> {
        let mut offset: i64 = 1;
        self.row_banks.clear();
        map.for_row(op, row, |addr| {
            let set = self.set_of.get(addr as usize).copied().unwrap_or(ABSENT);
            if set == ABSENT {
                return Err(format!(
                    "word {addr} is not in the custom layout (SCALE-Sim loops forever)"
                ));
            }
            let mut slides = 0u64;
            while !self.in_window(set) {
                slides += 1;
                if slides > self.sets + 1 || self.slide == 0 {
                    return Err(format!(
                        "word {addr} never enters the active window (SCALE-Sim loops forever)"
                    ));
                }
                self.start = (self.start + self.slide) % self.sets;
                self.last += self.lines_per_refetch as i64 + 1;
                self.refetches += 1;
                offset = offset.max(self.last - cycle as i64);
            }
            self.row_banks.push((self.bank_of[addr as usize], set));
            Ok(())
        })?;
        Ok(cycle as i64 + offset + self.conflict_cycles() - 1)
    }

    /// ⌈most distinct sets one bank serves in the row / ports⌉.
    fn conflict_cycles(&mut self) -> i64 {
        self.row_banks.sort_unstable();
        self.row_banks.dedup();
        let (mut most, mut run, mut bank) = (0u64, 0u64, None);
        for &(b, _) in &self.row_banks {
            run = if bank == Some(b) { run + 1 } else { 1 };
            bank = Some(b);
            most = most.max(run);
        }
        most.div_ceil(self.sram.ports) as i64
    }

    /// The DRAM access SCALE-Sim reports for this operand.
    pub(crate) fn finish(self) -> Access {
        let bw = self.sram.line_words;
        Access {
            start: -(self.first_lines as i64),
            stop: self.last,
            count: self
                .refetches
                .saturating_mul(self.lines_per_refetch)
                .saturating_add(self.first_lines)
                .saturating_mul(bw),
        }
    }
}

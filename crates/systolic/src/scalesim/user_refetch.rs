//! SCALE-Sim's USER-mode read buffer (`memory/read_buffer.py`) when an operand's
//! prefetch matrix does not fit the active half of its SRAM: refetches and stalls.
//!
//! Facts (SCALE-Sim 3.0.0):
//!
//! * The prefetch matrix (see `Mapping::for_prefetch` in `demand.rs`) is cut, in
//!   fetch order and skipping padding, into sets of `eps = ⌈SRAM bytes / 100⌉`
//!   elements (the last set partial, possibly empty): `L` sets.
//! * The active window holds `A = min(L, ⌈active half / eps⌉)` consecutive sets
//!   (cyclically), the prefetch window the next `P = min(L − A, ⌈drain half / eps⌉)`.
//! * Before cycle 0, `min(⌈active half / bw⌉, fetch lines)` lines of `bw` words are
//!   read, ending at cycle −1 (`bw` = the operand's `SRAMBankBandwidth`).
//! * A demand read whose address is in no set of the window is a miss: the window
//!   slides by `P` sets and `⌈drain half / bw⌉` more lines are read, right after the
//!   previous fetch (`last += lines + 1`, whatever the current cycle). Repeated until
//!   the address hits.
//! * Stalls: the row's offset starts at 1 (hit latency); after each refetch
//!   `d = last − (cycle + offset)` is added to the offset, and added once more when
//!   positive (stalls counted twice; a negative `d` pulls the offset back). The row is
//!   serviced at `cycle + offset`; its stall is `offset − 1`.
//! * DRAM: starts at the first fetch's first line, stops at `last`, reads every line
//!   fetched, `bw` words each.

use super::demand::{Mapping, Operand};
use super::report::Access;

/// Largest address space and prefetch matrix replayed (4 bytes per entry each).
pub(crate) const MAX_ELEMS: u64 = 1 << 26;
/// Most prefetch-matrix elements, padding included, walked to build the buffer (each
/// walk of 2^28 takes about a second).
pub(crate) const MAX_PADDED_ELEMS: u64 = 1 << 28;

/// The state of one operand's USER-mode read buffer.
pub(crate) struct UserReadBuffer {
    /// CSR: set ids holding each address
    offs: Vec<u32>,
    ids: Vec<u32>,
    l: u64,
    a: u64,
    p: u64,
    start: u64,
    lines_per_refetch: u64,
    bw: u64,
    last: i64,
    first_lines: u64,
    refetches: u64,
}

impl UserReadBuffer {
    /// The buffer of `op` on `map` for an SRAM of `bytes` bytes fetching `bw` words
    /// per line. `Err(why)` for configurations SCALE-Sim cannot run.
    pub(crate) fn new(map: &Mapping, op: Operand, bytes: u64, bw: u64) -> Result<Self, String> {
        let eps = bytes.div_ceil(100);
        let active = bytes.div_ceil(2);
        let drain = bytes - active;
        if eps == 0 || bw == 0 || drain == 0 {
            return Err(format!(
                "a {bytes}-byte SRAM with {bw}-word lines has no room to refetch"
            ));
        }
        // the prefetch matrix is walked twice, padding included: bound that walk first
        // (an array side of 2^32 pads a small layer to billions of elements)
        let padded = map.prefetch_elems(op);
        if padded > MAX_PADDED_ELEMS {
            return Err(format!(
                "its prefetch matrix of {padded} elements (padding to the array included) exceeds the replay limit ({MAX_PADDED_ELEMS})"
            ));
        }
        let space = map.space(op);
        if space > MAX_ELEMS {
            return Err(format!(
                "{space} addresses exceed the replay limit ({MAX_ELEMS})"
            ));
        }
        // pass 1: how many sets hold each address; pass 2: fill
        let mut counts = vec![0u32; space as usize + 1];
        let mut elems = 0u64;
        let total = map.for_prefetch(op, |a| {
            if let Some(a) = a {
                counts[a as usize + 1] += 1;
                elems += 1;
            }
        });
        if elems > MAX_ELEMS {
            return Err(format!(
                "{elems} prefetch elements exceed the replay limit ({MAX_ELEMS})"
            ));
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let mut fill = counts.clone();
        let mut ids = vec![0u32; elems as usize];
        let mut idx = 0u64;
        map.for_prefetch(op, |a| {
            if let Some(a) = a {
                let slot = &mut fill[a as usize];
                ids[*slot as usize] = (idx / eps) as u32;
                *slot += 1;
                idx += 1;
            }
        });
        let l = elems / eps + 1;
        let a = l.min(active.div_ceil(eps));
        let p = (l - a).min(drain.div_ceil(eps));
        let fetch_lines = total.div_ceil(bw);
        let first_lines = active.div_ceil(bw).min(fetch_lines);
        Ok(UserReadBuffer {
            offs: counts,
            ids,
            l,
            a,
            p,
            start: 0,
            lines_per_refetch: drain.div_ceil(bw),
            bw,
            last: -1,
            first_lines,
            refetches: 0,
        })
    }

    fn hit(&self, addr: u64) -> Option<bool> {
        let (lo, hi) = (self.offs[addr as usize], self.offs[addr as usize + 1]);
        if lo == hi {
            return None;
        }
        Some(
            self.ids[lo as usize..hi as usize]
                .iter()
                .any(|&id| (id as u64 + self.l - self.start) % self.l < self.a),
        )
    }

    /// The demand reads of one row arriving at `cycle`; returns the cycle the row is
    /// serviced at (`cycle + 1` without a miss). `Err(why)` where SCALE-Sim would loop
    /// forever.
    pub(crate) fn row(
        &mut self,
        map: &Mapping,
        op: Operand,
        row: u64,
        cycle: u64,
    ) -> Result<i64, String> {
        let mut offset: i64 = 1;
        map.for_row(op, row, |addr| {
            let mut slides = 0u64;
            loop {
                match self.hit(addr) {
                    None => {
                        return Err(format!(
                            "address {addr} is not in the prefetch matrix (SCALE-Sim loops forever)"
                        ))
                    }
                    Some(true) => return Ok(()),
                    Some(false) => {}
                }
                slides += 1;
                if slides > self.l + 1 || self.p == 0 {
                    return Err(format!(
                        "address {addr} never enters the active window (SCALE-Sim loops forever)"
                    ));
                }
                self.start = (self.start + self.p) % self.l;
                self.last += self.lines_per_refetch as i64 + 1;
                self.refetches += 1;
                let d = self.last - (cycle as i64 + offset);
                offset += d;
                if d > 0 {
                    offset += d;
                }
            }
        })?;
        Ok(cycle as i64 + offset)
    }

    /// The DRAM access SCALE-Sim reports for this operand.
    pub(crate) fn finish(self) -> Access {
        Access {
            start: -(self.first_lines as i64),
            stop: self.last,
            count: (self.first_lines + self.refetches * self.lines_per_refetch) * self.bw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalesim::topology::{SparsityRatio, TopoLayer};
    use crate::shape::Dataflow;

    /// SCALE-Sim counts a positive refetch delay twice (read_buffer.py adds
    /// `potential_stall_cycles` to the offset, then again when it is positive).
    #[test]
    fn first_refetch_stall_is_counted_twice() {
        // GEMM M=1, K=8, N=600 on 8×8 ws: fold fc reads FILTER columns fc·8..fc·8+7 on
        // its rows 0..7 (23-row folds). 1 kB FILTER SRAM, 1-word lines: 4,800 words in
        // 11-word sets (437 sets), a 47-set active window (the first 517 prefetch
        // elements: folds 0..7 and 5 words of fold 8), slid by 47 sets per refetch of
        // 512 lines (cycles).
        let l = TopoLayer {
            name: "g".into(),
            ifmap_h: 1,
            ifmap_w: 8,
            filt_h: 1,
            filt_w: 8,
            channels: 1,
            num_filt: 600,
            stride: 1,
            sparsity: SparsityRatio::DENSE,
        };
        let map = Mapping::new(&l, Dataflow::Ws, 8, 8).unwrap();
        let mut b = UserReadBuffer::new(&map, Operand::Filter, 1024, 1).unwrap();
        assert_eq!((b.l, b.a, b.p, b.lines_per_refetch), (437, 47, 47, 512));
        // fold 0..7: hits, serviced one cycle later
        for row in [0, 7, 23, 7 * 23 + 7] {
            assert_eq!(
                b.row(&map, Operand::Filter, row, row).unwrap(),
                row as i64 + 1
            );
        }
        // fold 8, row 184 at cycle 184: its first word (element 568, set 51) misses;
        // the refetch ends at cycle −1 + 512 + 1 = 512, d = 512 − (184 + 1) = 327
        let out = b.row(&map, Operand::Filter, 184, 184).unwrap();
        assert_eq!(out, 184 + 1 + 2 * 327);
        assert_eq!(b.refetches, 1);
        let a = b.finish();
        assert_eq!((a.start, a.stop, a.count), (-512, 512, 1024));
    }
}

//! TPU-MLIR's local-memory allocator, reproduced: the greedy placement of
//! `LmemAllocator::assignLmemAddr` (TPU-MLIR 1.30.2, layer group `opt=2`), so that a
//! plan exported to TPU-MLIR gets the addresses TPU-MLIR will give it, and a group
//! that TPU-MLIR cannot allocate is known before it is exported.
//!
//! The rules, read from TPU-MLIR's source and checked against the addresses in its
//! final MLIR (`tests/tpumlir_alloc.rs`: 18 groups of its own and of our exports
//! reproduced to the byte):
//! - Lifetimes are time-step intervals `[start, end]` over the group's `n` steps,
//!   closed; `start > end` wraps round the end of the table (a load for the next slice,
//!   a store of the previous one). Two wrapping lifetimes always meet.
//! - With more than one slice, held weights (`hold`) meet every other buffer, unless
//!   their sizes add up to the whole lane.
//! - Order: every round re-sorts the unplaced buffers by (still in some step's compute
//!   or DMA set, area = size × steps held, start step), stably. The first buffer goes
//!   to address 0; afterwards every unplaced buffer gets a candidate (the lowest free
//!   address, skipping banks it should not share), and the lowest candidate is placed
//!   (the earlier in the order on a tie). If any unplaced buffer has no room, the group
//!   fails: there is no second order and no backtracking.
//! - Banks: a buffer only moved by DMA in a step avoids the banks of the buffers the
//!   step's op uses; a buffer an op uses avoids those of the same op and of buffers
//!   moved by DMA in that step (only the first step of its life where such a relation
//!   exists counts). When no free block outside those banks fits, the lowest free block
//!   is taken anyway.
//! - Placed buffers are subtracted from the others' free space with their end rounded
//!   up to EU_BYTES, so every address is EU-aligned.
//! - A first-layer (3ic) conv's scratch buffer meets every activation and weight of a
//!   sliced group, and every buffer whose lifetime wraps in one run in one loop
//!   ([`Buf::always`]).
//! - In place: the result of an element-wise op may take its operand 0's exact
//!   address when that operand's life ends where the result's begins and it is not
//!   stored in that step.

use crate::alloc::align_up;
use crate::timestep::step_mask;

/// What a buffer holds (TPU-MLIR's `LMEM_WEIGHT`, `LMEM_ACTIVATION`, `LMEM_OPERATION`;
/// also its order of buffers of equal sort keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BufKind {
    /// A weight tensor.
    Weight,
    /// An activation tensor (group input, intermediate or output).
    Activation,
    /// An op's scratch buffer.
    Operation,
}

/// One local-memory buffer of a group.
#[derive(Debug, Clone)]
pub struct Buf {
    /// What it holds.
    pub kind: BufKind,
    /// Bytes per lane (not rounded).
    pub size: u64,
    /// First time step held.
    pub start: usize,
    /// Last time step held; below `start` when the lifetime wraps.
    pub end: usize,
    /// A weight held for the whole loop when the group is sliced.
    pub hold: bool,
    /// Meets every activation and weight buffer whatever the lifetimes (not other op
    /// buffers) in a sliced group, and in a group run in one loop every one whose
    /// lifetime wraps: TPU-MLIR 1.30.2 keeps the scratch buffer of a conv lowered with
    /// its 3ic trick (a first layer on ≤ 4 channels) so. Its allocation traces of two
    /// sliced bm1688 groups: the buffer's free space excluded the group input and a
    /// stored output whose lifetimes it does not share, and overlapped another op's
    /// buffer. Of an unsliced one (the zoo's U-Net on bm1688 with its input cast), it
    /// excluded the f32 input, loaded in the last step for the first (wrapping), and
    /// found no room after the same 33 placements as here; the unsliced first group
    /// of TPU-MLIR's own ResNet-34 on bm1684x overlaps weights and activations that
    /// do not wrap. No rule of its stored source explains it.
    pub always: bool,
}

/// An op of one time step: the buffers it reads and writes.
#[derive(Debug, Clone, Default)]
pub struct StepOp {
    /// Buffers it reads (operand order: operand 0 first).
    pub operands: Vec<usize>,
    /// Buffers it writes.
    pub results: Vec<usize>,
    /// Its scratch buffer, if any.
    pub imm: Option<usize>,
    /// It may write its result over operand 0 (an element-wise op whose operand 0 has
    /// no other user and is no smaller than the result).
    pub inplace: bool,
}

/// A transfer between global and local memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Global → local.
    Load,
    /// Local → global.
    Store,
}

/// The time steps of one loop iteration of a group: ops and transfers per step.
#[derive(Debug, Clone, Default)]
pub struct StepTable {
    /// Ops computed in each step.
    pub ops: Vec<Vec<StepOp>>,
    /// Transfers (buffer, direction) in each step.
    pub dma: Vec<Vec<(usize, Mode)>>,
}

impl StepTable {
    /// Number of time steps.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the table has no steps.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// Lane size, alignment and bank size, bytes.
#[derive(Debug, Clone, Copy)]
pub struct Lane {
    /// Bytes per lane.
    pub bytes: u64,
    /// Address alignment (EU_BYTES).
    pub align: u64,
    /// Bytes per bank.
    pub bank: u64,
}

/// Why a group could not be allocated (what TPU-MLIR reports as "local memory allocate
/// failed").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoRoom {
    /// The buffer that found no free block.
    pub buffer: usize,
    /// Buffers placed before it.
    pub placed: usize,
}

/// Whether two lifetimes share a step (TPU-MLIR's `is_timestep_overlapped`).
pub fn lifetimes_meet(a: &Buf, b: &Buf) -> bool {
    let (s0, e0, s1, e1) = (a.start, a.end, b.start, b.end);
    match (e0 < s0, e1 < s1) {
        (false, false) => !(s0 > e1 || s1 > e0),
        (true, false) | (false, true) => s1 <= e0 || s0 <= e1,
        (true, true) => true,
    }
}

/// Steps a buffer is held, in order from its start (wrapping).
fn steps_held(b: &Buf, n: usize) -> impl Iterator<Item = usize> {
    let len = if b.end >= b.start {
        b.end - b.start + 1
    } else {
        n - b.start + b.end + 1
    };
    let start = b.start;
    (0..len).map(move |i| (start + i) % n.max(1))
}

/// The steps a buffer is held as bits (`n` ≤ 128 steps).
fn held_mask(b: &Buf, n: usize) -> u128 {
    let (s, e) = (b.start as u64, b.end as u64);
    if e >= s {
        step_mask(s, e)
    } else {
        step_mask(s, n.saturating_sub(1) as u64) | step_mask(0, e)
    }
}

/// The set bits of `m`, lowest first.
fn bits(mut m: u128) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let t = m.trailing_zeros() as usize;
            m &= m - 1;
            t
        })
    })
}

/// Free ranges a buffer's list starts with room for (see `allocate`).
const FREE_LIST_CAPACITY: usize = 8;

/// Remove `[s, e)` from the sorted free list; whether a block was cut (TPU-MLIR then
/// looks for an in-place reuse).
fn subtract(free: &mut Vec<(u64, u64)>, s: u64, e: u64) -> bool {
    let mut split = false;
    let mut k = 0;
    while k < free.len() {
        let (a, b) = free[k];
        if e <= a || s >= b {
            k += 1;
        } else if s > a && e < b {
            free[k] = (a, s);
            free.insert(k + 1, (e, b));
            split = true;
            k += 2;
        } else if s <= a && e < b {
            free[k] = (e, b);
            split |= s == a;
            k += 1;
        } else if s > a {
            free[k] = (a, s);
            k += 1;
        } else {
            free.remove(k);
        }
    }
    split
}

/// TPU-MLIR's `can_membuf_inplace_alloc`: a buffer `post` may reuse `pre`'s bytes.
fn can_inplace(pre: &Buf, post: &Buf) -> bool {
    if post.start != pre.end {
        return false;
    }
    let (pre_wraps, post_wraps) = (pre.end < pre.start, post.end < post.start);
    if pre.end > pre.start && post.end > post.start {
        true
    } else if pre_wraps != post_wraps {
        post.end < pre.start
    } else {
        false
    }
}

/// TPU-MLIR's conflict heaps: per step, the buffers its ops use and those its DMA
/// moves, with how many of these sets hold each buffer.
struct ConflictSets {
    npu: Vec<Vec<usize>>,
    dma: Vec<Vec<usize>>,
    member: Vec<u32>,
    /// Per buffer, the steps whose sets held it at the start (sets only shrink).
    steps_of: Vec<Vec<usize>>,
    /// Whether a first [`ConflictSets::remove`] has visited every step.
    settled: bool,
}

impl ConflictSets {
    /// The sets of `table`'s steps with ops (buffers below `count` only).
    fn new(table: &StepTable, count: usize) -> ConflictSets {
        let n = table.len();
        let mut sets = ConflictSets {
            npu: vec![Vec::new(); n],
            dma: vec![Vec::new(); n],
            member: vec![0; count],
            steps_of: vec![Vec::new(); count],
            settled: false,
        };
        for t in (0..n).filter(|&t| !table.ops[t].is_empty()) {
            for op in &table.ops[t] {
                for &x in op.operands.iter().chain(&op.results) {
                    if x < count && !sets.npu[t].contains(&x) {
                        sets.npu[t].push(x);
                        sets.join(x, t);
                    }
                }
            }
            for &(x, _) in &table.dma[t] {
                if x < count && !sets.dma[t].contains(&x) {
                    sets.dma[t].push(x);
                    sets.join(x, t);
                }
            }
        }
        sets
    }

    fn join(&mut self, x: usize, t: usize) {
        self.member[x] += 1;
        if self.steps_of[x].last() != Some(&t) {
            self.steps_of[x].push(t);
        }
    }

    fn drop_from(list: &mut Vec<usize>, member: &mut [u32], x: usize, zeroed: &mut Vec<usize>) {
        if let Some(p) = list.iter().position(|&y| y == x) {
            list.swap_remove(p);
            member[x] = member[x].saturating_sub(1);
            if member[x] == 0 {
                zeroed.push(x);
            }
        }
    }

    fn clear(list: &mut Vec<usize>, member: &mut [u32], zeroed: &mut Vec<usize>) {
        for y in list.drain(..) {
            member[y] = member[y].saturating_sub(1);
            if member[y] == 0 {
                zeroed.push(y);
            }
        }
    }

    /// TPU-MLIR's `conflict_heap_delete` after placing `x`; returns the buffers no set
    /// holds any more. It visits every step, but after the first call no step has an
    /// empty op set beside a DMA set, nor an op set of one buffer without one, so only
    /// the steps whose sets held `x` can change.
    fn remove(&mut self, x: usize) -> Vec<usize> {
        let steps: Vec<usize> = if self.settled {
            std::mem::take(&mut self.steps_of[x])
        } else {
            self.settled = true;
            (0..self.npu.len()).collect()
        };
        let mut zeroed = Vec::new();
        for &t in &steps {
            Self::drop_from(&mut self.npu[t], &mut self.member, x, &mut zeroed);
            if self.npu[t].is_empty() && !self.dma[t].is_empty() {
                Self::clear(&mut self.dma[t], &mut self.member, &mut zeroed);
            }
        }
        for &t in &steps {
            Self::drop_from(&mut self.dma[t], &mut self.member, x, &mut zeroed);
            if self.npu[t].len() == 1 && self.dma[t].is_empty() {
                Self::clear(&mut self.npu[t], &mut self.member, &mut zeroed);
            }
        }
        zeroed
    }
}

/// The most bytes held in one step (each buffer rounded up to `align`; held weights
/// in every step when `hold_all`; an in-place op's result sharing its operand's bytes
/// in the op's step): no placement fits a lane smaller than this.
pub fn live_peak(bufs: &[Buf], table: &StepTable, align: u64, hold_all: bool) -> u64 {
    let n = table.len().max(1);
    // bytes entering at each step (a difference array over the steps)
    let mut delta = vec![0i128; n + 1];
    let mut add = |s: usize, e: usize, sz: i128| {
        delta[s.min(n)] += sz;
        delta[(e + 1).min(n)] -= sz;
    };
    for b in bufs {
        let sz = align_up(b.size, align) as i128;
        if hold_all && b.hold && b.kind != BufKind::Operation {
            add(0, n - 1, sz);
        } else if b.end >= b.start {
            add(b.start, b.end, sz);
        } else {
            add(b.start, n - 1, sz);
            add(0, b.end, sz);
        }
    }
    let mut live = vec![0i128; n];
    let mut acc = 0i128;
    for (t, l) in live.iter_mut().enumerate() {
        acc += delta[t];
        *l = acc;
    }
    for (t, ops) in table.ops.iter().enumerate() {
        for op in ops.iter().filter(|o| o.inplace) {
            if let (Some(&a), Some(&r)) = (op.operands.first(), op.results.first()) {
                if let (Some(x), Some(y)) = (bufs.get(a), bufs.get(r)) {
                    let shared = align_up(x.size, align).min(align_up(y.size, align));
                    if let Some(l) = live.get_mut(t) {
                        *l -= shared as i128;
                    }
                }
            }
        }
    }
    live.into_iter().max().unwrap_or(0).max(0) as u64
}

struct State<'a> {
    bufs: &'a [Buf],
    table: &'a StepTable,
    lane: Lane,
    /// Held weights meet every buffer (sliced group, weights fit).
    hold_all: bool,
    /// The group has a single slice.
    one_loop: bool,
    /// Producer (step, op index) of each buffer.
    producer: Vec<Option<(usize, usize)>>,
    /// Per buffer, the steps it is held (bits; all set past step 127).
    life: Vec<u128>,
    /// Per buffer, steps (bits; all set past step 127) where an op uses it or DMA moves
    /// it, and where it relates to an op (TPU-MLIR's `is_relate_op`) or DMA moves it.
    active: Vec<u128>,
    touched: Vec<u128>,
    /// Per buffer: its free blocks and the banks it avoids (bits; banks past the
    /// 128th are never avoided).
    free: Vec<Vec<(u64, u64)>>,
    banks: Vec<u128>,
    addr: Vec<Option<u64>>,
}

impl State<'_> {
    fn banks_of(&self, r: usize) -> std::ops::RangeInclusive<u64> {
        let a = self.addr[r].unwrap_or(0);
        let bank = self.lane.bank.max(1);
        a / bank..=(a + self.bufs[r].size.max(1) - 1) / bank
    }

    /// TPU-MLIR's `is_relate_op`: buffer `x` is tied to `op` in step `t`.
    fn relates(&self, x: usize, op: &StepOp, t: usize) -> bool {
        if self.bufs[x].kind == BufKind::Operation {
            op.imm == Some(x)
        } else if t == self.bufs[x].start {
            op.results.contains(&x)
        } else {
            op.operands.contains(&x)
        }
    }

    fn used_by_op(&self, x: usize, t: usize) -> bool {
        self.bufs[x].kind == BufKind::Operation
            || self.table.ops[t]
                .iter()
                .any(|o| o.results.contains(&x) || o.operands.contains(&x))
    }

    fn moved_in(&self, x: usize, t: usize) -> Option<Mode> {
        self.table.dma[t].iter().find(|d| d.0 == x).map(|d| d.1)
    }

    /// Update buffer `i`'s avoided banks and free blocks with the just-placed `r`
    /// (TPU-MLIR's `update_exclude_banks` and `update_avail_lmems`); whether either
    /// changed (else its candidate address stays what it was).
    fn update(&mut self, i: usize, r: usize) -> bool {
        let n = self.table.len();
        let (b, rb) = (&self.bufs[i], &self.bufs[r]);
        let mut changed = false;
        // banks: the first step of i's life with a relation to r (only steps where i
        // is used and r is touched can have one)
        let candidates = self.life[i] & self.active[i] & self.touched[r];
        if candidates != 0 {
            let hit_at = |t: usize| {
                let npu = self.used_by_op(i, t);
                let dma = self.moved_in(i, t).is_some();
                ((npu || dma)
                    && self.table.ops[t]
                        .iter()
                        .filter(|o| !npu || self.relates(i, o, t))
                        .any(|o| self.relates(r, o, t)))
                    || (npu && self.moved_in(r, t).is_some())
            };
            // those steps in lifetime order: from its start, then wrapped round
            let first_hit = if n > 128 {
                steps_held(b, n).find(|&t| hit_at(t))
            } else {
                let before = if b.start == 0 {
                    0
                } else {
                    step_mask(0, b.start as u64 - 1)
                };
                let from_start = candidates & !before;
                bits(from_start)
                    .chain(bits(candidates & !from_start))
                    .find(|&t| hit_at(t))
            };
            if first_hit.is_some() {
                for k in self.banks_of(r) {
                    if k < 128 {
                        changed |= self.banks[i] >> k & 1 == 0;
                        self.banks[i] |= 1u128 << k;
                    }
                }
            }
        }
        let one_loop = self.one_loop;
        let apart = |x: &Buf, y: &Buf| {
            x.always && y.kind != BufKind::Operation && (!one_loop || y.start > y.end)
        };
        let mut meet = lifetimes_meet(b, rb) || apart(b, rb) || apart(rb, b);
        if !meet && self.hold_all {
            meet = (b.kind != BufKind::Operation && b.hold)
                || (rb.kind != BufKind::Operation && rb.hold);
        }
        if meet {
            let a = self.addr[r].unwrap_or(0);
            let split = subtract(&mut self.free[i], a, align_up(a + rb.size, self.lane.align));
            if split && b.kind == BufKind::Activation && self.inplace_with(i, r) {
                let blk = (a, a + rb.size);
                let pos = self.free[i].partition_point(|x| x.0 < blk.0);
                self.free[i].insert(pos, blk);
            }
            let size = b.size;
            self.free[i].retain(|&(s, e)| e - s >= size);
            changed = true;
        }
        changed
    }

    /// Buffer `i`'s candidate address: the lowest free block that fits outside the
    /// banks it avoids, else the lowest free block (TPU-MLIR's
    /// `find_avail_lmem_location`); `None` if nothing fits.
    fn address(&self, i: usize) -> Option<u64> {
        let size = self.bufs[i].size;
        let first = self.free[i].first()?.0;
        let bank = self.lane.bank.max(1);
        let avoided = self.banks[i];
        for &(s, e) in &self.free[i] {
            // the block minus avoided banks: runs of allowed banks, lowest first
            let (k0, k1) = (s / bank, (e - 1) / bank);
            if k0 >= 128 {
                // past the banks we track: nothing avoided
                if e - s >= size {
                    return (s < self.lane.bytes).then_some(s);
                }
                continue;
            }
            let mut k = k0;
            while k <= k1 {
                if k < 128 && avoided >> k & 1 == 1 {
                    k += 1;
                    continue;
                }
                // extend the run of allowed banks from k
                let mut m = k;
                while m < k1 && (m + 1 >= 128 || avoided >> (m + 1) & 1 == 0) {
                    m += 1;
                }
                let a = s.max(k * bank);
                let z = e.min((m + 1).saturating_mul(bank));
                if z > a && z - a >= size {
                    return (a < self.lane.bytes).then_some(a);
                }
                k = m + 1;
            }
        }
        (first < self.lane.bytes).then_some(first)
    }

    /// Whether buffer `i` may take placed buffer `r`'s bytes in place.
    fn inplace_with(&self, i: usize, r: usize) -> bool {
        let (b, rb) = (&self.bufs[i], &self.bufs[r]);
        let op_at = |p: Option<(usize, usize)>| p.map(|(t, o)| &self.table.ops[t][o]);
        // i is the result of an in-place op whose operand 0 is r
        if let Some(p) = op_at(self.producer[i]) {
            if p.inplace
                && p.operands.first() == Some(&r)
                && rb.kind != BufKind::Operation
                && rb.end == b.start
                && self.moved_in(r, rb.end) != Some(Mode::Store)
                && can_inplace(rb, b)
            {
                return true;
            }
        }
        // r is the result of an in-place op whose operand 0 is i
        if let Some(p) = op_at(self.producer[r]) {
            if p.inplace
                && p.operands.first() == Some(&i)
                && rb.start == b.end
                && can_inplace(b, rb)
            {
                return true;
            }
        }
        false
    }
}

/// Place `bufs` as TPU-MLIR does (see the module docs). `one_loop`: the group has a
/// single slice (held weights then keep their own lifetimes). Returns each buffer's
/// address, or which buffer found no room.
pub fn allocate(
    bufs: &[Buf],
    table: &StepTable,
    lane: Lane,
    one_loop: bool,
) -> Result<Vec<u64>, NoRoom> {
    let n = table.len();
    let hold_sum: u64 = bufs
        .iter()
        .filter(|b| b.hold && b.kind != BufKind::Operation)
        .map(|b| b.size)
        .fold(0u64, |a, s| a.saturating_add(s));
    let hold_all = !one_loop && hold_sum < lane.bytes;
    let area_of = |b: &Buf| -> u64 {
        let steps = if hold_all && b.hold && b.kind != BufKind::Operation {
            n
        } else if b.end < b.start {
            b.end + 1 + n - b.start
        } else {
            b.end - b.start + 1
        };
        b.size.saturating_mul(steps as u64)
    };
    let areas: Vec<u64> = bufs.iter().map(area_of).collect();
    let mut producer = vec![None; bufs.len()];
    for (t, ops) in table.ops.iter().enumerate() {
        for (o, op) in ops.iter().enumerate() {
            for &r in &op.results {
                if let Some(p) = producer.get_mut(r) {
                    *p = Some((t, o));
                }
            }
        }
    }
    // the conflict sets: per step, buffers of its ops and of its transfers; `member`
    // counts the sets holding each buffer (its conflict flag is `member > 0`)
    let mut sets = ConflictSets::new(table, bufs.len());
    if live_peak(bufs, table, lane.align, hold_all) > lane.bytes {
        // no placement can fit: the bytes held in some step exceed the lane
        let big = (0..bufs.len()).max_by_key(|&i| bufs[i].size).unwrap_or(0);
        return Err(NoRoom {
            buffer: big,
            placed: 0,
        });
    }
    let far = if n > 128 { u128::MAX } else { 0 };
    let (mut active, mut touched) = (vec![far; bufs.len()], vec![far; bufs.len()]);
    for t in 0..n.min(128) {
        let bit = 1u128 << t;
        for op in &table.ops[t] {
            for &x in op.operands.iter().chain(&op.results).chain(op.imm.iter()) {
                if let Some(a) = active.get_mut(x) {
                    *a |= bit;
                }
            }
            for &x in &op.operands {
                if bufs.get(x).is_some_and(|b| b.start != t) {
                    touched[x] |= bit;
                }
            }
            for &x in &op.results {
                if bufs.get(x).is_some_and(|b| b.start == t) {
                    touched[x] |= bit;
                }
            }
            if let Some(x) = op.imm.filter(|&x| x < bufs.len()) {
                touched[x] |= bit;
            }
        }
        for &(x, _) in &table.dma[t] {
            if x < bufs.len() {
                active[x] |= bit;
                touched[x] |= bit;
            }
        }
    }
    // an op buffer counts as used by an op in every step (TPU-MLIR's
    // `is_buffer_used_by_npu`)
    for (x, b) in bufs.iter().enumerate() {
        if b.kind == BufKind::Operation {
            active[x] = u128::MAX;
        }
    }
    let life: Vec<u128> = bufs
        .iter()
        .map(|b| if n > 128 { u128::MAX } else { held_mask(b, n) })
        .collect();
    let mut st = State {
        life,
        active,
        touched,
        bufs,
        table,
        lane,
        hold_all,
        one_loop,
        producer,
        // room for a few splits, so `subtract` seldom grows a list (growing them was a
        // tenth of planning a transformer: `alloc` runs for every candidate group)
        free: (0..bufs.len())
            .map(|_| {
                let mut f = Vec::with_capacity(FREE_LIST_CAPACITY);
                f.push((0, lane.bytes));
                f
            })
            .collect(),
        banks: vec![0; bufs.len()],
        addr: vec![None; bufs.len()],
    };
    // The order TPU-MLIR's stable re-sort of its buffer list gives every round (ties
    // on the lowest candidate address go to the earliest): conflict first, then larger
    // area, earlier start, and among equals the buffer whose conflict flag cleared
    // latest, then the original order. Candidates are kept between rounds and
    // recomputed only for buffers the last placement changed.
    let mut cleared = vec![0usize; bufs.len()];
    let key = |x: usize, sets: &ConflictSets, cleared: &[usize]| {
        (
            std::cmp::Reverse(sets.member[x] > 0),
            std::cmp::Reverse(areas[x]),
            bufs[x].start,
            std::cmp::Reverse(cleared[x]),
            x,
        )
    };
    let mut unplaced: Vec<usize> = (0..bufs.len()).collect();
    let mut cand: Vec<Option<u64>> = bufs
        .iter()
        .map(|b| (b.size <= lane.bytes).then_some(0))
        .collect();
    let mut round = 0usize;
    while !unplaced.is_empty() {
        round += 1;
        let pos = if round == 1 {
            let p = (0..unplaced.len())
                .min_by_key(|&p| key(unplaced[p], &sets, &cleared))
                .unwrap_or(0);
            if bufs[unplaced[p]].size > lane.bytes {
                return Err(NoRoom {
                    buffer: unplaced[p],
                    placed: 0,
                });
            }
            cand[unplaced[p]] = Some(0);
            p
        } else {
            let mut best: Option<(usize, u64)> = None;
            for p in 0..unplaced.len() {
                let x = unplaced[p];
                let Some(a) = cand[x] else {
                    return Err(NoRoom {
                        buffer: x,
                        placed: bufs.len() - unplaced.len(),
                    });
                };
                let better = match best {
                    None => true,
                    Some((q, b)) => {
                        a < b
                            || (a == b
                                && key(x, &sets, &cleared) < key(unplaced[q], &sets, &cleared))
                    }
                };
                if better {
                    best = Some((p, a));
                }
            }
            best.map_or(0, |(p, _)| p)
        };
        let x = unplaced.swap_remove(pos);
        st.addr[x] = cand[x];
        for y in sets.remove(x) {
            cleared[y] = round;
        }
        for &y in &unplaced {
            if st.update(y, x) {
                cand[y] = st.address(y);
            }
        }
    }
    Ok(st.addr.into_iter().map(|a| a.unwrap_or(0)).collect())
}

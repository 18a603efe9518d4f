//! Local-memory allocation: give every block a lane address so that no two blocks held
//! in a common time step overlap. Order (the spec's): resident weights first when the
//! group is sliced, then longest lifetime, then largest size, then op order. Each block
//! takes the lowest EU_BYTES-aligned address that is free over its whole lifetime,
//! preferring (in three passes) an address that neither crosses a bank boundary nor
//! shares a bank with a block that the DMA engine and the compute engine use in the
//! same step; then one that only avoids the conflicts; then any free one.

/// What the allocator needs to know about a block.
#[derive(Debug, Clone)]
pub struct AllocItem {
    /// Bytes per lane.
    pub size: u64,
    /// Steps it occupies (bit mask, see [`crate::timestep::occupancy`]).
    pub mask: u128,
    /// Steps in which a DMA transfer reads or writes it (folded when pipelined).
    pub dma_mask: u128,
    /// Steps in which the compute op reads or writes it.
    pub compute_mask: u128,
    /// Resident (allocated first when sliced).
    pub resident: bool,
    /// First step held (op order).
    pub start: u64,
    /// Steps held (lifetime length).
    pub span: u64,
}

/// Where to put things: lane size, alignment and bank size, bytes.
#[derive(Debug, Clone, Copy)]
pub struct LaneGeometry {
    /// Bytes per lane.
    pub lane_bytes: u64,
    /// Address alignment (EU_BYTES).
    pub align: u64,
    /// Bytes per bank.
    pub bank_bytes: u64,
}

/// `x` rounded up to a multiple of `a` (> 0).
pub(crate) fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a).saturating_mul(a)
}

fn banks(addr: u64, size: u64, bank: u64) -> (u64, u64) {
    (addr / bank, (addr + size.max(1) - 1) / bank)
}

/// Allocate `items`; `None` if some block finds no free address (the caller slices
/// more). Returns the address of each item, in input order.
///
/// The spec's order with the bank preferences comes first. Where that leaves the free
/// space too fragmented for a large block (small blocks placed at bank boundaries
/// between large ones), the same order is packed densely (lowest free address, no
/// bank preference), and last the largest blocks first: a plan that fits without
/// the preferences beats slicing more.
pub fn allocate(items: &[AllocItem], geo: LaneGeometry) -> Option<Vec<u64>> {
    let spec = order_by(items, |x, y| y.span.cmp(&x.span).then(y.size.cmp(&x.size)));
    place_in_order(items, &spec, geo, true)
        .or_else(|| place_in_order(items, &spec, geo, false))
        .or_else(|| {
            let largest = order_by(items, |x, y| y.size.cmp(&x.size).then(y.span.cmp(&x.span)));
            place_in_order(items, &largest, geo, false)
        })
}

/// Item indices, resident blocks first, then by `key`, then op order and index.
fn order_by(
    items: &[AllocItem],
    key: impl Fn(&AllocItem, &AllocItem) -> std::cmp::Ordering,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&items[a], &items[b]);
        y.resident
            .cmp(&x.resident)
            .then(key(x, y))
            .then(x.start.cmp(&y.start))
            .then(a.cmp(&b))
    });
    order
}

/// Each item of `order` at the lowest free EU-aligned address over its lifetime;
/// with `prefer_banks`, first one inside a bank and free of DMA/compute clashes.
fn place_in_order(
    items: &[AllocItem],
    order: &[usize],
    geo: LaneGeometry,
    prefer_banks: bool,
) -> Option<Vec<u64>> {
    let mut addr: Vec<Option<u64>> = vec![None; items.len()];
    let mut placed: Vec<usize> = Vec::with_capacity(items.len());
    let bank = geo.bank_bytes.max(1);
    for &i in order {
        let it = &items[i];
        if it.size > geo.lane_bytes {
            return None;
        }
        // occupied intervals of blocks live at the same time, merged
        let mut busy: Vec<(u64, u64)> = placed
            .iter()
            .filter(|&&j| items[j].mask & it.mask != 0)
            .map(|&j| {
                let a = addr[j].unwrap_or(0);
                (a, a + items[j].size)
            })
            .collect();
        busy.sort_unstable();
        let mut gaps: Vec<(u64, u64)> = Vec::with_capacity(busy.len() + 1);
        let mut cur = 0u64;
        for (s, e) in busy {
            if s > cur {
                gaps.push((cur, s));
            }
            cur = cur.max(e);
        }
        if cur < geo.lane_bytes {
            gaps.push((cur, geo.lane_bytes));
        }
        // blocks whose DMA/compute use meets this one's in some step
        let clashers: Vec<(u64, u64)> = placed
            .iter()
            .filter(|&&j| {
                (it.dma_mask & items[j].compute_mask) | (it.compute_mask & items[j].dma_mask) != 0
            })
            .map(|&j| banks(addr[j].unwrap_or(0), items[j].size, bank))
            .collect();
        let conflict_free = |a: u64| -> bool {
            let (b0, b1) = banks(a, it.size, bank);
            clashers.iter().all(|&(c0, c1)| b1 < c0 || c1 < b0)
        };
        let in_one_bank = |a: u64| -> bool {
            if it.size <= bank {
                let (b0, b1) = banks(a, it.size, bank);
                b0 == b1
            } else {
                a % bank == 0
            }
        };
        // candidate addresses, ascending: each gap's aligned start and the bank
        // boundaries inside it
        let mut cands: Vec<u64> = Vec::new();
        for &(gs, ge) in &gaps {
            let a0 = align_up(gs, geo.align);
            if a0 + it.size <= ge {
                cands.push(a0);
            }
            let mut b = (gs / bank + 1) * bank;
            while b + it.size <= ge {
                if b > a0 && b % geo.align == 0 {
                    cands.push(b);
                }
                b += bank;
            }
        }
        let preferred = || {
            cands
                .iter()
                .copied()
                .find(|&a| in_one_bank(a) && conflict_free(a))
                .or_else(|| cands.iter().copied().find(|&a| conflict_free(a)))
        };
        let pick = prefer_banks
            .then(preferred)
            .flatten()
            .or_else(|| cands.first().copied())?;
        addr[i] = Some(pick);
        placed.push(i);
    }
    Some(addr.into_iter().map(|a| a.unwrap_or(0)).collect())
}

/// A lower bound of the lane bytes needed: the largest sum of sizes held in one step.
pub fn peak_lower_bound(items: &[AllocItem], steps: u64) -> u64 {
    (0..steps.min(128))
        .map(|s| {
            items
                .iter()
                .filter(|it| it.mask >> s & 1 == 1)
                .map(|it| it.size)
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(size: u64, mask: u128) -> AllocItem {
        AllocItem {
            size,
            mask,
            dma_mask: 0,
            compute_mask: 0,
            resident: false,
            start: 0,
            span: mask.count_ones() as u64,
        }
    }

    const GEO: LaneGeometry = LaneGeometry {
        lane_bytes: 1024,
        align: 64,
        bank_bytes: 256,
    };

    #[test]
    fn disjoint_lifetimes_share_addresses() {
        let a = allocate(&[item(512, 0b011), item(512, 0b100), item(256, 0b110)], GEO).unwrap();
        // longest span first: items 0 and 2 (span 2) then item 1
        assert_eq!(a[0], 0);
        assert_eq!(a[2], 512);
        assert_eq!(a[1], 0);
    }

    #[test]
    fn alignment_banks_and_failure() {
        let a = allocate(&[item(100, 1), item(100, 1), item(100, 1)], GEO).unwrap();
        for (i, x) in a.iter().enumerate() {
            assert_eq!(x % 64, 0);
            // each fits in one bank
            assert_eq!(x / 256, (x + 99) / 256, "item {i} at {x}");
        }
        assert!(allocate(&[item(600, 1), item(600, 1)], GEO).is_none());
        assert!(allocate(&[item(2000, 1)], GEO).is_none());
    }

    #[test]
    fn packs_densely_when_the_bank_preference_fragments_the_lane() {
        // a small block put at the next bank boundary (so as not to straddle two banks)
        // leaves a hole that splits the free space below what the last block needs
        let items = [item(192, 0b111), item(128, 0b111), item(704, 0b011)];
        let spec: Vec<usize> = vec![0, 1, 2];
        let preferring = place_in_order(&items, &spec, GEO, true);
        assert!(preferring.is_none(), "{preferring:?}");
        let a = allocate(&items, GEO).expect("fits when packed densely");
        assert_eq!(a, vec![0, 192, 320]);
    }

    #[test]
    fn resident_first_and_bank_conflicts_avoided() {
        let mut w = item(64, u128::MAX);
        w.resident = true;
        w.span = 1;
        let mut x = item(64, 0b10);
        x.compute_mask = 0b10;
        let mut y = item(64, 0b10);
        y.dma_mask = 0b10;
        let a = allocate(&[x, y, w], GEO).unwrap();
        assert_eq!(a[2], 0, "resident weight first");
        assert_ne!(
            a[0] / 256,
            a[1] / 256,
            "load and compute blocks of one step in different banks"
        );
    }
}

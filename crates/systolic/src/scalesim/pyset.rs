//! The iteration order of a CPython 3.11 `set` of integers (`Objects/setobject.c`).
//!
//! SCALE-Sim's custom-layout read buffer places an address in an SRAM bank by its
//! position in `list(line_set)`, the set of the line's addresses built by `add` in
//! fetch order; that position is where the address sits in the set's hash table.
//! The keys are numpy float64 addresses, whose hash is the integer value itself (every
//! address here is far below 2^61 − 1). A table starts with 8 slots; an add probes
//! `hash & mask` and the next 9 slots while they fit, then jumps to
//! `(i·5 + 1 + perturb) & mask` with `perturb >>= 5`; once `fill·5 ≥ mask·3` the table
//! grows to the smallest power of two above `4·used` and every key is inserted again
//! in slot order. Iteration walks the slots in order.

const MIN_SIZE: usize = 8;
const LINEAR_PROBES: usize = 9;
const PERTURB_SHIFT: u32 = 5;

/// A CPython set of distinct small non-negative integers, insertion only.
struct PySet {
    slots: Vec<Option<u64>>,
    used: usize,
}

impl PySet {
    fn new() -> Self {
        PySet {
            slots: vec![None; MIN_SIZE],
            used: 0,
        }
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The free slot `key` lands in, or `None` when it is already present.
    fn probe(slots: &[Option<u64>], key: u64) -> Option<usize> {
        let mask = slots.len() - 1;
        let mut perturb = key as usize;
        let mut i = key as usize & mask;
        loop {
            let probes = if i + LINEAR_PROBES <= mask {
                LINEAR_PROBES
            } else {
                0
            };
            for (slot, entry) in slots.iter().enumerate().skip(i).take(probes + 1) {
                match entry {
                    None => return Some(slot),
                    Some(k) if *k == key => return None,
                    Some(_) => {}
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i.wrapping_mul(5).wrapping_add(1).wrapping_add(perturb)) & mask;
        }
    }

    fn add(&mut self, key: u64) {
        let Some(slot) = Self::probe(&self.slots, key) else {
            return;
        };
        self.slots[slot] = Some(key);
        self.used += 1;
        // no deletions: fill = used
        if self.used * 5 >= self.mask() * 3 {
            let min_used = if self.used > 50_000 {
                self.used * 2
            } else {
                self.used * 4
            };
            self.resize(min_used);
        }
    }

    fn resize(&mut self, min_used: usize) {
        let mut size = MIN_SIZE;
        while size <= min_used {
            size <<= 1;
        }
        let old = std::mem::replace(&mut self.slots, vec![None; size]);
        for key in old.into_iter().flatten() {
            let slot = Self::probe(&self.slots, key).expect("keys are distinct");
            self.slots[slot] = Some(key);
        }
    }
}

/// The order `list(s)` gives for the set `s` built by adding `keys` in order.
pub(crate) fn iteration_order(keys: &[u64]) -> Vec<u64> {
    let mut set = PySet::new();
    for &k in keys {
        set.add(k);
    }
    set.slots.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Orders printed by CPython 3.11 (`list(s)` after `s.add(np.float64(k))` in order).
    #[test]
    fn orders_equal_cpython_3_11() {
        let run = |keys: Vec<u64>| iteration_order(&keys);
        let consecutive: Vec<u64> = (10_000_000..10_000_016).collect();
        assert_eq!(run(consecutive.clone()), consecutive);
        assert_eq!(
            run(vec![5, 37, 69, 101, 3, 2, 133, 1, 0, 165]),
            [0, 1, 2, 3, 101, 37, 69, 5, 133, 165]
        );
        let mut keys: Vec<u64> = (100..140).step_by(3).collect();
        keys.extend([7, 39, 71]);
        assert_eq!(
            run(keys),
            [130, 100, 133, 103, 136, 7, 106, 139, 39, 109, 71, 112, 115, 118, 121, 124, 127]
        );
        let strided: Vec<u64> = (0..20).map(|i| 10_000_000 + i * 8).collect();
        assert_eq!(
            run(strided),
            [
                10000000, 10000128, 10000008, 10000136, 10000016, 10000144, 10000024, 10000152,
                10000032, 10000040, 10000048, 10000056, 10000064, 10000072, 10000080, 10000088,
                10000096, 10000104, 10000112, 10000120
            ]
        );
    }
}

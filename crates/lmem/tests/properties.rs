//! Invariants of the local-memory model, checked on random chips and tensors:
//! no two elements share a (lane, bit position); every element lies inside the bytes its
//! lane reserves; `locate` inverts `address`; compact ≤ aligned ≤ line in size.

use proptest::prelude::*;
use std::collections::HashSet;
use tpusim_lmem::*;

fn chip_strategy() -> impl Strategy<Value = Chip> {
    (
        1u64..=8,
        prop::sample::select(vec![4u64, 8, 16, 32, 64]),
        any::<bool>(),
    )
        .prop_map(|(npu, eu, a4n)| Chip {
            align_4n: a4n,
            ..Chip::new("prop", npu, eu, 1 << 20, 8)
        })
}

fn shape_strategy() -> impl Strategy<Value = TensorShape> {
    (
        1u64..=5,
        1u64..=11,
        prop::option::of(1u64..=3),
        1u64..=4,
        1u64..=7,
    )
        .prop_map(|(n, c, d, h, w)| TensorShape { n, c, h, w, d })
}

fn dtype_strategy() -> impl Strategy<Value = ElementType> {
    prop::sample::select(vec![
        ElementType::S4,
        ElementType::S8,
        ElementType::F16,
        ElementType::F32,
    ])
}

fn all_indices(s: &TensorShape) -> impl Iterator<Item = ElementIndex> + '_ {
    (0..s.n).flat_map(move |n| {
        (0..s.c).flat_map(move |c| {
            (0..s.depth()).flat_map(move |d| {
                (0..s.h).flat_map(move |h| (0..s.w).map(move |w| ElementIndex { n, c, d, h, w }))
            })
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn local_layouts_are_injective_inside_the_reservation_and_invertible(
        chip in chip_strategy(),
        shape in shape_strategy(),
        dtype in dtype_strategy(),
        layout in prop::sample::select(LocalLayout::ALL.to_vec()),
        start in 0u64..8,
        addr_units in 0u64..4,
    ) {
        let start_npu = if layout.is_local() { start % chip.npu_num } else { 0 };
        let t = Placement { shape, dtype, layout, start_npu, start_addr: addr_units * chip.eu_bytes };
        let st = match t.storage(&chip) {
            Ok(st) => st,
            Err(LmemError::Unsupported4N { .. }) => return Err(TestCaseError::reject("4N cannot hold this dtype")),
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        };
        let end = if layout.is_local() {
            t.start_addr + t.lane_bytes(&chip).unwrap()
        } else {
            t.start_addr + global_bytes(&shape, dtype).unwrap()
        };
        let mut seen = HashSet::new();
        for idx in all_indices(&shape) {
            let a = t.address(&chip, &idx).unwrap();
            let bit = a.offset * 8 + a.bit;
            // unique position
            prop_assert!(seen.insert((a.lane, bit)), "{idx} collides at {a:?}");
            // inside the reservation
            prop_assert!(a.offset >= t.start_addr);
            prop_assert!(bit + st.elem_bits <= end * 8, "{idx} at {a:?} beyond {end}");
            // lane follows the channel
            if layout.is_local() {
                prop_assert_eq!(a.lane, Some((start_npu + idx.c) % chip.npu_num));
                prop_assert_eq!(a.address, a.lane.unwrap() * chip.lane_bytes + a.offset);
            }
            // inverse
            if a.bit == 0 {
                prop_assert_eq!(t.locate(&chip, a.lane.unwrap_or(0), a.offset).unwrap(), Some(idx));
            }
        }
    }

    #[test]
    fn compact_is_never_larger_than_aligned_nor_aligned_than_line(
        chip in chip_strategy(),
        shape in shape_strategy(),
        dtype in dtype_strategy(),
        start in 0u64..8,
    ) {
        let start = start % chip.npu_num;
        let size = |l| lane_bytes(&chip, &shape, dtype, l, start);
        if let (Ok(c), Ok(a), Ok(l)) = (size(LocalLayout::Compact), size(LocalLayout::Aligned), size(LocalLayout::Line)) {
            prop_assert!(c <= a && a <= l, "compact {c} aligned {a} line {l}");
            prop_assert_eq!(a % chip.eu_bytes, 0);
        }
    }

    #[test]
    fn every_byte_maps_back_to_at_most_one_element_in_range(
        chip in chip_strategy(),
        shape in shape_strategy(),
        start in 0u64..8,
    ) {
        // f32: each element owns 4 bytes; counting the bytes `locate` attributes to
        // elements over every lane must give exactly 4 per element.
        let t = Placement { shape, dtype: ElementType::F32, layout: LocalLayout::Aligned,
                            start_npu: start % chip.npu_num, start_addr: 0 };
        let lb = t.lane_bytes(&chip).unwrap();
        let mut count = 0u64;
        for lane in 0..chip.npu_num {
            for off in 0..lb {
                if let Some(idx) = t.locate(&chip, lane, off).unwrap() {
                    let a = t.address(&chip, &idx).unwrap();
                    prop_assert_eq!(a.lane, Some(lane));
                    prop_assert!(off >= a.offset && off < a.offset + 4);
                    count += 1;
                }
            }
        }
        prop_assert_eq!(count, 4 * shape.elements().unwrap());
    }
}

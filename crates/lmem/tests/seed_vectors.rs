//! The worked examples of `docs/spec/03-npu-local-memory.md` (from the seed article)
//! and the table, as tests.

use tpusim_lmem::*;

/// The spec's toy chip: 4 NPUs, EU_BYTES 64.
fn toy() -> Chip {
    Chip::from_toml("name='toy'\nnpu_num=4\neu_bytes=64\nlane_bytes=65536\nbanks=4").unwrap()
}

#[test]
fn fp16_2_3_4_5_start_0() {
    let s = strides(
        &toy(),
        &TensorShape::nchw(2, 3, 4, 5),
        ElementType::F16,
        LocalLayout::Aligned,
        0,
    )
    .unwrap();
    assert_eq!((s.w, s.h, s.c, s.n), (1, 5, 32, 32));
    assert_eq!(eu_num(&toy(), ElementType::F16).unwrap(), 32);
}

#[test]
fn fp16_2_3_4_5_start_2() {
    let s = strides(
        &toy(),
        &TensorShape::nchw(2, 3, 4, 5),
        ElementType::F16,
        LocalLayout::Aligned,
        2,
    )
    .unwrap();
    assert_eq!((s.w, s.h, s.c, s.n), (1, 5, 32, 64));
}

#[test]
fn global_2_2_3_2() {
    let s = strides(
        &toy(),
        &TensorShape::nchw(2, 2, 3, 2),
        ElementType::F32,
        LocalLayout::Global,
        0,
    )
    .unwrap();
    assert_eq!((s.w, s.h, s.c, s.n), (1, 2, 6, 12));
    assert_eq!(
        global_bytes(&TensorShape::nchw(2, 2, 3, 2), ElementType::F32).unwrap(),
        96
    );
}

#[test]
fn compact_and_line() {
    let sh = TensorShape::nchw(2, 3, 4, 5);
    let c = strides(&toy(), &sh, ElementType::F16, LocalLayout::Compact, 2).unwrap();
    assert_eq!((c.w, c.h, c.c, c.n), (1, 5, 20, 40));
    let l = strides(&toy(), &sh, ElementType::F16, LocalLayout::Line, 0).unwrap();
    assert_eq!((l.w, l.h, l.c, l.n), (1, 32, 128, 128));
}

#[test]
fn sizes_of_the_seed_tensor() {
    // start 0: 2 batches x 1 row x 32 f16 = 128 bytes; start 2: 2 x 2 rows x 32 x 2 = 256.
    let sh = TensorShape::nchw(2, 3, 4, 5);
    assert_eq!(
        lane_bytes(&toy(), &sh, ElementType::F16, LocalLayout::Aligned, 0).unwrap(),
        128
    );
    assert_eq!(
        lane_bytes(&toy(), &sh, ElementType::F16, LocalLayout::Aligned, 2).unwrap(),
        256
    );
    // compact start 0: 2 x 20 x 2 = 80 bytes, rounded to EU_BYTES 64 -> 128.
    assert_eq!(
        lane_bytes(&toy(), &sh, ElementType::F16, LocalLayout::Compact, 0).unwrap(),
        128
    );
    assert_eq!(lanes_used(&toy(), &sh), 3);
}

#[test]
fn addresses_follow_the_formula() {
    let chip = toy();
    let t = Placement {
        shape: TensorShape::nchw(2, 3, 4, 5),
        dtype: ElementType::F16,
        layout: LocalLayout::Aligned,
        start_npu: 2,
        start_addr: 128,
    };
    // (1,2,3,4): pos 4 -> lane 0, row 1; slots 1*64 + 1*32 + 3*5 + 4 = 115 -> 230 bytes.
    let a = t
        .address(
            &chip,
            &ElementIndex {
                n: 1,
                c: 2,
                d: 0,
                h: 3,
                w: 4,
            },
        )
        .unwrap();
    assert_eq!(
        (a.lane, a.offset, a.address),
        (Some(0), 128 + 230, 128 + 230)
    );
    // (0,1,0,0): pos 3 -> lane 3, row 0, offset 128.
    let a = t
        .address(
            &chip,
            &ElementIndex {
                n: 0,
                c: 1,
                d: 0,
                h: 0,
                w: 0,
            },
        )
        .unwrap();
    assert_eq!(
        (a.lane, a.offset, a.address),
        (Some(3), 128, 3 * 65536 + 128)
    );
    assert_eq!(
        t.locate(&chip, 0, 128 + 230).unwrap(),
        Some(ElementIndex {
            n: 1,
            c: 2,
            d: 0,
            h: 3,
            w: 4
        })
    );
    assert_eq!(
        t.locate(&chip, 0, 128 + 231).unwrap(),
        Some(ElementIndex {
            n: 1,
            c: 2,
            d: 0,
            h: 3,
            w: 4
        })
    );
    // lane 0, row 0 is before the start NPU: unused.
    assert_eq!(t.locate(&chip, 0, 128).unwrap(), None);
    // padding after h*w = 20 elements in a 32-element channel region.
    assert_eq!(t.locate(&chip, 2, 128 + 2 * 20).unwrap(), None);
}

#[test]
fn fits_and_banks() {
    let chip = Chip::preset("bm1684x").unwrap();
    let sh = TensorShape::nchw(1, 64, 112, 112);
    let lb = lane_bytes(&chip, &sh, ElementType::F16, LocalLayout::Aligned, 0).unwrap();
    assert_eq!(lb, 112 * 112 * 2); // 12544 is a multiple of EU_NUM 32
    let f = Placement {
        start_addr: 16384,
        ..Placement::new(sh, ElementType::F16, LocalLayout::Aligned)
    }
    .fit(&chip)
    .unwrap();
    assert_eq!((f.first_bank, f.last_bank), (1, 2)); // 16 KiB banks: [16384, 41472)
    let big = TensorShape::nchw(1, 64, 400, 400);
    assert!(!fits(&chip, &big, ElementType::F16, LocalLayout::Aligned, 0, 0).unwrap());
    let e = Placement::new(big, ElementType::F16, LocalLayout::Aligned)
        .fit(&chip)
        .unwrap_err()
        .to_string();
    assert!(e.contains("320000") && e.contains("262144"), "{e}");
}

#[test]
fn int4_counts_half_a_byte() {
    let chip = Chip::preset("bm1684x").unwrap();
    assert_eq!(eu_num(&chip, ElementType::S4).unwrap(), 128);
    assert_eq!(eu_num(&chip, ElementType::S8).unwrap(), 64);
    let sh = TensorShape::nchw(1, 64, 3, 3);
    // align_up(9, 128) = 128 nibbles = 64 bytes.
    assert_eq!(
        lane_bytes(&chip, &sh, ElementType::S4, LocalLayout::Aligned, 0).unwrap(),
        64
    );
    let t = Placement::new(sh, ElementType::U4, LocalLayout::Compact);
    let a = t
        .address(
            &chip,
            &ElementIndex {
                n: 0,
                c: 0,
                d: 0,
                h: 1,
                w: 0,
            },
        )
        .unwrap();
    assert_eq!((a.offset, a.bit), (1, 4));
}

#[test]
fn five_d_folds_depth_into_the_channel_region() {
    let chip = toy();
    let s = strides(
        &chip,
        &TensorShape::ncdhw(1, 4, 3, 2, 5),
        ElementType::F16,
        LocalLayout::Aligned,
        0,
    )
    .unwrap();
    assert_eq!((s.w, s.h, s.d, s.c, s.n), (1, 5, 10, 32, 32));
}

#[test]
fn bm1684_4n() {
    let chip = Chip::preset("bm1684").unwrap();
    // int8: 4 batches per 4-byte slot, EU_NUM = 128 / 4 = 32 slots.
    let t = Placement::new(
        TensorShape::nchw(5, 64, 2, 3),
        ElementType::S8,
        LocalLayout::Aligned,
    );
    assert_eq!(t.storage(&chip).unwrap().eu_num, 32);
    let s = t.strides(&chip).unwrap();
    assert_eq!((s.w, s.h, s.c, s.n), (1, 3, 32, 32));
    // ceil(5/4) = 2 groups x 32 slots x 4 bytes = 256 bytes.
    assert_eq!(t.lane_bytes(&chip).unwrap(), 256);
    let a = t
        .address(
            &chip,
            &ElementIndex {
                n: 2,
                c: 0,
                d: 0,
                h: 0,
                w: 1,
            },
        )
        .unwrap();
    assert_eq!(a.offset, 4 + 2);
    let a = t
        .address(
            &chip,
            &ElementIndex {
                n: 4,
                c: 0,
                d: 0,
                h: 0,
                w: 0,
            },
        )
        .unwrap();
    assert_eq!(a.offset, 32 * 4);
    // int16: 2N.
    let t16 = Placement {
        dtype: ElementType::S16,
        ..t
    };
    assert_eq!(t16.lane_bytes(&chip).unwrap(), 3 * 32 * 4);
    assert!(Placement {
        dtype: ElementType::S4,
        ..t
    }
    .lane_bytes(&chip)
    .is_err());
}

#[test]
fn bad_input_is_an_error() {
    let chip = toy();
    let sh = TensorShape::nchw(2, 3, 4, 5);
    let e = strides(&chip, &sh, ElementType::F16, LocalLayout::Aligned, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("start NPU 4"), "{e}");
    let t = Placement {
        start_addr: 10,
        ..Placement::new(sh, ElementType::F16, LocalLayout::Aligned)
    };
    assert!(t
        .fit(&chip)
        .unwrap_err()
        .to_string()
        .contains("start address 10"));
    let e = strides(
        &chip,
        &TensorShape::nchw(u64::MAX, u64::MAX, 2, 2),
        ElementType::F16,
        LocalLayout::Aligned,
        0,
    );
    assert!(matches!(e, Err(LmemError::Overflow { .. })), "{e:?}");
    let e = Placement::new(sh, ElementType::F16, LocalLayout::Aligned)
        .address(
            &chip,
            &ElementIndex {
                n: 0,
                c: 0,
                d: 0,
                h: 4,
                w: 0,
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("h = 4"));
    // An element beyond the end of its lane is an error, not an address in the next lane.
    let big = Placement::new(
        TensorShape::nchw(1, 4, 200, 200),
        ElementType::F32,
        LocalLayout::Aligned,
    );
    let e = big
        .address(
            &chip,
            &ElementIndex {
                n: 0,
                c: 0,
                d: 0,
                h: 199,
                w: 199,
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("beyond the lane size 65536"), "{e}");
    let tiny = Chip::from_toml("name='t'\nnpu_num=2\neu_bytes=2\nlane_bytes=64\nbanks=2").unwrap();
    assert!(eu_num(&tiny, ElementType::F32).is_err());
}

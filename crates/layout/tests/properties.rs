//! Properties of the index mapping and the relayout kernels, and a cross-check against
//! a naive pad → reshape → transpose implementation.

use proptest::prelude::*;
use tpusim_layout::{
    split_major, ArrayShape, Dim, ElementType, Geometry, Layout, Relayout, Tile, TileDim,
};

fn shape(dims: Vec<u64>, m2m: Vec<u64>, tiles: Vec<Vec<u64>>, t: ElementType) -> ArrayShape {
    let tiles = tiles
        .into_iter()
        .map(|v| Tile {
            dims: v.into_iter().map(TileDim::Size).collect(),
        })
        .collect();
    ArrayShape {
        element_type: t,
        dims: dims.into_iter().map(Dim::Static).collect(),
        layout: Some(Layout::new(m2m).with_tiles(tiles)),
    }
}

fn arb_case() -> impl Strategy<Value = (Vec<u64>, Vec<u64>, Vec<Vec<u64>>)> {
    (1usize..=3).prop_flat_map(|rank| {
        (
            proptest::collection::vec(1u64..=9, rank),
            Just((0..rank as u64).collect::<Vec<_>>()).prop_shuffle(),
            proptest::collection::vec(proptest::collection::vec(1u64..=4, 1..=3), 0..=2),
        )
    })
}

/// Naive single-tile layout: pad, reshape, transpose, row-major index.
fn naive_index(dims: &[u64], m2m: &[u64], tile: &[u64], idx: &[u64]) -> u64 {
    let mut d: Vec<u64> = m2m.iter().rev().map(|&k| dims[k as usize]).collect();
    let mut e: Vec<u64> = m2m.iter().rev().map(|&k| idx[k as usize]).collect();
    while d.len() < tile.len() {
        d.insert(0, 1);
        e.insert(0, 0);
    }
    let n = d.len();
    let k = tile.len();
    // Full tile vector (1 for untiled leading dims): padded, reshaped to (q, t) pairs,
    // transposed to (q…, t…).
    let t: Vec<u64> = (0..n)
        .map(|i| if i + k >= n { tile[i + k - n] } else { 1 })
        .collect();
    let qd: Vec<u64> = d.iter().zip(&t).map(|(d, t)| d.div_ceil(*t)).collect();
    let mut shape = qd.clone();
    shape.extend(&t);
    let mut pos: Vec<u64> = e.iter().zip(&t).map(|(e, t)| e / t).collect();
    pos.extend(e.iter().zip(&t).map(|(e, t)| e % t));
    pos.iter().zip(&shape).fold(0, |acc, (p, s)| acc * s + p)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn bijection_onto_non_padding((dims, m2m, tiles) in arb_case()) {
        let a = shape(dims, m2m, tiles, ElementType::F32);
        let g = Geometry::new(&a).unwrap();
        let lin = g.all_linear_indices();
        let mut seen = vec![false; g.physical_elements() as usize];
        for &n in &lin {
            prop_assert!(!seen[n as usize], "two elements at {}", n);
            seen[n as usize] = true;
        }
        // inverse ∘ forward = id, and the unused positions are exactly the padding.
        let mut count = 0;
        for p in 0..g.physical_elements() {
            match g.logical_index(p).unwrap() {
                Some(idx) => {
                    prop_assert!(seen[p as usize]);
                    prop_assert_eq!(g.linear_index(&idx).unwrap(), p);
                    count += 1;
                }
                None => prop_assert!(!seen[p as usize]),
            }
        }
        prop_assert_eq!(count, lin.len());
    }

    #[test]
    fn single_tile_matches_pad_reshape_transpose((dims, m2m, tiles) in arb_case()) {
        let Some(tile) = tiles.first().cloned() else { return Ok(()) };
        let a = shape(dims.clone(), m2m.clone(), vec![tile.clone()], ElementType::F32);
        let g = Geometry::new(&a).unwrap();
        let rank = dims.len();
        let mut idx = vec![0u64; rank];
        for &n in &g.all_linear_indices() {
            prop_assert_eq!(n, naive_index(&dims, &m2m, &tile, &idx));
            for k in (0..rank).rev() {
                idx[k] += 1;
                if idx[k] < dims[k] { break; }
                idx[k] = 0;
            }
        }
    }

    #[test]
    fn convert_round_trips_and_tiled_to_tiled_is_untile_then_tile(
        (dims, m2m, tiles) in arb_case(),
        tiles2 in proptest::collection::vec(proptest::collection::vec(1u64..=4, 1..=2), 0..=1),
        eb in prop::sample::select(vec![1usize, 2, 4, 8, 16]),
    ) {
        let t = match eb { 1 => ElementType::U8, 2 => ElementType::Bf16, 4 => ElementType::F32, 8 => ElementType::F64, _ => ElementType::C128 };
        let rank = dims.len();
        let logical = shape(dims.clone(), (0..rank as u64).rev().collect(), vec![], t);
        let a = shape(dims.clone(), m2m, tiles, t);
        let b = shape(dims, (0..rank as u64).collect(), tiles2, t);
        let (Ok(to_a), Ok(to_b)) = (Relayout::new(&logical, &a), Relayout::new(&logical, &b)) else {
            return Ok(()); // a later tile pads: refused, checked elsewhere
        };
        let n = to_a.src_bytes() as usize;
        let data: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8 | 1).collect();
        let mut pa = vec![0xAAu8; to_a.dst_bytes() as usize];
        to_a.run(&data, &mut pa).unwrap();
        // Padding is zero; every data byte is non-zero.
        let ga = Geometry::new(&a).unwrap();
        for p in 0..ga.physical_elements() {
            if ga.logical_index(p).unwrap().is_none() {
                prop_assert!(pa[p as usize * eb..(p as usize + 1) * eb].iter().all(|&x| x == 0));
            }
        }
        let mut back = vec![0u8; n];
        Relayout::new(&a, &logical).unwrap().run(&pa, &mut back).unwrap();
        prop_assert_eq!(&back, &data);
        // Tiled → tiled directly equals untile-then-tile.
        let mut direct = vec![0u8; to_b.dst_bytes() as usize];
        Relayout::new(&a, &b).unwrap().run(&pa, &mut direct).unwrap();
        let mut via = vec![0u8; to_b.dst_bytes() as usize];
        to_b.run(&data, &mut via).unwrap();
        prop_assert_eq!(direct, via);
    }
}

#[test]
fn big_packed_layouts_round_trip() {
    // Exercise the grouped (interleaved) kernel on the benchmark layouts, smaller, both
    // ways: 10 tile columns, so untiling f32 copies 512-byte runs in row chunks of 4, 4, 2.
    for (t, tiles) in [
        (ElementType::F32, vec![vec![8u64, 128]]),
        (ElementType::Bf16, vec![vec![8, 128], vec![2, 1]]),
        (ElementType::S8, vec![vec![32, 128], vec![4, 1]]),
    ] {
        let logical = shape(vec![64, 1280], vec![1, 0], vec![], t);
        let tiled = shape(vec![64, 1280], vec![1, 0], tiles.clone(), t);
        let r = Relayout::new(&logical, &tiled).unwrap();
        let data: Vec<u8> = (0..r.src_bytes()).map(|i| (i % 251) as u8).collect();
        let mut out = vec![0u8; r.dst_bytes() as usize];
        r.run(&data, &mut out).unwrap();
        let g = Geometry::new(&tiled).unwrap();
        let eb = t.storage_bytes() as usize;
        for (i, &p) in g.all_linear_indices().iter().enumerate() {
            assert_eq!(
                &out[p as usize * eb..(p as usize + 1) * eb],
                &data[i * eb..(i + 1) * eb]
            );
        }
        let mut back = vec![0u8; data.len()];
        Relayout::new(&tiled, &logical)
            .unwrap()
            .run(&out, &mut back)
            .unwrap();
        assert!(back == data, "{t:?} {tiles:?}: round trip differs");
    }
}

#[test]
fn refuses_unconvertible_layouts() {
    let t = ElementType::F32;
    let logical = shape(vec![3, 5], vec![1, 0], vec![], t);
    let pads_later = shape(vec![3, 5], vec![1, 0], vec![vec![2, 2], vec![3, 1]], t);
    let e = Relayout::new(&logical, &pads_later)
        .unwrap_err()
        .to_string();
    assert!(e.contains("later tile pads"), "{e}");
    let mut packed = shape(
        vec![8, 256],
        vec![1, 0],
        vec![vec![8, 128], vec![8, 1]],
        ElementType::S4,
    );
    packed.layout.as_mut().unwrap().element_size_bits = 4;
    let l4 = shape(vec![8, 256], vec![1, 0], vec![], ElementType::S4);
    assert!(Relayout::new(&l4, &packed)
        .unwrap_err()
        .to_string()
        .contains("E(4)"));
}

/// Convert with `split_major` pieces (each piece on its own sub-slices, pre-filled with
/// garbage) and return the destination, or `None` when the layouts do not split.
fn run_in_pieces(from: &ArrayShape, to: &ArrayShape, max: u64, src: &[u8]) -> Option<Vec<u8>> {
    let pieces = split_major(from, to, max).unwrap()?;
    let whole = Relayout::new(from, to).unwrap();
    let mut out = vec![0x5Au8; whole.dst_bytes() as usize];
    let (mut s_end, mut d_end) = (0, 0);
    for p in &pieces {
        assert_eq!(p.src.start, s_end, "pieces must tile the source");
        assert_eq!(p.dst.start, d_end, "pieces must tile the destination");
        (s_end, d_end) = (p.src.end, p.dst.end);
        p.relayout
            .run(
                &src[p.src.start as usize..p.src.end as usize],
                &mut out[p.dst.start as usize..p.dst.end as usize],
            )
            .unwrap();
    }
    assert_eq!((s_end, d_end), (whole.src_bytes(), whole.dst_bytes()));
    Some(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Converting piece by piece (as the CLI does for huge files) gives exactly the bytes
    /// of the whole conversion, both directions and tiled → tiled, for any piece size.
    #[test]
    fn pieces_equal_the_whole_conversion(
        (dims, m2m, tiles) in arb_case(),
        tiles2 in proptest::collection::vec(proptest::collection::vec(1u64..=4, 1..=3), 0..=1),
        eb in prop::sample::select(vec![1usize, 2, 4]),
        max in 1u64..200,
    ) {
        let t = match eb { 1 => ElementType::U8, 2 => ElementType::Bf16, _ => ElementType::F32 };
        let rank = dims.len();
        let logical = shape(dims.clone(), (0..rank as u64).rev().collect(), vec![], t);
        let a = shape(dims.clone(), m2m, tiles, t);
        let b = shape(dims, (0..rank as u64).rev().collect(), tiles2, t);
        for (from, to) in [(&logical, &a), (&a, &logical), (&a, &b), (&logical, &b)] {
            let Ok(whole) = Relayout::new(from, to) else { continue };
            let src: Vec<u8> = (0..whole.src_bytes()).map(|i| (i * 7 + 3) as u8).collect();
            let mut expect = vec![0u8; whole.dst_bytes() as usize];
            whole.run(&src, &mut expect).unwrap();
            if let Some(got) = run_in_pieces(from, to, max, &src) {
                prop_assert_eq!(got, expect);
            }
        }
    }
}

#[test]
fn tpu_layouts_split_into_many_pieces() {
    for (t, tiles) in [
        (ElementType::F32, vec![vec![8u64, 128]]),
        (ElementType::Bf16, vec![vec![8, 128], vec![2, 1]]),
        (ElementType::S8, vec![vec![32, 128], vec![4, 1]]),
    ] {
        // 67 rows: the last piece is a partial, padded tile row.
        let logical = shape(vec![67, 300], vec![1, 0], vec![], t);
        let tiled = shape(vec![67, 300], vec![1, 0], tiles, t);
        for (from, to) in [(&logical, &tiled), (&tiled, &logical)] {
            let pieces = split_major(from, to, 4096)
                .unwrap()
                .expect("splits along dim 0");
            assert!(
                pieces.len() > 1,
                "{from} -> {to}: {} piece(s)",
                pieces.len()
            );
            let whole = Relayout::new(from, to).unwrap();
            let src: Vec<u8> = (0..whole.src_bytes()).map(|i| (i % 251) as u8).collect();
            let mut expect = vec![0u8; whole.dst_bytes() as usize];
            whole.run(&src, &mut expect).unwrap();
            assert_eq!(run_in_pieces(from, to, 4096, &src).unwrap(), expect);
        }
    }
    // Dim 0 minor on one side: no contiguous bands, so no split.
    let a = shape(vec![16, 256], vec![1, 0], vec![], ElementType::F32);
    let b = shape(
        vec![16, 256],
        vec![0, 1],
        vec![vec![8, 128]],
        ElementType::F32,
    );
    assert!(split_major(&a, &b, 4096).unwrap().is_none());
}

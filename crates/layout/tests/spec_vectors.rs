//! Every worked example of `docs/spec/01-tiled-layouts.md` and issue 2, and XLA's own
//! unit-test index vectors.

use tpusim_layout::{parse_valid, sizes, ArrayShape, Geometry, LayoutError};

fn arr(text: &str) -> ArrayShape {
    parse_valid(text).unwrap().as_array().unwrap().clone()
}

fn lin(text: &str, idx: &[u64]) -> u64 {
    Geometry::new(&arr(text))
        .unwrap()
        .linear_index(idx)
        .unwrap()
}

#[test]
fn seed_figure_1() {
    assert_eq!(lin("F32[3,5]{1,0:T(2,2)}", &[2, 3]), 17);
    let g = Geometry::new(&arr("f32[3,5]{1,0:T(2,2)}")).unwrap();
    assert_eq!(g.physical_elements(), 24);
    assert_eq!(g.physical_dims(), &[2, 3, 2, 2]);
}

#[test]
fn seed_figure_2_grid() {
    let g = Geometry::new(&arr("bf16[4,8]{1,0:T(2,4)(2,1)}")).unwrap();
    assert_eq!(g.physical_dims(), &[2, 2, 1, 4, 2, 1]);
    let want: Vec<u64> = [
        [0, 2, 4, 6, 8, 10, 12, 14],
        [1, 3, 5, 7, 9, 11, 13, 15],
        [16, 18, 20, 22, 24, 26, 28, 30],
        [17, 19, 21, 23, 25, 27, 29, 31],
    ]
    .concat();
    assert_eq!(g.all_linear_indices(), want);
}

#[test]
fn xla_unit_test_vectors() {
    let t = "bf16[2048]{0:T(1024)(128)(2,1)}";
    assert_eq!(lin(t, &[0]), 0);
    assert_eq!(lin(t, &[128]), 1);
    assert_eq!(lin(t, &[1]), 2);
    assert_eq!(lin("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}", &[0, 2, 0]), 256);
    assert_eq!(lin("f32[8,4]{1,0:T(2,2)}", &[3, 1]), 11);
    assert_eq!(lin("f32[8]{0:T(2,2)}", &[5]), 9);
    assert_eq!(lin("f32[3]{0:T(8,128)}", &[2]), 2);
}

#[test]
fn inverse_of_the_vectors_and_padding() {
    let g = Geometry::new(&arr("f32[3,5]{1,0:T(2,2)}")).unwrap();
    assert_eq!(g.logical_index(17).unwrap(), Some(vec![2, 3]));
    // (2,1) in-tile of tile (1,0) is row 3: padding.
    assert_eq!(g.logical_index(14).unwrap(), None);
    assert!(matches!(
        g.logical_index(24),
        Err(LayoutError::OutOfRange(_))
    ));
    let g = Geometry::new(&arr("f32[8]{0:T(2,2)}")).unwrap();
    assert_eq!(g.logical_index(9).unwrap(), Some(vec![5]));
    assert_eq!(g.logical_index(2).unwrap(), None);
}

#[test]
fn combine_dims() {
    // f32[2,7,8,11,10] with (*,*,2,*,3) is f32[112,110] tiled by (2,3).
    let g = Geometry::new(&arr("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")).unwrap();
    assert_eq!(g.physical_dims(), &[56, 37, 2, 3]);
    let flat = Geometry::new(&arr("f32[112,110]{1,0:T(2,3)}")).unwrap();
    for idx in [
        [0u64, 0, 0, 0, 0],
        [1, 6, 7, 10, 9],
        [1, 2, 3, 4, 5],
        [0, 3, 5, 7, 1],
    ] {
        let row = idx[0] * 56 + idx[1] * 8 + idx[2];
        let col = idx[3] * 10 + idx[4];
        assert_eq!(
            g.linear_index(&idx).unwrap(),
            flat.linear_index(&[row, col]).unwrap()
        );
        let back = g.logical_index(g.linear_index(&idx).unwrap()).unwrap();
        assert_eq!(back, Some(idx.to_vec()));
    }
}

#[test]
fn spec_sizes() {
    let s = |t: &str| sizes(&arr(t)).unwrap();
    assert_eq!(s("f32[3,5]{1,0:T(2,2)}").array_size_bytes, 96);
    let nested = s("f32[3,5]{1,0:T(2,2)(3,1)}");
    assert_eq!(nested.array_size_bytes, 96);
    assert_eq!(nested.exact_size_bytes, 144);
    assert_eq!(nested.warnings.len(), 1, "{:?}", nested.warnings);
    assert_eq!(
        s("pred[256,1024]{1,0:T(32,128)(32,1)E(1)}").array_size_bytes,
        32768
    );
    assert_eq!(
        s("f32[150,200]{1,0:T(8,128)SC(0:30)}").array_size_bytes,
        122880
    );
    let b = s("bf16[1,1000]{1,0:T(2,128)(2,1)}");
    assert_eq!((b.logical_bytes, b.array_size_bytes), (2000, 4096));
    assert!(b.warnings.is_empty());
    assert_eq!(s("f32[1000,1]{0,1:T(1,128)}").array_size_bytes, 4096);
    assert_eq!(s("f32[1000,1]{1,0:T(8,128)}").array_size_bytes, 512000);
    assert_eq!(s("f32[3,5]").expansion, 1.0);
}

#[test]
fn errors_name_token_and_column() {
    let e = parse_valid("f32[3,5]{1,0:T(0,2)}").unwrap_err().to_string();
    assert!(e.starts_with("column 16:") && e.contains("'0'"), "{e}");
    let e = parse_valid("f32[3,5]{1,1}").unwrap_err().to_string();
    assert!(e.starts_with("column 12:") && e.contains("twice"), "{e}");
    let e = parse_valid("f32[3,5]{1,0:L(2)T(2,2)}")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("column 18:") && e.contains("'T'"), "{e}");
    let e = parse_valid("f32[3,x]").unwrap_err().to_string();
    assert!(e.starts_with("column 7:") && e.contains("'x'"), "{e}");
    let e = parse_valid("f32[3,5]{1,0:T(2,*)}").unwrap_err().to_string();
    assert!(e.starts_with("column 18:") && e.contains("'*'"), "{e}");
    let e = parse_valid("f32[3,5]{1,0:SC(0:3)}")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("column 19:") && e.contains("'3'"), "{e}");
    let e = parse_valid("f32[3,5]{1,0:L(0)}").unwrap_err().to_string();
    assert!(e.starts_with("column 14:") && e.contains("L(0)"), "{e}");
    let e = parse_valid("f32[3,5]{0}").unwrap_err().to_string();
    assert!(e.starts_with("column 9:") && e.contains("rank 2"), "{e}");
    let e = parse_valid("f32[99999999999999999999]")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("column 5:"), "{e}");
}

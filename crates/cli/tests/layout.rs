//! `tpusim layout …` end to end: the real binary, its JSON contract and its errors.

mod common;

use common::{npy, tpusim};
use predicates::prelude::*;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = tpusim()
        .args(args)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn info_fields() {
    let v = json(&["layout", "info", "F32[3,5]{1,0:T(2,2)(3,1)}"]);
    assert_eq!(v["shape"], "f32[3,5]{1,0:T(2,2)(3,1)}");
    assert_eq!(v["element_type"], "f32");
    assert_eq!(v["element_bits"], 32);
    assert_eq!(v["dims"], serde_json::json!([3, 5]));
    assert_eq!(v["minor_to_major"], serde_json::json!([1, 0]));
    assert_eq!(v["tiles"], serde_json::json!([[2, 2], [3, 1]]));
    assert_eq!(v["physical_shape"], serde_json::json!([2, 3, 1, 2, 3, 1]));
    assert_eq!(v["logical_bytes"], 60);
    assert_eq!(v["array_size_bytes"], 96);
    assert_eq!(v["exact_size_bytes"], 144);
    assert_eq!(v["expansion"], 1.6);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1);
    let v = json(&["layout", "info", "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}"]);
    assert_eq!(v["tiles"], serde_json::json!([["*", "*", 2, "*", 3]]));
    let v = json(&["layout", "info", "f32[<=4,3]{1,0:T(d,2)}"]);
    assert_eq!(v["dims"], serde_json::json!(["<=4", 3]));
    assert_eq!(v["tiles"], serde_json::json!([["d", 2]]));
    // An unbounded '?' dim: the canonical text and what is known; no sizes exist.
    let v = json(&["layout", "info", "BF16[?, 3]{1,0:D(C,C)T(8,128)(2,1)}"]);
    assert_eq!(v["shape"], "bf16[?,3]{1,0:T(8,128)(2,1)}");
    assert_eq!(v["dims"], serde_json::json!(["?", 3]));
    assert_eq!(v["tiles"], serde_json::json!([[8, 128], [2, 1]]));
    for field in [
        "physical_shape",
        "logical_bytes",
        "array_size_bytes",
        "expansion",
    ] {
        assert!(v[field].is_null(), "{field}: {}", v[field]);
    }
    assert!(v["warnings"][0].as_str().unwrap().contains("unbounded"));
    tpusim()
        .args(["layout", "info", "f32[?]"])
        .assert()
        .success()
        .stdout(predicate::str::contains("allocated bytes  unknown"));
}

#[test]
fn index_and_unindex() {
    for (shape, idx, want) in [
        ("f32[3,5]{1,0:T(2,2)}", "2,3", 17),
        ("bf16[2048]{0:T(1024)(128)(2,1)}", "128", 1),
        ("bf16[2048]{0:T(1024)(128)(2,1)}", "1", 2),
        ("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}", "0,2,0", 256),
        ("f32[8,4]{1,0:T(2,2)}", "3,1", 11),
        ("f32[8]{0:T(2,2)}", "5", 9),
        ("f32[3]{0:T(8,128)}", "2", 2),
    ] {
        assert_eq!(
            json(&["layout", "index", shape, idx])["linear_index"],
            want,
            "{shape} {idx}"
        );
        tpusim()
            .args(["layout", "index", shape, idx])
            .assert()
            .success()
            .stdout(format!("{want}\n"));
        let v = json(&["layout", "unindex", shape, &want.to_string()]);
        let back: Vec<String> = v["logical_index"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.to_string())
            .collect();
        assert_eq!(back.join(","), idx);
    }
    let v = json(&["layout", "unindex", "f32[3,5]{1,0:T(2,2)}", "14"]);
    assert_eq!(v["padding"], true);
    tpusim()
        .args(["layout", "unindex", "f32[3,5]{1,0:T(2,2)}", "14"])
        .assert()
        .success()
        .stdout("padding\n");
}

#[test]
fn map_grid_json_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("fig2.svg");
    let v = json(&[
        "layout",
        "map",
        "bf16[4,8]{1,0:T(2,4)(2,1)}",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let want: Vec<u64> = vec![
        0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 16, 18, 20, 22, 24, 26, 28, 30, 17,
        19, 21, 23, 25, 27, 29, 31,
    ];
    assert_eq!(v["linear_indices"], serde_json::json!(want));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert_eq!(text.matches("<rect").count(), 32);
    // Figure 1: 3x5 padded to 4x6 → 9 grey padding cells.
    let svg1 = dir.path().join("fig1.svg");
    tpusim()
        .args([
            "layout",
            "map",
            "f32[3,5]{1,0:T(2,2)}",
            "--svg",
            svg1.to_str().unwrap(),
        ])
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg1).unwrap();
    assert_eq!(text.matches("#dddddd").count(), 9);
    assert!(text.contains(">17<"));
    tpusim()
        .args(["layout", "map", "f32[1001,1000]"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("1001000 elements"));
}

#[test]
fn default_layouts() {
    let v = json(&[
        "layout",
        "default",
        "f32[1000,1]",
        "bf16[1,1000]",
        "--tpu",
        "v5e",
    ]);
    assert_eq!(v[0]["input"], "f32[1000,1]");
    assert_eq!(v[0]["shape"], "f32[1000,1]{0,1:T(1,128)}");
    assert_eq!(v[0]["array_size_bytes"], 4096);
    assert_eq!(v[1]["shape"], "bf16[1,1000]{1,0:T(2,128)(2,1)}");
    let v = json(&["layout", "default", "f32[1000,1]", "--doc"]);
    assert_eq!(v[0]["shape"], "f32[1000,1]{1,0:T(8,128)}");
    tpusim()
        .args(["layout", "default", "-", "--tpu", "v2"])
        .write_stdin("f32[1]\ns8[64,128]\n")
        .assert()
        .success()
        .stdout("f32[1]{0:T(256)}  1024 B\ns8[64,128]{1,0:T(8,128)(4,1)}  8192 B\n");
    tpusim()
        .args(["layout", "default", "f32[2]", "--tpu", "v9"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'v9'"));
}

#[test]
fn convert_npy_to_tiled_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    // f32[3,5] values 0..15 → T(2,2): element (2,3) = 13 lands at linear index 17.
    let data: Vec<u8> = (0..15u32).flat_map(|x| (x as f32).to_le_bytes()).collect();
    std::fs::write(p("a.npy"), npy("<f4", "(3, 5)", &data)).unwrap();
    tpusim()
        .args([
            "layout",
            "convert",
            "--from",
            "f32[3,5]",
            "--to",
            "f32[3,5]{1,0:T(2,2)}",
            &p("a.npy"),
            &p("a.bin"),
        ])
        .assert()
        .success();
    let bin = std::fs::read(p("a.bin")).unwrap();
    assert_eq!(bin.len(), 96);
    let f = |i: usize| f32::from_le_bytes(bin[i * 4..i * 4 + 4].try_into().unwrap());
    assert_eq!(f(17), 13.0);
    assert_eq!(f(14), 0.0); // padding is zero
    tpusim()
        .args([
            "layout",
            "convert",
            "--from",
            "f32[3,5]{1,0:T(2,2)}",
            "--to",
            "f32[3,5]",
            &p("a.bin"),
            &p("b.npy"),
        ])
        .assert()
        .success();
    assert_eq!(
        std::fs::read(p("b.npy")).unwrap(),
        npy("<f4", "(3, 5)", &data)
    );
    // bf16 given as uint16 .npy, tiled→tiled, back to .npy written as uint16.
    let d16: Vec<u8> = (0..30 * 70u16).flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(p("h.npy"), npy("<u2", "(30, 70)", &d16)).unwrap();
    let steps = [
        (
            "bf16[30,70]",
            "bf16[30,70]{1,0:T(8,128)(2,1)}",
            "h.npy",
            "h1.bin",
        ),
        (
            "bf16[30,70]{1,0:T(8,128)(2,1)}",
            "bf16[30,70]{0,1:T(4,128)(2,1)}",
            "h1.bin",
            "h2.bin",
        ),
        (
            "bf16[30,70]{0,1:T(4,128)(2,1)}",
            "bf16[30,70]",
            "h2.bin",
            "h3.npy",
        ),
    ];
    for (from, to, i, o) in steps {
        tpusim()
            .args([
                "layout",
                "convert",
                "--from",
                from,
                "--to",
                to,
                &p(i),
                &p(o),
            ])
            .assert()
            .success();
    }
    assert_eq!(
        std::fs::read(p("h3.npy")).unwrap(),
        npy("<u2", "(30, 70)", &d16)
    );
    // Wrong element size and wrong raw length are clear errors.
    tpusim()
        .args([
            "layout",
            "convert",
            "--from",
            "f64[3,5]",
            "--to",
            "f64[3,5]{1,0:T(2,2)}",
            &p("a.npy"),
            &p("x.bin"),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("4-byte elements"));
    tpusim()
        .args([
            "layout",
            "convert",
            "--from",
            "f32[4,5]{1,0:T(2,2)}",
            "--to",
            "f32[4,5]",
            &p("a.npy"),
            &p("x.npy"),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is named .npy but --from"));
    assert!(!dir.path().join("x.npy").exists());
}

/// `--piece-bytes` converts band by band (the mode huge files use) and gives exactly the
/// bytes of the one-piece conversion, both directions, including a padded last band.
#[test]
fn convert_in_pieces_equals_one_piece() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let d16: Vec<u8> = (0..203 * 300u32)
        .flat_map(|x| (x.wrapping_mul(2654435761) as u16).to_le_bytes())
        .collect();
    std::fs::write(p("in.npy"), npy("<u2", "(203, 300)", &d16)).unwrap();
    let (logical, tiled) = ("bf16[203,300]", "bf16[203,300]{1,0:T(8,128)(2,1)}");
    let run = |from: &str, to: &str, i: &str, o: &str, piece: Option<&str>| -> Value {
        let mut args = vec!["layout", "convert", "--from", from, "--to", to];
        let (pi, po) = (p(i), p(o));
        args.extend([pi.as_str(), po.as_str()]);
        if let Some(b) = piece {
            args.extend(["--piece-bytes", b]);
        }
        json(&args)
    };
    let v = run(logical, tiled, "in.npy", "whole.bin", None);
    assert_eq!(v["pieces"], 1);
    let v = run(logical, tiled, "in.npy", "pieces.bin", Some("8KiB"));
    assert!(v["pieces"].as_u64().unwrap() > 10, "{v}");
    let whole = std::fs::read(p("whole.bin")).unwrap();
    assert_eq!(whole.len(), 208 * 384 * 2);
    assert_eq!(std::fs::read(p("pieces.bin")).unwrap(), whole);
    let v = run(tiled, logical, "pieces.bin", "back.npy", Some("8KiB"));
    assert!(v["pieces"].as_u64().unwrap() > 10, "{v}");
    assert_eq!(
        std::fs::read(p("back.npy")).unwrap(),
        npy("<u2", "(203, 300)", &d16)
    );
    // A layout that does not split along dim 0 still converts, in one piece.
    let v = run(
        tiled,
        "bf16[203,300]{0,1:T(8,128)(2,1)}",
        "whole.bin",
        "t.bin",
        Some("8KiB"),
    );
    assert_eq!(v["pieces"], 1);
    tpusim()
        .args(["layout", "convert", "--from", logical, "--to", tiled])
        .args([p("in.npy"), p("x.bin")])
        .args(["--piece-bytes", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--piece-bytes"));
}

#[test]
fn hlo_padding_report() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../layout/tests/data/tpu_v5e_mlp.hlo.txt"
    );
    let v = json(&["layout", "hlo", file, "--top", "3"]);
    let arrays = v["arrays"].as_array().unwrap();
    assert_eq!(arrays.len(), 3);
    assert_eq!(arrays[0]["shape"], "bf16[1000,1000]{1,0:T(8,128)(2,1)}");
    assert_eq!(arrays[0]["array_size_bytes"], 2048000);
    assert_eq!(arrays[0]["logical_bytes"], 2000000);
    let wastes: Vec<u64> = arrays
        .iter()
        .map(|a| a["waste_bytes"].as_u64().unwrap())
        .collect();
    assert!(wastes.windows(2).all(|w| w[0] >= w[1]));
    assert!(v["array_count"].as_u64().unwrap() > 10);
    assert_eq!(
        v["total_waste_bytes"].as_u64().unwrap(),
        v["total_array_size_bytes"].as_u64().unwrap() - v["total_logical_bytes"].as_u64().unwrap()
    );
}

#[test]
fn bad_input_is_one_line_exit_2() {
    for (args, needle) in [
        (vec!["layout", "info", "f32[3,5]{1,0:T(0,2)}"], "column 16"),
        (
            vec!["layout", "info", "f32[3,5]{1,0:L(2)T(2,2)}"],
            "column 18",
        ),
        (vec!["layout", "info", "f32[3,5"], "column 8"),
        (vec!["layout", "index", "f32[3,5]", "3,0"], "out of range"),
        (vec!["layout", "index", "f32[3,5]", "1,x"], "'x'"),
        (vec!["layout", "unindex", "f32[3,5]", "15"], "beyond"),
        (vec!["layout", "index", "f32[?,5]", "0,0"], "unbounded"),
        (vec!["layout", "hlo", "/nonexistent.hlo"], "cannot read"),
    ] {
        let out = tpusim()
            .args(&args)
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8(out).unwrap();
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// Fuzz findings: a broken .npy header gave a multi-line error (npyz draws the parse
/// position), and a 4-byte input asking for a 4 TiB padded output started writing it
/// (the test asks for 4 EiB, more than any disk holds).
#[test]
fn convert_refuses_bad_headers_and_outputs_that_cannot_fit() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let mut bad = npy("<f4", "(3, 5)", &[0; 60]);
    bad[60] = b'z'; // inside the header's padding: not a Python literal any more
    std::fs::write(p("bad.npy"), bad).unwrap();
    let out = tpusim()
        .args([
            "layout",
            "convert",
            "--from",
            "f32[3,5]",
            "--to",
            "f32[3,5]{1,0:T(2,2)}",
        ])
        .args([p("bad.npy"), p("x.bin")])
        .output()
        .unwrap();
    common::bad_input(&out, &["is not a .npy file"]);

    std::fs::write(p("one.npy"), npy("<f4", "(1, 1)", &[0; 4])).unwrap();
    tpusim()
        .args(["layout", "convert", "--from", "f32[1,1]"])
        .args(["--to", "f32[1,1]{1,0:T(1073741824,1073741824)}"])
        .args([p("one.npy"), p("huge.bin")])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the output needs 4611686018427387904 bytes",
        ));
    assert!(!dir.path().join("huge.bin").exists());
}

/// Fuzz finding: `layout map --svg` rounded the grid up to whole tiles unchecked, so a
/// tile of 2^64−1 overflowed (a panic) and T(1000000000) would draw 1e9 cells.
#[test]
fn map_svg_bounds_the_padded_grid() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("m.svg");
    for shape in [
        "f32[3]{0:T(9223372036854775807)}",
        "f32[3,5]{1,0:T(8,1000000000)}",
    ] {
        let out = tpusim()
            .args(["layout", "map", shape, "--svg", svg.to_str().unwrap()])
            .output()
            .unwrap();
        let err = common::bad_input(&out, &["cells"]);
        assert!(err.starts_with("error: --svg:"), "{shape}: {err}");
    }
    assert!(!svg.exists());
}

/// Fuzz findings: `layout default -` read stdin line by line without a bound (with
/// `< /dev/zero` one endless line aborted allocating 4 GiB); a .npy header whose shape
/// multiplies past u64 panicked inside npyz in builds with overflow checks.
#[test]
fn endless_stdin_and_overflowing_npy_shapes_are_errors() {
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("tpusim"))
        .args(["layout", "default", "-"])
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: stdin holds more than"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let shape = "(4294967296, 4294967296, 4294967296)";
    std::fs::write(p("ovf.npy"), npy("|i1", shape, &[0; 16])).unwrap();
    tpusim()
        .args([
            "layout",
            "convert",
            "--from",
            "s8[29,2,16]",
            "--to",
            "s8[29,2,16]",
        ])
        .args([p("ovf.npy"), p("x.bin")])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("overflows 64 bits"));
}

//! `tpusim lmem …` run as a real binary: seed vectors through the CLI, JSON contract
//! fields, SVG output, and one-line errors with exit code 2 for bad input.

mod common;

use common::tpusim;
use predicates::prelude::*;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = tpusim().args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

const SEED: &[&str] = &[
    "lmem",
    "strides",
    "--npu-num",
    "4",
    "--eu-bytes",
    "64",
    "--shape",
    "2,3,4,5",
    "--dtype",
    "fp16",
];

#[test]
fn seed_vectors_through_the_cli() {
    let v = json(SEED);
    assert_eq!(
        (
            v["w"].as_u64(),
            v["h"].as_u64(),
            v["c"].as_u64(),
            v["n"].as_u64()
        ),
        (Some(1), Some(5), Some(32), Some(32))
    );
    assert_eq!(v["eu_num"], 32);
    assert_eq!(v["lanes_used"], 3);
    assert_eq!(v["lane_bytes"], 128);
    let mut a = SEED.to_vec();
    a.extend(["--start-npu", "2"]);
    let v = json(&a);
    assert_eq!((v["c"].as_u64(), v["n"].as_u64()), (Some(32), Some(64)));
    assert_eq!(v["lane_bytes"], 256);
    let v = json(&[
        "lmem", "strides", "--shape", "2,2,3,2", "--dtype", "f32", "--layout", "global",
    ]);
    assert_eq!(
        (
            v["w"].as_u64(),
            v["h"].as_u64(),
            v["c"].as_u64(),
            v["n"].as_u64()
        ),
        (Some(1), Some(2), Some(6), Some(12))
    );
    assert_eq!(v["lane_bytes"], Value::Null);
    assert_eq!(v["global_bytes"], 96);
}

#[test]
fn table_output_mentions_the_strides() {
    tpusim()
        .args(SEED)
        .args(["--start-npu", "2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("N 64  C 32  H 5  W 1"));
}

#[test]
fn addr_and_locate_round_trip() {
    let base = [
        "lmem",
        "addr",
        "--chip",
        "bm1684x",
        "--shape",
        "1,96,28,28",
        "--dtype",
        "f16",
        "--addr",
        "32KiB",
    ];
    let mut a = base.to_vec();
    a.extend(["--index", "0,70,3,4"]);
    let v = json(&a);
    // c 70 -> lane 6, row 1; C_stride align_up(784, 32) = 800; slots 800 + 3*28 + 4 = 888 -> 1776 bytes.
    assert_eq!(v["lane"], 6);
    assert_eq!(v["offset"], 32768 + 1776);
    assert_eq!(v["address"], 6 * 262144 + 32768 + 1776);
    let v = json(&[
        "lmem",
        "locate",
        "--chip",
        "bm1684x",
        "--shape",
        "1,96,28,28",
        "--addr",
        "32KiB",
        "--lane",
        "6",
        "--offset",
        "34544",
    ]);
    assert_eq!(v["used"], true);
    assert_eq!(
        (
            v["n"].as_u64(),
            v["c"].as_u64(),
            v["h"].as_u64(),
            v["w"].as_u64()
        ),
        (Some(0), Some(70), Some(3), Some(4))
    );
    // lane 40, row 1 holds no channel (96 channels: row 1 has lanes 0..31).
    let v = json(&[
        "lmem",
        "locate",
        "--chip",
        "bm1684x",
        "--shape",
        "1,96,28,28",
        "--lane",
        "40",
        "--offset",
        "1700",
    ]);
    assert_eq!(v["used"], false);
}

#[test]
fn presets_and_show() {
    let v = json(&["lmem", "presets"]);
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for p in [
        "bm1684x", "bm1688", "bm1690", "cv183x", "cv182x", "cv181x", "cv180x", "bm1684",
    ] {
        assert!(names.contains(&p), "{p} missing");
    }
    let v = json(&["lmem", "show", "bm1688"]);
    assert_eq!(
        (
            v["npu_num"].as_u64(),
            v["eu_bytes"].as_u64(),
            v["lane_bytes"].as_u64(),
            v["banks"].as_u64()
        ),
        (Some(32), Some(16), Some(131072), Some(16))
    );
    assert_eq!(v["bank_bytes"], 8192);
}

#[test]
fn chip_file_round_trips_through_show_toml() {
    let dir = tempfile::tempdir().unwrap();
    let out = tpusim()
        .args(["lmem", "show", "cv180x", "--toml"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace("npu_num = 2", "npu_num = 3");
    let path = dir.path().join("my.toml");
    std::fs::write(&path, text).unwrap();
    let v = json(&[
        "lmem",
        "strides",
        "--chip-file",
        path.to_str().unwrap(),
        "--shape",
        "1,7,2,2",
        "--dtype",
        "s8",
    ]);
    assert_eq!(v["npu_num"], 3);
    assert_eq!(v["n"], 3 * 16); // ceil(7/3) rows x align_up(4, 16)
}

#[test]
fn map_writes_svg() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lanes.svg");
    let mut a = SEED.to_vec();
    a.extend(["--start-npu", "2", "--svg", path.to_str().unwrap()]);
    let a: Vec<&str> = a
        .into_iter()
        .map(|s| if s == "strides" { "map" } else { s })
        .collect();
    tpusim()
        .args(&a)
        .assert()
        .success()
        .stdout(predicate::str::contains("wrote"));
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with("<svg"));
    assert_eq!(svg.matches(r#"class="data""#).count(), 6);
    assert_eq!(svg.matches(r#"class="unused""#).count(), 10);
}

#[test]
fn bad_input_is_one_line_exit_2() {
    for (args, needle) in [
        (
            vec!["lmem", "strides", "--shape", "2,3,4", "--dtype", "f16"],
            "'2,3,4'",
        ),
        (
            vec!["lmem", "strides", "--shape", "2,3,4,5", "--dtype", "f17"],
            "'f17'",
        ),
        (
            vec!["lmem", "strides", "--shape", "2,3,4,5", "--layout", "tiled"],
            "'tiled'",
        ),
        (
            vec!["lmem", "strides", "--chip", "bm9", "--shape", "2,3,4,5"],
            "'bm9'",
        ),
        (
            vec!["lmem", "strides", "--shape", "2,3,4,5", "--start-npu", "64"],
            "start NPU 64",
        ),
        (
            vec!["lmem", "strides", "--shape", "2,3,4,5", "--addr", "10"],
            "start address 10",
        ),
        (
            vec![
                "lmem",
                "strides",
                "--shape",
                "18446744073709551615,64,9999,9999",
            ],
            "overflows",
        ),
        (
            vec!["lmem", "addr", "--shape", "2,3,4,5", "--index", "0,3,0,0"],
            "c = 3",
        ),
        (
            vec![
                "lmem", "locate", "--shape", "2,3,4,5", "--lane", "64", "--offset", "0",
            ],
            "lane 64",
        ),
        (
            vec!["lmem", "strides", "--npu-num", "0", "--shape", "2,3,4,5"],
            "npu_num = 0",
        ),
        (
            vec![
                "lmem",
                "strides",
                "--chip-file",
                "/nonexistent.toml",
                "--shape",
                "2,3,4,5",
            ],
            "nonexistent",
        ),
    ] {
        let out = tpusim().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

#[test]
fn too_big_tensor_reports_no_fit() {
    let v = json(&[
        "lmem",
        "strides",
        "--shape",
        "1,64,400,400",
        "--dtype",
        "f16",
    ]);
    assert_eq!(v["fits"], false);
    assert_eq!(v["lane_bytes"], 320000);
    let v = json(&[
        "lmem",
        "strides",
        "--shape",
        "1,64,112,112",
        "--dtype",
        "f16",
        "--addr",
        "16KiB",
    ]);
    assert_eq!(v["fits"], true);
    assert_eq!(
        (v["first_bank"].as_u64(), v["last_bank"].as_u64()),
        (Some(1), Some(2))
    );
}

/// Fuzz finding: `lmem map --npu-num 4294967296` drew one column per lane and aborted
/// allocating 3 GB; now the lane count is bounded with a one-line error.
#[test]
fn map_of_a_chip_with_too_many_lanes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.svg");
    let out = tpusim()
        .args([
            "lmem",
            "map",
            "--npu-num",
            "4294967296",
            "--shape",
            "1,1,1,1",
            "--svg",
        ])
        .arg(&path)
        .output()
        .unwrap();
    common::bad_input(&out, &["at most 4096 lanes"]);
    assert!(!path.exists());
}

#[test]
fn one_chip_file_serves_every_npu_verb_and_names_a_bad_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = tpusim()
        .args(["lmem", "show", "bm1688", "--toml"])
        .output()
        .unwrap();
    let whole = String::from_utf8(out.stdout).unwrap();
    assert!(whole.contains("clock_hz") && whole.contains("tpu_mlir_dma_speedup"));
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let good = write("good.toml", &whole);
    let typo = write("typo.toml", &format!("{whole}gdma_byte_per_s = 1e9\n"));
    let slow = write(
        "slow.toml",
        &whole.replace("clock_hz = 900000000.0", "clock_hz = -1.0"),
    );
    assert_ne!(slow, good);
    let verbs = |file: &str| -> Vec<Vec<String>> {
        [
            vec!["lmem", "strides", "--shape", "1,8,4,4", "--chip-file", file],
            vec![
                "plan",
                "resnet18",
                "--resolution",
                "32",
                "--chip-file",
                file,
            ],
            vec![
                "report",
                "resnet18",
                "--resolution",
                "32",
                "--chip-file",
                file,
            ],
        ]
        .into_iter()
        .map(|v| v.into_iter().map(String::from).collect())
        .collect()
    };
    for args in verbs(&good) {
        tpusim().args(&args).assert().success();
    }
    for (file, needle) in [(&typo, "`gdma_byte_per_s`"), (&slow, "clock_hz = -1")] {
        for args in verbs(file) {
            let out = tpusim().args(&args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(needle), "{args:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        }
    }
}

//! The chip, roofline, slice and comm verbs as a user meets them: tables, the chip
//! database, user chip files, SVG plots, and one-line errors with exit code 2.

mod common;

use common::{json, tpusim};
use predicates::prelude::*;

#[track_caller]
fn fails(args: &[&str], needle: &str) {
    let out = tpusim().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail with 2");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: '{err}' lacks '{needle}'");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: more than one line: {err}"
    );
}

#[test]
fn list_and_show() {
    tpusim()
        .args(["chip", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("v5e").and(predicate::str::contains("h100")));
    let all = json(&["chip", "list", "--json"]);
    assert_eq!(all["chips"].as_array().unwrap().len(), 7);
    let v6e = json(&["chip", "show", "trillium", "--json"]);
    assert_eq!(v6e["name"], "v6e");
    assert_eq!(v6e["mxu_dim"], 256);
    assert_eq!(v6e["ici_links_per_chip"], 4);
    assert!(v6e["vpu_flops_per_s"].is_null(), "v6e clock is unknown");
    let v5e = json(&["chip", "show", "v5e", "--json"]);
    assert_eq!(v5e["vmem_bytes"], 128 * 1024 * 1024);
    assert_eq!(v5e["vmem_bytes_per_s"].as_f64(), Some(22.0 * 8.1e11));
    assert_eq!(v5e["wraparound"], "full_axis");
    tpusim()
        .args(["chip", "show", "v5e"])
        .assert()
        .success()
        .stdout(predicate::str::contains("B/s").and(predicate::str::contains("FLOP/s")));
}

#[test]
fn user_chip_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(
        tpusim()
            .args(["chip", "show", "v5e", "--toml"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let mine = text
        .replace("name = \"v5e\"", "name = \"mychip\"")
        .replace(
            "aliases = [\"tpu-v5e\", \"v5litepod\", \"v5lite\"]",
            "aliases = []",
        )
        .replace("hbm_bytes_per_s = 8.1e11", "hbm_bytes_per_s = 1.62e12");
    let path = dir.path().join("mychip.toml");
    std::fs::write(&path, &mine).unwrap();
    let p = path.to_str().unwrap();
    let v = json(&[
        "roofline",
        "op",
        "--chip",
        "mychip",
        "--chip-file",
        p,
        "--flops",
        "0",
        "--bytes",
        "1.62e12",
        "--json",
    ]);
    assert_eq!(v["t_comms_s"].as_f64(), Some(1.0));
    let s = json(&[
        "slice",
        "info",
        "mychip",
        "16x16",
        "--chip-file",
        p,
        "--json",
    ]);
    assert_eq!(s["hosts"], 32);
    // validation errors name the field and the file
    std::fs::write(
        &path,
        mine.replace("ici_bidi_bytes_per_s = 9e10", "ici_bidi_bytes_per_s = 7e10"),
    )
    .unwrap();
    fails(
        &["chip", "show", "mychip", "--chip-file", p],
        "ici_bidi_bytes_per_s",
    );
    std::fs::write(&path, mine.replace("pcie_bytes_per_s", "pcie_byte_per_s")).unwrap();
    fails(
        &["chip", "show", "mychip", "--chip-file", p],
        "pcie_byte_per_s",
    );
    std::fs::write(
        &path,
        mine.replace("hbm_bytes_per_s = 1.62e12", "hbm_bytes_per_s = -3.0"),
    )
    .unwrap();
    fails(
        &["chip", "show", "mychip", "--chip-file", p],
        "hbm_bytes_per_s",
    );
    fails(
        &[
            "chip",
            "show",
            "mychip",
            "--chip-file",
            "/nonexistent/x.toml",
        ],
        "cannot read chip file",
    );
}

#[test]
fn roofline_svg_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("roof.svg");
    tpusim()
        .args([
            "roofline", "matmul", "--chip", "v5e", "--b", "512", "--d", "4096", "--f", "16384",
            "--svg",
        ])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("critical_batch"));
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("class=\"op\"") && svg.contains("VMEM"));
}

#[test]
fn dtypes_padding_and_units() {
    let v = json(&[
        "roofline", "matmul", "--chip", "v6e", "--b", "8", "--d", "300", "--f", "1000", "--json",
    ]);
    assert_eq!(v["padded_d"], 512);
    assert_eq!(v["padded_f"], 1024);
    assert_eq!(v["flops"].as_f64(), Some(2.0 * 8.0 * 300.0 * 1000.0));
    let i4 = json(&[
        "roofline",
        "matmul",
        "--chip",
        "v5e",
        "--b",
        "8",
        "--d",
        "256",
        "--f",
        "256",
        "--dtype",
        "bf16",
        "--weights-dtype",
        "int4",
        "--json",
    ]);
    assert_eq!(i4["rate_class"], "bf16");
    assert_eq!(i4["w_bytes"], 256 * 256 / 2);
    let fp8 = json(&[
        "roofline", "matmul", "--chip", "h100", "--b", "8", "--d", "300", "--f", "100", "--dtype",
        "fp8", "--json",
    ]);
    assert_eq!(fp8["peak_flops_per_s"].as_f64(), Some(1.979e15));
    assert_eq!(fp8["padded_d"], 300, "no MXU padding on a GPU");
    let ew = json(&[
        "roofline",
        "elementwise",
        "--chip",
        "v5p",
        "--array",
        "bf16[1024,1024]",
        "--inputs",
        "2",
        "--json",
    ]);
    assert_eq!(ew["bytes"].as_f64(), Some(3.0 * 2.0 * 1024.0 * 1024.0));
    assert_eq!(ew["unit"], "vpu");
    assert_eq!(ew["bound"], "hbm");
    let red = json(&[
        "roofline", "reduce", "--chip", "v5e", "--array", "f32[4,8]", "--axes", "1", "--json",
    ]);
    assert_eq!(red["flops"].as_f64(), Some(28.0));
    let sizes = json(&["comm", "host", "v6e", "--bytes", "16GiB", "--json"]);
    assert_eq!(
        sizes["time_s"].as_f64(),
        Some(16.0 * 1024f64.powi(3) / 3.2e10)
    );
    let dcn = json(&["comm", "dcn", "v5e", "16x16", "--bytes", "1e11", "--json"]);
    assert_eq!(dcn["bound"], "dcn");
    assert_eq!(dcn["time_s"].as_f64(), Some(1e11 / 256.0 / 3.125e9));
    let hops = json(&[
        "slice", "hops", "v5e", "8x16", "--from", "0,0", "--to", "7,15", "--json",
    ]);
    assert_eq!(hops["hops"], 7 + 1);
    let cube = json(&["slice", "info", "v5p", "4x4x8", "--json"]);
    assert_eq!(cube["wraparound"], serde_json::json!([true, true, true]));
    assert_eq!(cube["max_hops"], 2 + 2 + 4);
    let small = json(&["slice", "info", "v4p", "2x2x4", "--json"]);
    assert_eq!(
        small["wraparound"],
        serde_json::json!([false, false, false])
    );
    tpusim()
        .args([
            "comm", "p2p", "v5e", "4x4", "--from", "0,0", "--to", "3,3", "--bytes", "1.7e7",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("µs"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    fails(&["chip", "show", "v9"], "unknown chip 'v9'");
    fails(&["slice", "info", "v5e", "4x4x4"], "has 2 axes");
    fails(&["slice", "info", "v5e", "32x4"], "axis 0 has 32 chips");
    fails(
        &["slice", "info", "v5e", "4xq"],
        "'q' is not a whole number",
    );
    fails(&["slice", "info", "h100", "8"], "switched network");
    fails(
        &[
            "comm", "p2p", "v5e", "4x4", "--from", "0,4", "--to", "1,1", "--bytes", "1",
        ],
        "index 4 on axis 1",
    );
    fails(
        &[
            "comm",
            "allgather",
            "v5e",
            "4x4",
            "--axes",
            "Z",
            "--bytes",
            "1",
        ],
        "bad axis 'Z'",
    );
    fails(
        &[
            "comm",
            "allgather",
            "v5e",
            "4x4",
            "--axes",
            "X,X",
            "--bytes",
            "1",
        ],
        "named twice",
    );
    fails(
        &[
            "comm", "p2p", "v5e", "4x4", "--from", "0,0", "--to", "1,1", "--bytes", "12XB",
        ],
        "unknown unit",
    );
    fails(
        &[
            "comm", "p2p", "v5e", "4x4", "--from", "0,0", "--to", "1,1", "--array", "bf16[8,",
        ],
        "missing closing",
    );
    fails(
        &[
            "roofline", "matmul", "--chip", "v5e", "--b", "0", "--d", "1", "--f", "1",
        ],
        "--b must be",
    );
    fails(
        &[
            "roofline", "matmul", "--chip", "v5e", "--b", "1", "--d", "1", "--f", "1", "--dtype",
            "c64",
        ],
        "c64",
    );
    fails(
        &[
            "roofline", "matmul", "--chip", "v5e", "--b", "4e9", "--d", "4e9", "--f", "4e9",
        ],
        "overflow",
    );
    fails(
        &[
            "roofline", "op", "--chip", "v5e", "--flops", "1", "--bytes", "1", "--from", "disk",
        ],
        "hbm, vmem or host",
    );
    fails(
        &[
            "roofline", "op", "--chip", "h100", "--flops", "1", "--bytes", "1", "--from", "vmem",
        ],
        "vmem_bw_ratio",
    );
    fails(
        &[
            "roofline",
            "elementwise",
            "--chip",
            "v6e",
            "--array",
            "bf16[8]",
        ],
        "vpu_flops_per_s",
    );
    fails(
        &[
            "roofline", "op", "--chip", "v5e", "--flops", "1", "--bytes", "1", "--bw", "0",
        ],
        "--bw must be > 0",
    );
    fails(
        &[
            "comm",
            "p2p",
            "v5e",
            "4x4",
            "--from",
            "0,0",
            "--to",
            "1,1",
            "--bytes",
            "1",
            "--hop-latency=-1",
        ],
        "--hop-latency",
    );
    fails(
        &[
            "comm",
            "allgather",
            "v5e",
            "4x4",
            "--axes",
            "X",
            "--bytes",
            "1",
            "--wraparound",
            "maybe",
        ],
        "--wraparound",
    );
}

#[test]
fn broken_chip_file_is_one_line() {
    // Fuzz finding: toml's "invalid string\nexpected `\"`" spanned two stderr lines.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.toml");
    std::fs::write(&path, "name = \n").unwrap();
    let p = path.to_str().unwrap();
    fails(&["chip", "show", "v5e", "--chip-file", p], "invalid string");
    std::fs::write(&path, "name = \"x\"\npod_shape = [16, 16\n").unwrap();
    fails(
        &["slice", "info", "x", "4x4", "--chip-file", p],
        "invalid array",
    );
}

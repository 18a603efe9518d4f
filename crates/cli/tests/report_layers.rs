//! `tpusim report` keeps the layers the user wrote (issue 18, item 2): a GEMM topology's
//! rows are independent layers whose FLOPs add up to Σ 2·M·N·K, and `--no-fuse` reports
//! the network without folding or merging anything.

mod common;

use serde_json::Value;

fn report(args: &[&str]) -> Value {
    common::json_of("report", args)
}

#[test]
fn gemm_rows_are_independent_layers() {
    let d = tempfile::tempdir().unwrap();
    let rows = [
        ("q_proj", 2048u64, 4096u64, 4096u64),
        ("k_proj", 2048, 1024, 4096),
        ("v_proj", 2048, 1024, 4096),
        ("o_proj", 2048, 4096, 4096),
        ("gate_proj", 2048, 14336, 4096),
        ("up_proj", 2048, 14336, 4096),
        ("down_proj", 2048, 4096, 14336),
    ];
    let mut csv = "Layer,M,N,K,\n".to_string();
    for (n, m, nn, k) in rows {
        csv.push_str(&format!("{n},{m},{nn},{k},\n"));
    }
    let path = d.path().join("llama_layer.csv");
    std::fs::write(&path, csv).unwrap();
    for chip in ["v5e", "bm1684x"] {
        let r = report(&[path.to_str().unwrap(), "--chip", chip]);
        let layers = r["layers"].as_array().unwrap();
        // on an NPU each row's f32 input is cast on the chip first (`--input-dtype`), and
        // its 16-bit output back to f32 last, as TPU-MLIR stores it
        let casts: Vec<&Value> = layers.iter().filter(|l| l["op"] == "cast").collect();
        if chip == "bm1684x" {
            assert_eq!(
                casts.len(),
                2 * rows.len(),
                "{chip}: a cast in and out a row"
            );
        }
        let mut names: Vec<&str> = layers
            .iter()
            .filter(|l| l["op"] != "cast")
            .map(|l| l["name"].as_str().unwrap())
            .collect();
        names.sort();
        let mut want: Vec<&str> = rows.iter().map(|r| r.0).collect();
        want.sort();
        assert_eq!(names, want, "{chip}");
        let flops: u64 = rows.iter().map(|(_, m, n, k)| 2 * m * n * k).sum();
        let matmul_flops: f64 = layers
            .iter()
            .filter(|l| l["op"] != "cast")
            .map(|l| l["flops"].as_f64().unwrap())
            .sum();
        assert_eq!(matmul_flops, flops as f64, "{chip}");
        let text = r.to_string();
        assert!(!text.contains("merge"), "{chip}: a merged tensor name");
    }
}

#[test]
fn no_fuse_reports_the_layers_as_written() {
    let fused = report(&["resnet18"]);
    let plain = report(&["resnet18", "--no-fuse"]);
    let count = |r: &Value| r["layers"].as_array().unwrap().len();
    assert!(
        count(&plain) > count(&fused),
        "{} vs {}",
        count(&plain),
        count(&fused)
    );
    let ops: Vec<&str> = plain["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert!(
        ops.iter().any(|n| n.contains("bn")),
        "batch-norms stay layers: {ops:?}"
    );
}

/// A built-in chip's TOML, renamed: `tpusim chip show` for a TPU, `lmem show` for an NPU.
fn renamed_chip(dir: &std::path::Path, verb: &[&str], from: &str, to: &str) -> String {
    let out = common::tpusim().args(verb).arg("--toml").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap().replacen(
        &format!("name = \"{from}\""),
        &format!("name = \"{to}\""),
        1,
    );
    assert!(text.contains(&format!("name = \"{to}\"")));
    let path = dir.join(format!("{to}.toml"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn chip_files_work_end_to_end_for_tpus_and_npus() {
    let d = tempfile::tempdir().unwrap();
    let tpu = renamed_chip(d.path(), &["chip", "show", "v5e"], "v5e", "mytpu");
    let npu = renamed_chip(d.path(), &["lmem", "show", "bm1684x"], "bm1684x", "mynpu");
    for (file, builtin, kind) in [(&tpu, "v5e", "tpu"), (&npu, "bm1684x", "npu")] {
        let mine = report(&["resnet18", "--chip-file", file]);
        let theirs = report(&["resnet18", "--chip", builtin]);
        assert_eq!(mine["chip_kind"], kind);
        assert_ne!(mine["chip"], theirs["chip"]);
        assert_eq!(mine["total_time_s"], theirs["total_time_s"], "{file}");
        assert_eq!(mine["bytes_moved"], theirs["bytes_moved"], "{file}");
    }
    // a sweep uses the file for the chip of its name
    let sweep = d.path().join("s.toml");
    std::fs::write(
        &sweep,
        "models = [\"resnet18\"]\nchips = [\"mytpu\", \"v5e\"]\n",
    )
    .unwrap();
    let out = common::tpusim()
        .args([
            "report",
            "--sweep",
            sweep.to_str().unwrap(),
            "--chip-file",
            &tpu,
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0][1], rows[1][1]), ("mytpu", "v5e"));
    assert_eq!(rows[0][5], rows[1][5], "same figures, so same time");
    assert!(
        rows.iter().all(|r| r.last() == Some(&"")),
        "no errors: {csv}"
    );
    // neither schema: one line naming both reasons
    let bad = d.path().join("bad.toml");
    std::fs::write(&bad, "name = \"x\"\n").unwrap();
    let out = common::tpusim()
        .args(["report", "resnet18", "--chip-file", bad.to_str().unwrap()])
        .output()
        .unwrap();
    common::bad_input(
        &out,
        &["bad.toml", "neither a TPU chip", "nor an NPU preset"],
    );
}

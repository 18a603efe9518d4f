//! `tpusim report` through the real binary: default run, JSON contract, HTML page,
//! sweeps to CSV, and bad input.

mod common;

use common::tpusim;
use predicates::prelude::*;
use serde_json::Value;
use std::path::PathBuf;

fn tiny() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/data/tiny.csv")
        .display()
        .to_string()
}

#[test]
fn no_arguments_runs_resnet50_on_v5e() {
    tpusim()
        .args(["report", "--summary"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "resnet50 on v5e (TPU), batch 1, bf16",
        ))
        .stdout(predicate::str::contains("total time"))
        .stdout(predicate::str::contains("Top 10 tensors by padding waste"));
}

#[test]
fn json_fields_are_the_contract() {
    let out = tpusim()
        .args(["report", &tiny(), "--chip", "bm1684x", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).expect("exactly one JSON document");
    for k in [
        "model",
        "chip",
        "total_time_s",
        "roofline_lower_bound_s",
        "flops",
        "bytes_logical",
        "bytes_moved",
        "layers",
        "groups",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    assert_eq!(v["model"], "tiny");
    assert_eq!(v["chip"], "bm1684x");
    let layers = v["layers"].as_array().unwrap();
    // the f32 input's cast (an NPU runs it on the chip, as TPU-MLIR does) and two convs
    assert_eq!(layers.len(), 3);
    assert_eq!(layers[0]["op"], "cast");
    for l in layers {
        for k in [
            "name",
            "op",
            "flops",
            "bytes_logical",
            "bytes_moved",
            "compute_s",
            "memory_s",
            "bound",
            "group",
        ] {
            assert!(l.get(k).is_some(), "layer missing {k}");
        }
    }
    let groups = v["groups"].as_array().unwrap();
    let sum: f64 = groups.iter().map(|g| g["time_s"].as_f64().unwrap()).sum();
    assert!((v["total_time_s"].as_f64().unwrap() - sum).abs() <= 1e-12 * sum);
    for g in groups {
        assert!(g["ops"].as_array().is_some_and(|o| !o.is_empty()));
    }
}

#[test]
fn table_lists_every_layer() {
    tpusim()
        .args(["report", &tiny()])
        .assert()
        .success()
        .stdout(predicate::str::contains("Layers (each alone"))
        .stdout(predicate::str::contains("conv1"))
        .stdout(predicate::str::contains("conv2"))
        .stdout(predicate::str::contains(
            "bf16[1,18,18,3]{2,3,1,0:T(4,128)(2,1)}",
        ));
}

#[test]
fn html_page_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    tpusim()
        .args([
            "report",
            &tiny(),
            "--chip",
            "v6e",
            "--vmem",
            "128MiB",
            "--html",
        ])
        .arg(&page)
        .assert()
        .success();
    let text = std::fs::read_to_string(&page).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>"));
    assert!(text.contains("<section id=\"summary\">"));
    assert!(text.contains("Total time (planned)"));
    assert!(!text.contains("<script"));
}

#[test]
fn sweep_writes_one_csv_row_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.toml");
    let t = tiny().replace('\\', "/");
    std::fs::write(
        &grid,
        format!(
            "models = [\"{t}\"]\nchips = [\"v5e\", \"bm1684x\", \"nochip\"]\nbatches = [1, 2]\n"
        ),
    )
    .unwrap();
    let csv = dir.path().join("runs.csv");
    tpusim()
        .args(["report", "--sweep"])
        .arg(&grid)
        .arg("--out")
        .arg(&csv)
        .assert()
        .success()
        .stderr(predicate::str::contains("2 of 6 runs failed"));
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    assert!(lines[0]
        .starts_with("model,chip,chip_kind,batch,dtype,total_time_s,roofline_lower_bound_s"));
    // fields, honouring RFC 4180 quotes (error messages contain commas)
    let fields = |l: &str| -> usize {
        let (mut n, mut quoted) = (1, false);
        for c in l.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => n += 1,
                _ => {}
            }
        }
        n
    };
    let ncols = fields(lines[0]);
    for l in &lines[1..] {
        assert_eq!(fields(l), ncols, "{l}");
    }
    assert!(lines[1].contains(",v5e,tpu,1,bf16,"), "{}", lines[1]);
    assert!(lines[2].contains(",v5e,tpu,2,bf16,"), "{}", lines[2]);
    assert!(lines[3].contains(",bm1684x,npu,1,f16,"), "{}", lines[3]);
    assert!(lines[5].contains("unknown chip"), "{}", lines[5]);
    // batch 2 does twice the FLOPs of batch 1
    let flops = |l: &str| l.split(',').nth(8).unwrap().parse::<u64>().unwrap();
    assert_eq!(flops(lines[2]), 2 * flops(lines[1]));
}

#[test]
fn sweep_html_plots_throughput_against_batch_per_chip_and_model() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.toml");
    let t = tiny().replace('\\', "/");
    std::fs::write(
        &grid,
        format!(
            "models = [\"{t}\"]\nchips = [\"v5e\", \"bm1684x\", \"nochip\"]\nbatches = [1, 2, 4]\n"
        ),
    )
    .unwrap();
    let (page, csv) = (dir.path().join("s.html"), dir.path().join("s.csv"));
    tpusim()
        .args(["report", "--sweep"])
        .arg(&grid)
        .arg("--html")
        .arg(&page)
        .arg("--out")
        .arg(&csv)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    // one chart for the one model, one line per chip that ran, one dot per run
    assert_eq!(html.matches("<svg").count(), 1, "{html}");
    assert_eq!(html.matches("<polyline").count(), 2);
    assert_eq!(html.matches("<circle").count(), 6);
    // every run in the table, the failed ones with their error
    assert_eq!(html.matches("<tr><td").count(), 9);
    assert!(html.contains("unknown chip"));
    // batch 4's throughput (batch / time) is the dot's title, as the CSV's time gives it
    let text = std::fs::read_to_string(&csv).unwrap();
    let row = text.lines().find(|l| l.contains(",v5e,tpu,4,")).unwrap();
    let time: f64 = row.split(',').nth(5).unwrap().parse().unwrap();
    let rate = tpusim_report::units::si(4.0 / time, "/s");
    assert!(
        html.contains(&format!("v5e bf16: batch 4, {rate}")),
        "{rate}"
    );
}

#[test]
fn bad_input_is_one_error_line_and_exit_2() {
    for (args, needle) in [
        (
            vec!["report", "resnet18", "--chip", "nochip"],
            "unknown chip 'nochip'",
        ),
        (vec!["report", "resnet18", "--dtype", "f64"], "dtype 'f64'"),
        (vec!["report", "resnet18", "--batch", "0"], "batch 0"),
        (vec!["report", "nonet"], "nonet"),
        (
            vec!["report", "missing.onnx"],
            "cannot read ONNX file 'missing.onnx'",
        ),
        (
            vec!["report", "resnet18", "--resolution", "0,3"],
            "--resolution",
        ),
        (
            vec!["report", "--sweep", "missing.toml"],
            "cannot read sweep file",
        ),
    ] {
        tpusim()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with("error: "))
            .stderr(predicate::str::contains(needle))
            .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    }
}

#[test]
fn bad_sweep_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.toml");
    std::fs::write(&grid, "models = [\"resnet18\"]\nchip = [\"v5e\"]\n").unwrap();
    tpusim()
        .args(["report", "--sweep"])
        .arg(&grid)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sweep file"));
}

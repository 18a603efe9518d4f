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
    // the f32 input's cast (an NPU runs it on the chip, as TPU-MLIR does), two convs
    // and the cast of the 16-bit output to f32 (as TPU-MLIR stores it)
    assert_eq!(layers.len(), 4);
    assert_eq!(layers[0]["op"], "cast");
    assert_eq!(layers[3]["op"], "cast");
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
    assert!(
        lines[0].starts_with("model,chip,chip_kind,batch,dtype,phase,seq,context,total_time_s,")
    );
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
    let at = lines[0].split(',').position(|h| h == "flops").unwrap();
    let flops = |l: &str| l.split(',').nth(at).unwrap().parse::<u64>().unwrap();
    assert_eq!(flops(lines[2]), 2 * flops(lines[1]));
}

#[test]
fn sweep_writes_parquet_by_extension_or_format() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.toml");
    std::fs::write(
        &grid,
        "models = [\"resnet18\"]\nchips = [\"v5e\", \"nochip\"]\nbatches = [1, 2]\n",
    )
    .unwrap();
    let magic = |path: &std::path::Path| {
        let b = std::fs::read(path).unwrap();
        b.len() > 8 && b.starts_with(b"PAR1") && b.ends_with(b"PAR1")
    };
    let by_extension = dir.path().join("runs.parquet");
    tpusim()
        .args(["report", "--sweep"])
        .arg(&grid)
        .arg("--out")
        .arg(&by_extension)
        .assert()
        .success();
    assert!(magic(&by_extension));
    let asked = dir.path().join("runs.bin");
    tpusim()
        .args(["report", "--sweep"])
        .arg(&grid)
        .args(["--format", "parquet", "--out"])
        .arg(&asked)
        .assert()
        .success();
    assert_eq!(
        std::fs::read(&asked).unwrap(),
        std::fs::read(&by_extension).unwrap()
    );
    // CSV when asked, whatever the name
    let csv = dir.path().join("runs2.parquet");
    tpusim()
        .args(["report", "--sweep"])
        .arg(&grid)
        .args(["--format", "csv", "--out"])
        .arg(&csv)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&csv)
        .unwrap()
        .starts_with("model,chip,"));
    // Parquet is a file, never the terminal
    tpusim()
        .args(["report", "--sweep"])
        .arg(&grid)
        .args(["--format", "parquet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--out FILE.parquet"));
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
    let header = text.lines().next().unwrap();
    let at = header.split(',').position(|h| h == "total_time_s").unwrap();
    let time: f64 = row.split(',').nth(at).unwrap().parse().unwrap();
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

#[test]
fn sweep_runs_transformers_by_phase_as_report_does() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.toml");
    std::fs::write(
        &grid,
        "models = [\"llama-3-8b\", \"resnet18\"]\nchips = [\"v5e\"]\nbatches = [8]\n\
         phases = [\"prefill\", \"decode\"]\nseqs = [512]\ncontexts = [4096]\n",
    )
    .unwrap();
    let out = tpusim()
        .args(["report", "--sweep"])
        .arg(&grid)
        .assert()
        .success()
        .stderr(predicate::str::contains("2 of 4 runs failed"))
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for phase in ["prefill", "decode"] {
        let row: Vec<&str> = text
            .lines()
            .find(|l| l.starts_with("llama-3-8b,") && l.contains(phase))
            .unwrap()
            .split(',')
            .collect();
        let single = tpusim()
            .args(["report", "llama-3-8b", "--phase", phase])
            .args([
                "--batch",
                "8",
                "--seq",
                "512",
                "--context",
                "4096",
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let doc: serde_json::Value = serde_json::from_slice(&single).unwrap();
        let time: f64 = row[col("total_time_s")].parse().unwrap();
        assert_eq!(time, doc["total_time_s"].as_f64().unwrap(), "{phase}");
        assert_eq!(row[col("context")], "4096");
    }
    // a CNN's rows say why the transformer keys do not apply
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("resnet18,") && l.contains("apply to transformers"))
            .count(),
        2
    );
}

#[test]
fn plan_and_report_take_one_resolution_syntax() {
    // `224x224`, `224,224` and `224` mean the same to every verb
    let json = common::json;
    for verb in ["report", "plan"] {
        let chip = if verb == "plan" { "bm1684x" } else { "v5e" };
        let base = [verb, "resnet18", "--chip", chip, "--json", "--resolution"];
        let comma = json(&[&base[..], &["112,112"]].concat());
        let times = json(&[&base[..], &["112x112"]].concat());
        let one = json(&[&base[..], &["112"]].concat());
        assert_eq!(comma, times, "{verb}");
        assert_eq!(comma, one, "{verb}");
        let other = json(&[&base[..], &["96x96"]].concat());
        assert_ne!(comma, other, "{verb}: the resolution must reach the model");
    }
    for bad in ["0x3", "1x2x3", "ax4"] {
        tpusim()
            .args(["report", "resnet18", "--resolution", bad])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--resolution"));
    }
}

#[test]
fn report_and_plan_read_an_onnx_file_at_its_own_resolution() {
    // an ONNX CNN exported at 128×128 (the zoo's fpn_like): `report` used to time it at
    // 224×224 while `plan` kept the file's size, so the two disagreed about one network
    let net = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../planner/tests/data/zoo/fpn_like.onnx"
    );
    let json = common::json;
    let time_of = |extra: &[&str]| {
        let report = json(&[&["report", net, "--chip", "bm1684x", "--json"][..], extra].concat());
        let plan = json(&[&["plan", net, "--chip", "bm1684x", "--json"][..], extra].concat());
        let planned = plan["seconds"].as_f64().unwrap();
        let reported = report["total_time_s"].as_f64().unwrap();
        assert!(
            (reported - planned).abs() <= 1e-12,
            "{extra:?}: report {reported} s, plan {planned} s"
        );
        reported
    };
    let own = time_of(&[]);
    assert_eq!(own, time_of(&["--resolution", "128"]));
    assert!(time_of(&["--resolution", "224"]) > 2.0 * own);
}

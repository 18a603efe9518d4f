//! `tpusim systolic …` end to end: the real binary, its JSON contract, its files.

mod common;
/// SCALE-Sim 3's sparsity and custom layouts (one test binary with these, to link once).
#[path = "systolic/scalesim3.rs"]
mod scalesim3;

use common::tpusim;
use std::path::{Path, PathBuf};

fn json(args: &[&str]) -> serde_json::Value {
    let out = tpusim()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

const FIELDS: [&str; 8] = [
    "cycles",
    "compute_cycles",
    "weight_load_cycles",
    "macs",
    "utilization",
    "folds",
    "sram_reads",
    "sram_writes",
];

#[test]
fn gemm_json_contract_and_seed_cycles() {
    // the seed's 4×4 case: R-cycle load, then 3N−2 cycles
    let v = json(&[
        "systolic", "gemm", "--m", "4", "--k", "4", "--n", "4", "--rows", "4", "--cols", "4",
        "--json",
    ]);
    for f in FIELDS {
        assert!(v.get(f).is_some(), "missing {f}");
    }
    assert_eq!(v["cycles"], 14);
    assert_eq!(v["compute_cycles"], 10);
    assert_eq!(v["weight_load_cycles"], 4);
    assert_eq!(v["macs"], 64);
    assert_eq!(v["folds"], 1);
}

#[test]
fn cycle_mode_equals_analytic_mode_for_every_dataflow() {
    for df in ["ws", "os", "is"] {
        for db in [false, true] {
            let mut a = vec![
                "systolic",
                "gemm",
                "--m",
                "37",
                "--k",
                "50",
                "--n",
                "29",
                "--rows",
                "8",
                "--cols",
                "6",
                "--dataflow",
                df,
                "--json",
            ];
            if !db {
                a.push("--no-double-buffer");
            }
            let an = json(&a);
            a.extend(["--mode", "cycle"]);
            let cy = json(&a);
            for f in FIELDS {
                assert_eq!(an[f], cy[f], "{df} db={db} {f}");
            }
        }
    }
    let conv = [
        "systolic", "conv", "--ifmap", "9,9,4", "--filter", "3,3,6", "--stride", "2", "--pad", "1",
        "--batch", "2", "--groups", "2", "--rows", "8", "--cols", "8", "--json",
    ];
    let an = json(&conv);
    let mut c2 = conv.to_vec();
    c2.extend(["--mode", "cycle"]);
    let cy = json(&c2);
    for f in FIELDS {
        assert_eq!(an[f], cy[f], "conv {f}");
    }
    assert_eq!(an["m"], 2 * 5 * 5);
    assert_eq!(an["k"], 3 * 3 * 2);
}

#[test]
fn check_runs_every_dtype_and_dataflow() {
    for dt in ["i8", "i32", "bf16", "f32"] {
        for df in ["ws", "os", "is"] {
            let v = json(&[
                "systolic",
                "check",
                "--m",
                "33",
                "--k",
                "41",
                "--n",
                "19",
                "--rows",
                "8",
                "--cols",
                "8",
                "--dtype",
                dt,
                "--dataflow",
                df,
                "--json",
            ]);
            assert_eq!(v["cycles_match"], true, "{dt} {df}");
            assert_eq!(v["products_match"], true, "{dt} {df}");
            if dt == "i8" || dt == "i32" {
                assert_eq!(v["max_abs_error"], 0.0);
            }
        }
    }
}

fn golden_dir(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../systolic/tests/data/scalesim")
        .join(case)
}

/// `tpusim systolic run -c CFG -t TOPO -p OUT --scalesim-compat`, to add to and run.
fn compat_run(cfg: &Path, topo: &Path, out: &Path) -> assert_cmd::Command {
    let mut cmd = tpusim();
    cmd.args(["systolic", "run", "-c"])
        .arg(cfg)
        .arg("-t")
        .arg(topo)
        .arg("-p")
        .arg(out)
        .arg("--scalesim-compat");
    cmd
}

#[test]
fn run_scalesim_compat_reproduces_scalesim_reports() {
    for case in [
        "gemm_8_ws_calc",
        "conv_32_os_calc",
        "conv_128_is_calc",
        "gemm_32_is_user",
        "conv_8_ws_user",
        // operands over half their SRAM: refetched (CALC) and stalled (USER)
        "gemm_128_os_calc",
        "stall_conv_8_is_user",
    ] {
        let g = golden_dir(case);
        let out = tempfile::tempdir().unwrap();
        tpusim()
            .args(["systolic", "run", "--config"])
            .arg(g.join("scale.cfg"))
            .arg("--topology")
            .arg(g.join("topology.csv"))
            .arg("--out")
            .arg(out.path())
            .arg("--scalesim-compat")
            .assert()
            .success();
        for rep in [
            "COMPUTE_REPORT.csv",
            "BANDWIDTH_REPORT.csv",
            "DETAILED_ACCESS_REPORT.csv",
        ] {
            let got = std::fs::read_to_string(out.path().join(case).join(rep)).unwrap();
            let want = std::fs::read_to_string(g.join(rep)).unwrap();
            assert_eq!(got, want, "{case} {rep}");
        }
    }
}

#[test]
fn run_default_model_writes_the_same_report_shapes() {
    let g = golden_dir("gemm_8_ws_user");
    let out = tempfile::tempdir().unwrap();
    let v: serde_json::Value = serde_json::from_slice(
        &tpusim()
            .args(["systolic", "run", "-c"])
            .arg(g.join("scale.cfg"))
            .arg("-t")
            .arg(g.join("topology.csv"))
            .arg("-p")
            .arg(out.path())
            .args(["-i", "gemm", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(v["model"], "tpusim");
    assert_eq!(v["layers"].as_array().unwrap().len(), 2);
    for rep in [
        "COMPUTE_REPORT.csv",
        "BANDWIDTH_REPORT.csv",
        "DETAILED_ACCESS_REPORT.csv",
    ] {
        let got = std::fs::read_to_string(out.path().join("gemm_8_ws_user").join(rep)).unwrap();
        let want = std::fs::read_to_string(g.join(rep)).unwrap();
        assert_eq!(got.lines().next(), want.lines().next(), "{rep} header");
        assert_eq!(got.lines().count(), want.lines().count());
    }
    // where SCALE-Sim itself crashes the compat mode refuses with a reason, exit 2:
    // 1024 new FILTER words on one demand row fill two 500-word refetch epochs in one
    // cycle (SCALE-Sim 3.0.0: ZeroDivisionError in read_buffer_estimate_bw.py)
    let cfg = std::fs::read_to_string(golden_dir("gemm_8_ws_calc").join("scale.cfg"))
        .unwrap()
        .replace("ArrayHeight:    8", "ArrayHeight:    4")
        .replace("ArrayWidth:     8", "ArrayWidth:     1024")
        .replace("FilterSramSzkB:   64", "FilterSramSzkB:   1");
    std::fs::write(out.path().join("crash.cfg"), cfg).unwrap();
    std::fs::write(out.path().join("crash.csv"), "Layer,M,N,K,\ng,4,1024,4,\n").unwrap();
    let (cfg, topo) = (out.path().join("crash.cfg"), out.path().join("crash.csv"));
    compat_run(&cfg, &topo, out.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "FILTER read buffer: two read-buffer prefetch triggers in cycle 0",
        ));
}

#[test]
fn svg_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.svg");
    tpusim()
        .args([
            "systolic", "gemm", "--m", "6", "--k", "4", "--n", "4", "--rows", "4", "--cols", "4",
            "--svg",
        ])
        .arg(&f)
        .assert()
        .success();
    let s = std::fs::read_to_string(&f).unwrap();
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    assert_eq!(
        s.matches("fill=\"#1a73e8\"").count(),
        6 * 4 * 4,
        "one busy mark per MAC"
    );
}

#[test]
fn bad_input_is_one_line_exit_2() {
    for args in [
        vec!["systolic", "gemm", "--m", "0", "--k", "1", "--n", "1"],
        vec![
            "systolic",
            "gemm",
            "--m",
            "1",
            "--k",
            "1",
            "--n",
            "1",
            "--dataflow",
            "xs",
        ],
        vec![
            "systolic", "gemm", "--m", "1", "--k", "1", "--n", "1", "--rows", "0",
        ],
        vec![
            "systolic",
            "gemm",
            "--m",
            "99999999999",
            "--k",
            "99999999999",
            "--n",
            "99999999999",
        ],
        vec![
            "systolic", "gemm", "--m", "1e6", "--k", "1e6", "--n", "1e6", "--mode", "cycle",
        ],
        vec!["systolic", "conv", "--ifmap", "4,4,3", "--filter", "5,5,8"],
        vec!["systolic", "conv", "--ifmap", "4,4", "--filter", "3,3,8"],
        vec![
            "systolic", "conv", "--ifmap", "8,8,3", "--filter", "3,3,8", "--groups", "2",
        ],
        vec![
            "systolic", "check", "--m", "4", "--k", "4", "--n", "4", "--dtype", "f64",
        ],
        // Fuzz findings: a 1e10-element input (one output pixel) aborted allocating it;
        // 4096³ ran for minutes under the old MAC limit.
        vec![
            "systolic",
            "conv",
            "--ifmap",
            "100000,100000,1",
            "--filter",
            "1,1,1",
            "--stride",
            "100000",
            "--mode",
            "cycle",
        ],
        vec![
            "systolic", "check", "--m", "4096", "--k", "4096", "--n", "4096",
        ],
        vec![
            "systolic",
            "run",
            "--config",
            "/nonexistent.cfg",
            "--topology",
            "/nonexistent.csv",
        ],
    ] {
        let out = tpusim().args(&args).assert().code(2).get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("error: ") && err.trim_end().lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

#[test]
fn gemm_scalesim_compat_matches_scalesim_golden() {
    // gemm_8_ws_calc layer g1 (M=30, N=20, K=19) on 8×8 ws: SCALE-Sim's Total Cycles 467
    let v = json(&[
        "systolic",
        "gemm",
        "--m",
        "30",
        "--k",
        "19",
        "--n",
        "20",
        "--rows",
        "8",
        "--cols",
        "8",
        "--scalesim-compat",
        "--json",
    ]);
    assert_eq!(v["total_cycles"], 467);
    assert_eq!(v["overall_util_percent"], 38.142398286937905);
    assert_eq!(v["mapping_efficiency_percent"], 65.97222222222221);
    assert_eq!(v["compute_util_percent"], 33.54519774011299);
    // ours, unpipelined: +1 (off-by-one) − 3·4 (the 3 folds on the last, half-used column block)
    let o = json(&[
        "systolic",
        "gemm",
        "--m",
        "30",
        "--k",
        "19",
        "--n",
        "20",
        "--rows",
        "8",
        "--cols",
        "8",
        "--no-double-buffer",
        "--json",
    ]);
    assert_eq!(o["cycles"], 467 + 1 - 12);
}

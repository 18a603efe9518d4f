//! `tpusim systolic run --scalesim-compat` on SCALE-Sim 3's sparsity and custom
//! layouts: the real binary against SCALE-Sim 3.0.0's own reports
//! (crates/systolic/tests/data/scalesim, made by bench/systolic_make_goldens.py), and
//! its one-line refusals.

use super::{compat_run, golden_dir};
use crate::common::bad_input;
use std::path::Path;

/// Runs a golden case through the CLI into `out` (with its layout file when asked);
/// returns the process output.
fn run_case(g: &Path, out: &Path, layout: bool, json: bool) -> std::process::Output {
    let mut cmd = compat_run(&g.join("scale.cfg"), &g.join("topology.csv"), out);
    if layout {
        cmd.arg("-l").arg(g.join("layout.csv"));
    }
    if json {
        cmd.arg("--json");
    }
    cmd.output().unwrap()
}

fn assert_reports_equal(case: &str, out: &Path, reports: &[&str]) {
    let g = golden_dir(case);
    for rep in reports {
        let got = std::fs::read_to_string(out.join(case).join(rep)).unwrap();
        let want = std::fs::read_to_string(g.join(rep)).unwrap();
        assert_eq!(got, want, "{case} {rep}");
    }
}

const REPORTS: [&str; 3] = [
    "COMPUTE_REPORT.csv",
    "BANDWIDTH_REPORT.csv",
    "DETAILED_ACCESS_REPORT.csv",
];

/// Runs golden `case` into `out`, asserts it succeeded and wrote SCALE-Sim's own three
/// reports; returns the process output.
fn run_golden(case: &str, out: &Path, layout: bool, json: bool) -> std::process::Output {
    let o = run_case(&golden_dir(case), out, layout, json);
    assert!(
        o.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_reports_equal(case, out, &REPORTS);
    o
}

#[test]
fn sparse_layers_reproduce_scalesim_with_its_sparse_report() {
    for case in [
        // N:M condensed, ws (float IFMAP reads, ELLPACK metadata)
        "sparse_gemm_8_ws_calc_ellpack",
        // random N per filter from numpy's MT19937, USER mode
        "sparse_opt_gemm_8_ws_user_b8",
        // conv, is, USER
        "sparse_conv_8_is_user_ellpack",
    ] {
        let out = tempfile::tempdir().unwrap();
        let o = run_golden(case, out.path(), false, true);
        assert_reports_equal(case, out.path(), &["SPARSE_REPORT.csv"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let first = &v["layers"][0]["sparse"];
        assert!(first["representation"].is_string(), "{v}");
        assert!(
            first["filter_metadata_storage"].as_f64().unwrap() > 0.0,
            "{v}"
        );
    }
    // a dense run writes no SPARSE_REPORT.csv and no sparse field
    let out = tempfile::tempdir().unwrap();
    let o = run_case(&golden_dir("gemm_8_ws_calc"), out.path(), false, true);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["layers"][0].get("sparse").is_none(), "{v}");
    assert!(!out.path().join("gemm_8_ws_calc/SPARSE_REPORT.csv").exists());
}

#[test]
fn custom_layouts_reproduce_scalesim_bank_conflicts() {
    for case in [
        "layout_conv_8_os_user",
        "layout_gemm_8_ws_user",
        // refetched line by line from a 1 kB SRAM
        "layout_small_gemm_8_ws_user",
    ] {
        let out = tempfile::tempdir().unwrap();
        run_golden(case, out.path(), true, false);
    }
    // the custom layout needs its file
    let out = tempfile::tempdir().unwrap();
    let o = run_case(
        &golden_dir("layout_gemm_8_ws_user"),
        out.path(),
        false,
        false,
    );
    bad_input(&o, &["IfmapCustomLayout", "--layout"]);
}

#[test]
fn a_bad_layout_file_is_one_error_line() {
    let g = golden_dir("layout_gemm_8_ws_user");
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(g.join("layout.csv")).unwrap();
    let cases = [
        // not an integer
        (
            good.replacen("L0, 2, 8", "L0, 2, eight", 1),
            vec!["line 2", "'eight'"],
        ),
        // the FILTER factors no longer multiply to FilterSRAMBankBandwidth (16)
        (
            good.replacen("L0, 2, 8, 1, 8, 1, 2", "L0, 2, 8, 1, 8, 1, 4", 1),
            vec!["line 2", "AssertionError", "FilterSRAMBankBandwidth 16"],
        ),
        // an axis order that is no permutation
        (
            good.replacen(", 5, 4, 3,", ", 5, 5, 3,", 1),
            vec!["line 2", "repeated"],
        ),
        // no layer row
        (
            good.lines().next().unwrap().to_string() + "\n",
            vec!["no layer row"],
        ),
    ];
    for (i, (text, needles)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("bad{i}.csv"));
        std::fs::write(&f, text).unwrap();
        let o = compat_run(&g.join("scale.cfg"), &g.join("topology.csv"), dir.path())
            .arg("-l")
            .arg(&f)
            .output()
            .unwrap();
        let mut n: Vec<&str> = needles.clone();
        let name = f.display().to_string();
        n.push(&name);
        bad_input(&o, &n);
    }
}

#[test]
fn bad_ratios_and_configs_scalesim_cannot_run_are_refused() {
    let g = golden_dir("sparse_gemm_8_ws_calc_ellpack");
    let dir = tempfile::tempdir().unwrap();
    let run = |cfg: &str, topo: &str| {
        std::fs::write(dir.path().join("c.cfg"), cfg).unwrap();
        std::fs::write(dir.path().join("t.csv"), topo).unwrap();
        compat_run(
            &dir.path().join("c.cfg"),
            &dir.path().join("t.csv"),
            dir.path(),
        )
        .output()
        .unwrap()
    };
    let cfg = std::fs::read_to_string(g.join("scale.cfg")).unwrap();
    let topo = "Layer,M,N,K,Sparsity,\ng,8,8,16,2:4,\n";
    assert!(run(&cfg, topo).status.success());
    // N:M with N > M: SCALE-Sim's `np.zeros` of a negative size
    bad_input(
        &run(&cfg, "Layer,M,N,K,Sparsity,\ng,8,8,16,5:4,\n"),
        &["line 2", "'5:4'", "N:M"],
    );
    bad_input(
        &run(&cfg, "Layer,M,N,K,Sparsity,\ng,8,8,16,2-4,\n"),
        &["line 2", "'2-4'"],
    );
    // OptimizedMapping on os: the compressed FILTER no longer matches the IFMAP
    let os = cfg
        .replace("Dataflow : ws", "Dataflow : os")
        .replace("OptimizedMapping : false", "OptimizedMapping : true")
        .replace("BlockSize : 8", "BlockSize : 4");
    bad_input(
        &run(&os, topo),
        &["AssertionError: Dimension mismatch between operands"],
    );
    // a seed numpy refuses
    let seed = cfg
        .replace("OptimizedMapping : false", "OptimizedMapping : true")
        .replace(
            "RandomNumberGeneratorSeed : 40",
            "RandomNumberGeneratorSeed : -1",
        );
    bad_input(&run(&seed, topo), &["Seed must be between 0 and 2**32 - 1"]);
    // USER mode: a bank bandwidth that does not divide among the banks
    let banks = cfg
        .replace("InterfaceBandwidth: CALC", "InterfaceBandwidth: USER")
        .replace("IfmapSRAMBankNum: 10", "IfmapSRAMBankNum: 3");
    bad_input(
        &run(&banks, topo),
        &["overall bandwidth must be divisible by total number of banks"],
    );
}

//! `--scalesim-compat` against SCALE-Sim 3.0.0's own reports (tests/data/scalesim,
//! made by bench/systolic_make_goldens.py).

use std::path::PathBuf;
use tpusim_systolic::scalesim::{compat, config::*, layout::*, report, topology::*};
use tpusim_systolic::*;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/scalesim")
}

fn cases() -> Vec<(String, TopoFormat)> {
    std::fs::read_to_string(data().join("cases.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (name, kind) = l.split_once(' ').unwrap();
            (
                name.to_string(),
                if kind == "gemm" {
                    TopoFormat::Gemm
                } else {
                    TopoFormat::Conv
                },
            )
        })
        .collect()
}

fn load(name: &str, fmt: TopoFormat) -> (ScaleConfig, Vec<TopoLayer>) {
    let d = data().join(name);
    let cfg = ScaleConfig::parse(
        &std::fs::read_to_string(d.join("scale.cfg")).unwrap(),
        "scale.cfg",
    )
    .unwrap();
    let text = std::fs::read_to_string(d.join("topology.csv")).unwrap();
    let (detected, layers) = parse_topology(&text, "topology.csv", None).unwrap();
    assert_eq!(detected, fmt, "{name}: header tells the format");
    (cfg, layers)
}

fn layout_of(name: &str) -> Layout {
    let text = std::fs::read_to_string(data().join(name).join("layout.csv")).unwrap();
    parse_layout(&text, "layout.csv").unwrap()
}

fn golden(name: &str, file: &str) -> String {
    std::fs::read_to_string(data().join(name).join(file)).unwrap()
}

/// Cells of a report, row by row (after the header).
fn cells(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect()
}

#[test]
fn compat_reports_equal_scalesim_byte_for_byte() {
    let mut full = 0;
    let mut refused = Vec::new();
    for (name, fmt) in cases() {
        let (cfg, layers) = load(&name, fmt);
        let layout = layout_of(&name);
        let reps: Vec<_> = layers
            .iter()
            .map(|l| compat::layer_report_with_layout(&cfg, Some(&layout), l))
            .collect();
        if reps.iter().all(|r| r.is_ok()) {
            let reps: Vec<_> = reps.into_iter().map(|r| r.unwrap()).collect();
            assert_eq!(
                report::compute_csv(&reps),
                golden(&name, "COMPUTE_REPORT.csv"),
                "{name} compute"
            );
            assert_eq!(
                report::bandwidth_csv(&reps),
                golden(&name, "BANDWIDTH_REPORT.csv"),
                "{name} bandwidth"
            );
            assert_eq!(
                report::detail_csv(&reps),
                golden(&name, "DETAILED_ACCESS_REPORT.csv"),
                "{name} detail"
            );
            let sparse = data().join(&name).join("SPARSE_REPORT.csv");
            let want = sparse.exists().then(|| golden(&name, "SPARSE_REPORT.csv"));
            assert_eq!(report::sparse_csv(&reps), want, "{name} sparse");
            full += 1;
        } else {
            let why: Vec<String> = reps
                .into_iter()
                .filter_map(|r| r.err())
                .map(|e| e.to_string())
                .collect();
            refused.push(format!("{name}: {}", why[0]));
        }
    }
    // every case is reproduced exactly: the 30 base cases (8×8, 32×32, 128×128; ws, os,
    // is; CALC and USER; the 128×128 GEMMs' FILTER exceeds half its SRAM and is
    // refetched), the small-SRAM cases where SCALE-Sim refetches and stalls, and the
    // sparse and custom-layout cases
    eprintln!("exact: {full}, refused: {refused:?}");
    assert!(refused.is_empty(), "refused {refused:?}");
    assert_eq!(full, cases().len());
    assert!(full >= 54, "only {full} cases");
}

#[test]
fn refetch_and_stall_cases_really_refetch_and_stall() {
    // the goldens cover what they claim: DRAM reads beyond the distinct words
    // (refetch) in CALC, and stall cycles in USER
    let d = cells(&golden("gemm_128_ws_calc", "DETAILED_ACCESS_REPORT.csv"));
    assert_eq!(d[0][15], "45000"); // 45,000-word FILTER over two epochs, each word read once
    let d = cells(&golden("gemm_128_os_calc", "DETAILED_ACCESS_REPORT.csv"));
    assert_eq!(d[0][15], "58550"); // refetched: more than its 45,000 words
    let c = cells(&golden("stall_gemm_8_ws_user", "COMPUTE_REPORT.csv"));
    assert!(c.iter().all(|row| row[3] != "0"), "{c:?}");
    let c = cells(&golden("stall_conv_8_is_user", "COMPUTE_REPORT.csv"));
    assert!(c.iter().any(|row| row[3] != "0"), "{c:?}");
    // operands fit (DRAM reads end at −1): the stall is the OFMAP write buffer's
    let c = cells(&golden("stall_ofmap_gemm_16_os_user", "COMPUTE_REPORT.csv"));
    let d = cells(&golden(
        "stall_ofmap_gemm_16_os_user",
        "DETAILED_ACCESS_REPORT.csv",
    ));
    assert_eq!(
        (c[0][3].as_str(), d[0][11].as_str(), d[0][14].as_str()),
        ("593", "-1.0", "-1.0")
    );
    let d = cells(&golden(
        "refetch_conv_8_ws_calc",
        "DETAILED_ACCESS_REPORT.csv",
    ));
    assert!(d[0][12].parse::<u64>().unwrap() > 12 * 12 * 6, "{d:?}");
}

#[test]
fn compute_columns_equal_scalesim_in_every_case() {
    // Total Cycles, Overall/Mapping/Compute util and all SRAM columns, both CALC and
    // USER, all arrays and dataflows, for every layer without stalls
    for (name, fmt) in cases() {
        let (cfg, layers) = load(&name, fmt);
        let want = cells(&golden(&name, "COMPUTE_REPORT.csv"));
        let want_d = cells(&golden(&name, "DETAILED_ACCESS_REPORT.csv"));
        assert_eq!(want.len(), layers.len(), "{name}");
        for (i, l) in layers.iter().enumerate() {
            let r = compat::compute_report(&cfg, l).unwrap();
            if want[i][3] != "0" {
                // stalls only add cycles: SCALE-Sim's Total Cycles = ours + its stalls
                let stalls: u64 = want[i][3].parse().unwrap();
                assert_eq!(
                    want[i][2],
                    (r.total_cycles + stalls).to_string(),
                    "{name} layer {i}"
                );
                continue;
            }
            let row = report::compute_csv(std::slice::from_ref(&r));
            let got = cells(&row);
            assert_eq!(
                got[0][2..],
                want[i][2..],
                "{name} layer {i} compute columns"
            );
            let d = cells(&report::detail_csv(std::slice::from_ref(&r)));
            assert_eq!(
                d[0][1..10],
                want_d[i][1..10],
                "{name} layer {i} SRAM columns"
            );
        }
    }
}

#[test]
fn our_default_differs_from_scalesim_as_documented() {
    // ws, full folds, no double buffering: ours = SCALE-Sim + 1 (its off-by-one)
    let a = ArraySpec::new(8, 8).unwrap();
    let g = Gemm::new(16, 8, 8).unwrap();
    let ours = analyze(
        a,
        &Workload::from_gemm(g),
        RunOptions {
            dataflow: Dataflow::Ws,
            double_buffer: false,
        },
    )
    .unwrap();
    let theirs = compat::total_cycles(Dataflow::Ws, 8, 8, g);
    assert_eq!(theirs, 37); // gemm_8_ws_calc layer 1
    assert_eq!(ours.cycles, theirs + 1);
    // partial column folds: SCALE-Sim pays the full array width, we stop at the last
    // used column (g1 of gemm_8_ws_calc: N = 20 on 8 columns → last fold uses 4)
    let g1 = Gemm::new(30, 19, 20).unwrap();
    let ours = analyze(
        a,
        &Workload::from_gemm(g1),
        RunOptions {
            dataflow: Dataflow::Ws,
            double_buffer: false,
        },
    )
    .unwrap();
    let theirs = compat::total_cycles(Dataflow::Ws, 8, 8, g1);
    assert_eq!(theirs, 467);
    assert_eq!(ours.cycles, theirs + 1 - 3 * (8 - 4));
    // os: SCALE-Sim does not count draining the stationary outputs (R per fold)
    let ours = analyze(
        a,
        &Workload::from_gemm(g),
        RunOptions {
            dataflow: Dataflow::Os,
            double_buffer: false,
        },
    )
    .unwrap();
    let theirs = compat::total_cycles(Dataflow::Os, 8, 8, g);
    assert_eq!(ours.cycles, theirs + 1 + 2 * 8);
    // double buffering (our default) hides the weight loads SCALE-Sim exposes
    let ours_db = analyze(
        a,
        &Workload::from_gemm(g1),
        RunOptions {
            dataflow: Dataflow::Ws,
            double_buffer: true,
        },
    )
    .unwrap();
    assert_eq!(ours_db.weight_load_cycles, 8);
    assert!(ours_db.cycles < compat::total_cycles(Dataflow::Ws, 8, 8, g1));
}

#[test]
fn topology_and_config_errors_name_the_input() {
    let e = parse_topology("Layer,M,N,K,\ng,1,x,3,\n", "t.csv", None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("t.csv") && e.contains("line 2") && e.contains("'x'"),
        "{e}"
    );
    let e = parse_topology("Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,\nc,3,3,5,5,1,1,1,\n", "t.csv", None).unwrap_err().to_string();
    assert!(e.contains("larger than the IFMAP"), "{e}");
    let (_, dp) = parse_topology(
        "Layer name,a,b,c,d,e,f,g,\nDP1,8,8,3,3,3,1,1,\n",
        "t.csv",
        None,
    )
    .unwrap();
    assert_eq!(dp.len(), 3);
    assert_eq!(dp[2].name, "DP1Channel_2");
    // options SCALE-Sim models and we do not: the compat mode refuses, naming them
    let base = std::fs::read_to_string(data().join("gemm_8_ws_calc/scale.cfg")).unwrap();
    let (_, layers) = parse_topology("Layer,M,N,K,\ng,4,4,4,\n", "t.csv", None).unwrap();
    let (from, to) = ("UseRamulatorTrace: False", "UseRamulatorTrace: True");
    assert!(base.contains(from));
    let cfg = ScaleConfig::parse(&base.replace(from, to), "c.cfg").unwrap();
    let e = compat::layer_report(&cfg, &layers[0])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("UseRamulatorTrace") && e.contains("not modelled"),
        "{e}"
    );
    assert!(compat::compute_report(&cfg, &layers[0]).is_err());
    // sparsity runs; a custom layout needs the layout file
    let sparse = base.replace("SparsitySupport : false", "SparsitySupport : true");
    let cfg = ScaleConfig::parse(&sparse, "c.cfg").unwrap();
    assert!(compat::layer_report(&cfg, &layers[0])
        .unwrap()
        .sparse
        .is_some());
    let custom = base.replace("IfmapCustomLayout: False", "IfmapCustomLayout: True");
    let cfg = ScaleConfig::parse(&custom, "c.cfg").unwrap();
    let e = compat::layer_report(&cfg, &layers[0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no layout file"), "{e}");
    let cfg = ScaleConfig::parse(&base, "c.cfg").unwrap();
    assert!(cfg.unmodelled.is_empty());
    assert!(compat::layer_report(&cfg, &layers[0]).is_ok());
    let e = ScaleConfig::parse("[general]\nrun_name = x\n", "c.cfg")
        .unwrap_err()
        .to_string();
    assert!(e.contains("c.cfg") && e.contains("missing"), "{e}");
}

mod fuzz {
    use proptest::prelude::*;
    use tpusim_systolic::scalesim::{compat, config::ScaleConfig, layout, ours, topology::*};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Sparse layers and custom layouts, in any mode: a report or an error, never a
        /// panic.
        #[test]
        fn sparse_and_layout_reports_never_panic(
            h in 1u64..14, w in 1u64..14, f in 1u64..4, c in 1u64..6, nf in 1u64..12,
            ratio in (1u64..5, 1u64..5), r in 1u64..9, cols in 1u64..9, df in 0usize..3,
            user in any::<bool>(), kb in 1u64..3, optimized in any::<bool>(), block in 0u64..9,
            seed in -2i64..5, rep in 0usize..4, custom in 0usize..4,
            values in proptest::collection::vec(-2i64..9, 20), bank in (1u64..20, 1u64..5, 0u64..3)
        ) {
            prop_assume!(f <= h && f <= w);
            let (n, m) = (ratio.0.min(ratio.1), ratio.0.max(ratio.1));
            let text = format!(
                "[general]\nrun_name = x\n[architecture_presets]\nArrayHeight: {r}\nArrayWidth: {cols}\n\
                 IfmapSramSzkB: {kb}\nFilterSramSzkB: {kb}\nOfmapSramSzkB: {kb}\nDataflow: {}\n\
                 Bandwidth: 4\n[layout]\nIfmapCustomLayout: {}\nFilterCustomLayout: {}\n\
                 IfmapSRAMBankBandwidth: {}\nIfmapSRAMBankNum: {}\nIfmapSRAMBankPort: {}\n\
                 FilterSRAMBankBandwidth: {}\nFilterSRAMBankNum: {}\nFilterSRAMBankPort: {}\n\
                 [sparsity]\nSparsitySupport: true\nSparseRep: {}\nOptimizedMapping: {optimized}\n\
                 BlockSize: {block}\nRandomNumberGeneratorSeed: {seed}\n\
                 [run_presets]\nInterfaceBandwidth: {}\n",
                ["ws", "os", "is"][df], custom & 1 == 1, custom & 2 == 2,
                bank.0, bank.1, bank.2, bank.0, bank.1, bank.2,
                ["csr", "csc", "ellpack_block", "other"][rep], if user { "USER" } else { "CALC" }
            );
            let cfg = ScaleConfig::parse(&text, "c.cfg").unwrap();
            let topo = format!("Layer name,H,W,FH,FW,C,N,S,\nl,{h},{w},{f},{f},{c},{nf},1,{n}:{m},\n");
            let (_, layers) = parse_topology(&topo, "t.csv", None).unwrap();
            let row: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            let lay = layout::parse_layout(&format!("h\nL0,{},\n", row.join(",")), "l.csv").unwrap();
            for l in &layers {
                let _ = compat::layer_report_with_layout(&cfg, Some(&lay), l);
                let _ = compat::compute_report(&cfg, l);
            }
        }

        #[test]
        fn parsers_never_panic(text in "[a-zA-Z0-9 ,=:\\[\\]_#\n-]{0,300}") {
            let _ = parse_topology(&text, "t.csv", None);
            let _ = parse_topology(&text, "t.csv", Some(TopoFormat::Conv));
            let _ = ScaleConfig::parse(&text, "c.cfg");
        }

        #[test]
        fn reports_never_panic(
            h in 1u64..40, w in 1u64..40, f in 1u64..6, c in 1u64..20, nf in 1u64..40, s in 1u64..5,
            r in 1u64..20, cols in 1u64..20, df in 0usize..3, user in any::<bool>(), kb in 1u64..8, bw in 1u64..12
        ) {
            prop_assume!(f <= h && f <= w);
            let df = ["ws", "os", "is"][df];
            let cfg = ScaleConfig::of_parts(r, cols, df, [kb; 3], user.then_some(bw), 10).unwrap();
            let topo = format!("Layer name,H,W,FH,FW,C,N,S,\nl,{h},{w},{f},{f},{c},{nf},{s},\n");
            let (_, layers) = parse_topology(&topo, "t.csv", None).unwrap();
            for l in &layers {
                let _ = compat::layer_report(&cfg, l);
                let c = compat::compute_report(&cfg, l).unwrap();
                prop_assert!(c.mapping_efficiency <= 100.0 + 1e-9);
                let o = ours::layer_report(&cfg, l, true).unwrap();
                prop_assert!(o.overall_util <= 100.0 + 1e-9);
            }
        }
    }
}

/// The config a sweep builds from an array, a dataflow, SRAM sizes and a bandwidth
/// (`ScaleConfig::of_parts`) is the golden case's own config, and replays to SCALE-Sim's
/// own reports.
#[test]
fn configs_built_from_parts_replay_the_goldens() {
    let mut compared = 0;
    for (name, fmt) in cases() {
        let (cfg, layers) = load(&name, fmt);
        let bw = cfg.bandwidths.first().copied().unwrap_or(10);
        let user = cfg.mode == BandwidthMode::User;
        if cfg.ifmap_bank_bandwidth != cfg.filter_bank_bandwidth || cfg.bandwidths.len() > 1 {
            continue; // of_parts gives the IFMAP and FILTER banks one bandwidth
        }
        if cfg.sparsity.is_some() || name.starts_with("layout") {
            continue; // of_parts builds dense configs with SCALE-Sim's sample banks
        }
        let built = ScaleConfig::of_parts(
            cfg.array.rows,
            cfg.array.cols,
            cfg.dataflow.name(),
            [cfg.ifmap_kb, cfg.filter_kb, cfg.ofmap_kb],
            user.then_some(bw),
            cfg.ifmap_bank_bandwidth,
        )
        .unwrap();
        let mut expected = cfg.clone();
        expected.run_name = built.run_name.clone();
        if !user {
            expected.bandwidths = built.bandwidths.clone();
        }
        assert_eq!(built, expected, "{name}");
        let reps: Vec<_> = layers
            .iter()
            .map(|l| compat::layer_report(&built, l).unwrap())
            .collect();
        assert_eq!(
            report::compute_csv(&reps),
            golden(&name, "COMPUTE_REPORT.csv"),
            "{name}"
        );
        compared += 1;
    }
    assert!(compared >= 30, "{compared}");
}

/// Configs SCALE-Sim 3.0.0 cannot read (`bench/scalesim_unreadable.py`, run against it):
/// compat mode refuses each with SCALE-Sim's own reason; the golden config it was
/// broken from is read.
#[test]
fn unreadable_configs_are_refused_with_scalesims_reason() {
    let text = std::fs::read_to_string(data().join("unreadable.jsonl")).unwrap();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let (case, cfg) = (v["case"].as_str().unwrap(), v["cfg"].as_str().unwrap());
        let reason = v["reason"].as_str().unwrap();
        let e = ScaleConfig::parse_compat(cfg, "scale.cfg")
            .unwrap_err()
            .to_string();
        assert!(e.contains(reason), "{case}: {e}");
        if case.contains("capitalised") {
            // our own model reads section names in any case
            assert!(ScaleConfig::parse(cfg, "scale.cfg").is_ok(), "{case}");
        }
        n += 1;
    }
    assert_eq!(n, 17);
    let good = golden("gemm_8_os_calc", "scale.cfg");
    assert!(ScaleConfig::parse_compat(&good, "scale.cfg").is_ok());
    // SCALE-Sim 3.0.0 asserts BlockSize <= ArrayHeight while reading an optimized
    // sparsity config (checked against it: `AssertionError: ERROR: Invalid block size`)
    let sparse = golden("sparse_opt_gemm_8_ws_calc_b4", "scale.cfg");
    assert!(ScaleConfig::parse_compat(&sparse, "scale.cfg").is_ok());
    let e = ScaleConfig::parse_compat(
        &sparse.replace("BlockSize : 4", "BlockSize : 16"),
        "scale.cfg",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("AssertionError: ERROR: Invalid block size"),
        "{e}"
    );
}

//! Every worked problem of the TPU chapter (spec 02, problems 1–7), run through the
//! real binary with `--json` and compared with the book's numbers (within 2% unless
//! a comment explains why the book's printed figure is a rounding of its own
//! arithmetic, in which case the book's expression is checked to 2% and the printed
//! number to the stated looser bound).

mod common;

use common::tpusim;
use serde_json::Value;

fn run(args: &[&str]) -> Value {
    let out = tpusim().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "tpusim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("bad JSON from {args:?}: {e}"))
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no number '{key}' in {v}"))
}

#[track_caller]
fn near(got: f64, want: f64, tol: f64) {
    let rel = (got - want).abs() / want.abs();
    assert!(
        rel <= tol,
        "got {got}, book {want}: off by {:.2}% (> {:.1}%)",
        rel * 100.0,
        tol * 100.0
    );
}

/// Problem 1: 200e9 bf16 parameters on 32 v4p at 1.23e12 B/s → about 10 ms per step.
#[test]
fn problem_1_sampling_latency() {
    let v = run(&[
        "roofline", "op", "--chip", "v4p", "--flops", "0", "--bytes", "400e9", "--chips", "32",
        "--bw", "1.23e12", "--json",
    ]);
    near(num(&v, "bytes"), 12.5e9, 1e-12);
    near(num(&v, "t_lower_s"), 10e-3, 0.02);
    assert_eq!(v["bound"], "hbm");
    // With the table's 1.2e12 (the book's problem uses 1.23e12) it is 10.4 ms.
    let t = run(&[
        "roofline", "op", "--chip", "v4p", "--flops", "0", "--bytes", "400e9", "--chips", "32",
        "--json",
    ]);
    near(num(&t, "t_lower_s"), 12.5e9 / 1.2e12, 1e-12);
}

/// Problem 2: a full v5e pod and a full v5p pod.
#[test]
fn problem_2_pods() {
    let v = run(&["slice", "info", "v5e", "16x16", "--json"]);
    assert_eq!(v["chips"], 256);
    assert_eq!(v["hosts"], 32);
    assert_eq!(v["cores"], 256);
    near(num(&v, "flops_per_s"), 5.1e16, 0.02);
    // The book: "256 * 16 = 4TB"; 256 × 16e9 = 4.096e12, which it rounds to 4 TB.
    assert_eq!(v["hbm_bytes"].as_u64(), Some(256 * 16_000_000_000));
    near(num(&v, "hbm_bytes"), 4e12, 0.025);
    assert_eq!(v["wraparound"], serde_json::json!([true, true]));

    let p = run(&["slice", "info", "v5p", "16x20x28", "--json"]);
    assert_eq!(p["chips"], 8960);
    assert_eq!(p["hosts"], 2240);
    assert_eq!(p["cores"], 17920);
    // The book computes 8960 × 4.5e14 ≈ 4e18 although its table says 4.59e14;
    // we use the table: 8960 × 4.59e14 = 4.11e18 (2.8% above the printed 4e18).
    near(num(&p, "flops_per_s"), 8960.0 * 4.59e14, 1e-12);
    near(num(&p, "flops_per_s"), 4e18, 0.03);
    near(num(&p, "hbm_bytes"), 860e12, 0.02);
}

/// Problem 3: bf16 matmul from host memory over PCIe at 1.5e10 on one v6e, F = 4D,
/// B ≪ D: FLOP-bound for B > 9.2e14 / 1.5e10 ≈ 61,000. The exact critical batch
/// approaches that limit as D grows (B ≪ D); at D = 2^24 it is within 1%.
#[test]
fn problem_3_pcie_critical_batch() {
    let d = (1u64 << 24).to_string();
    let f = (4u64 << 24).to_string();
    let v = run(&[
        "roofline", "matmul", "--chip", "v6e", "--b", "1024", "--d", &d, "--f", &f, "--from",
        "host", "--bw", "1.5e10", "--json",
    ]);
    near(num(&v, "critical_batch"), 61_000.0, 0.02);
    near(num(&v, "critical_intensity"), 9.2e14 / 1.5e10, 1e-12);
    assert_eq!(v["bound"], "pcie");
    // At a realistic D = 8192 the full formula says: never compute bound over PCIe.
    let small = run(&[
        "roofline", "matmul", "--chip", "v6e", "--b", "1024", "--d", "8192", "--f", "32768",
        "--from", "host", "--bw", "1.5e10", "--json",
    ]);
    assert!(small["critical_batch"].is_null());
}

/// Problem 4: int8[16384,4096] weights × int8[B,4096] on one v5e: B > 271 from HBM,
/// B > 11 from VMEM (22× HBM bandwidth = 1.78e13).
///
/// The exact crossing is B = 262.7: the book rounds 2·4096·16384 = 1.342e8 FLOPs
/// per row down to 1.3e8, which moves its answer to 271 (3.1% higher). We check the
/// exact value and that the book's 271 is FLOP-bound while 262 is not.
#[test]
fn problem_4_int8_matmul() {
    let args = |b: &'static str, from: &'static str| {
        run(&[
            "roofline", "matmul", "--chip", "v5e", "--b", b, "--d", "4096", "--f", "16384",
            "--dtype", "int8", "--from", from, "--json",
        ])
    };
    let v = args("271", "hbm");
    let (d, f, r, w) = (4096.0, 16384.0, 3.94e14, 8.1e11);
    near(
        num(&v, "critical_batch"),
        (d * f / w) / (2.0 * d * f / r - (d + f) / w),
        1e-9,
    );
    near(num(&v, "critical_batch"), 271.0, 0.035);
    assert_eq!(v["bound"], "compute");
    assert_eq!(args("262", "hbm")["bound"], "hbm");
    // T_comms = (6.7e7 + 2e4·B) / 8.1e11 with the book's rounded coefficients
    near(num(&v, "t_comms_s"), (6.7e7 + 2e4 * 271.0) / 8.1e11, 0.02);
    near(num(&v, "t_math_s"), 1.3e8 * 271.0 / 3.94e14, 0.035);
    let m = args("16", "vmem");
    near(num(&m, "critical_batch"), 11.0, 0.02);
    near(num(&m, "bandwidth_bytes_per_s"), 1.78e13, 0.02);
}

/// Problem 5: bf16[8,128,8192] from (0,0) to (3,3) of a v5e 4x4 (no wraparound):
/// 6 hops → first byte after 6 µs; 2 ports at 4.5e10 → 188 µs.
#[test]
fn problem_5_point_to_point() {
    let v = run(&[
        "comm",
        "p2p",
        "v5e",
        "4x4",
        "--from",
        "0,0",
        "--to",
        "3,3",
        "--array",
        "bf16[8,128,8192]",
        "--json",
    ]);
    assert_eq!(v["hops"], 6);
    assert_eq!(v["ports"], 2);
    near(num(&v, "first_byte_s"), 6e-6, 0.02);
    near(num(&v, "total_s"), 188e-6, 0.02);
    let b = run(&[
        "comm",
        "p2p",
        "v5e",
        "4x4",
        "--from",
        "0,0",
        "--to",
        "3,3",
        "--bytes",
        "1.7e7",
        "--hop-latency",
        "1e-6",
        "--json",
    ]);
    near(num(&b, "total_s"), 188e-6, 0.02);
}

/// Problem 6: a 16 GB int8 array sharded over a v5e 4x4, offloaded to hosts, gathered
/// into (0,0) and multiplied by bf16[8,128·1024]. Stages: PCIe 66 ms, ICI gather
/// 167 ms, HBM → MXU 19 ms, FLOPs 1.3 ms; pipelined ≈ 150–200 ms.
#[test]
fn problem_6_pipeline() {
    let load = run(&[
        "comm",
        "host-load",
        "v5e",
        "4x4",
        "--bytes",
        "16e9",
        "--bw",
        "1.5e10",
        "--json",
    ]);
    near(num(&load, "time_s"), 66e-3, 0.02);
    assert_eq!(load["hosts"], 2);
    let gather = run(&[
        "comm", "gather", "v5e", "4x4", "--to", "0,0", "--bytes", "16e9", "--json",
    ]);
    near(num(&gather, "time_s"), 167e-3, 0.02);
    assert_eq!(gather["ports"], 2);
    near(num(&gather, "bytes_moved"), 15e9, 1e-12);
    // The book prints "16e9 / 8.1e11 = 19ms" and "2.7e11 FLOPs ... 1.3ms": both are
    // truncations (19.75 ms, 1.37 ms); we check the book's expressions to 2%.
    let hbm = run(&[
        "roofline", "op", "--chip", "v5e", "--flops", "2.7e11", "--bytes", "16e9", "--json",
    ]);
    near(num(&hbm, "t_comms_s"), 16e9 / 8.1e11, 0.02);
    near(num(&hbm, "t_comms_s"), 19e-3, 0.04);
    near(num(&hbm, "t_math_s"), 2.7e11 / 1.97e14, 0.02);
    near(num(&hbm, "t_math_s"), 1.3e-3, 0.06);
    let stages = [
        num(&load, "time_s"),
        num(&gather, "time_s"),
        num(&hbm, "t_comms_s"),
        num(&hbm, "t_math_s"),
    ];
    let slowest = stages.iter().cloned().fold(0.0, f64::max);
    assert!((150e-3..=200e-3).contains(&slowest), "pipelined {slowest}");
    // The array really is int8[131072,131072] = 16 GiB = 17.2e9 B; the book calls it
    // 16 GB and uses 16e9 — with the exact size the PCIe stage is 71.6 ms.
    let exact = run(&[
        "comm",
        "host-load",
        "v5e",
        "4x4",
        "--array",
        "int8[131072,131072]",
        "--bw",
        "1.5e10",
        "--json",
    ]);
    near(num(&exact, "time_s"), 17_179_869_184.0 / 2.4e11, 1e-12);
}

/// Problem 7: VPU peak of v5p = 8·128·4·2·1.75e9 = 1.4e13 FLOP/s (the product is
/// 1.434e13; the book prints it rounded, 2.4% lower).
#[test]
fn problem_7_vpu_peak() {
    let v = run(&["chip", "show", "v5p", "--json"]);
    near(
        num(&v, "vpu_flops_per_s"),
        8.0 * 128.0 * 4.0 * 2.0 * 1.75e9,
        1e-12,
    );
    near(num(&v, "vpu_flops_per_s"), 1.4e13, 0.025);
    // the sharding chapter's critical ratio: 4.59e14 / 1.8e11 ≈ 2550 per chip
    near(num(&v, "critical_batch_ici_bidi"), 2550.0, 0.02);
}

/// The sharding chapter: on v5e an AllGather is latency bound below about 45 kB per
/// shard (W·T_min/2 with W = 9e10, T_min = 1 µs), bandwidth bound above.
#[test]
fn allgather_regimes_on_v5e() {
    let small = run(&[
        "comm",
        "allgather",
        "v5e",
        "16x16",
        "--axes",
        "X",
        "--bytes",
        "700kB",
        "--json",
    ]);
    assert_eq!(small["regime"], "latency");
    near(num(&small, "time_s"), 8e-6, 1e-9);
    let big = run(&[
        "comm",
        "allgather",
        "v5e",
        "16x16",
        "--axes",
        "X",
        "--bytes",
        "750kB",
        "--json",
    ]);
    assert_eq!(big["regime"], "bandwidth");
    near(num(&big, "time_s"), 750e3 / 9e10, 1e-9);
    near(num(&big, "per_hop_s"), 2.0 * 750e3 / (16.0 * 9e10), 1e-9);
    assert_eq!(big["hops"], 8);
    // over both axes: V / (2W); AllReduce doubles; no wraparound on a 4x4: (n-1)(V/n)/(W/2)
    let two = run(&[
        "comm",
        "allreduce",
        "v5e",
        "16x16",
        "--axes",
        "X,Y",
        "--bytes",
        "1GB",
        "--json",
    ]);
    near(num(&two, "time_s"), 2.0 * 1e9 / (2.0 * 9e10), 1e-9);
    let line = run(&[
        "comm",
        "reducescatter",
        "v5e",
        "4x4",
        "--axes",
        "0",
        "--bytes",
        "1GB",
        "--json",
    ]);
    near(num(&line, "time_s"), 3.0 * 0.25e9 / 4.5e10, 1e-9);
    let forced = run(&[
        "comm",
        "allgather",
        "v5e",
        "4x4",
        "--axes",
        "Y",
        "--bytes",
        "1GB",
        "--wraparound",
        "yes",
        "--json",
    ]);
    near(num(&forced, "time_s"), 1e9 / 9e10, 1e-9);
}

//! Inputs from the hardening round (issue 24) that hung or aborted, replayed: each must
//! end quickly with an error that names the limit.

use std::time::{Duration, Instant};
use tpusim_systolic::scalesim::{compat, config::ScaleConfig, topology::parse_topology};
use tpusim_systolic::{
    check_engine_memory, conv_run_bytes, gemm_run_bytes, ArraySpec, Conv, Dataflow, Gemm,
};

fn user_cfg(rows: u64, cols: u64) -> ScaleConfig {
    let text = format!(
        "[general]\nrun_name = big\n[architecture_presets]\nArrayHeight: {rows}\nArrayWidth: {cols}\n\
         IfmapSramSzkB: 1\nFilterSramSzkB: 1\nOfmapSramSzkB: 1\nDataflow: ws\nBandwidth: 10\n\
         [run_presets]\nInterfaceBandwidth: USER\n"
    );
    ScaleConfig::parse(&text, "user.cfg").unwrap()
}

#[test]
fn a_huge_array_in_user_mode_is_refused_at_once() {
    let topo = "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,\nc1,16,16,3,3,4,8,1,\n";
    let (_, layers) = parse_topology(topo, "t.csv", None).unwrap();
    for (rows, cols) in [(4_294_967_295, 8), (8, 4_294_967_295)] {
        let cfg = user_cfg(rows, cols);
        let t0 = Instant::now();
        let e = compat::layer_report(&cfg, &layers[0])
            .unwrap_err()
            .to_string();
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        assert!(e.contains("limit"), "{e}");
    }
}

#[test]
fn engine_runs_are_bounded_in_bytes() {
    // systolic check --m 268 --k 4 --n 1000000 --rows 64 --cols 64 --dtype i32
    let arr = ArraySpec::new(64, 64).unwrap();
    let g = Gemm::new(268, 4, 1_000_000).unwrap();
    let needed = gemm_run_bytes::<i32>(arr, Dataflow::Ws, g, true);
    let e = check_engine_memory(needed, 3 << 30)
        .unwrap_err()
        .to_string();
    assert!(e.contains("GiB") && e.contains("analytic mode"), "{e}");
    // systolic conv --ifmap 16384,16384,1 --filter 1,1,1 --mode cycle --rows 4 --cols 4
    let conv = Conv {
        batch: 1,
        in_h: 16384,
        in_w: 16384,
        in_c: 1,
        kh: 1,
        kw: 1,
        out_c: 1,
        stride_h: 1,
        stride_w: 1,
        pad_h: 0,
        pad_w: 0,
        dil_h: 1,
        dil_w: 1,
        groups: 1,
    };
    let arr = ArraySpec::new(4, 4).unwrap();
    let needed = conv_run_bytes::<i8>(arr, Dataflow::Ws, &conv).unwrap();
    // input, im2col copy, widened copy, two M·N i32 results and the output: > 4 GiB
    assert!(needed > 4 << 30, "{needed}");
    assert!(check_engine_memory(needed, 3 << 30).is_err());
}

#[test]
fn depthwise_rows_are_bounded_in_all_not_one_by_one() {
    // fuzzing (topology): one depthwise row of 64,100 channels took 0.2-0.3 s in the
    // sanitized build; thirty rows of 100,000, each under the per-row limit, would
    // have run three million layers. Refused at the second row, before it expands.
    let text =
        include_str!("../../../fuzz/regressions/topology/thirty_depthwise_rows_of_100000_channels");
    let e = parse_topology(text, "t.csv", None).unwrap_err().to_string();
    assert!(
        e.contains("line 3") && e.contains("200000 layers") && e.contains("limit 100000"),
        "{e}"
    );
    // one row at the limit runs
    let one = text.lines().take(2).collect::<Vec<_>>().join("\n");
    let (_, layers) = parse_topology(&one, "t.csv", None).unwrap();
    assert_eq!(layers.len(), 100_000);
}

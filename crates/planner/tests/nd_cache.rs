//! A transformer's TPU-MLIR cache read back (`tpumlir::nd_cache`, `plan MODEL.onnx
//! --import-tpu-mlir`): what a hostile or foreign cache gets, one error naming what is
//! wrong, never a panic, and how TPU-MLIR's own groups map onto our layers.

use tpusim_graph::nd::{import_onnx, Bind, NdGraph};
use tpusim_layout::ElementType;
use tpusim_planner::tpumlir::nd_cache::plan_imported;
use tpusim_planner::tpumlir::parse;
use tpusim_planner::NpuChip;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tx_zoo");

fn llama() -> NdGraph {
    let onnx = std::fs::read(format!("{DATA}/llama_d128_s64_static.onnx")).unwrap();
    let bind = Bind {
        batch: 1,
        seq: 64,
        past: 0,
    };
    import_onnx(&onnx, &bind).unwrap()
}

fn own_cache() -> serde_json::Value {
    let text = std::fs::read_to_string(format!("{DATA}/llama_d128_s64_bm1684x.tpumlir_cache.json"))
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The error of importing `cache` (TPU-MLIR's own, edited) against the graph.
fn error_of(edit: impl Fn(&mut serde_json::Value)) -> String {
    let mut v = own_cache();
    edit(&mut v);
    let cache = parse(&v.to_string()).unwrap();
    let chip = NpuChip::preset("bm1684x").unwrap();
    match plan_imported(&llama(), &chip, ElementType::F16, &cache) {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn tpu_mlir_s_own_cache_maps_group_for_group() {
    let chip = NpuChip::preset("bm1684x").unwrap();
    let cache = parse(&own_cache().to_string()).unwrap();
    let (plan, report) = plan_imported(&llama(), &chip, ElementType::F16, &cache).unwrap();
    let grouped = plan.groups.iter().filter(|g| g.end - g.start > 1).count();
    assert_eq!((report.groups, grouped), (8, 8));
    assert!(
        report.refused.is_empty() && report.unmatched.is_empty(),
        "{report:?}"
    );
    // the norm and the three projections, a group of four layers of ours, whole (with
    // the permutes it stores through: TPU-MLIR lists them as global layers and fuses them
    // into a group's load or store)
    let first = plan.groups.iter().find(|g| g.end - g.start > 1).unwrap();
    let members = &plan.layers[first.start..first.end];
    let ops = members.iter().filter(|l| l.op_type != "Permute").count();
    assert_eq!(ops, 4, "{members:?}");
    assert_eq!((first.csecs, first.hsecs), (1, 1));
}

/// A change made to TPU-MLIR's own cache.
type Edit = Box<dyn Fn(&mut serde_json::Value)>;

#[test]
fn a_hostile_cache_gets_one_error_naming_what_is_wrong() {
    let groups = |v: &mut serde_json::Value| v["subfunc_0"]["GroupLayer"].clone();
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| {
                v["subfunc_0"]["GroupLayer"][0]["locs"] = serde_json::json!(["conv1_Conv"])
            }),
            "names no layer of this graph",
        ),
        (
            Box::new(|v| {
                v["subfunc_0"]["GroupLayer"][0]["shape_secs"] = serde_json::json!([1, 1, 2, 1, 1])
            }),
            "cut along D",
        ),
        (
            Box::new(|v| {
                v["subfunc_0"]["GroupLayer"][0]["shape_secs"] = serde_json::json!([1, 2, 1, 3, 1])
            }),
            "cut along C and H",
        ),
        (
            Box::new(move |v| {
                let g = groups(v);
                v["subfunc_0"]["GroupLayer"][1] = g[0].clone();
            }),
            "is in group 0 too",
        ),
        (
            // the first group's first and last ops with the middle ones left out
            Box::new(|v| {
                let locs = v["subfunc_0"]["GroupLayer"][0]["locs"].clone();
                let locs = locs.as_array().unwrap();
                v["subfunc_0"]["GroupLayer"][0]["locs"] =
                    serde_json::json!([locs[0], locs[locs.len() - 1]]);
            }),
            "not consecutive here",
        ),
    ];
    for (edit, want) in cases {
        let e = error_of(edit);
        assert!(e.contains(want), "{e:?} should say {want:?}");
        assert!(!e.contains('\n'), "{e:?}");
    }
    // slices beyond any count, or below one, are priced, not a panic
    for secs in [
        [i64::MAX, 1, 1, 1, 1],
        [1, i64::MAX, 1, 1, 1],
        [1, 1, 1, i64::MAX, 1],
        [1, -5, 1, 0, 1],
    ] {
        let e =
            error_of(|v| v["subfunc_0"]["GroupLayer"][2]["shape_secs"] = serde_json::json!(secs));
        assert!(e.is_empty(), "{secs:?}: {e}");
    }
}

//! The graphs TPU-MLIR 1.30.2's front end refuses, as its `model_transform.py` said
//! (`tests/data/tpumlir_onnx_refusals.json`, from `bench/tpumlir_onnx_refusals.py`):
//! `unconvertible_nodes` names a node of the op it refused on exactly those, and none
//! on the graphs it converts.

use serde_json::Value;
use tpusim_graph::nd::{import_onnx, Bind};
use tpusim_planner::tpumlir::nd_unconvertible::unconvertible_nodes;

#[test]
fn the_graphs_tpu_mlir_refuses_are_named_and_only_those() {
    let refusals: Value =
        serde_json::from_str(include_str!("data/tpumlir_onnx_refusals.json")).unwrap();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../graph/tests/data/nd");
    let graphs = refusals["graphs"].as_object().unwrap();
    assert!(graphs.len() >= 7);
    for (name, r) in graphs {
        let bytes = std::fs::read(format!("{dir}/{name}.onnx")).unwrap();
        let bind = Bind {
            batch: 2,
            seq: 16,
            past: 0,
        };
        let g = import_onnx(&bytes, &bind).unwrap();
        let named = unconvertible_nodes(&g);
        if r["converts"].as_bool().unwrap() {
            assert!(named.is_empty(), "{name}: {named:?}");
            continue;
        }
        // "Unsupport opset for ReduceMean", "Op not support:{'IsNaN'}"
        let error = r["error"].as_str().unwrap();
        let op = error
            .trim_end_matches("'}")
            .rsplit([' ', '\''])
            .next()
            .unwrap();
        let tag = format!("({op})");
        assert!(
            named.iter().any(|n| n.ends_with(&tag)),
            "{name}: {error} vs {named:?}"
        );
    }
}

//! SCALE-Sim topology import against SCALE-Sim 3.0.0's own per-layer ofmap sizes and
//! MAC counts (`tests/data/make_topology.py` → `topology/scalesim.json`).
//!
//! Known, pinned difference: SCALE-Sim sizes an ofmap as `ceil((H − F + S) / S)`, which
//! counts a partial last window when `(H − F)` is not a multiple of the stride (e.g.
//! MobileNet's conv1: 226 padded, 3×3, stride 2 → SCALE-Sim 113, a real convolution 112).
//! We import the real convolution (`(H − F) / S + 1`, floor), so on such layers SCALE-Sim
//! reports one more row/column and correspondingly more MACs.

use std::collections::HashMap;

use tpusim_graph::cost::op_cost;
use tpusim_graph::{from_topology_csv, validate::validate, OpKind};

fn data(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/data/topology/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[derive(serde::Deserialize)]
struct Layer {
    name: String,
    ofmap: [u64; 2],
    macs: u64,
}

#[derive(serde::Deserialize)]
struct File {
    layers: Vec<Layer>,
    total_macs: u64,
}

#[test]
fn matches_scalesim_hyperparameters() {
    let golden: HashMap<String, File> = serde_json::from_str(&data("scalesim.json")).unwrap();
    for file in ["mobilenet_head.csv", "gemm.csv"] {
        let g = from_topology_csv(&data(file), file, 1).unwrap();
        validate(&g).unwrap();
        let want = &golden[file];
        let mut total_diff = 0u64;
        let mut pinned = 0;
        for op in &g.ops {
            // SCALE-Sim splits a DP layer into one single-channel layer per channel.
            let theirs: Vec<&Layer> = want
                .layers
                .iter()
                .filter(|l| {
                    l.name == op.name
                        || l.name
                            .strip_prefix(op.name.as_str())
                            .is_some_and(|r| r.starts_with("Channel_"))
                })
                .collect();
            assert!(
                !theirs.is_empty(),
                "{file}: {} not in SCALE-Sim's list",
                op.name
            );
            let their_macs: u64 = theirs.iter().map(|l| l.macs).sum();
            let out = g.tensors[op.outputs[0]].shape;
            let (oh, ow) = if file == "gemm.csv" {
                (out.h, 1)
            } else {
                (out.h, out.w)
            };
            let OpKind::Conv(p) = op.kind else {
                panic!("{}", op.name)
            };
            let x = g.tensors[op.inputs[0]].shape;
            let padded_h = x.h + p.pad[0] + p.pad[2];
            let exact = (padded_h - p.kernel[0]) % p.stride[0] == 0;
            let ours = op_cost(&g, op).unwrap().macs;
            if exact {
                assert_eq!([oh, ow], theirs[0].ofmap, "{file}: {}", op.name);
                assert_eq!(ours, their_macs, "{file}: {} MACs", op.name);
            } else {
                // The pinned ceil-vs-floor difference: exactly one more row and column.
                assert_eq!([oh + 1, ow + 1], theirs[0].ofmap, "{file}: {}", op.name);
                assert!(their_macs > ours);
                pinned += 1;
            }
            total_diff += their_macs - ours;
        }
        let ours_total: u64 = g.ops.iter().map(|o| op_cost(&g, o).unwrap().macs).sum();
        assert_eq!(ours_total + total_diff, want.total_macs, "{file}");
        if file == "mobilenet_head.csv" {
            assert_eq!(
                pinned, 2,
                "Conv1 and Conv dw 2 DP have a partial last window"
            );
            assert_eq!(
                g.inputs.len(),
                2,
                "FC (7x7 after an omitted stack) starts a new input"
            );
        } else {
            assert_eq!(pinned, 0);
            assert_eq!(ours_total, want.total_macs);
        }
    }
}

//! The local buffers of transformer layers in a group (`tpumlir::nd_buffers`) against
//! the `buffer_size` TPU-MLIR 1.30.2 allocated for every such layer of the transformer
//! zoo's groups, its own and ours, on bm1684x and bm1688 (F16): softmax, LayerNorm,
//! RMSNorm, SiLU and the heads-as-batch matmuls, whole and cut in C slices.
//! `bench/tpumlir_tx_buffers.py` read them off the `*_final.mlir` files.

use serde_json::Value;
use tpusim_graph::Shape4;
use tpusim_planner::tpumlir::nd_buffers::{buffer_bytes, ActiveMode, BufferKind, Lanes, Operand};
use tpusim_planner::NpuChip;

fn rows() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tx_zoo/local_buffers.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// TPU-MLIR's local NCHW view: [a, b, c] as (a, b, c, 1), [a, b, c, d] as is.
fn nchw(dims: &[u64]) -> Shape4 {
    match dims {
        [a, b, c] => Shape4::new(*a, *b, *c, 1),
        [a, b, c, d] => Shape4::new(*a, *b, *c, *d),
        _ => panic!("unexpected rank {dims:?}"),
    }
}

fn bytes(t: &Value) -> u64 {
    match t["dtype"].as_str().unwrap() {
        "f32" => 4,
        "f16" | "bf16" => 2,
        other => panic!("dtype {other}"),
    }
}

fn whole(t: &Value) -> Shape4 {
    nchw(
        &t["dims"]
            .as_array()
            .unwrap()
            .iter()
            .map(u)
            .collect::<Vec<_>>(),
    )
}

/// The value as one step holds it: the group's slices of N, C and H (TPU-MLIR's ginfo).
fn sliced(t: &Value, row: &Value) -> Operand {
    let w = whole(t);
    let s = &row["slice"];
    let slice = Shape4::new(
        u(&s["n"]).min(w.n),
        u(&s["c"]).min(w.c),
        u(&s["h"]).min(w.h),
        w.w,
    );
    Operand {
        whole: w,
        slice,
        bytes: bytes(t),
    }
}

fn held_whole(t: &Value) -> Operand {
    Operand {
        whole: whole(t),
        slice: whole(t),
        bytes: bytes(t),
    }
}

fn kind(row: &Value) -> BufferKind {
    match (row["op"].as_str().unwrap(), row["mode"].as_str()) {
        ("Active", Some("SILU")) => BufferKind::of("SiLU", false),
        ("MatMul", _) => BufferKind::of("MatMul", true),
        (op, _) => BufferKind::of(op, false),
    }
}

#[test]
fn every_buffer_tpu_mlir_allocated_in_the_zoo_is_reproduced() {
    let rows = rows();
    assert!(rows.len() >= 50, "{} rows", rows.len());
    let mut wrong = Vec::new();
    for row in &rows {
        let chip = NpuChip::preset(row["chip"].as_str().unwrap()).unwrap();
        let lanes = Lanes {
            count: chip.geometry.npu_num,
            eu_bytes: chip.geometry.eu_bytes,
        };
        let inputs = row["inputs"].as_array().unwrap();
        let reads: Vec<Operand> = match row["op"].as_str().unwrap() {
            // the right operand is held whole
            "MatMul" => vec![sliced(&inputs[0], row), held_whole(&inputs[1])],
            _ => vec![sliced(&inputs[0], row)],
        };
        let out = sliced(&row["output"], row);
        let ours = buffer_bytes(kind(row), &reads, &out, lanes);
        if ours != u(&row["buffer_size"]) {
            wrong.push(format!("{row}: ours {ours}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_zoo_covers_every_kind_it_checks() {
    let kinds: std::collections::HashSet<BufferKind> = rows().iter().map(kind).collect();
    for k in [
        BufferKind::Softmax,
        BufferKind::LayerNorm,
        BufferKind::RmsNorm,
        BufferKind::HeadsAsBatchMatmul,
        BufferKind::Active(ActiveMode::TwoWorkAndExpTable),
    ] {
        assert!(kinds.contains(&k), "{k:?} not in the zoo's rows");
    }
}

//! A transformer node timed as a global layer (`nd_global::node_cost`) against TPU-MLIR
//! 1.30.2's own global layers of the same shapes on bm1684x (F16), from the codegen
//! profiles of the transformer zoo (`bench/tpumlir_tx_zoo.py`, extracted by
//! `bench/plan_tpumlir_tx_ops.py` into `tests/data/tx_zoo/tpumlir_layers.jsonl`). Nothing
//! here was fitted on these layers: the transfer rates are the ones fitted on CNN tensors.

use serde_json::Value;
use tpusim_graph::nd::{NdNode, Work};
use tpusim_layout::ElementType;
use tpusim_planner::nd_global::node_cost;
use tpusim_planner::NpuChip;

fn layers() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tx_zoo/tpumlir_layers.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v.get("type").is_some() && v["global"] == true)
        .collect()
}

fn dims(t: &Value) -> Vec<u64> {
    t["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect()
}

fn elements(t: &Value) -> f64 {
    dims(t).iter().product::<u64>() as f64
}

/// The profile's dtype code: 0 f32, 1 f16.
fn bits(t: &Value) -> u32 {
    if t["dtype"] == 0 {
        32
    } else {
        16
    }
}

fn node(op_type: &str, work: Work, elements_in: f64, weights: f64, out: &Value) -> NdNode {
    NdNode {
        name: op_type.into(),
        op_type: op_type.into(),
        work,
        elements_in,
        weight_elements: weights,
        elements_out: elements(out),
        out_dims: dims(out),
    }
}

#[test]
fn weight_matmuls_cost_their_transfers_then_their_macs_as_tpu_mlir_runs_them() {
    let chip = NpuChip::preset("bm1684x").unwrap();
    let t = chip.timing_at(ElementType::F16).unwrap();
    let mut checked = 0;
    for l in layers().iter().filter(|l| l["type"] == "MatMul") {
        let ins = l["inputs"].as_array().unwrap();
        // [M, K] · weight [K, N] (+ bias): TPU-MLIR's MatMul of a linear layer
        if ins.len() < 2 || ins[1]["const"] != true || dims(&ins[0]).len() != 2 {
            continue;
        }
        let (a, w) = (dims(&ins[0]), dims(&ins[1]));
        let (m, k, n) = (a[0], a[1], w[1]);
        // small products pay a fixed few hundred cycles the model leaves out (64 rows:
        // 1,773 cycles where transfers and MACs come to 1,309)
        if m < 128 {
            continue;
        }
        let weights: f64 = ins[1..].iter().map(elements).sum();
        let work = Work::Matmul {
            batch: 1,
            m,
            k,
            n,
            weight: true,
        };
        let c = node_cost(
            &node("MatMul", work, elements(&ins[0]), weights, &l["outputs"][0]),
            16,
            false,
            64,
            &t,
        );
        let theirs = l["cycles"].as_f64().unwrap();
        let ratio = c.cycles as f64 / theirs;
        assert!(
            (0.94..=1.03).contains(&ratio),
            "{m}x{k}·{k}x{n} in {}: {} cycles, TPU-MLIR {theirs}",
            l["net"],
            c.cycles
        );
        checked += 1;
    }
    assert!(checked >= 20, "{checked} matmuls checked");
}

#[test]
fn element_wise_layers_are_their_transfers() {
    let chip = NpuChip::preset("bm1684x").unwrap();
    let t = chip.timing_at(ElementType::F16).unwrap();
    let mut checked = 0;
    for l in layers() {
        let ty = l["type"].as_str().unwrap();
        if !matches!(ty, "Add" | "Mul" | "AddConst" | "MulConst") {
            continue;
        }
        let ins: Vec<&Value> = l["inputs"].as_array().unwrap().iter().collect();
        let out = &l["outputs"][0];
        // element-wise over one shape and one type (broadcast adds of a weight aside)
        if ins
            .iter()
            .any(|i| i["const"] == true || dims(i) != dims(out) || bits(i) != bits(out))
        {
            continue;
        }
        let n = elements(out);
        // small tensors pay a fixed few hundred cycles the model leaves out (an add on
        // 64×64: 940 cycles where the transfers come to 504)
        if n < 16_384.0 {
            continue;
        }
        let c = node_cost(
            &node(
                ty,
                Work::Vector { flops: n },
                n * ins.len() as f64,
                0.0,
                out,
            ),
            bits(out),
            false,
            64,
            &t,
        );
        let theirs = l["cycles"].as_f64().unwrap();
        let ratio = c.cycles as f64 / theirs;
        // the conv-fitted rates run 7 % slow on these flat transfers
        assert!(
            (0.98..=1.12).contains(&ratio),
            "{ty} {:?} in {}: {} cycles, TPU-MLIR {theirs}",
            dims(out),
            l["net"],
            c.cycles
        );
        checked += 1;
    }
    assert!(checked >= 40, "{checked} element-wise layers checked");
}

#[test]
fn a_tanh_runs_in_f32_between_two_casts_as_the_chip_says() {
    // TPU-MLIR's GELU tanh on 128×512 f16 (gpt2_d128_s128): cast 8,214, TANH 10,474, cast
    // 7,496 cycles, 26,184 in all
    let chip = NpuChip::preset("bm1684x").unwrap();
    let t = chip.timing_at(ElementType::F16).unwrap();
    let out = serde_json::json!({"shape": [128, 512], "dtype": 1});
    let n = 128.0 * 512.0;
    let tanh = node("Tanh", Work::Vector { flops: n }, n, 0.0, &out);
    let wide = node_cost(&tanh, 16, true, 64, &t).cycles as f64;
    assert!((wide / 26_184.0 - 1.0).abs() < 0.10, "{wide}");
    let narrow = node_cost(&tanh, 16, false, 64, &t).cycles as f64;
    assert!(wide > 4.0 * narrow, "{wide} vs {narrow}");
}

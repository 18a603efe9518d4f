//! MXFP4 weights, and an MoE model's experts at a precision of their own, against
//! what GPT-OSS publishes (its model card's checkpoint sizes) and what XLA:TPU
//! allocates (`tests/data/xla_mxfp4_bytes.json`, from `bench/xla_mxfp4_bytes.py`).

use serde_json::Value;
use tpusim_layout::TpuGen;
use tpusim_llm::model::Tensor;
use tpusim_llm::serve::{serve, ServeInput};
use tpusim_llm::tpu::tiled_bytes;
use tpusim_llm::{slices, zoo, Precision};

const GIB: f64 = (1u64 << 30) as f64;

/// The gpt-oss model card (OpenAI, 2025, table 1) lists the checkpoints, experts'
/// matrices in MXFP4 and the rest in bf16, at 60.8 GiB (120b) and 12.8 GiB (20b).
#[test]
fn gpt_oss_checkpoints_are_the_model_cards_sizes() {
    for (name, gib, layers, experts) in [
        ("gpt-oss-120b", "60.8", 36, 128),
        ("gpt-oss-20b", "12.8", 24, 32),
    ] {
        let m = zoo::lookup(name).unwrap();
        let s = m
            .summary_with(Precision::Bf16, Precision::Bf16, Some(Precision::Mxfp4))
            .unwrap();
        assert_eq!(format!("{:.1}", s.weights_bytes / GIB), gib, "{name}");
        // the same by hand: gate_up [2880, 5760] and down [2880, 2880] per expert at
        // 4 bits a value and one byte a block of 32; every other parameter 2 bytes
        let matrices = (layers * experts * 3 * 2880 * 2880_u64) as f64;
        let want = (s.counts.params as f64 - matrices) * 2.0 + matrices * (0.5 + 1.0 / 32.0);
        assert_eq!(s.weights_bytes, want, "{name}");
    }
}

#[test]
fn one_precision_for_all_is_every_parameter_at_it() {
    for name in ["gpt-oss-20b", "mixtral-8x7b", "llama-3-8b"] {
        let m = zoo::lookup(name).unwrap();
        for p in [
            Precision::Bf16,
            Precision::Int8,
            Precision::Int4,
            Precision::Mxfp4,
        ] {
            let all = m.weight_bytes(m.experts as f64, p, p);
            assert_eq!(all, m.params().params as f64 * p.bytes(), "{name} {p:?}");
            for tokens in [1.0, 7.0, 1e6] {
                let read = m.weight_bytes(m.experts_touched(tokens), p, p);
                assert!((read / (m.params_read(tokens) * p.bytes()) - 1.0).abs() < 1e-12);
            }
        }
    }
}

/// XLA lays out MXFP4 as two arrays: `f4e2m1fn` values and `f8e8m0fnu` scales, one
/// per 32 values along the input dimension; their default layouts pad the scales'
/// 90 rows to 96.
#[test]
fn tiled_mxfp4_bytes_equal_xla() {
    let v: Value = serde_json::from_str(include_str!("data/xla_mxfp4_bytes.json")).unwrap();
    let tensors: Vec<Tensor> = v["matrices"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, d)| Tensor {
            name: format!("m{i}"),
            dims: d
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect(),
        })
        .collect();
    for chip in ["v5e", "v6e", "v5p"] {
        let gen: TpuGen = chip.parse().unwrap();
        let want = v["chips"][chip]["argument_size_in_bytes"].as_f64().unwrap();
        assert_eq!(
            tiled_bytes(&tensors, Precision::Mxfp4, gen).unwrap(),
            want,
            "{chip}"
        );
    }
    // logical bytes are below: 17/32 of a byte a value
    let logical: u64 = tensors.iter().map(|t| t.elements()).sum();
    assert!((logical as f64 * 17.0 / 32.0) < 13_369_344.0);
}

fn gpt_oss_on_four_v6e(expert: Option<Precision>) -> tpusim_llm::serve::ServeReport {
    let chip = tpusim_chip::lookup("v6e").unwrap();
    let mut i = ServeInput::new(
        zoo::lookup("gpt-oss-120b").unwrap(),
        slices::parse(&chip, "4").unwrap(),
        true,
    );
    i.batch = 16;
    i.context = 4096;
    i.tp = Some(4);
    i.expert_weights = expert;
    serve(&i).unwrap()
}

/// Serving reads and holds the experts at their own precision: the weights per chip
/// and the bytes a decode step reads both shrink by exactly the experts' share.
#[test]
fn serving_holds_and_reads_the_experts_at_their_precision() {
    let m = zoo::lookup("gpt-oss-120b").unwrap();
    let bf16 = gpt_oss_on_four_v6e(None);
    let mx = gpt_oss_on_four_v6e(Some(Precision::Mxfp4));
    let saved_per_param = 2.0 - 17.0 / 32.0;
    let matrices = (m.layers * m.experts * m.expert_matrix_params()) as f64;
    let held = bf16.memory_per_chip.weights - mx.memory_per_chip.weights;
    assert!((held / (matrices * saved_per_param / 4.0) - 1.0).abs() < 1e-12);
    // 16 sequences touch some of each layer's 128 experts
    let touched = m.experts_touched(16.0);
    let read = (bf16.decode.hbm_s - mx.decode.hbm_s) * chip_hbm("v6e");
    let want = m.layers as f64 * touched * m.expert_matrix_params() as f64 * saved_per_param / 4.0;
    assert!((read / want - 1.0).abs() < 1e-9, "{read} vs {want}");
    assert_eq!(mx.expert_weights_dtype, Some(Precision::Mxfp4));
}

fn chip_hbm(name: &str) -> f64 {
    tpusim_chip::lookup(name).unwrap().hbm_bytes_per_s
}

#[test]
fn a_dense_model_has_no_experts_to_store_apart() {
    let chip = tpusim_chip::lookup("v5e").unwrap();
    let mut i = ServeInput::new(
        zoo::lookup("llama-3-8b").unwrap(),
        slices::parse(&chip, "8").unwrap(),
        true,
    );
    i.expert_weights = Some(Precision::Mxfp4);
    let e = serve(&i).unwrap_err().to_string();
    assert!(
        e.contains("--expert-weights") && e.contains("no experts"),
        "{e}"
    );
    assert!(Precision::parse("--weights", "fp4").is_err());
    assert_eq!(
        Precision::parse("--weights", "MXFP4").unwrap(),
        Precision::Mxfp4
    );
}

//! The calibrated figures act on the terms they name: training's attention FLOPs run at
//! `mxu_train · attention_train`, everything else at `mxu_train` (checked against the
//! FLOPs counted by hand from the model's dimensions).

use tpusim_chip::RateClass;
use tpusim_llm::train::{train, TrainInput};
use tpusim_llm::{slices, zoo, Degrees, Efficiency, Remat};

/// LLaMA-2 7B on one v5e: no collectives, no recomputation, causal attention.
fn one_chip(eff: Efficiency) -> TrainInput {
    let mut i = one_of("v5e", false);
    i.eff = eff;
    i
}

/// The same on one chip `name`, calibrated or `ideal`.
fn one_of(name: &str, ideal: bool) -> TrainInput {
    let chip = tpusim_chip::lookup(name).unwrap();
    let mut i = TrainInput::new(
        zoo::lookup("llama-2-7b").unwrap(),
        slices::parse(&chip, "1").unwrap(),
        ideal,
    );
    i.batch_tokens = 4 * 2048;
    i.seq = 2048;
    i.remat = Remat::None;
    i.degrees = Some(Degrees::default());
    i
}

/// Attention's FLOPs a step by hand: forward `4·t·heads·head_dim` a token and layer at
/// the mean causal context `t = seq / 2` (32 heads of 128, 32 layers), three times
/// for the backward pass.
fn attention_flops(i: &TrainInput) -> f64 {
    let t = i.seq as f64 / 2.0;
    3.0 * 4.0 * t * 32.0 * 128.0 * 32.0 * i.batch_tokens as f64
}

#[test]
fn attention_runs_at_its_own_share_of_the_mxu_fraction() {
    let peak = tpusim_chip::lookup("v5e")
        .unwrap()
        .peak(RateClass::Bf16)
        .ops_per_s;
    let mut eff = Efficiency::calibrated();
    eff.mxu_train = 0.8;
    eff.attention_train = 0.5;
    let input = one_chip(eff);
    let r = train(&input).unwrap();
    let attention = attention_flops(&input);
    let want = (r.flops_executed_per_step - attention) / (peak * 0.8) + attention / (peak * 0.4);
    assert!(
        (r.compute_s / want - 1.0).abs() < 1e-12,
        "{} vs {want}",
        r.compute_s
    );
    // at 1 it is the one fraction for every FLOP
    let mut same = eff;
    same.attention_train = 1.0;
    let r1 = train(&one_chip(same)).unwrap();
    let plain = r1.flops_executed_per_step / (peak * 0.8);
    assert!((r1.compute_s / plain - 1.0).abs() < 1e-12);
    assert!(r.compute_s > r1.compute_s);
}

#[test]
fn a_fixed_mfu_covers_attention_too() {
    let mut eff = Efficiency::calibrated();
    eff.attention_train = 0.25;
    let mut input = one_chip(eff);
    input.mfu = Some(0.5);
    let r = train(&input).unwrap();
    let peak = input.slice.chip.peak(RateClass::Bf16).ops_per_s;
    assert!((r.compute_s / (r.flops_executed_per_step / (peak * 0.5)) - 1.0).abs() < 1e-12);
}

#[test]
fn attention_train_is_a_fraction() {
    let mut eff = Efficiency::calibrated();
    for bad in [0.0, -0.5, 1.5, f64::NAN] {
        let err = eff.set("attention_train", bad).unwrap_err().to_string();
        assert!(err.contains("attention_train"), "{err}");
    }
    eff.set("attention_train", 0.7).unwrap();
    assert_eq!(eff.attention_train, 0.7);
    assert_eq!(Efficiency::ideal().attention_train, 1.0);
}

/// The calibrated model runs the MXUs at its fractions of the rate XLA:TPU's cost model
/// gives each chip (`data/llm/xla-mxu-rates.json`): v5p's 394 of its 459 TFLOP/s, v5e's
/// whole peak; a fixed MFU and the ideal model keep the published peak.
#[test]
fn the_calibrated_model_runs_at_xlas_rate_for_the_chip() {
    use tpusim_llm::calib::xla_mxu_fraction;
    let chip = |n: &str| tpusim_chip::lookup(n).unwrap();
    assert_eq!(xla_mxu_fraction(&chip("v5p")), 0.8584); // 394 / 459
    assert_eq!(xla_mxu_fraction(&chip("v5e")), 1.0);
    assert_eq!(xla_mxu_fraction(&chip("h100")), 1.0);
    let on = |name: &str, ideal: bool, mfu: Option<f64>| {
        let mut i = one_of(name, ideal);
        i.mfu = mfu;
        let peak = chip(name).peak(RateClass::Bf16).ops_per_s;
        train(&i).unwrap().compute_s * peak
    };
    // the same work, in peak-seconds: v5p's takes 459/394 as long in the calibrated model
    let ratio = on("v5p", false, None) / on("v5e", false, None);
    assert!((ratio - 1.0 / 0.8584).abs() < 1e-9, "{ratio}");
    assert!((on("v5p", true, None) / on("v5e", true, None) - 1.0).abs() < 1e-9);
    assert!((on("v5p", false, Some(0.5)) / on("v5e", false, Some(0.5)) - 1.0).abs() < 1e-9);
}

/// A chip with training measurements of its own runs at its measured share of the
/// calibrated rate (`data/llm/chip-train-fractions.json`: v6e's, fitted on its
/// LLaMA-3.1 8B rows); the others at the whole of it. `--calib chip_train=F` sets the
/// share for any chip; the ideal model and a fixed MFU never see it.
#[test]
fn a_chips_measured_training_share_scales_its_compute_and_only_that() {
    use tpusim_llm::calib::chip_train_fraction;
    let chip = |n: &str| tpusim_chip::lookup(n).unwrap();
    let shipped: serde_json::Value =
        serde_json::from_str(include_str!("../../../data/llm/chip-train-fractions.json")).unwrap();
    let v6e = shipped["fractions"][0]["fraction"].as_f64().unwrap();
    assert_eq!(shipped["fractions"][0]["chip"], "v6e");
    assert_eq!(chip_train_fraction(&chip("v6e")), v6e);
    for other in ["v5e", "v5p", "v4p", "h100"] {
        assert_eq!(chip_train_fraction(&chip(other)), 1.0, "{other}");
    }
    let compute = |ideal: bool, share: Option<f64>, mfu: Option<f64>| {
        let mut i = one_of("v6e", ideal);
        if let Some(f) = share {
            i.eff.set("chip_train", f).unwrap();
        }
        i.mfu = mfu;
        train(&i).unwrap().compute_s
    };
    let ratio = compute(false, None, None) / compute(false, Some(1.0), None);
    assert!((ratio - 1.0 / v6e).abs() < 1e-9, "{ratio}");
    let half = compute(false, Some(0.5), None) / compute(false, Some(1.0), None);
    assert!((half - 2.0).abs() < 1e-9, "{half}");
    assert_eq!(compute(true, None, None), compute(true, Some(0.5), None));
    assert_eq!(
        compute(false, None, Some(0.4)),
        compute(false, Some(0.5), Some(0.4))
    );
    let mut eff = Efficiency::calibrated();
    for bad in [0.0, 1.5, f64::NAN] {
        let err = eff.set("chip_train", bad).unwrap_err().to_string();
        assert!(err.contains("chip_train"), "{err}");
    }
}

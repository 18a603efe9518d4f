//! FSDP across slices (`--dcn-fsdp`, MaxText's `dcn_fsdp_parallelism`): the model
//! state is sharded over the slices too, and every FSDP gather and the gradients'
//! reduce-scatter move a chip's shard between its peers in the other slices over DCN,
//! checked against the formulas written out by hand.

use tpusim_llm::train::{train, TrainInput};
use tpusim_llm::{slices, zoo, Degrees, Precision, Remat};

/// LLaMA-3.1 405B on `slices` slices of 256 v6e chips, FSDP 256 within each, one
/// 8192-token sequence a chip, fp32 parameters, each layer's input offloaded and the
/// rest rerun, as MaxText's 405B recipe (three gathers a step).
fn on_slices(slices: u64, dcn_fsdp: u64) -> TrainInput {
    let chip = tpusim_chip::lookup("v6e").unwrap();
    let mut i = TrainInput::new(
        zoo::lookup("llama-3.1-405b").unwrap(),
        slices::parse(&chip, "16x16").unwrap(),
        false,
    );
    i.slices = slices;
    i.dcn_fsdp = dcn_fsdp;
    i.seq = 8192;
    i.batch_tokens = 256 * slices * 8192;
    i.params = Precision::F32;
    i.remat = Remat::parse("custom:decoder_layer_input=offload").unwrap();
    i.degrees = Some(Degrees {
        fsdp: 256,
        ..Degrees::default()
    });
    i
}

#[test]
fn the_model_state_is_sharded_over_the_fsdp_slices_and_its_gathers_cross_dcn() {
    let dp = train(&on_slices(2, 1)).unwrap();
    let fsdp = train(&on_slices(2, 2)).unwrap();
    assert_eq!((fsdp.sharding.dcn_dp, fsdp.sharding.dcn_fsdp), (1, 2));
    assert_eq!((dp.sharding.dcn_dp, dp.sharding.dcn_fsdp), (2, 1));
    let (a, b) = (&dp.memory_per_chip, &fsdp.memory_per_chip);
    for (x, y) in [
        (a.weights, b.weights),
        (a.gradients, b.gradients),
        (a.optimizer, b.optimizer),
    ] {
        assert!((x / y - 2.0).abs() < 1e-12, "{x} {y}");
    }
    assert_eq!(a.checkpoints, b.checkpoints);
    // by hand: fp32 parameters P·4 B; each chip's ICI group gathers P·4/256 of them
    // and fetches the other slice's half of that over DCN, three gathers and one
    // reduce-scatter a step; the data-parallel slices all-reduce the gradient shard
    // of a chip (P·4/256, a ring over 2: once its size); both pay the sync figure once
    let i = on_slices(2, 2);
    let p = i.model.params().params as f64 * 4.0;
    let dcn = i.slice.chip.dcn_bytes_per_s * i.eff.dcn;
    let sync = i.eff.dcn_sync_s;
    let want_fsdp = 4.0 * 0.5 * (p / 256.0) / dcn + sync;
    let want_dp = 2.0 * 0.5 * (p / 256.0) / dcn + sync;
    assert!(
        (fsdp.comms.dcn_s / want_fsdp - 1.0).abs() < 1e-12,
        "{}",
        fsdp.comms.dcn_s
    );
    assert!(
        (dp.comms.dcn_s / want_dp - 1.0).abs() < 1e-12,
        "{}",
        dp.comms.dcn_s
    );
    // four slices, two FSDP groups of two: both legs
    let mixed = train(&on_slices(4, 2)).unwrap();
    assert_eq!((mixed.sharding.dcn_dp, mixed.sharding.dcn_fsdp), (2, 2));
    let want = 2.0 * 0.5 * (p / 512.0) / dcn + 4.0 * 0.5 * (p / 256.0) / dcn + 2.0 * sync;
    assert!(
        (mixed.comms.dcn_s / want - 1.0).abs() < 1e-12,
        "{}",
        mixed.comms.dcn_s
    );
}

#[test]
fn the_fsdp_slices_divide_the_slices() {
    for (slices, g) in [(2, 3), (3, 2), (2, 0)] {
        let e = train(&on_slices(slices, g)).unwrap_err().to_string();
        assert!(e.contains("--dcn-fsdp"), "{e}");
    }
    // searched ICI degrees keep the DCN split
    let mut i = on_slices(2, 2);
    i.degrees = None;
    let r = train(&i).unwrap();
    assert_eq!((r.sharding.dcn_dp, r.sharding.dcn_fsdp), (1, 2));
}

#[test]
fn dcn_degrees_that_do_not_make_the_slices_are_refused() {
    use tpusim_llm::train::evaluate;
    let deg = Degrees {
        fsdp: 256,
        dcn_dp: 2,
        dcn_fsdp: 2,
        ..Degrees::default()
    };
    let e = evaluate(&on_slices(2, 2), deg).unwrap_err().to_string();
    assert!(e.contains("dcn_dp=2 and dcn_fsdp=2"), "{e}");
    let fine = Degrees { dcn_dp: 1, ..deg };
    assert!(evaluate(&on_slices(2, 2), fine).is_ok());
}

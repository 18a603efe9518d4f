//! A `tpusim llm` model file (Hugging Face `config.json`, our `mlp`/`block` keys):
//! parse and validate; a valid model is counted, its decode step listed at a long
//! context (past any window), served and trained on a small v5e slice, which must
//! not panic (its errors are fine).
use tpusim_llm::ops::{ops, Phase, Workload};
use tpusim_llm::serve::{serve, ServeInput};
use tpusim_llm::train::{train, TrainInput};
use tpusim_llm::{hf, slices, Precision};

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(model) = hf::from_json(text, "fuzz.json") else {
        return;
    };
    let counts = model.params();
    assert!(counts.params_active <= counts.params);
    let _ = model.summary(Precision::Int4);
    let _ = model.kv_bytes_for_context(1e9, Precision::Bf16);
    let decode = Workload {
        phase: Phase::Decode,
        batch: 2,
        seq: 0,
        context: 70_000,
        weights: Precision::Bf16,
        kv: Precision::Int8,
    };
    let _ = ops(&model, &decode);
    let chip = tpusim_chip::lookup("v5e").expect("built-in chip");
    let slice = slices::parse(&chip, "4x2").expect("built-in slice");
    let mut s = ServeInput::new(model.clone(), slice.clone(), false);
    s.prefill_tokens = Some(128);
    let _ = serve(&s);
    let mut t = TrainInput::new(model, slice, false);
    t.batch_tokens = 1 << 16;
    let _ = train(&t);
}

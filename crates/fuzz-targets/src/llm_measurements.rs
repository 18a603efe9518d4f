//! `tpusim llm validate --data`: a user's measurements (JSON lines in the shipped
//! rows' schema), each row parsed, its model read and its run predicted with the
//! calibrated figures; errors are fine, panics are not. A prediction that is made
//! must be a finite number.
use tpusim_llm::validate::validate_rows;
use tpusim_llm::Efficiency;

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(cases) = validate_rows(text, "fuzz.jsonl", &Efficiency::calibrated()) else {
        return;
    };
    for c in cases {
        assert!(c.predicted.is_finite(), "{c:?}");
    }
}

//! Training (the book's training chapter): [`train`] evaluates the given sharding or
//! searches every one that places on the slice ([`search`]); [`answer`] adds the
//! book's thresholds. One sharding's memory and step are in `step.rs`.

pub mod capacity;
pub mod search;
mod step;

pub use step::{evaluate, CommTimes, TrainAlternative, TrainInput, TrainMemory, TrainReport};

use crate::axes::Degrees;
use crate::error::{LlmError, Result};
use serde::Serialize;
use step::{check, totals};

/// What `tpusim llm train --json` prints: the report, the kind of answer and the
/// book's thresholds for this chip, model and batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainOutput {
    /// The report (flattened).
    #[serde(flatten)]
    pub report: TrainReport,
    /// `ideal`, `calibrated` or `custom`.
    pub mode: &'static str,
    /// Thresholds.
    pub thresholds: crate::thresholds::Thresholds,
}

/// Train (searching when no degrees are given) and add the thresholds.
pub fn answer(input: &TrainInput) -> Result<TrainOutput> {
    let report = train(input)?;
    Ok(TrainOutput {
        thresholds: crate::thresholds::thresholds(
            &input.slice.chip,
            Some(input.model.d_ff),
            Some((input.batch_tokens as f64, report.chips)),
        ),
        mode: input.eff.mode(input.attention_flops),
        report,
    })
}

/// The best sharding of the slice (or the given one), with runners-up.
pub fn train(input: &TrainInput) -> Result<TrainReport> {
    check(input)?;
    let hbm = input.slice.chip.hbm_bytes as f64;
    let need = totals(input).total();
    let pod_chips = input.slice.chip.pod_chips() * input.slices;
    if need > hbm * pod_chips as f64 {
        return Err(LlmError::FitsNowhere {
            model: input.model.name.clone(),
            chip: input.slice.chip.name.clone(),
            needed_bytes: need,
            hbm_bytes: hbm,
            min_chips: (need / hbm).ceil() as u64,
            pod_chips,
        });
    }
    if let Some(d) = input.degrees {
        return evaluate(
            input,
            Degrees {
                dcn_dp: input.slices / input.dcn_fsdp,
                dcn_fsdp: input.dcn_fsdp,
                ..d
            },
        );
    }
    search::best(input)
}

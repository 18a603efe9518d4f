//! `tpusim llm validate`.

use super::args::Mode;
use crate::util::print_json;
use anyhow::Result;
use clap::Args;
use tpusim_llm::validate::{summary, validate, SHAREGPT_MEAN_OUTPUT, SHAREGPT_MEAN_PROMPT};

/// `tpusim llm validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub mode: Mode,
    /// One JSON document: a list of {case, quantity, measured, predicted, error, split}.
    #[arg(long)]
    pub json: bool,
}

/// Run `tpusim llm validate`.
pub fn run(a: ValidateArgs) -> Result<()> {
    let cases = validate(&a.mode.efficiency()?)?;
    if a.json {
        return print_json(&cases);
    }
    println!(
        "{:<62} {:>12} {:>12} {:>8}  split",
        "case", "measured", "predicted", "error"
    );
    for c in &cases {
        println!(
            "{:<62} {:>12.4} {:>12.4} {:>7.1}%  {}",
            c.case,
            c.measured,
            c.predicted,
            c.error * 100.0,
            c.split
        );
    }
    for (label, split) in [
        ("fit", "fit"),
        ("held out", "held_out"),
        ("v5p", "held_out_v5p"),
    ] {
        for q in ["train_step_s", "serve_tokens_per_s"] {
            let s = summary(cases.iter().filter(|c| c.split == split && c.quantity == q));
            if s.cases == 0 {
                continue;
            }
            println!(
                "{label:>8} {q:<20} {:>2} cases: median |error| {:.1}%, worst {:.1}%",
                s.cases,
                s.median_abs_error * 100.0,
                s.max_abs_error * 100.0
            );
        }
    }
    println!(
        "serving assumes ShareGPT requests of {SHAREGPT_MEAN_PROMPT} prompt and {SHAREGPT_MEAN_OUTPUT} output tokens on average, attention over the whole cache"
    );
    Ok(())
}

//! The two kinds of answer: the book's roofline (`Efficiency::ideal`, nothing
//! fitted) and the calibrated model (`Efficiency::calibrated`), the same formulas
//! with a few named efficiency figures. Each calibrated figure says what it was
//! fitted on; `bench/llm-fit.py` refits them on the training split of the shipped
//! measurements and reports the held-out error (BENCHMARKS.md, "LLM").

use crate::error::{bad, Result};
use serde::Serialize;
use std::sync::OnceLock;
use tpusim_chip::{Chip, RateClass};

/// XLA:TPU's own bf16 matmul rate per chip, from its cost model
/// (`bench/xla_mxu_rates.py`: one large matmul compiled for each generation).
const XLA_MXU_RATES: &str = include_str!("../../../data/llm/xla-mxu-rates.json");

/// The share of a chip's published bf16 peak that XLA:TPU's cost model assumes its
/// MXUs sustain on a large matmul, to four places: v5p 0.8584 (394 of 459 TFLOP/s, a 1.5 GHz clock for
/// the 1.75 GHz the peak is counted at), about 1 for v4, v5e and v6e, v3 0.877 of the
/// book's 140 TFLOP/s; 1 for a chip it was not asked about. The calibrated model's
/// MXU fractions (fitted on v5e, where this is 1) are fractions of this rate.
pub fn xla_mxu_fraction(chip: &Chip) -> f64 {
    static RATES: OnceLock<Vec<ChipFigure>> = OnceLock::new();
    let rates = RATES.get_or_init(|| chip_figures(XLA_MXU_RATES, "rates", "chip_flops_per_s"));
    let peak = chip.peak(RateClass::Bf16).ops_per_s;
    // to four places: the cost model's figures carry float noise (v5e 197.0000003e12)
    figure_of(rates, chip).map_or(1.0, |rate| (rate / peak * 1e4).round() / 1e4)
}

/// One chip's figure in a shipped per-chip table.
struct ChipFigure {
    chip: String,
    value: f64,
}

/// The `(chip, value_key)` pairs of the list `list_key` of a shipped JSON document.
fn chip_figures(doc: &str, list_key: &str, value_key: &str) -> Vec<ChipFigure> {
    let doc: serde_json::Value = serde_json::from_str(doc).expect("the shipped tables are JSON");
    doc[list_key]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| {
                    Some(ChipFigure {
                        chip: r["chip"].as_str()?.to_string(),
                        value: r[value_key].as_f64()?,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `chip`'s figure in `table`, if it has one.
fn figure_of(table: &[ChipFigure], chip: &Chip) -> Option<f64> {
    table.iter().find(|f| f.chip == chip.name).map(|f| f.value)
}

/// The share of the v5e-fitted training MXU rate each chip sustains in MaxText
/// training, where measured (`bench/llm-fit-chip.py`, fitted on that chip's fit rows).
const CHIP_TRAIN_FRACTIONS: &str = include_str!("../../../data/llm/chip-train-fractions.json");

/// The share of the calibrated training MXU rate (`mxu_train` of XLA's rate, fitted on
/// v5e) that `chip` sustains in MaxText's training steps, as measured on that chip:
/// v6e 0.695 (its MaxText runs reach 44–50 % MFU where v5e's reach 55–61 %; fitted on
/// its LLaMA-3.1 8B rows, checked on its rows of the other models). Training only: no shipped
/// measurement shows whether serving on the chip sees it too. 1 for a chip without
/// measurements of its own (v5e, where the figures were fitted, and v5p, which XLA's
/// rate already brings within 8 %).
pub fn chip_train_fraction(chip: &Chip) -> f64 {
    static FRACTIONS: OnceLock<Vec<ChipFigure>> = OnceLock::new();
    let fractions =
        FRACTIONS.get_or_init(|| chip_figures(CHIP_TRAIN_FRACTIONS, "fractions", "fraction"));
    figure_of(fractions, chip).unwrap_or(1.0)
}

/// Named efficiency figures (every one 1, or 0 for the overheads, in the ideal model).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Efficiency {
    /// Fraction of peak MXU FLOP/s that training matmuls reach.
    pub mxu_train: f64,
    /// The share of `mxu_train` the chip sustains in training; `None`: the chip's own
    /// measured figure ([`chip_train_fraction`]). `--calib chip_train=F` sets it for
    /// whichever chip is asked about.
    pub chip_train: Option<f64>,
    /// Fraction of `mxu_train` that training's attention (scores, softmax, values: the
    /// FLOPs that grow with the sequence) reaches.
    pub attention_train: f64,
    /// Fraction of peak MXU FLOP/s that prefill and decode matmuls reach.
    pub mxu_serve: f64,
    /// Fraction of peak HBM bandwidth that decode reaches.
    pub hbm: f64,
    /// Fraction of the ICI link bandwidth collectives reach.
    pub ici: f64,
    /// Per-hop latency of a collective as a multiple of the chip's figure.
    pub hop_latency: f64,
    /// Fraction of the DCN bandwidth a cross-slice AllReduce reaches.
    pub dcn: f64,
    /// Fixed cost per doubling of the slice count (synchronisation over DCN), s.
    pub dcn_sync_s: f64,
    /// Fraction of the shorter of compute and communication hidden under the longer
    /// (1: step = max of the terms; 0: their sum).
    pub overlap: f64,
    /// Fixed cost of one decode step (dispatch, sampling, host), s.
    pub decode_step_overhead_s: f64,
    /// Host cost per generated token (detokenising, streaming), s, serial.
    pub decode_token_overhead_s: f64,
}

/// Names users pass to `--calib NAME=VALUE`.
pub const NAMES: &[&str] = &[
    "mxu_train",
    "chip_train",
    "attention_train",
    "mxu_serve",
    "hbm",
    "ici",
    "hop_latency",
    "dcn",
    "dcn_sync_s",
    "overlap",
    "decode_step_overhead_s",
    "decode_token_overhead_s",
];

impl Efficiency {
    /// The book's roofline: peak rates, full overlap, no overheads.
    pub fn ideal() -> Efficiency {
        Efficiency {
            mxu_train: 1.0,
            chip_train: Some(1.0),
            attention_train: 1.0,
            mxu_serve: 1.0,
            hbm: 1.0,
            ici: 1.0,
            hop_latency: 1.0,
            dcn: 1.0,
            dcn_sync_s: 0.0,
            overlap: 1.0,
            decode_step_overhead_s: 0.0,
            decode_token_overhead_s: 0.0,
        }
    }

    /// The calibrated figures (fitted by `bench/llm-fit.py` on the training split
    /// of `data/llm/*.jsonl`; see BENCHMARKS.md for the fit and its residuals).
    pub fn calibrated() -> Efficiency {
        Efficiency {
            // 18 MaxText v5e rows (16B, 64B, 128B; 1-32 slices): step times. The
            // first three searched jointly (twenty-sixth session; 0.80, -, 0.9 before).
            mxu_train: 0.88,
            // per chip, measured where a chip has rows of its own (chip_train_fraction)
            chip_train: None,
            attention_train: 0.6,
            overlap: 0.8,
            dcn: 0.3,
            dcn_sync_s: 1.0,
            // 10 JetStream v5e rows (LLaMA-2 7B, LLaMA-3 8B, Gemma 2B/7B): tokens/s.
            mxu_serve: 0.3,
            hbm: 1.0,
            hop_latency: 1.0,
            decode_step_overhead_s: 0.001,
            decode_token_overhead_s: 9e-5,
            // The book's one measured large collective: a v5e AllGather of 34 MB
            // over a 4-chip line took 680 µs where the formula gives 560 µs.
            ici: 560.0 / 680.0,
        }
    }

    /// Set one figure by name (`--calib NAME=VALUE`); fractions must be in (0, 1],
    /// times and the hop multiple non-negative and finite.
    pub fn set(&mut self, name: &str, value: f64) -> Result<()> {
        let fraction = |v: f64| v.is_finite() && v > 0.0 && v <= 1.0;
        let ok = match name {
            "overlap" => value.is_finite() && (0.0..=1.0).contains(&value),
            "hop_latency" | "dcn_sync_s" | "decode_step_overhead_s" | "decode_token_overhead_s" => {
                value.is_finite() && value >= 0.0
            }
            _ => fraction(value),
        };
        if name == "chip_train" {
            if !fraction(value) {
                return Err(bad(
                    "--calib",
                    format!("{name}={value}"),
                    "fractions lie in (0, 1]",
                ));
            }
            self.chip_train = Some(value);
            return Ok(());
        }
        let slot = match name {
            "mxu_train" => &mut self.mxu_train,
            "attention_train" => &mut self.attention_train,
            "mxu_serve" => &mut self.mxu_serve,
            "hbm" => &mut self.hbm,
            "ici" => &mut self.ici,
            "hop_latency" => &mut self.hop_latency,
            "dcn" => &mut self.dcn,
            "dcn_sync_s" => &mut self.dcn_sync_s,
            "overlap" => &mut self.overlap,
            "decode_step_overhead_s" => &mut self.decode_step_overhead_s,
            "decode_token_overhead_s" => &mut self.decode_token_overhead_s,
            _ => {
                return Err(bad(
                    "--calib",
                    name,
                    format!("unknown figure; known: {}", NAMES.join(", ")),
                ))
            }
        };
        if !ok {
            return Err(bad(
                "--calib",
                format!("{name}={value}"),
                "fractions lie in (0, 1] (overlap in [0, 1]); times and hop_latency are finite and >= 0",
            ));
        }
        *slot = value;
        Ok(())
    }

    /// `ideal`, `calibrated`, or `custom` (figures set by hand), for reports.
    pub fn mode(&self, attention_flops: bool) -> &'static str {
        if *self == Efficiency::ideal() && !attention_flops {
            "ideal"
        } else if *self == Efficiency::calibrated() && attention_flops {
            "calibrated"
        } else {
            "custom"
        }
    }

    /// Compose overlapped terms: the longest, plus `1 − overlap` of the rest.
    pub fn compose(&self, terms: &[f64]) -> f64 {
        let max = terms.iter().copied().fold(0.0, f64::max);
        let sum: f64 = terms.iter().sum();
        max + (1.0 - self.overlap) * (sum - max)
    }
}

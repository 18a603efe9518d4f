//! The book's thresholds for any chip: the per-chip batch above which data
//! parallelism and FSDP are compute bound, the tensor-parallel limit, the optimal
//! FSDP degree of mixed FSDP+TP, the critical decode batch and the DCN batch.

use serde::Serialize;
use tpusim_chip::{Chip, RateClass};

/// Thresholds of one chip (and, where they need one, a model's MLP width `F`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thresholds {
    /// Chip name.
    pub chip: String,
    /// `C / W_ici`: tokens per chip above which DP/FSDP over one axis is compute bound.
    pub dp_batch_per_chip_1_axis: f64,
    /// Over two axes (`C / (2·W_ici)`).
    pub dp_batch_per_chip_2_axes: f64,
    /// Over three axes.
    pub dp_batch_per_chip_3_axes: f64,
    /// Critical decode batch, bf16 weights and math (`C·2 / (2·W_hbm)`).
    pub decode_batch_bf16: f64,
    /// int8 weights, bf16 math.
    pub decode_batch_int8_weights: f64,
    /// int8 weights and int8 math.
    pub decode_batch_int8_int8: f64,
    /// Tokens per slice above which data parallelism over DCN is compute bound
    /// (`C / W_dcn` per chip, the slice's FLOP/s over its DCN bandwidth).
    pub dcn_batch_per_slice: f64,
    /// With a model: the tensor-parallel degree above which the MLP is
    /// communication bound, per number of axes (`axes·F / (C/W_ici)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tp_limit_1_axis: Option<f64>,
    /// Over two axes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tp_limit_2_axes: Option<f64>,
    /// With a model: tokens per chip above which mixed FSDP+TP is compute bound
    /// (`2·(C/W_ici)² / F`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixed_batch_per_chip: Option<f64>,
    /// With a model, a batch and a chip count: `X_opt = sqrt(B/F · M_X/M_Y · N)`
    /// (FSDP on two axes, TP on one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x_opt: Option<f64>,
}

/// The decode batch above which a weight matmul is compute bound: `peak · bytes per
/// weight / (2 · HBM bandwidth)` (2 FLOPs per weight per sequence against reading it).
pub fn critical_decode_batch(
    peak_flops_per_s: f64,
    weight_bytes: f64,
    hbm_bytes_per_s: f64,
) -> f64 {
    peak_flops_per_s * weight_bytes / (2.0 * hbm_bytes_per_s)
}

/// The thresholds of `chip`; `d_ff` adds the model ones, and `batch_chips` (tokens,
/// chips) adds `X_opt`.
pub fn thresholds(chip: &Chip, d_ff: Option<u64>, batch_chips: Option<(f64, u64)>) -> Thresholds {
    let c = chip.peak(RateClass::Bf16).ops_per_s;
    let c8 = chip.peak(RateClass::Int8).ops_per_s;
    let w = chip.ici_bidi_bytes_per_s;
    let alpha = c / w;
    let hbm = chip.hbm_bytes_per_s;
    let f = d_ff.map(|f| f as f64);
    Thresholds {
        chip: chip.name.clone(),
        dp_batch_per_chip_1_axis: alpha,
        dp_batch_per_chip_2_axes: alpha / 2.0,
        dp_batch_per_chip_3_axes: alpha / 3.0,
        decode_batch_bf16: critical_decode_batch(c, 2.0, hbm),
        decode_batch_int8_weights: critical_decode_batch(c, 1.0, hbm),
        decode_batch_int8_int8: critical_decode_batch(c8, 1.0, hbm),
        dcn_batch_per_slice: c / chip.dcn_bytes_per_s,
        tp_limit_1_axis: f.map(|f| f / alpha),
        tp_limit_2_axes: f.map(|f| 2.0 * f / alpha),
        mixed_batch_per_chip: f.map(|f| 2.0 * alpha * alpha / f),
        x_opt: f
            .zip(batch_chips)
            .map(|(f, (b, n))| (b / f * 2.0 * n as f64).sqrt()),
    }
}

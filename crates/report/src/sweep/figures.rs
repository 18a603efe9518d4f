//! What one run of a sweep reports: the figures every sweep row carries, whoever ran it
//! (the CLI's `--sweep`, Python's `tpusim.sweep`).

use crate::model::Report;
use serde::Serialize;
use tpusim_llm::tpu::TransformerReport;

/// One run's figures; every field but `error` is empty when the run failed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Figures {
    /// `tpu` or `npu`.
    pub chip_kind: Option<String>,
    /// The element type the run used (the chip's default when none was asked).
    pub dtype: Option<String>,
    /// Time of one batch, seconds.
    pub total_time_s: Option<f64>,
    /// The roofline lower bound of the whole network, seconds.
    pub roofline_lower_bound_s: Option<f64>,
    /// `total_time_s / roofline_lower_bound_s`.
    pub plan_over_bound: Option<f64>,
    /// Compute time of the plan, seconds.
    pub compute_s: Option<f64>,
    /// Transfer time not hidden under compute, seconds.
    pub exposed_dma_s: Option<f64>,
    /// FLOPs of the network.
    pub flops: Option<u64>,
    /// Bytes of the logical tensors read and written.
    pub bytes_logical: Option<u64>,
    /// Bytes moved in the chip's layouts.
    pub bytes_moved: Option<u64>,
    /// FLOPs per second achieved.
    pub achieved_flops_per_s: Option<f64>,
    /// The chip's peak FLOPs per second at this dtype.
    pub peak_flops_per_s: Option<f64>,
    /// Layers of the network.
    pub layers: Option<u64>,
    /// Groups of the plan (global ops included).
    pub groups: Option<u64>,
    /// Ops run from global memory.
    pub global_ops: Option<u64>,
    /// Whether the weights and activations fit the chip's HBM (TPUs).
    pub fits_hbm: Option<bool>,
    /// Bytes of HBM the run needs.
    pub hbm_bytes_needed: Option<u64>,
    /// Why the run failed.
    pub error: Option<String>,
}

impl Figures {
    /// The figures of a report, or of the message of a run that failed.
    pub fn of(outcome: Result<Report, String>) -> Figures {
        match outcome {
            Ok(r) => Figures {
                plan_over_bound: (r.roofline_lower_bound_s > 0.0)
                    .then(|| r.total_time_s / r.roofline_lower_bound_s),
                chip_kind: Some(r.chip_kind),
                dtype: Some(r.dtype),
                total_time_s: Some(r.total_time_s),
                roofline_lower_bound_s: Some(r.roofline_lower_bound_s),
                compute_s: Some(r.compute_s),
                exposed_dma_s: Some(r.exposed_dma_s),
                flops: Some(r.flops),
                bytes_logical: Some(r.bytes_logical),
                bytes_moved: Some(r.bytes_moved),
                achieved_flops_per_s: Some(r.achieved_flops_per_s),
                peak_flops_per_s: Some(r.peak_flops_per_s),
                layers: Some(r.layers.len() as u64),
                groups: Some(r.groups.len() as u64),
                global_ops: Some(r.groups.iter().filter(|g| g.global).count() as u64),
                fits_hbm: r.fits_hbm,
                hbm_bytes_needed: Some(r.hbm_bytes_needed),
                error: None,
            },
            Err(e) => Figures {
                error: Some(e),
                ..Figures::default()
            },
        }
    }

    /// The figures of a transformer's step on a TPU (`tpusim report MODEL --phase …`):
    /// its roofline time op by op; the planner's columns (`compute_s`, `groups`, …)
    /// stay empty, `layers` counts the model's layers.
    pub fn of_transformer(r: &TransformerReport, layers: u64) -> Figures {
        let t = &r.totals;
        Figures {
            chip_kind: Some("tpu".into()),
            dtype: Some(r.workload.weights.name().to_string()),
            total_time_s: Some(t.total_time_s),
            roofline_lower_bound_s: Some(t.roofline_lower_bound_s),
            plan_over_bound: (t.roofline_lower_bound_s > 0.0)
                .then(|| t.total_time_s / t.roofline_lower_bound_s),
            flops: Some(t.flops.round() as u64),
            bytes_moved: Some(t.bytes_moved.round() as u64),
            achieved_flops_per_s: (t.total_time_s > 0.0).then(|| t.flops / t.total_time_s),
            layers: Some(layers),
            fits_hbm: Some(r.fits_hbm),
            hbm_bytes_needed: Some(r.hbm_bytes_needed.round() as u64),
            ..Figures::default()
        }
    }
}

//! Compute time of an op (whole, or one slice of its output rows and batches).
//!
//! **TPU**: convolutions, deconvolutions and gemms run on the MXUs, timed by the
//! systolic crate's analytic model (weight-stationary, double-buffered weight loads) on
//! one R×C array. The chip's MXUs share the work one of three ways — rows of the
//! streamed operand (M) split between them, output columns (N) split, or whole
//! convolution groups split — and the fastest is taken, so small or odd dimensions show
//! their utilization loss. Cycles are at the clock the table's peak implies; dtypes
//! other than bf16 scale by the table's rate ratio (int8 2×, f32 ⅙ …). Depthwise
//! convolutions take the faster of the MXU and the VPU. Everything else (pooling,
//! element-wise ops, batch-norm) is FLOPs at the VPU rate; concat, upsample and views
//! compute nothing. Bias and fused activations ride on the MXU result path (not timed).
//!
//! **NPU**: the planner's cost model ([`tpusim_planner::op_cycles`]): channels
//! quantised to lane rows, MACs at the chip's rate per lane, element-wise work at EU_NUM
//! per lane per cycle, divided by the clock.

use crate::error::{ReportError, Result};
use crate::machine::{rate_class, Machine};
use tpusim_graph::{cost::op_cost, Graph, Op, OpKind};
use tpusim_layout::ElementType;
use tpusim_systolic::{analyze, ArraySpec, Dataflow, Gemm, RunOptions, Workload};

/// Compute time of one op (or slice) and how well it used the machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compute {
    /// Seconds.
    pub seconds: f64,
    /// Multiply-accumulates done on the matrix units (0 for vector ops).
    pub macs: u64,
    /// FLOPs of the op (or slice).
    pub flops: u64,
    /// How well the op used its unit, 0–1: for matrix work useful MACs / MAC slots of
    /// the whole chip (2·MACs / (seconds · peak)); for vector work the fraction of the
    /// vector lanes holding real data (TPU: logical / tiled elements of the output; NPU:
    /// channels / (lane rows × lanes)). 0 for ops that compute nothing.
    pub utilization: f64,
}

/// Times ops of one graph on one machine at one dtype.
pub struct Timer<'a> {
    graph: &'a Graph,
    machine: &'a Machine,
    dtype: ElementType,
    /// Vector FLOP/s.
    vector: f64,
    /// TPU: bf16-rate → dtype-rate factor.
    rate_factor: f64,
    npu_timing: Option<tpusim_planner::Timing>,
    /// Matrix-unit peak at the dtype, FLOP/s.
    peak: f64,
    /// TPU: stored / logical elements of each tensor (lane padding of vector work).
    expansion: Vec<f64>,
}

fn lower(op: &Op, e: impl std::fmt::Display) -> ReportError {
    ReportError::Lower {
        context: format!("timing op '{}'", op.name),
        message: e.to_string(),
    }
}

impl<'a> Timer<'a> {
    /// A timer for `graph` on `machine` at `dtype`; `expansion[t]` is tensor t's stored
    /// / logical bytes (vector work on a TPU pays for the padded lanes).
    pub fn new(
        graph: &'a Graph,
        machine: &'a Machine,
        dtype: ElementType,
        expansion: Vec<f64>,
    ) -> Result<Timer<'a>> {
        let vector = machine.vector_flops_per_s(dtype)?;
        let peak = machine.peak_flops_per_s(dtype)?;
        let (rate_factor, npu_timing) = match machine {
            Machine::Tpu(t) => {
                let bf16 = t.chip.peak(tpusim_chip::RateClass::Bf16).ops_per_s;
                (t.chip.peak(rate_class(dtype)?).ops_per_s / bf16, None)
            }
            Machine::Npu(n) => (1.0, Some(crate::machine::npu_timing(&n.chip, dtype)?)),
        };
        Ok(Timer {
            graph,
            machine,
            dtype,
            vector,
            rate_factor,
            npu_timing,
            peak,
            expansion,
        })
    }

    /// The element type.
    pub fn dtype(&self) -> ElementType {
        self.dtype
    }

    /// Compute of `op` for `n_len` batches and `h_len` output rows (pass the output's
    /// full N and H for the whole op).
    pub fn compute(&self, op: &Op, n_len: u64, h_len: u64) -> Result<Compute> {
        let g = self.graph;
        let Some(&yid) = op.outputs.first() else {
            return Ok(Compute {
                seconds: 0.0,
                macs: 0,
                flops: 0,
                utilization: 0.0,
            });
        };
        let Some(y) = g.tensors.get(yid).map(|t| t.shape) else {
            return Ok(Compute {
                seconds: 0.0,
                macs: 0,
                flops: 0,
                utilization: 0.0,
            });
        };
        let mac_util = |seconds: f64| {
            if seconds > 0.0 {
                2.0 * macs_f(op, n_len, h_len, g) / (seconds * self.peak)
            } else {
                0.0
            }
        };
        let cost = op_cost(g, op).map_err(|e| lower(op, e))?;
        let full = y.n.saturating_mul(y.h).max(1) as f64;
        let frac = (n_len.saturating_mul(h_len)) as f64 / full;
        let flops = (cost.flops as f64 * frac).round() as u64;
        let macs = (cost.macs as f64 * frac).round() as u64;
        match self.machine {
            Machine::Npu(n) => {
                let t = self
                    .npu_timing
                    .as_ref()
                    .ok_or_else(|| lower(op, "no NPU timing"))?;
                let cycles =
                    tpusim_planner::op_cycles(g, op, n_len, h_len, n.chip.geometry.npu_num, t);
                let seconds = cycles / t.used.clock_hz;
                let lanes = n.chip.geometry.npu_num.max(1);
                let utilization = if seconds <= 0.0 {
                    0.0
                } else if is_matrix(op, g) {
                    mac_util(seconds)
                } else {
                    let c = y.c.max(1);
                    c as f64 / (c.div_ceil(lanes) * lanes) as f64
                };
                Ok(Compute {
                    seconds,
                    macs,
                    flops,
                    utilization,
                })
            }
            Machine::Tpu(tpu) => {
                let x = op
                    .inputs
                    .first()
                    .and_then(|&i| g.tensors.get(i))
                    .map(|t| t.shape)
                    .unwrap_or(y);
                let mxu = |m: u64, k: u64, nn: u64, groups: u64| -> Result<f64> {
                    let cycles = mxu_cycles(tpu.mxu_dim, tpu.mxus, m, k, nn, groups)
                        .map_err(|e| lower(op, e))?;
                    Ok(cycles as f64 / tpu.clock_hz / self.rate_factor)
                };
                let lane_fill = 1.0 / self.expansion.get(yid).copied().unwrap_or(1.0).max(1.0);
                let vpu = flops as f64 / lane_fill / self.vector;
                let mut on_vpu = false;
                let seconds = match &op.kind {
                    OpKind::Conv(p) => {
                        let groups = p.groups.max(1);
                        let icg = (x.c / groups).max(1);
                        let m = n_len.saturating_mul(h_len).saturating_mul(y.w);
                        let t = mxu(
                            m,
                            p.kernel[0] * p.kernel[1] * icg,
                            (y.c / groups).max(1),
                            groups,
                        )?;
                        if icg == 1 && groups > 1 && vpu < t {
                            on_vpu = true;
                            vpu
                        } else {
                            t
                        }
                    }
                    OpKind::Deconv { params: p, .. } => {
                        // col2im form: every input pixel times the filter
                        let groups = p.groups.max(1);
                        let rows_in = h_len.div_ceil(p.stride[0].max(1)).min(x.h).max(1);
                        let m = n_len.saturating_mul(rows_in).saturating_mul(x.w);
                        mxu(
                            m,
                            (x.c / groups).max(1),
                            (y.c / groups).max(1) * p.kernel[0] * p.kernel[1],
                            groups,
                        )?
                    }
                    OpKind::Gemm => {
                        let k = x.c.saturating_mul(x.h).saturating_mul(x.w);
                        mxu(
                            n_len,
                            k.max(1),
                            y.c.saturating_mul(y.h).saturating_mul(y.w).max(1),
                            1,
                        )?
                    }
                    OpKind::Flatten
                    | OpKind::Reshape
                    | OpKind::Concat
                    | OpKind::Upsample { .. } => 0.0,
                    _ => {
                        on_vpu = true;
                        vpu
                    }
                };
                let utilization = if seconds <= 0.0 {
                    0.0
                } else if on_vpu {
                    lane_fill
                } else {
                    mac_util(seconds)
                };
                Ok(Compute {
                    seconds,
                    macs,
                    flops,
                    utilization,
                })
            }
        }
    }
}

/// True for ops whose work is multiply-accumulates on the matrix units (dense or grouped
/// convolutions other than depthwise, deconvolutions, gemms).
fn is_matrix(op: &Op, g: &Graph) -> bool {
    match &op.kind {
        OpKind::Conv(p) => {
            let x = op
                .inputs
                .first()
                .and_then(|&i| g.tensors.get(i))
                .map(|t| t.shape.c)
                .unwrap_or(1);
            !(p.groups > 1 && x / p.groups.max(1) <= 1)
        }
        OpKind::Deconv { .. } | OpKind::Gemm => true,
        _ => false,
    }
}

/// MACs of an op's slice (`n_len` batches × `h_len` output rows), as f64.
fn macs_f(op: &Op, n_len: u64, h_len: u64, g: &Graph) -> f64 {
    let Some(y) = op
        .outputs
        .first()
        .and_then(|&o| g.tensors.get(o))
        .map(|t| t.shape)
    else {
        return 0.0;
    };
    let full = y.n.saturating_mul(y.h).max(1) as f64;
    op_cost(g, op).map(|c| c.macs as f64).unwrap_or(0.0) * (n_len.saturating_mul(h_len)) as f64
        / full
}

/// Cycles of a GEMM C[M,N] = A[M,K]·W[K,N], repeated `groups` times, on `mxus` arrays of
/// `dim`×`dim`: the fastest of splitting M, N or the groups between the arrays.
pub fn mxu_cycles(
    dim: u64,
    mxus: u64,
    m: u64,
    k: u64,
    n: u64,
    groups: u64,
) -> std::result::Result<u64, tpusim_systolic::SystolicError> {
    if m == 0 || k == 0 || n == 0 || groups == 0 {
        return Ok(0);
    }
    let a = ArraySpec::new(dim, dim)?;
    let opts = RunOptions {
        dataflow: Dataflow::Ws,
        double_buffer: true,
    };
    let run = |m: u64,
               k: u64,
               n: u64,
               rep: u64|
     -> std::result::Result<u64, tpusim_systolic::SystolicError> {
        let mut wl = Workload::from_gemm(Gemm::new(m, k, n)?);
        wl.repeat = rep;
        Ok(analyze(a, &wl, opts)?.cycles)
    };
    let p = mxus.max(1);
    let split_m = run(m.div_ceil(p), k, n, groups)?;
    let split_n = run(m, k, n.div_ceil(p), groups)?;
    let mut best = split_m.min(split_n);
    if groups > 1 {
        best = best.min(run(m, k, n, groups.div_ceil(p))?);
    }
    Ok(best)
}

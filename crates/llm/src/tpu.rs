//! A transformer timed on one TPU, operation by operation (`tpusim report MODEL
//! --phase prefill|decode` for a transformer): every matmul on the MXUs with its
//! contracting and output dimensions padded to the array, every element-wise op and
//! reduction on the VPU, each against HBM (a roofline per operation, no fusion
//! across operations), KV-cache reads and writes shown.

use crate::error::{bad, Result};
use crate::model::{Model, Tensor};
use crate::ops::{ops, Op, Phase, Unit, Workload};
use crate::precision::{Precision, MX_BLOCK};
use serde::Serialize;
use tpusim_chip::roofline::{estimate, matmul_class, Roofs};
use tpusim_chip::{Chip, RateClass, Source};
use tpusim_layout::{sizes, tpu_default, ElementType, TpuGen};

/// One operation and its time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpTime {
    /// The operation.
    #[serde(flatten)]
    pub op: Op,
    /// FLOPs the unit executes for one run (matmul dimensions padded to the MXU).
    pub executed_flops: f64,
    /// Compute time of one run, s.
    pub compute_s: f64,
    /// HBM time of one run, s.
    pub memory_s: f64,
    /// `max` of the two, s.
    pub time_s: f64,
    /// `compute` or `hbm`.
    pub bound: String,
}

/// Sums over a step's timed operations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Totals {
    /// Useful FLOPs of the step.
    pub flops: f64,
    /// Executed FLOPs (padding included).
    pub executed_flops: f64,
    /// Bytes moved to and from HBM.
    pub bytes_moved: f64,
    /// Weight bytes read.
    pub weight_bytes_read: f64,
    /// KV-cache bytes read.
    pub kv_cache_bytes_read: f64,
    /// KV-cache bytes written.
    pub kv_cache_bytes_written: f64,
    /// MXU time, s (sum over matmuls of their roofline time).
    pub mxu_s: f64,
    /// VPU time, s.
    pub vpu_s: f64,
    /// The step: the sum of every operation's roofline time, s.
    pub total_time_s: f64,
    /// `max(executed FLOPs / peak, bytes / HBM)` of the whole step, s.
    pub roofline_lower_bound_s: f64,
    /// `compute` or `hbm`: where most of the step's time is bound.
    pub bound: &'static str,
}

/// Sum `timed` (each run `count` times) on `chip`.
pub fn totals(chip: &Chip, timed: &[OpTime]) -> Totals {
    let sum =
        |f: &dyn Fn(&OpTime) -> f64| timed.iter().map(|o| o.op.count as f64 * f(o)).sum::<f64>();
    let executed = sum(&|o| o.executed_flops);
    let bytes = sum(&|o| o.op.bytes());
    let on = |u: Unit| sum(&|o| if o.op.unit == u { o.time_s } else { 0.0 });
    let total = sum(&|o| o.time_s);
    let compute_bound = sum(&|o| if o.bound == "compute" { o.time_s } else { 0.0 });
    let peak = chip.peak(RateClass::Bf16).ops_per_s;
    Totals {
        flops: sum(&|o| o.op.flops),
        executed_flops: executed,
        bytes_moved: bytes,
        weight_bytes_read: sum(&|o| o.op.weight_bytes),
        kv_cache_bytes_read: sum(&|o| o.op.kv_bytes_read),
        kv_cache_bytes_written: sum(&|o| o.op.kv_bytes_written),
        mxu_s: on(Unit::Mxu),
        vpu_s: on(Unit::Vpu),
        total_time_s: total,
        roofline_lower_bound_s: (executed / peak).max(bytes / chip.hbm_bytes_per_s),
        bound: if compute_bound * 2.0 >= total {
            "compute"
        } else {
            "hbm"
        },
    }
}

fn largest_activation(timed: &[OpTime]) -> f64 {
    timed
        .iter()
        .map(|o| o.op.act_bytes_in + o.op.act_bytes_out)
        .fold(0.0, f64::max)
}

/// What `tpusim report` prints for a transformer (field names shared with the
/// CNN report where they mean the same: `total_time_s`, `flops`, `fits_hbm`, …).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransformerReport {
    /// Model name.
    pub model: String,
    /// Chip name.
    pub chip: String,
    /// The workload.
    #[serde(flatten)]
    pub workload: Workload,
    /// Tokens processed in this step (all sequences).
    pub tokens: u64,
    /// Operations: per layer (count = layers), then the head (count 1).
    pub ops: Vec<OpTime>,
    /// What the step adds up to.
    #[serde(flatten)]
    pub totals: Totals,
    /// Tokens per second (new tokens / step).
    pub tokens_per_s: f64,
    /// Weights as XLA stores them on this TPU generation (each tensor in its
    /// default tiled layout, padding included); `null` for a chip that is not a TPU
    /// generation.
    pub weights_bytes_tiled: Option<f64>,
    /// One layer's weights so stored.
    pub layer_weights_bytes_tiled: Option<f64>,
    /// Weights (tiled where known), the KV cache after this step, and the largest
    /// operation's activations.
    pub hbm_bytes_needed: f64,
    /// Whether that fits the chip's HBM.
    pub fits_hbm: bool,
    /// `hbm_bytes_needed` by part, against the chip's HBM.
    pub memory: HbmUse,
}

/// What a step holds in HBM, by part, and the chip's HBM.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HbmUse {
    /// Weights (tiled where known).
    pub weights_bytes: f64,
    /// The KV cache after the step (0 for an imported graph).
    pub kv_cache_bytes: f64,
    /// The largest operation's activations.
    pub activation_bytes: f64,
    /// The chip's HBM.
    pub hbm_bytes: f64,
}

impl HbmUse {
    fn new(chip: &Chip, weights_bytes: f64, kv_cache_bytes: f64, activation_bytes: f64) -> HbmUse {
        HbmUse {
            weights_bytes,
            kv_cache_bytes,
            activation_bytes,
            hbm_bytes: chip.hbm_bytes as f64,
        }
    }

    /// Everything held.
    pub fn needed(&self) -> f64 {
        self.weights_bytes + self.kv_cache_bytes + self.activation_bytes
    }
}

fn pad(v: u64, to: Option<u32>) -> f64 {
    match to {
        Some(m) => v.div_ceil(u64::from(m)) as f64 * f64::from(m),
        None => v as f64,
    }
}

fn time(chip: &Chip, weights: Precision, kv: Precision, op: Op) -> Result<OpTime> {
    let (roofs, executed) = match (op.unit, op.gemm) {
        (Unit::Mxu, Some(g)) => {
            let operand = if op.kv_bytes_read > 0.0 { kv } else { weights };
            let class = matmul_class(chip, ElementType::Bf16, operand.element_type())?;
            let roofs = Roofs::of(chip, tpusim_chip::Unit::Mxu, class, Source::Hbm, None, None)?;
            let executed =
                2.0 * (g.batch * g.m) as f64 * pad(g.k, chip.mxu_dim) * pad(g.n, chip.mxu_dim);
            (roofs, executed)
        }
        _ => (
            Roofs::of(
                chip,
                tpusim_chip::Unit::Vpu,
                RateClass::Bf16,
                Source::Hbm,
                chip.vector_flops_per_s(),
                None,
            )?,
            op.flops,
        ),
    };
    let r = estimate(op.flops, executed, op.bytes(), &roofs)?;
    Ok(OpTime {
        executed_flops: executed,
        compute_s: r.t_math_s,
        memory_s: r.t_comms_s,
        time_s: r.t_lower_s,
        bound: r.bound,
        op,
    })
}

/// Bytes of `tensors` in XLA's default TPU layouts of `gen` at `p`. A block-scaled
/// precision (mxfp4) adds each tensor's scales as an array of their own: one per
/// [`MX_BLOCK`] values along the first (input) dimension.
pub fn tiled_bytes(tensors: &[Tensor], p: Precision, gen: TpuGen) -> Result<f64> {
    let mut total = 0.0;
    for t in tensors {
        total += tiled_array_bytes(t, p.element_type(), &t.dims, gen)?;
        if let (Some(scale), Some((&first, rest))) = (p.scale_type(), t.dims.split_first()) {
            let mut dims = vec![first.div_ceil(MX_BLOCK)];
            dims.extend_from_slice(rest);
            total += tiled_array_bytes(t, scale, &dims, gen)?;
        }
    }
    Ok(total)
}

fn tiled_array_bytes(t: &Tensor, e: ElementType, dims: &[u64], gen: TpuGen) -> Result<f64> {
    let shape = tpu_default(e, dims, gen).map_err(|e| bad("tensor", &t.name, e))?;
    Ok(sizes(&shape)
        .map_err(|e| bad("tensor", &t.name, e))?
        .array_size_bytes as f64)
}

/// Time one step of `w` on `model` on one `chip`.
pub fn report(model: &Model, chip: &Chip, w: &Workload) -> Result<TransformerReport> {
    let timed: Vec<OpTime> = ops(model, w)?
        .into_iter()
        .map(|op| time(chip, w.weights, w.kv, op))
        .collect::<Result<_>>()?;
    let t = totals(chip, &timed);
    let tokens = w.batch * w.new_tokens();
    let context_after = w.context * u64::from(w.phase == Phase::Decode) + w.new_tokens();
    let kv_after = w.batch as f64 * model.kv_bytes_for_context(context_after as f64, w.kv);
    let largest_act = largest_activation(&timed);
    let tiled = TpuGen::of_chip(&chip.name)
        .map(|gen| -> Result<(f64, f64)> {
            let layer = tiled_bytes(&model.layer_tensors(), w.weights, gen)?;
            let outer = tiled_bytes(&model.outer_tensors(), w.weights, gen)?;
            Ok((layer * model.layers as f64 + outer, layer))
        })
        .transpose()?;
    let weights = tiled.map_or(model.params().params as f64 * w.weights.bytes(), |t| t.0);
    let memory = HbmUse::new(chip, weights, kv_after, largest_act);
    let needed = memory.needed();
    Ok(TransformerReport {
        model: model.name.clone(),
        chip: chip.name.clone(),
        workload: *w,
        tokens,
        totals: t,
        tokens_per_s: tokens as f64 / t.total_time_s,
        weights_bytes_tiled: tiled.map(|t| t.0),
        layer_weights_bytes_tiled: tiled.map(|t| t.1),
        hbm_bytes_needed: needed,
        fits_hbm: needed <= chip.hbm_bytes as f64,
        memory,
        ops: timed,
    })
}

/// What `tpusim report MODEL.onnx` prints for an imported transformer graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphReport {
    /// Graph name.
    pub model: String,
    /// Chip name.
    pub chip: String,
    /// Inputs as bound.
    pub inputs: Vec<tpusim_graph::nd::NdInput>,
    /// Parameters (initializer elements).
    pub parameters: u64,
    /// Weight precision.
    pub weights_dtype: Precision,
    /// Every node that does work (views and folded shape arithmetic left out).
    pub ops: Vec<OpTime>,
    /// What the graph adds up to.
    #[serde(flatten)]
    pub totals: Totals,
    /// Parameters at `weights_dtype`.
    pub weights_bytes: f64,
    /// Weights and the largest operation's activations.
    pub hbm_bytes_needed: f64,
    /// Whether that fits the chip's HBM.
    pub fits_hbm: bool,
    /// `hbm_bytes_needed` by part, against the chip's HBM.
    pub memory: HbmUse,
}

/// Whether a graph input is a KV cache: optimum's `past_key_values.N.key`, or any name
/// with `past` or `cache` (the rule that binds its dynamic axes to the context).
fn is_kv_cache(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("past") || n.contains("cache")
}

fn elements(dims: &[u64]) -> f64 {
    dims.iter().map(|&d| d as f64).product()
}

/// `n` as one operation: its reads of the graph's KV-cache inputs, and its writes of
/// the updated caches (outputs named `present…`), are KV-cache traffic.
fn graph_op(n: &tpusim_graph::nd::NdNode, weights: Precision, kv: &[&str]) -> Option<Op> {
    use tpusim_graph::nd::Work;
    let act = crate::ops::ACTIVATION_BYTES;
    // folded from +0.0 (an empty f64 sum is -0.0, which prints as "-0 B")
    let kv_in = n
        .inputs
        .iter()
        .filter(|e| kv.contains(&e.name.as_str()))
        .map(|e| elements(&e.dims))
        .fold(0.0, |a, b| a + b);
    let writes_kv = n
        .outputs
        .iter()
        .any(|o| o.to_ascii_lowercase().contains("present"));
    let kv_out = if writes_kv { n.elements_out } else { 0.0 };
    let (unit, gemm, flops) = match n.work {
        Work::Free => return None,
        Work::Matmul {
            batch,
            m,
            k,
            n: cols,
            ..
        } => (
            Unit::Mxu,
            Some(crate::ops::Gemm {
                batch,
                m,
                k,
                n: cols,
            }),
            2.0 * batch as f64 * m as f64 * k as f64 * cols as f64,
        ),
        Work::Vector { flops } => (Unit::Vpu, None, flops),
        Work::Move => (Unit::Vpu, None, 0.0),
    };
    Some(Op {
        name: format!("{} ({})", n.name, n.op_type),
        count: 1,
        scope: crate::ops::Scope::Once,
        unit,
        gemm,
        flops,
        act_bytes_in: (n.elements_in - kv_in).max(0.0) * act,
        weight_bytes: n.weight_elements * weights.bytes(),
        kv_bytes_read: kv_in * act,
        kv_bytes_written: kv_out * act,
        act_bytes_out: (n.elements_out - kv_out) * act,
    })
}

/// Time an imported graph on one `chip`, node by node, weights at `weights`.
pub fn graph_report(
    g: &tpusim_graph::nd::NdGraph,
    chip: &Chip,
    weights: Precision,
) -> Result<GraphReport> {
    let caches: Vec<&tpusim_graph::nd::NdInput> =
        g.inputs.iter().filter(|i| is_kv_cache(&i.name)).collect();
    let kv: Vec<&str> = caches.iter().map(|i| i.name.as_str()).collect();
    let timed: Vec<OpTime> = g
        .nodes
        .iter()
        .filter_map(|n| graph_op(n, weights, &kv))
        .map(|op| time(chip, weights, Precision::Bf16, op))
        .collect::<Result<_>>()?;
    let weights_bytes = g.parameters as f64 * weights.bytes();
    let kv_bytes = caches
        .iter()
        .map(|i| elements(&i.dims) * crate::ops::ACTIVATION_BYTES)
        .fold(0.0, |a, b| a + b);
    let memory = HbmUse::new(chip, weights_bytes, kv_bytes, largest_activation(&timed));
    let needed = memory.needed();
    Ok(GraphReport {
        model: g.name.clone(),
        chip: chip.name.clone(),
        inputs: g.inputs.clone(),
        parameters: g.parameters,
        weights_dtype: weights,
        totals: totals(chip, &timed),
        weights_bytes,
        hbm_bytes_needed: needed,
        fits_hbm: needed <= chip.hbm_bytes as f64,
        memory,
        ops: timed,
    })
}

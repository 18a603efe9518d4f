//! One sharding of a training run (the book's training chapter): memory per chip by
//! part, and a step of compute overlapped with each strategy's collectives on the axes
//! it holds.

use super::capacity;
use crate::axes::{place, Degrees, Placed};
use crate::calib::{chip_train_fraction, xla_mxu_fraction, Efficiency};
use crate::comm;
use crate::error::{bad, Result};
use crate::model::Model;
use crate::precision::Precision;
use crate::remat::{Recomputed, Remat};
use serde::Serialize;
use tpusim_chip::transfer::host_to_chip;
use tpusim_chip::{Collective, RateClass, Slice};

/// What to train, where, and how.
#[derive(Debug, Clone)]
pub struct TrainInput {
    /// The model.
    pub model: Model,
    /// One slice.
    pub slice: Slice,
    /// Slices joined by DCN (data parallel across them, or FSDP over `dcn_fsdp` of them).
    pub slices: u64,
    /// Slices the model state is sharded over (MaxText's `dcn_fsdp_parallelism`); the
    /// slices are data parallel in groups of this many. 1: plain data parallelism.
    pub dcn_fsdp: u64,
    /// Global batch, tokens per step.
    pub batch_tokens: u64,
    /// Sequence length.
    pub seq: u64,
    /// A token budget, for the total time.
    pub tokens: Option<f64>,
    /// ICI degrees; `None` searches.
    pub degrees: Option<Degrees>,
    /// What each layer saves.
    pub remat: Remat,
    /// Parameter (and gradient) storage.
    pub params: Precision,
    /// Optimizer bytes per parameter (Adam, two fp32 moments: 8).
    pub optimizer_bytes_per_param: f64,
    /// A fixed MFU (model FLOPs over peak), overriding the efficiency figures.
    pub mfu: Option<f64>,
    /// Efficiency figures.
    pub eff: Efficiency,
    /// Count attention FLOPs (calibrated) or follow the book's `6·P` (ideal).
    pub attention_flops: bool,
    /// Attention computed over the full `T×T` (a non-causal kernel) instead of half.
    pub full_attention: bool,
    /// Microbatches per step for pipelining; `None`: one per sequence of a replica.
    pub microbatches: Option<u64>,
    /// An MoE model's experts run as MaxText's dropping MoE at this capacity factor
    /// (`sparse_matmul: False`; see `capacity.rs`); `None`: dropless, only the routed
    /// tokens' work.
    pub capacity_factor: Option<f64>,
}

impl TrainInput {
    /// `model` on one `slice` with the defaults of `tpusim llm train`: 1 Mi tokens
    /// of 4096-token sequences, full remat, bf16 parameters, Adam (8 B per
    /// parameter), the sharding searched; `ideal` picks the book's roofline (`6·P`,
    /// no recomputation) or the calibrated figures.
    pub fn new(model: Model, slice: Slice, ideal: bool) -> TrainInput {
        TrainInput {
            model,
            slice,
            slices: 1,
            dcn_fsdp: 1,
            batch_tokens: 1 << 20,
            seq: 4096,
            tokens: None,
            degrees: None,
            remat: Remat::Full,
            params: Precision::Bf16,
            optimizer_bytes_per_param: 8.0,
            mfu: None,
            eff: if ideal {
                Efficiency::ideal()
            } else {
                Efficiency::calibrated()
            },
            attention_flops: !ideal,
            full_attention: false,
            microbatches: None,
            capacity_factor: None,
        }
    }
}

/// Bytes per chip by part.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrainMemory {
    /// Parameters.
    pub weights: f64,
    /// Gradients.
    pub gradients: f64,
    /// Optimizer state.
    pub optimizer: f64,
    /// Activation checkpoints.
    pub checkpoints: f64,
}

impl TrainMemory {
    /// The sum.
    pub fn total(&self) -> f64 {
        self.weights + self.gradients + self.optimizer + self.checkpoints
    }
}

/// Each strategy's collectives per step, seconds (0 when unused).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct CommTimes {
    /// FSDP: AllGather of weights (forward, backward) and ReduceScatter of gradients.
    pub fsdp_s: f64,
    /// Data parallel: AllReduce of gradients.
    pub dp_s: f64,
    /// Tensor parallel: AllReduce of activations, two per layer each way (2-D: the
    /// AllGather, AllReduce and ReduceScatter around each block, each way).
    pub tp_s: f64,
    /// Sequence parallel: AllGather of keys and values per layer.
    pub sp_s: f64,
    /// Expert parallel: AllToAll of tokens, two per MoE layer each way.
    pub ep_s: f64,
    /// Pipeline: activations between stages.
    pub pp_s: f64,
    /// Across slices: AllReduce of gradient shards over DCN among data-parallel
    /// slices; with FSDP across slices, each gather's and the reduce-scatter's DCN leg.
    pub dcn_s: f64,
    /// To and from the host over PCIe: the activations a remat policy offloads,
    /// written in the forward pass and read back in the backward.
    pub host_s: f64,
}

impl CommTimes {
    fn named(&self) -> [(&'static str, f64); 8] {
        [
            ("fsdp", self.fsdp_s),
            ("dp", self.dp_s),
            ("tp", self.tp_s),
            ("sp", self.sp_s),
            ("ep", self.ep_s),
            ("pp", self.pp_s),
            ("dcn", self.dcn_s),
            ("host", self.host_s),
        ]
    }

    /// The sum.
    pub fn total(&self) -> f64 {
        self.named().iter().map(|(_, t)| t).sum()
    }
}

/// A sharding the search weighed and why it lost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainAlternative {
    /// Degrees.
    pub sharding: Degrees,
    /// Step time, s.
    pub step_s: f64,
    /// Fits HBM.
    pub fits: bool,
    /// Why it is not the choice.
    pub why: String,
}

/// What `tpusim llm train` prints (the spec's field names).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainReport {
    /// Model name.
    pub model: String,
    /// Chip name.
    pub chip: String,
    /// Slice shape.
    pub slice: String,
    /// Slices over DCN.
    pub slices: u64,
    /// Chips in all slices.
    pub chips: u64,
    /// Tokens per step.
    pub batch_tokens: u64,
    /// Sequence length.
    pub seq: u64,
    /// Remat policy.
    pub remat: String,
    /// Degrees used.
    pub sharding: Degrees,
    /// Bytes on the fullest chip.
    pub memory_per_chip_bytes: f64,
    /// Per chip, by part.
    pub memory_per_chip: TrainMemory,
    /// HBM per chip.
    pub hbm_bytes_per_chip: f64,
    /// Everything fits.
    pub fits: bool,
    /// The smallest number of chips that holds weights, gradients, optimizer state
    /// and checkpoints, by memory alone.
    pub min_chips_by_memory: u64,
    /// Parameters, all chips together (one copy).
    pub weights_bytes: f64,
    /// Gradients (one copy).
    pub gradient_bytes: f64,
    /// Optimizer state (one copy).
    pub optimizer_bytes: f64,
    /// Checkpoints of the whole batch.
    pub checkpoint_bytes: f64,
    /// Model FLOPs per step.
    pub flops_per_step: f64,
    /// FLOPs executed per step (with recomputation).
    pub flops_executed_per_step: f64,
    /// Compute time of a step, s (pipeline bubbles included).
    pub compute_s: f64,
    /// Of which pipeline bubbles, s.
    pub bubble_s: f64,
    /// Collectives per strategy, s.
    pub comms: CommTimes,
    /// The step, s: compute and collectives overlapped.
    pub step_s: f64,
    /// Model FLOPs per second over peak.
    pub mfu: f64,
    /// Tokens per second.
    pub tokens_per_s: f64,
    /// Tokens per second per chip.
    pub tokens_per_s_per_chip: f64,
    /// Time for `tokens`, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_s: Option<f64>,
    /// FLOPs for `tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flops_total: Option<f64>,
    /// `compute`, `ici` or `dcn`.
    pub bound: &'static str,
    /// The term that binds, in words.
    pub bound_detail: String,
    /// Shardings the search weighed (empty when degrees were given).
    pub runners_up: Vec<TrainAlternative>,
}

/// Evaluate one sharding (`deg.dcn_dp · deg.dcn_fsdp` must equal `input.slices`).
pub fn evaluate(input: &TrainInput, deg: Degrees) -> Result<TrainReport> {
    check(input)?;
    if deg.dcn_dp.saturating_mul(deg.dcn_fsdp) != input.slices {
        return Err(bad(
            "--slices",
            input.slices,
            format!(
                "the DCN degrees dcn_dp={} and dcn_fsdp={} must multiply to it",
                deg.dcn_dp, deg.dcn_fsdp
            ),
        ));
    }
    let placed = place(&input.slice, &deg)?;
    let replicas = deg.dp * deg.fsdp * input.slices;
    let sequences = input.batch_tokens / input.seq;
    if sequences < replicas {
        return Err(bad(
            "--batch-tokens",
            input.batch_tokens,
            format!(
                "is {sequences} sequences of {}, which leaves a chip with less than one sequence: {} data-parallel ways (dp·fsdp·slices) need at least {} tokens (or split sequences with --sp)",
                input.seq,
                replicas,
                replicas * input.seq
            ),
        ));
    }
    let chips = input.slice.chips() * input.slices;
    let mem = memory(input, &deg, chips);
    let totals = totals(input);
    let hbm = input.slice.chip.hbm_bytes as f64;
    let flops = model_flops_per_step(input);
    let again = recomputed(input);
    let counted_attention = attention_flops_per_step(input);
    let forward_attention = counted_attention / 3.0;
    let attention = counted_attention + again.attention_forwards * forward_attention;
    let executed = flops
        + (again.matmul_flops + capacity_flops_per_token(input)) * input.batch_tokens as f64
        + again.attention_forwards * forward_attention;
    let peak = input.slice.chip.peak(RateClass::Bf16).ops_per_s;
    let plain = compute_seconds(input, executed, attention, chips as f64 * peak);
    let micro = input.microbatches.unwrap_or(sequences / replicas).max(1) as f64;
    let bubble_s = plain * (deg.pp - 1) as f64 / micro;
    let compute_s = plain + bubble_s;
    let comms = comms(input, &deg, &placed)?;
    let step_s = input.eff.compose(&[compute_s, comms.total()]);
    let (bound, bound_detail) = bound(compute_s, &comms);
    let tokens_per_s = input.batch_tokens as f64 / step_s;
    let total_flops = input.tokens.map(|t| t * flops / input.batch_tokens as f64);
    Ok(TrainReport {
        model: input.model.name.clone(),
        chip: input.slice.chip.name.clone(),
        slice: input.slice.shape(),
        slices: input.slices,
        chips,
        batch_tokens: input.batch_tokens,
        seq: input.seq,
        remat: input.remat.name(),
        sharding: deg,
        memory_per_chip_bytes: mem.total(),
        memory_per_chip: mem,
        hbm_bytes_per_chip: hbm,
        fits: mem.total() <= hbm,
        min_chips_by_memory: (totals.total() / hbm).ceil() as u64,
        weights_bytes: totals.weights,
        gradient_bytes: totals.gradients,
        optimizer_bytes: totals.optimizer,
        checkpoint_bytes: totals.checkpoints,
        flops_per_step: flops,
        flops_executed_per_step: executed,
        compute_s,
        bubble_s,
        comms,
        step_s,
        mfu: flops / (step_s * chips as f64 * peak),
        tokens_per_s,
        tokens_per_s_per_chip: tokens_per_s / chips as f64,
        total_s: input.tokens.map(|t| t / tokens_per_s),
        flops_total: total_flops,
        bound,
        bound_detail,
        runners_up: Vec::new(),
    })
}

pub(super) fn check(input: &TrainInput) -> Result<()> {
    if input.seq == 0 || input.seq > 1 << 24 {
        return Err(bad("--seq", input.seq, "between 1 and 2^24 tokens"));
    }
    if input.batch_tokens < input.seq || input.batch_tokens > 1 << 50 {
        return Err(bad(
            "--batch-tokens",
            input.batch_tokens,
            format!(
                "at least one sequence ({} tokens) and at most 2^50",
                input.seq
            ),
        ));
    }
    if input.slices == 0 || input.slices > 1 << 16 {
        return Err(bad("--slices", input.slices, "between 1 and 65536"));
    }
    if input.dcn_fsdp == 0 || input.slices % input.dcn_fsdp != 0 {
        return Err(bad(
            "--dcn-fsdp",
            input.dcn_fsdp,
            format!(
                "divides the {} slices (the rest of them are data parallel)",
                input.slices
            ),
        ));
    }
    if let Some(t) = input.tokens {
        if !(t.is_finite() && t > 0.0) {
            return Err(bad("--tokens", t, "a positive token budget"));
        }
    }
    if let Some(m) = input.mfu {
        if !(m.is_finite() && m > 0.0 && m <= 1.0) {
            return Err(bad("--mfu", m, "a fraction in (0, 1]"));
        }
    }
    if let Remat::Checkpoints(c) = input.remat {
        if !(c.is_finite() && c > 0.0 && c <= 1e4) {
            return Err(bad("--checkpoints-per-layer", c, "a positive count"));
        }
    }
    if let Some(cf) = input.capacity_factor {
        if input.model.experts <= 1 {
            return Err(bad(
                "--capacity-factor",
                cf,
                format!(
                    "applies to mixture-of-experts models; {} has no experts",
                    input.model.name
                ),
            ));
        }
        if !(cf.is_finite() && cf > 0.0 && cf <= 1e3) {
            return Err(bad(
                "--capacity-factor",
                cf,
                "a positive factor (MaxText's capacity_factor; 1.25 is common)",
            ));
        }
    }
    Ok(())
}

/// One copy of each part, all chips together.
pub(super) fn totals(input: &TrainInput) -> TrainMemory {
    let m = &input.model;
    let p = m.params().params as f64;
    TrainMemory {
        weights: p * input.params.bytes(),
        gradients: p * input.params.bytes(),
        optimizer: p * input.optimizer_bytes_per_param,
        checkpoints: 2.0
            * input.batch_tokens as f64
            * m.d_model as f64
            * input.remat.checkpoints(m)
            * m.layers as f64,
    }
}

/// Per chip: model state sharded over FSDP (within and across slices), TP, PP (and
/// EP for the experts), replicated over DP and DP slices; checkpoints spread over every
/// chip.
fn memory(input: &TrainInput, deg: &Degrees, chips: u64) -> TrainMemory {
    let t = totals(input);
    let counts = input.model.params();
    let expert_share = if input.model.experts > 1 {
        counts.params_mlp as f64 / counts.params as f64
    } else {
        0.0
    };
    let model_shard = (deg.fsdp * deg.dcn_fsdp * deg.tp * deg.tp_d * deg.pp) as f64;
    let split = (1.0 - expert_share) / model_shard + expert_share / (model_shard * deg.ep as f64);
    TrainMemory {
        weights: t.weights * split,
        gradients: t.gradients * split,
        optimizer: t.optimizer * split,
        checkpoints: t.checkpoints / chips as f64,
    }
}

/// Model FLOPs per step: `6·P_active` per token, plus attention (`3 × 4·t·N·H·L`
/// at average context `t`: `T/2` causal, `T` for a full kernel) when counted.
fn model_flops_per_step(input: &TrainInput) -> f64 {
    (6.0 * input.model.params().params_active as f64 * input.batch_tokens as f64)
        + attention_flops_per_step(input)
}

/// The part of [`model_flops_per_step`] that grows with the sequence: attention's
/// scores and values, forward and backward (none when the FLOPs follow the book's
/// `6·P` rule).
fn attention_flops_per_step(input: &TrainInput) -> f64 {
    if !input.attention_flops {
        return 0.0;
    }
    let seq = input.seq as f64;
    let per_token = if input.full_attention {
        input.model.attention_flops_per_token(seq)
    } else {
        input.model.causal_attention_flops_per_token(seq)
    };
    3.0 * per_token * input.batch_tokens as f64
}

/// Seconds of compute for `executed` FLOPs, `attention` of them attention's, at `rate`
/// FLOP/s of peak over all chips: a fixed MFU for all, else `mxu_train` for the rest and
/// `mxu_train · attention_train` for attention.
fn compute_seconds(input: &TrainInput, executed: f64, attention: f64, rate: f64) -> f64 {
    match input.mfu {
        Some(mfu) => executed / (rate * mfu),
        None => {
            // of the rate XLA's cost model gives the chip, in the calibrated model, and
            // of that the share the chip sustains in training where it was measured
            let sustained = if input.attention_flops {
                let chip = &input.slice.chip;
                xla_mxu_fraction(chip)
                    * input
                        .eff
                        .chip_train
                        .unwrap_or_else(|| chip_train_fraction(chip))
            } else {
                1.0
            };
            let eta = input.eff.mxu_train * sustained;
            (executed - attention) / (rate * eta)
                + attention / (rate * eta * input.eff.attention_train)
        }
    }
}

/// The dropping MoE's empty slots and one-hot einsums, per token
/// ([`capacity::extra_flops_per_token`]); like recomputation, executed work the
/// calibrated model counts and a fixed MFU or the ideal model does not.
fn capacity_flops_per_token(input: &TrainInput) -> f64 {
    match input.capacity_factor {
        Some(cf) if input.mfu.is_none() && input.attention_flops => {
            capacity::extra_flops_per_token(&input.model, input.seq, cf, input.remat)
        }
        _ => 0.0,
    }
}

/// Recomputation counts only in the calibrated model without a fixed MFU (an MFU
/// is model FLOPs over peak by definition).
fn recomputed(input: &TrainInput) -> Recomputed {
    if input.mfu.is_some() || !input.attention_flops {
        Recomputed {
            matmul_flops: 0.0,
            attention_forwards: 0.0,
        }
    } else {
        input.remat.recomputed(&input.model)
    }
}

fn comms(input: &TrainInput, deg: &Degrees, placed: &[Placed]) -> Result<CommTimes> {
    let m = &input.model;
    let eff = &input.eff;
    let p = m.params().params as f64;
    let pbytes = p * input.params.bytes();
    let model_split = (deg.tp * deg.tp_d * deg.pp * deg.ep) as f64;
    let replica_tokens = input.batch_tokens as f64 / (deg.dp * deg.fsdp * input.slices) as f64;
    let act = replica_tokens * m.d_model as f64 * 2.0;
    let layers = m.layers as f64;
    let mut c = CommTimes::default();
    // the weights are gathered once more for the matmuls the backward pass reruns
    let remat_gathers = if input.attention_flops && input.remat.recomputed(m).matmul_flops > 0.0 {
        3.0
    } else {
        2.0
    };
    if let Some(f) = comm::find(placed, "fsdp") {
        let shard = pbytes / model_split;
        c.fsdp_s = remat_gathers * comm::time(f, Collective::AllGather, shard, eff)?
            + comm::time(f, Collective::ReduceScatter, shard, eff)?;
    }
    if let Some(d) = comm::find(placed, "dp") {
        let grads = pbytes / (model_split * deg.fsdp as f64);
        c.dp_s = comm::time(d, Collective::AllReduce, grads, eff)?;
    }
    c.tp_s = tensor_parallel(input, deg, placed, replica_tokens / deg.pp as f64)?;
    if let Some(s) = comm::find(placed, "sp") {
        let kv = replica_tokens * (2 * m.kv_heads * m.head_dim) as f64 * 2.0;
        c.sp_s = 2.0 * layers * comm::time(s, Collective::AllGather, kv, eff)?;
    }
    if let Some(e) = comm::find(placed, "ep") {
        // the routed tokens, or every slot of the dropping MoE's capacity
        let slots = match input.capacity_factor {
            Some(cf) => capacity::slots_per_token(m, input.seq, cf),
            None => m.experts_active as f64,
        };
        let routed = act * slots;
        c.ep_s = 4.0 * layers * comm::time(e, Collective::AllToAll, routed, eff)?;
    }
    if deg.pp > 1 {
        let link = input.slice.chip.ici_one_way_bytes_per_s * eff.ici;
        c.pp_s = 2.0 * act / link;
    }
    if input.slices > 1 {
        // the gradients each chip holds, all-reduced over the data-parallel slices
        let k = deg.dcn_dp as f64;
        let g = deg.dcn_fsdp as f64;
        let shard = pbytes / (input.slice.chips() as f64 * g);
        let dcn = input.slice.chip.dcn_bytes_per_s * eff.dcn;
        // FSDP across slices: each gather (and the gradients' reduce-scatter) first
        // moves a chip's own shard between its peers in the other slices, then over ICI
        let gathered = pbytes / (model_split * deg.fsdp as f64);
        let dcn_fsdp = (remat_gathers + 1.0) * (g - 1.0) / g * gathered / dcn;
        c.dcn_s = 2.0 * (k - 1.0) / k * shard / dcn
            + dcn_fsdp
            + eff.dcn_sync_s * (input.slices as f64).log2();
    }
    c.host_s = offload_seconds(input)?;
    Ok(c)
}

/// The activations a remat policy offloads, each chip's share, out to the host in
/// the forward pass and back in the backward, over the chip's PCIe link.
fn offload_seconds(input: &TrainInput) -> Result<f64> {
    let m = &input.model;
    let vectors = input.remat.offloaded(m);
    if vectors == 0.0 {
        return Ok(0.0);
    }
    let total = 2.0 * input.batch_tokens as f64 * m.d_model as f64 * vectors * m.layers as f64;
    let per_chip = total / (input.slice.chips() * input.slices) as f64;
    Ok(2.0 * host_to_chip(per_chip, input.slice.chip.pcie_bytes_per_s)?)
}

/// Tensor-parallel collectives of a step, forward and backward (the backward's are
/// the forward's transposes and cost the same), for `tokens` tokens a stage: 1-D, an
/// AllReduce of the activations after attention and after the MLP; 2-D, the book's
/// three collectives around each block ([`comm::tp_2d_block`]).
fn tensor_parallel(
    input: &TrainInput,
    deg: &Degrees,
    placed: &[Placed],
    tokens: f64,
) -> Result<f64> {
    let m = &input.model;
    let eff = &input.eff;
    let layers = m.layers as f64;
    if deg.tp_d > 1 {
        let block =
            |width: u64| comm::tp_2d_block(placed, deg, m.d_model, tokens, width as f64, eff);
        let forward = block(m.d_ff * m.experts_active)? + block(m.heads * m.head_dim)?;
        return Ok(2.0 * layers * forward);
    }
    let Some(t) = comm::find(placed, "tp") else {
        return Ok(0.0);
    };
    let act = tokens * m.d_model as f64 * 2.0;
    Ok(4.0 * layers * comm::time(t, Collective::AllReduce, act, eff)?)
}

fn bound(compute_s: f64, comms: &CommTimes) -> (&'static str, String) {
    let (name, worst) =
        comms.named().into_iter().fold(
            ("", 0.0f64),
            |acc, (n, t)| if t > acc.1 { (n, t) } else { acc },
        );
    let total = comms.total();
    if compute_s >= total {
        return (
            "compute",
            format!("compute {compute_s:.4} s ≥ collectives {total:.4} s"),
        );
    }
    let kind = match name {
        "dcn" => "dcn",
        "host" => "pcie",
        _ => "ici",
    };
    (
        kind,
        format!("collectives {total:.4} s (most: {name} {worst:.4} s) > compute {compute_s:.4} s"),
    )
}

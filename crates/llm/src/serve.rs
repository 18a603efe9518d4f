//! Serving (the book's inference chapter): memory fit, prefill, decode step time
//! and throughput on a slice, with tensor parallelism inside a replica and data
//! parallelism (whole replicas) across the rest of the slice.

use crate::axes::{place, Degrees, Placed};
use crate::calib::{xla_mxu_fraction, Efficiency};
use crate::comm;
use crate::error::{bad, LlmError, Result};
use crate::model::Model;
use crate::precision::Precision;
use crate::slices;
use serde::Serialize;
use tpusim_chip::{Collective, RateClass, Slice};

/// What to serve, where, and how.
#[derive(Debug, Clone)]
pub struct ServeInput {
    /// The model.
    pub model: Model,
    /// The slice.
    pub slice: Slice,
    /// Sequences decoded together (all replicas).
    pub batch: u64,
    /// KV-cache length per sequence (tokens).
    pub context: u64,
    /// Weight storage.
    pub weights: Precision,
    /// Storage of an MoE model's experts' matrices when it differs from `weights`
    /// (GPT-OSS ships them in mxfp4, the rest in bf16); `None`: as `weights`.
    pub expert_weights: Option<Precision>,
    /// KV-cache storage.
    pub kv: Precision,
    /// Prompt length of one request to prefill, if asked.
    pub prefill_tokens: Option<u64>,
    /// Efficiency figures (ideal or calibrated).
    pub eff: Efficiency,
    /// A fixed MXU fraction for prefill and decode math, overriding `eff.mxu_serve`.
    pub mfu: Option<f64>,
    /// Count attention FLOPs (the calibrated model) or not (the book's `2·P` rule).
    pub attention_flops: bool,
    /// Tensor-parallel degree; `None` searches.
    pub tp: Option<u64>,
    /// Data-parallel replicas; `None` searches (or `chips / tp`).
    pub dp: Option<u64>,
    /// Tensor parallel over D as well (2-D weight-stationary sharding, see
    /// [`Degrees::tp_d`]); `None` searches (1 when `tp` or `dp` is given).
    pub tp_d: Option<u64>,
    /// Slices serving side by side (over DCN), each with `batch / slices` sequences
    /// and the same sharding; serving needs no traffic between them.
    pub slices: u64,
}

impl ServeInput {
    /// `model` on `slice` with the defaults of `tpusim llm serve`: batch 1, context
    /// 8192, bf16 weights and KV, no prefill, the sharding searched; `ideal` picks
    /// the book's roofline (no attention FLOPs) or the calibrated figures.
    pub fn new(model: Model, slice: Slice, ideal: bool) -> ServeInput {
        ServeInput {
            model,
            slice,
            batch: 1,
            context: 8192,
            weights: Precision::Bf16,
            expert_weights: None,
            kv: Precision::Bf16,
            prefill_tokens: None,
            eff: if ideal {
                Efficiency::ideal()
            } else {
                Efficiency::calibrated()
            },
            mfu: None,
            attention_flops: !ideal,
            tp: None,
            dp: None,
            tp_d: None,
            slices: 1,
        }
    }

    /// One slice's share of the work.
    fn per_slice(&self) -> Result<ServeInput> {
        let k = self.slices;
        if k == 0 || k > 1 << 16 {
            return Err(bad("--slices", k, "between 1 and 65536"));
        }
        if self.batch % k != 0 {
            return Err(bad(
                "--batch",
                self.batch,
                format!("does not split evenly over {k} slices (give a multiple of {k})"),
            ));
        }
        Ok(ServeInput {
            batch: self.batch / k,
            slices: 1,
            ..self.clone()
        })
    }
}

/// Bytes per chip by part.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ServeMemory {
    /// Weights (a replica's weights split over its `tp` chips).
    pub weights: f64,
    /// KV caches.
    pub kv: f64,
    /// Decode activations and logits.
    pub activations: f64,
}

/// The terms of a decode step or a prefill, seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepTerms {
    /// Reading weights (and KV caches) from HBM.
    pub hbm_s: f64,
    /// Matmuls on the MXUs.
    pub math_s: f64,
    /// Tensor-parallel collectives over ICI.
    pub ici_s: f64,
    /// Fixed per-step cost.
    pub overhead_s: f64,
    /// The composed time.
    pub time_s: f64,
    /// `hbm`, `compute`, `ici` or `host` (the fixed costs): the largest term.
    pub bound: &'static str,
}

/// One point of the latency–throughput frontier.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FrontierPoint {
    /// Batch.
    pub batch: u64,
    /// Decode step, s (the per-token latency of each sequence).
    pub decode_step_s: f64,
    /// Tokens per second over the slice.
    pub decode_tokens_per_s: f64,
    /// Whether weights and caches fit.
    pub fits: bool,
    /// The bound.
    pub bound: &'static str,
}

/// A sharding the search weighed and why it lost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServeAlternative {
    /// Degrees.
    pub sharding: Degrees,
    /// Decode step, s.
    pub decode_step_s: f64,
    /// Fits HBM.
    pub fits: bool,
    /// Why it is not the choice.
    pub why: String,
}

/// What `tpusim llm serve` prints (the spec's field names).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServeReport {
    /// Model name.
    pub model: String,
    /// Chip name.
    pub chip: String,
    /// Slice shape.
    pub slice: String,
    /// Chips in all slices.
    pub chips: u64,
    /// Slices serving side by side.
    pub slices: u64,
    /// Batch (all slices).
    pub batch: u64,
    /// Context (KV length).
    pub context: u64,
    /// Weight precision.
    pub weights_dtype: Precision,
    /// The experts' matrices' precision, when given apart.
    pub expert_weights_dtype: Option<Precision>,
    /// KV precision.
    pub kv_dtype: Precision,
    /// Degrees used (`tp` within a replica, `dp` replicas).
    pub sharding: Degrees,
    /// Weights, caches and activations fit each chip's HBM.
    pub fits: bool,
    /// Bytes per chip (the fullest chip).
    pub bytes_per_chip: f64,
    /// Per chip, by part.
    pub memory_per_chip: ServeMemory,
    /// HBM per chip.
    pub hbm_bytes_per_chip: f64,
    /// Weights of one replica, all chips together.
    pub weights_bytes: f64,
    /// KV caches of the whole batch.
    pub kv_bytes: f64,
    /// The smallest canonical slice of this chip that holds the model at this batch
    /// and context (model parallel over all its chips).
    pub min_slice: String,
    /// Its chips.
    pub min_slice_chips: u64,
    /// The largest batch that fits this slice with this sharding (0: not even one).
    pub max_batch: u64,
    /// Decode step terms.
    pub decode: StepTerms,
    /// Decode step time, s.
    pub decode_step_s: f64,
    /// Tokens per second, all sequences.
    pub decode_tokens_per_s: f64,
    /// Tokens per second per chip.
    pub decode_tokens_per_s_per_chip: f64,
    /// The critical batch of the weight matmuls on this chip (`peak·bytes / (2·HBM)`).
    pub critical_batch: f64,
    /// Prefill of one request of `prefill_tokens` on one replica.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill: Option<StepTerms>,
    /// Its time, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_s: Option<f64>,
    /// `hbm`, `compute`, `ici` or `host` for decode.
    pub bound: &'static str,
    /// Prefill's bound, when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_bound: Option<&'static str>,
    /// Shardings the search weighed (empty when degrees were given).
    pub runners_up: Vec<ServeAlternative>,
}

/// What `tpusim llm serve --json` prints: the report, the kind of answer, and the
/// frontier when asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServeOutput {
    /// The report (flattened).
    #[serde(flatten)]
    pub report: ServeReport,
    /// `ideal`, `calibrated` or `custom`.
    pub mode: &'static str,
    /// The latency–throughput frontier over batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frontier: Option<Vec<FrontierPoint>>,
}

/// Serve, and add the frontier over batch when `with_frontier`.
pub fn answer(input: &ServeInput, with_frontier: bool) -> Result<ServeOutput> {
    let report = serve(input)?;
    let k = input.slices;
    let frontier = if with_frontier {
        let points = frontier(&input.per_slice()?, report.sharding)?;
        Some(
            points
                .into_iter()
                .map(|p| FrontierPoint {
                    batch: p.batch * k,
                    decode_tokens_per_s: p.decode_tokens_per_s * k as f64,
                    ..p
                })
                .collect(),
        )
    } else {
        None
    };
    Ok(ServeOutput {
        mode: input.eff.mode(input.attention_flops),
        report,
        frontier,
    })
}

/// A resolved sharding and its placement.
struct Plan {
    deg: Degrees,
    placed: Vec<Placed>,
}

/// Run the serving model (on `input.slices` slices side by side).
pub fn serve(input: &ServeInput) -> Result<ServeReport> {
    let one = input.per_slice()?;
    let mut r = serve_one(&one)?;
    let k = input.slices;
    if k > 1 {
        r.slices = k;
        r.batch = input.batch;
        r.chips *= k;
        r.kv_bytes *= k as f64;
        r.max_batch *= k;
        r.decode_tokens_per_s *= k as f64;
    }
    Ok(r)
}

fn serve_one(input: &ServeInput) -> Result<ServeReport> {
    check(input)?;
    let n = input.slice.chips();
    let (plan, runners_up) = choose(input)?;
    let mem = memory(input, &plan.deg, n, input.batch);
    let total_needed = total_bytes(input, input.batch);
    let (min_slice, min_chips) = min_slice(input, total_needed)?;
    let hbm = input.slice.chip.hbm_bytes as f64;
    let decode = decode(input, &plan, input.batch)?;
    let prefill = input
        .prefill_tokens
        .map(|p| prefill(input, &plan, p))
        .transpose()?;
    let per_chip = mem.weights + mem.kv + mem.activations;
    Ok(ServeReport {
        model: input.model.name.clone(),
        chip: input.slice.chip.name.clone(),
        slice: input.slice.shape(),
        chips: n,
        slices: 1,
        batch: input.batch,
        context: input.context,
        weights_dtype: input.weights,
        expert_weights_dtype: input.expert_weights,
        kv_dtype: input.kv,
        sharding: plan.deg,
        fits: per_chip <= hbm,
        bytes_per_chip: per_chip,
        memory_per_chip: mem,
        hbm_bytes_per_chip: hbm,
        weights_bytes: weights_bytes(input),
        kv_bytes: kv_bytes(input, input.batch),
        min_slice,
        min_slice_chips: min_chips,
        max_batch: max_batch(input, plan.deg),
        decode_step_s: decode.time_s,
        decode_tokens_per_s: input.batch as f64 / decode.time_s,
        decode_tokens_per_s_per_chip: input.batch as f64 / decode.time_s / n as f64,
        critical_batch: critical_batch(input),
        bound: decode.bound,
        decode,
        prefill_s: prefill.map(|p| p.time_s),
        prefill_bound: prefill.map(|p| p.bound),
        prefill,
        runners_up,
    })
}

/// The frontier over batch: powers of two up to the larger of the largest batch
/// that fits and `input.batch`, and that largest batch itself.
pub fn frontier(input: &ServeInput, sharding: Degrees) -> Result<Vec<FrontierPoint>> {
    let plan = Plan {
        deg: sharding,
        placed: place(&input.slice, &sharding)?,
    };
    let top = max_batch(input, sharding).max(input.batch).max(1);
    let mut batches: Vec<u64> = (0..40).map(|i| 1u64 << i).filter(|&b| b <= top).collect();
    batches.push(max_batch(input, sharding));
    batches.retain(|&b| b >= sharding.dp && b > 0);
    batches.sort_unstable();
    batches.dedup();
    let hbm = input.slice.chip.hbm_bytes as f64;
    batches
        .into_iter()
        .map(|b| {
            let t = decode(input, &plan, b)?;
            let m = memory(input, &sharding, input.slice.chips(), b);
            Ok(FrontierPoint {
                batch: b,
                decode_step_s: t.time_s,
                decode_tokens_per_s: b as f64 / t.time_s,
                fits: m.weights + m.kv + m.activations <= hbm,
                bound: t.bound,
            })
        })
        .collect()
}

fn check(input: &ServeInput) -> Result<()> {
    if input.batch == 0 {
        return Err(bad("--batch", 0, "at least one sequence"));
    }
    if input.context == 0 {
        return Err(bad("--context", 0, "at least one token of KV cache"));
    }
    if input.batch > 1 << 30 || input.context > 1 << 30 {
        return Err(bad(
            "--batch/--context",
            format!("{}/{}", input.batch, input.context),
            "each at most 2^30",
        ));
    }
    if let Some(p) = input.prefill_tokens {
        if p == 0 || p > 1 << 30 {
            return Err(bad("--prefill-tokens", p, "between 1 and 2^30"));
        }
    }
    if let Some(m) = input.mfu {
        if !(m.is_finite() && m > 0.0 && m <= 1.0) {
            return Err(bad("--mfu", m, "a fraction in (0, 1]"));
        }
    }
    input.model.check_expert_precision(input.expert_weights)
}

/// The sharding to use: the one given, or the fastest decode that fits (model
/// parallel over the slice first among equals; 1-D before 2-D tensor parallelism),
/// with the rest as runners-up.
fn choose(input: &ServeInput) -> Result<(Plan, Vec<ServeAlternative>)> {
    let n = input.slice.chips();
    if input.tp.is_some() || input.dp.is_some() || input.tp_d.is_some() {
        return given(input, n);
    }
    let mut shardings: Vec<Degrees> = Vec::new();
    let divisors = |k: u64| (1..=k).filter(move |t| k % t == 0);
    for tp in divisors(n).collect::<Vec<_>>().into_iter().rev() {
        shardings.push(degrees(tp, 1, n / tp));
    }
    for tp in divisors(n).collect::<Vec<_>>().into_iter().rev() {
        for tp_d in divisors(n / tp).filter(|&d| d > 1) {
            shardings.push(degrees(tp, tp_d, n / tp / tp_d));
        }
    }
    let mut options = Vec::new();
    for deg in shardings {
        let Ok(placed) = place(&input.slice, &deg) else {
            continue;
        };
        if input.batch < deg.dp {
            continue;
        }
        let plan = Plan { deg, placed };
        let t = decode(input, &plan, input.batch)?;
        let m = memory(input, &deg, n, input.batch);
        let fits = m.weights + m.kv + m.activations <= input.slice.chip.hbm_bytes as f64;
        options.push((plan, t, fits));
    }
    if options.is_empty() {
        return Err(less_than_one(input.batch, n));
    }
    // Fitting first, then the shortest step; ties keep the larger tp (listed first).
    let best = (0..options.len())
        .min_by(|&a, &b| {
            let (ka, kb) = (&options[a], &options[b]);
            (!ka.2, ka.1.time_s)
                .partial_cmp(&(!kb.2, kb.1.time_s))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .unwrap_or(0);
    let best_time = options[best].1.time_s;
    let mut runners: Vec<ServeAlternative> = options
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != best)
        .map(|(_, (p, t, fits))| ServeAlternative {
            sharding: p.deg,
            decode_step_s: t.time_s,
            fits: *fits,
            why: if !fits {
                "memory: weights and caches do not fit HBM".into()
            } else {
                format!(
                    "{}-bound step {:.3} ms, {:.1}% slower",
                    t.bound,
                    t.time_s * 1e3,
                    (t.time_s / best_time - 1.0) * 100.0
                )
            },
        })
        .collect();
    runners.sort_by(|a, b| {
        (!a.fits, a.decode_step_s)
            .partial_cmp(&(!b.fits, b.decode_step_s))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    runners.truncate(4);
    let (plan, _, _) = options.swap_remove(best);
    Ok((plan, runners))
}

/// Degrees of a serving sharding: `tp` (and `tp_d`) inside a replica, `dp` replicas.
fn degrees(tp: u64, tp_d: u64, dp: u64) -> Degrees {
    Degrees {
        tp,
        tp_d,
        dp,
        ..Degrees::default()
    }
}

/// Chips a replica's weights are sharded over: `tp · tp_d`.
fn model_parallel(deg: &Degrees) -> u64 {
    deg.tp * deg.tp_d
}

/// The sharding given (`tp_d` 1 unless given; of tp and dp, one given fills the rest).
fn given(input: &ServeInput, n: u64) -> Result<(Plan, Vec<ServeAlternative>)> {
    let tp_d = input.tp_d.unwrap_or(1);
    if tp_d == 0 || n % tp_d != 0 {
        return Err(bad(
            "--tp-d",
            tp_d,
            format!("must divide the slice's {n} chips (tp·tp_d·dp = {n})"),
        ));
    }
    let rest = n / tp_d;
    let (tp, dp) = match (input.tp, input.dp) {
        (Some(t), Some(d)) => (t, d),
        (None, None) => (rest, 1),
        _ => resolve_pair(input, rest)?,
    };
    let deg = degrees(tp, tp_d, dp);
    let placed = place(&input.slice, &deg)?;
    if input.batch < dp {
        return Err(less_than_one(input.batch, dp));
    }
    Ok((Plan { deg, placed }, Vec::new()))
}

/// One of tp/dp given: the other fills the slice.
fn resolve_pair(input: &ServeInput, n: u64) -> Result<(u64, u64)> {
    let (given, name) = match (input.tp, input.dp) {
        (Some(t), _) => (t, "--tp"),
        (_, Some(d)) => (d, "--dp"),
        _ => unreachable!("called with one degree"),
    };
    if given == 0 || n % given != 0 {
        return Err(bad(
            name,
            given,
            format!("must divide the {n} chips left to tp·dp"),
        ));
    }
    Ok(match (input.tp, input.dp) {
        (Some(t), _) => (t, n / t),
        _ => (n / given, given),
    })
}

fn less_than_one(batch: u64, dp: u64) -> LlmError {
    bad(
        "--batch",
        batch,
        format!("leaves a replica with less than one sequence: {dp} data-parallel replicas need a batch of at least {dp}"),
    )
}

fn weights_bytes(input: &ServeInput) -> f64 {
    let m = &input.model;
    m.weight_bytes(m.experts as f64, input.weights, expert_precision(input))
}

fn expert_precision(input: &ServeInput) -> Precision {
    input.expert_weights.unwrap_or(input.weights)
}

fn kv_bytes(input: &ServeInput, batch: u64) -> f64 {
    batch as f64
        * input
            .model
            .kv_bytes_for_context(input.context as f64, input.kv)
}

/// Decode activations and logits of a batch: a few `D`- and `F`-wide vectors per
/// sequence in bf16 and the f32 logits.
fn activation_bytes(input: &ServeInput, batch: u64) -> f64 {
    let m = &input.model;
    batch as f64 * ((4 * m.d_model + 2 * m.d_ff) as f64 * 2.0 + m.vocab as f64 * 4.0)
}

/// Weights, caches and activations, all chips together, model parallel.
fn total_bytes(input: &ServeInput, batch: u64) -> f64 {
    weights_bytes(input) + kv_bytes(input, batch) + activation_bytes(input, batch)
}

/// Per chip: weights over a replica's `tp·tp_d` chips, caches and activations over all.
fn memory(input: &ServeInput, deg: &Degrees, chips: u64, batch: u64) -> ServeMemory {
    ServeMemory {
        weights: weights_bytes(input) / model_parallel(deg) as f64,
        kv: kv_bytes(input, batch) / chips as f64,
        activations: activation_bytes(input, batch) / chips as f64,
    }
}

/// The smallest canonical slice (model parallel over it) that holds `needed` bytes.
fn min_slice(input: &ServeInput, needed: f64) -> Result<(String, u64)> {
    let chip = &input.slice.chip;
    let hbm = chip.hbm_bytes as f64;
    slices::candidates(chip)
        .into_iter()
        .find(|s| needed / s.chips() as f64 <= hbm)
        .map(|s| (s.shape(), s.chips()))
        .ok_or_else(|| LlmError::FitsNowhere {
            model: input.model.name.clone(),
            chip: chip.name.clone(),
            needed_bytes: needed,
            hbm_bytes: hbm,
            min_chips: (needed / hbm).ceil() as u64,
            pod_chips: chip.pod_chips(),
        })
}

/// The largest batch whose weights, caches and activations fit this slice with
/// this sharding.
fn max_batch(input: &ServeInput, deg: Degrees) -> u64 {
    let n = input.slice.chips();
    let hbm = input.slice.chip.hbm_bytes as f64;
    let fits = |b: u64| {
        let m = memory(input, &deg, n, b);
        m.weights + m.kv + m.activations <= hbm
    };
    let (mut lo, mut hi) = (0u64, 1u64 << 40);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// `peak · bytes per weight / (2 · HBM bandwidth)`: above this batch the weight
/// matmuls are compute bound (bf16 math; int8 math when the weights are int8 and
/// the chip has an int8 rate is a different question: see `thresholds`).
fn critical_batch(input: &ServeInput) -> f64 {
    let c = &input.slice.chip;
    crate::thresholds::critical_decode_batch(
        c.peak(RateClass::Bf16).ops_per_s,
        input.weights.bytes(),
        c.hbm_bytes_per_s,
    )
}

/// The MXU fraction of peak: a fixed `--mfu`, else `mxu_serve`, of the rate XLA's
/// cost model gives the chip in the calibrated model.
fn eta(input: &ServeInput) -> f64 {
    match input.mfu {
        Some(mfu) => mfu,
        None if input.attention_flops => input.eff.mxu_serve * xla_mxu_fraction(&input.slice.chip),
        None => input.eff.mxu_serve,
    }
}

fn peak(input: &ServeInput) -> f64 {
    input.slice.chip.peak(RateClass::Bf16).ops_per_s
}

/// Tensor-parallel collectives of `tokens` tokens on one replica, all layers: with
/// 1-D tensor parallelism an AllReduce after attention and one after the MLP; with
/// 2-D weight-stationary sharding ([`comm::tp_2d_block`]) the book's three collectives
/// around each block.
fn tp_collectives(input: &ServeInput, plan: &Plan, tokens: f64) -> Result<f64> {
    let m = &input.model;
    if plan.deg.tp_d > 1 {
        let mlp_width = (m.d_ff * m.experts_active) as f64;
        let attention_width = (m.heads * m.head_dim) as f64;
        let block = |width: f64| {
            comm::tp_2d_block(
                &plan.placed,
                &plan.deg,
                m.d_model,
                tokens,
                width,
                &input.eff,
            )
        };
        let per_layer = block(mlp_width)? + block(attention_width)?;
        return Ok(m.layers as f64 * per_layer);
    }
    let Some(tp) = comm::find(&plan.placed, "tp") else {
        return Ok(0.0);
    };
    let bytes = tokens * m.d_model as f64 * 2.0;
    let one = comm::time(tp, Collective::AllReduce, bytes, &input.eff)?;
    Ok(2.0 * m.layers as f64 * one)
}

fn compose(eff: &Efficiency, hbm_s: f64, math_s: f64, ici_s: f64, overhead_s: f64) -> StepTerms {
    let bound = [
        ("hbm", hbm_s),
        ("compute", math_s),
        ("ici", ici_s),
        ("host", overhead_s),
    ]
    .into_iter()
    .fold(("hbm", 0.0), |best, t| if t.1 > best.1 { t } else { best })
    .0;
    StepTerms {
        hbm_s,
        math_s,
        ici_s,
        overhead_s,
        time_s: eff.compose(&[hbm_s, math_s, ici_s]) + overhead_s,
        bound,
    }
}

/// One decode step of `batch` sequences: every chip reads its share of a replica's
/// weights (of an MoE model's experts, those its tokens touch) and of the caches;
/// the math is `2·P` per token (plus attention over the cache in the calibrated
/// model).
fn decode(input: &ServeInput, plan: &Plan, batch: u64) -> Result<StepTerms> {
    let m = &input.model;
    let n = input.slice.chips() as f64;
    let b = batch as f64;
    let c = &input.slice.chip;
    // a replica's tokens read the experts they touch, not all of them
    let replica_tokens = b / plan.deg.dp as f64;
    let weights_read = m.weight_bytes(
        m.experts_touched(replica_tokens),
        input.weights,
        expert_precision(input),
    );
    let bytes = weights_read / model_parallel(&plan.deg) as f64 + kv_bytes(input, batch) / n;
    let hbm_s = bytes / (c.hbm_bytes_per_s * input.eff.hbm);
    let mut flops = 2.0 * m.params().params_active as f64 * b;
    if input.attention_flops {
        flops += m.attention_flops_per_token(input.context as f64) * b;
    }
    let math_s = flops / (n * peak(input) * eta(input));
    let ici_s = tp_collectives(input, plan, b / plan.deg.dp as f64)?;
    let overhead_s = input.eff.decode_step_overhead_s + input.eff.decode_token_overhead_s * b;
    Ok(compose(&input.eff, hbm_s, math_s, ici_s, overhead_s))
}

/// Prefill of one request of `p` tokens on one replica (`tp` chips): compute bound
/// for long prompts, `2·P·p` FLOPs (plus causal attention, `2·p²·N·H·L`, in the
/// calibrated model).
fn prefill(input: &ServeInput, plan: &Plan, p: u64) -> Result<StepTerms> {
    let m = &input.model;
    let tp = model_parallel(&plan.deg) as f64;
    let pf = p as f64;
    let c = &input.slice.chip;
    let mut flops = 2.0 * m.params().params_active as f64 * pf;
    if input.attention_flops {
        flops += m.causal_attention_flops_per_token(pf) * pf;
    }
    let math_s = flops / (tp * peak(input) * eta(input));
    let hbm_s = weights_bytes(input) / tp / (c.hbm_bytes_per_s * input.eff.hbm);
    let ici_s = tp_collectives(input, plan, pf)?;
    Ok(compose(&input.eff, hbm_s, math_s, ici_s, 0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `model` on v5p `shape` with `tp`, `tp_d`, the book's roofline and no hop latency.
    fn plan_of(model: &str, shape: &str, tp: u64, tp_d: u64) -> (ServeInput, Plan) {
        let chip = tpusim_chip::lookup("v5p").unwrap();
        let mut input = ServeInput::new(
            crate::zoo::lookup(model).unwrap(),
            slices::parse(&chip, shape).unwrap(),
            true,
        );
        input.eff.hop_latency = 0.0;
        let deg = degrees(tp, tp_d, input.slice.chips() / tp / tp_d);
        let placed = place(&input.slice, &deg).unwrap();
        (input, Plan { deg, placed })
    }

    fn block(input: &ServeInput, plan: &Plan, tokens: f64, width: f64) -> f64 {
        let d = input.model.d_model;
        comm::tp_2d_block(&plan.placed, &plan.deg, d, tokens, width, &input.eff).unwrap()
    }

    #[test]
    fn a_2d_block_costs_what_the_book_says() {
        // X = 4 on one wrapped axis, YZ = 16 on two: 2BD/(X·W) + 4BF/(YZ·W)
        let (input, plan) = plan_of("llama-2-70b", "4x4x4", 16, 4);
        assert!(plan
            .placed
            .iter()
            .all(|p| p.slice.wraparound.iter().all(|&w| w)));
        let w = input.slice.chip.ici_bidi_bytes_per_s;
        let m = &input.model;
        let (b, d, f) = (512.0, m.d_model as f64, m.d_ff as f64);
        let book = 2.0 * b * d / (4.0 * w) + 4.0 * b * f / (16.0 * w);
        let ours = block(&input, &plan, b, f);
        assert!((ours / book - 1.0).abs() < 1e-12, "{ours} vs {book}");
    }

    #[test]
    fn with_tp_d_1_the_2d_collectives_are_one_allreduce() {
        // AllGather + ReduceScatter over the same axes cost one AllReduce
        let (input, plan) = plan_of("llama-2-70b", "4x4x4", 64, 1);
        let b = 256.0;
        let d = input.model.d_model as f64;
        let two_d = block(&input, &plan, b, input.model.d_ff as f64);
        let tp = comm::find(&plan.placed, "tp").unwrap();
        let all_reduce = comm::time(tp, Collective::AllReduce, b * d * 2.0, &input.eff).unwrap();
        assert!(
            (two_d / all_reduce - 1.0).abs() < 1e-12,
            "{two_d} vs {all_reduce}"
        );
    }

    #[test]
    fn past_the_books_chip_count_2d_moves_fewer_bytes() {
        // the book: 2-D beats 1-D model parallelism when N > 32·(F/D)·(3/4)²; for
        // LLaMA-2 70B (F/D = 3.5) that is N > 63. On 256 v5p chips (8x8x4) the best 2-D
        // split moves less than 1-D over all of them.
        let one_d = {
            let (input, plan) = plan_of("llama-2-70b", "8x8x4", 256, 1);
            tp_collectives(&input, &plan, 1024.0).unwrap()
        };
        let two_d = [(64, 4), (32, 8), (16, 16)]
            .into_iter()
            .map(|(tp, x)| {
                let (input, plan) = plan_of("llama-2-70b", "8x8x4", tp, x);
                tp_collectives(&input, &plan, 1024.0).unwrap()
            })
            .fold(f64::INFINITY, f64::min);
        assert!(two_d < one_d, "2-D {two_d} s, 1-D {one_d} s");
    }
}

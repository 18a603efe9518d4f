//! `tpusim llm train`.

use super::args::{amount, count, model, precision, Mode, Where};
use crate::fmt::{bytes, sci, table, time};
use crate::util::print_json;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;
use tpusim_llm::train::{answer, TrainInput, TrainOutput};
use tpusim_llm::{Degrees, Remat};

/// `tpusim llm train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// A built-in name or a config.json file.
    pub model: String,
    #[command(flatten)]
    pub place: Where,
    /// Slices joined by DCN, data parallel across them.
    #[arg(long, default_value = "1")]
    pub slices: u64,
    /// Global batch per step in tokens (`4Mi`, `1e6`).
    #[arg(long, default_value = "1Mi")]
    pub batch_tokens: String,
    /// Sequence length.
    #[arg(long, default_value = "4096")]
    pub seq: String,
    /// A token budget (`15e12`) for the total time and FLOPs.
    #[arg(long)]
    pub tokens: Option<String>,
    /// Data-parallel degree over ICI. Give all degrees (they multiply to the
    /// slice's chips; unset ones are 1), or none to search.
    #[arg(long)]
    pub dp: Option<u64>,
    /// FSDP (ZeRO-3) degree over ICI.
    #[arg(long)]
    pub fsdp: Option<u64>,
    /// Tensor-parallel degree (innermost axes).
    #[arg(long)]
    pub tp: Option<u64>,
    /// Tensor parallel over the model dimension too: the book's 2-D weight-stationary
    /// sharding (X = tp_d, YZ = tp; each block AllGathers over tp, AllReduces over tp_d
    /// and ReduceScatters over tp).
    #[arg(long)]
    pub tp_d: Option<u64>,
    /// Pipeline stages.
    #[arg(long)]
    pub pp: Option<u64>,
    /// Expert-parallel degree (MoE models).
    #[arg(long)]
    pub ep: Option<u64>,
    /// Sequence (context) parallel degree.
    #[arg(long)]
    pub sp: Option<u64>,
    /// Remat policy, by MaxText's names: none, minimal (every matmul output kept,
    /// attention's forward rerun), full (each layer's input kept, its forward rerun), a
    /// preset (save_dot_except_mlpwi, save_dot_except_mlp,
    /// save_dot_with_context_except_mlp, save_qkv_proj, save_out_proj,
    /// minimal_with_context, qkv_proj_offloaded, minimal_offloaded) or
    /// custom:NAME=remat|device|offload,… over MaxText's tensor names
    /// (decoder_layer_input, query_proj, key_proj, value_proj, context, out_proj, mlpwi,
    /// mlpwo): kept outputs are not rerun, offloaded ones cross PCIe twice. Example:
    /// `--remat custom:decoder_layer_input=offload,query_proj=offload,key_proj=offload`
    #[arg(long, default_value = "full", conflicts_with = "checkpoints_per_layer")]
    pub remat: String,
    /// Checkpoints per layer, `D`-wide vectors per token (the book's c), instead of a policy.
    #[arg(long)]
    pub checkpoints_per_layer: Option<f64>,
    /// Parameter and gradient precision (bf16, or f32 for fp32 master weights).
    #[arg(long, default_value = "bf16")]
    pub param_dtype: String,
    /// Optimizer bytes per parameter (Adam's two fp32 moments: 8).
    #[arg(long, default_value_t = 8.0)]
    pub optimizer_bytes: f64,
    /// Pipeline microbatches per step (default: one per sequence of a replica).
    #[arg(long)]
    pub microbatches: Option<u64>,
    /// Shard the model state over this many of the slices too (MaxText's
    /// `dcn_fsdp_parallelism`): each FSDP gather and reduce-scatter also crosses DCN;
    /// the slices are data parallel in groups of this many. Default 1 (plain data
    /// parallelism across slices). Example: `--slices 2 --dcn-fsdp 2`
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub dcn_fsdp: u64,
    /// Attention computed over the full T×T (a non-causal kernel) instead of half.
    #[arg(long)]
    pub full_attention: bool,
    /// Run an MoE model's experts as MaxText's dropping MoE (`sparse_matmul: False`,
    /// `capacity_factor: CF`): each expert computes ⌊⌈seq·k/E⌉·CF⌋ token slots a
    /// sequence, filled and emptied by one-hot einsums. Default: dropless, only the
    /// routed tokens' work. Example: `--capacity-factor 1.25`
    #[arg(long, value_name = "CF")]
    pub capacity_factor: Option<f64>,
    /// A fixed MFU (model FLOPs over peak) for compute, as the book assumes (0.4).
    #[arg(long)]
    pub mfu: Option<f64>,
    #[command(flatten)]
    pub mode: Mode,
    /// Write the pictures (step breakdown, memory per chip, the slice with each
    /// axis labelled by its strategy) as one SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Write a page with the pictures and the figures.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

impl TrainArgs {
    fn degrees(&self) -> Option<Degrees> {
        let all = [
            self.dp, self.fsdp, self.tp, self.tp_d, self.pp, self.ep, self.sp,
        ];
        if all.iter().all(Option::is_none) {
            return None;
        }
        Some(Degrees {
            dp: self.dp.unwrap_or(1),
            fsdp: self.fsdp.unwrap_or(1),
            tp: self.tp.unwrap_or(1),
            tp_d: self.tp_d.unwrap_or(1),
            pp: self.pp.unwrap_or(1),
            ep: self.ep.unwrap_or(1),
            sp: self.sp.unwrap_or(1),
            // the DCN degrees are the input's (`--slices`, `--dcn-fsdp`)
            ..Degrees::default()
        })
    }
}

/// Run `tpusim llm train`.
pub fn run(a: TrainArgs) -> Result<()> {
    let (_, slice) = a.place.resolve()?;
    let remat = match a.checkpoints_per_layer {
        Some(c) => Remat::Checkpoints(c),
        None => Remat::parse(&a.remat)?,
    };
    if !(a.optimizer_bytes.is_finite() && a.optimizer_bytes >= 0.0) {
        bail!(
            "--optimizer-bytes {}: expected a number of bytes >= 0",
            a.optimizer_bytes
        );
    }
    if let Some(d) = a.degrees() {
        if [d.dp, d.fsdp, d.tp, d.tp_d, d.pp, d.ep, d.sp].contains(&0) {
            bail!("sharding degrees are at least 1 (given {})", d.describe());
        }
    }
    let m = model(&a.model)?;
    let mut input = TrainInput::new(m, slice, a.mode.ideal);
    input.slices = a.slices;
    input.dcn_fsdp = a.dcn_fsdp;
    input.batch_tokens = count("--batch-tokens", &a.batch_tokens)?;
    input.seq = count("--seq", &a.seq)?;
    input.tokens = a
        .tokens
        .as_deref()
        .map(|t| amount("--tokens", t))
        .transpose()?;
    input.degrees = a.degrees();
    input.remat = remat;
    input.params = precision("--param-dtype", &a.param_dtype)?;
    input.optimizer_bytes_per_param = a.optimizer_bytes;
    input.mfu = a.mfu;
    input.eff = a.mode.efficiency()?;
    input.full_attention = a.full_attention;
    input.microbatches = a.microbatches;
    input.capacity_factor = a.capacity_factor;
    let out = answer(&input)?;
    super::write_pictures(
        a.svg.as_deref(),
        a.html.as_deref(),
        "tpusim llm train",
        || Ok(tpusim_llm::svg::train_pictures(&out.report, &input.slice)?),
        &out,
    )?;
    if a.json {
        return print_json(&out);
    }
    print_table(&out);
    Ok(())
}

fn print_table(out: &TrainOutput) {
    let r = &out.report;
    let m = &r.memory_per_chip;
    let c = &r.comms;
    let mut rows = vec![
        (
            "model",
            format!(
                "{} on {} x {} {} ({} chips), {} answer",
                r.model, r.slices, r.chip, r.slice, r.chips, out.mode
            ),
        ),
        ("sharding", r.sharding.describe()),
        (
            "batch",
            format!(
                "{} tokens of {}-token sequences, remat {}",
                r.batch_tokens, r.seq, r.remat
            ),
        ),
        (
            "memory per chip",
            format!(
                "{} of {}: weights {}, gradients {}, optimizer {}, checkpoints {} → {}",
                bytes(r.memory_per_chip_bytes),
                bytes(r.hbm_bytes_per_chip),
                bytes(m.weights),
                bytes(m.gradients),
                bytes(m.optimizer),
                bytes(m.checkpoints),
                if r.fits { "fits" } else { "DOES NOT FIT" }
            ),
        ),
        (
            "memory in all",
            format!(
                "weights {}, optimizer {}, checkpoints {}: at least {} chips by memory",
                bytes(r.weights_bytes),
                bytes(r.optimizer_bytes),
                bytes(r.checkpoint_bytes),
                r.min_chips_by_memory
            ),
        ),
        (
            "step",
            format!("{} ({}-bound: {})", time(r.step_s), r.bound, r.bound_detail),
        ),
        (
            "compute",
            format!(
                "{} (bubbles {}), {}",
                time(r.compute_s),
                time(r.bubble_s),
                sci(r.flops_executed_per_step, "FLOP executed")
            ),
        ),
        (
            "collectives",
            format!(
                "fsdp {}, dp {}, tp {}, sp {}, ep {}, pp {}, dcn {}, host (offloaded activations) {}",
                time(c.fsdp_s),
                time(c.dp_s),
                time(c.tp_s),
                time(c.sp_s),
                time(c.ep_s),
                time(c.pp_s),
                time(c.dcn_s),
                time(c.host_s)
            ),
        ),
        ("mfu", format!("{:.1}%", r.mfu * 100.0)),
        (
            "throughput",
            format!(
                "{:.4e} tokens/s ({:.1} per chip)",
                r.tokens_per_s, r.tokens_per_s_per_chip
            ),
        ),
    ];
    if let (Some(t), Some(f)) = (r.total_s, r.flops_total) {
        rows.push((
            "total",
            format!("{} = {:.1} days, {}", time(t), t / 86400.0, sci(f, "FLOP")),
        ));
    }
    for alt in &r.runners_up {
        rows.push((
            "runner-up",
            format!(
                "{}: {} — {}",
                alt.sharding.describe(),
                time(alt.step_s),
                alt.why
            ),
        ));
    }
    let t = &out.thresholds;
    rows.push(("thresholds", format!(
        "FSDP compute bound above {:.0} tokens/chip on 1 axis ({:.0} on 3); mixed FSDP+TP above {:.0}; X_opt {:.0}",
        t.dp_batch_per_chip_1_axis,
        t.dp_batch_per_chip_3_axes,
        t.mixed_batch_per_chip.unwrap_or(0.0),
        t.x_opt.unwrap_or(0.0)
    )));
    table(&rows);
}

//! `tpusim llm …`: transformers and LLMs on TPU slices (library: `tpusim-llm`):
//! models and their counts, serving, training, the sharding search, the book's
//! thresholds and validation against published measurements.

pub(crate) mod args;
pub(crate) mod onnx;
pub(crate) mod onnx_npu;
pub(crate) mod report;
mod serve;
mod show;
mod train;
mod validate;

use anyhow::Result;
use clap::Subcommand;

/// Verbs of `tpusim llm`.
#[derive(Subcommand)]
pub enum LlmCmd {
    /// The built-in models: name, family, parameters, layers, width, heads.
    ///
    /// Example: `tpusim llm models --json`
    Models(show::ModelsArgs),
    /// One model: parameters by part, FLOPs per token, KV-cache bytes per token.
    ///
    /// MODEL is a built-in name (`tpusim llm models`) or a JSON file: a Hugging Face
    /// config.json (LLaMA, Mistral/Mixtral, Gemma 1-3, Qwen2, Qwen3 and Qwen3-MoE,
    /// Phi-3, GPT-2, BERT: biases, extra norms and sliding windows are read from it),
    /// or the same keys plus `mlp` (gated|plain) and `block` (sequential|parallel).
    ///
    /// Examples: `tpusim llm show llama-3-8b`, `tpusim llm show config.json --kv-dtype int8 --json`
    Show(show::ShowArgs),
    /// Serve a model on a slice: memory per chip and fit, the smallest slice, the
    /// largest batch, prefill time, decode step time and throughput, the bound.
    ///
    /// With no --tp/--dp the sharding is searched (tensor parallel inside a
    /// replica, data-parallel replicas across the slice) and the runners-up shown.
    ///
    /// Examples:
    /// `tpusim llm serve llama-2-13b --chip v5e --slice 4x2 --batch 1 --context 8192 --ideal`
    /// `tpusim llm serve llama-3-70b --chip v5e --slice 4x4 --batch 32 --context 8192 --weights int8 --kv-dtype int8 --prefill-tokens 8192 --sweep-batch --html serve.html`
    Serve(serve::ServeArgs),
    /// Train a model on one or more slices: memory per chip by part, step time with
    /// compute and each strategy's collectives, MFU, tokens/s, total time.
    ///
    /// With no degrees the sharding is searched over every factorisation of the
    /// slice (data, FSDP, tensor, pipeline, expert) and the runners-up shown with
    /// why they lose.
    ///
    /// Examples:
    /// `tpusim llm train llama-3-70b --chip v5p --slice 16x20x28 --batch-tokens 4Mi --seq 8192 --tokens 15e12 --mfu 0.4 --ideal`
    /// `tpusim llm train llama-3-8b --chip v5e --slice 16x16 --slices 2 --batch-tokens 1Mi --seq 4096 --fsdp 256 --remat full --json`
    Train(train::TrainArgs),
    /// One step of prefill or decode on one TPU, operation by operation: every
    /// matmul on the MXUs (padded to the array), softmax, norms and element-wise work
    /// on the VPU, KV-cache reads and writes, the bound. `tpusim report MODEL` does the
    /// same when MODEL is a transformer.
    ///
    /// Example: `tpusim llm report llama-3-8b --chip v5e --phase decode --batch 8 --context 4096`
    Report(report::ReportArgs),
    /// Every shipped measurement (MaxText training and JetStream serving on v5e;
    /// MaxText training on v5p, never fitted, and on v6e, whose LLaMA-3.1 8B rows fit
    /// the chip's training share, `fit_v6e`, and whose other models are held out)
    /// beside the prediction and the error, with a summary per split; or your own
    /// measurements in the same schema (`--data`).
    ///
    /// Examples: `tpusim llm validate --json`
    /// `tpusim llm validate --data my-runs.jsonl`
    Validate(validate::ValidateArgs),
    /// The book's thresholds for a chip: per-chip batch for DP/FSDP per number of
    /// axes, the critical decode batch, the DCN batch; with --model the TP limit and
    /// mixed FSDP+TP batch; with --batch-tokens and --chips, X_opt.
    ///
    /// Example: `tpusim llm thresholds v5p --model llama-3-70b --batch-tokens 4Mi --chips 8960`
    Thresholds(show::ThresholdArgs),
}

/// Write `--svg` and `--html` (the page holds the pictures and the JSON figures)
/// together, once both are ready; `pictures` is only drawn when one is asked for.
pub(crate) fn write_pictures(
    svg: Option<&std::path::Path>,
    html: Option<&std::path::Path>,
    title: &str,
    pictures: impl Fn() -> Result<String>,
    figures: &impl serde::Serialize,
) -> Result<()> {
    let mut files = crate::output::Outputs::default();
    if let Some(p) = svg {
        files.add(p, pictures()?.into_bytes());
    }
    if let Some(p) = html {
        let json = serde_json::to_string_pretty(figures)?;
        files.add(
            p,
            tpusim_llm::svg::page(title, &pictures()?, &json).into_bytes(),
        );
    }
    files.commit()
}

/// Run one `tpusim llm` verb.
pub fn run(cmd: LlmCmd) -> Result<()> {
    match cmd {
        LlmCmd::Models(a) => show::models(a),
        LlmCmd::Show(a) => show::show(a),
        LlmCmd::Serve(a) => serve::run(a),
        LlmCmd::Train(a) => train::run(a),
        LlmCmd::Report(a) => report::run(a),
        LlmCmd::Validate(a) => validate::run(a),
        LlmCmd::Thresholds(a) => show::thresholds(a),
    }
}

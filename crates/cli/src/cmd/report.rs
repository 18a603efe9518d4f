//! `tpusim report`: the end-to-end job — import a network, lay its tensors out, plan it
//! into on-chip memory, time it on the chip's matrix units and memories, and show where
//! time and memory go (terminal summary and per-layer table, `--json`, `--html` page,
//! `--sweep` grids to CSV).

use crate::util::{parse_resolution, print_json, write_atomic, Internal};
use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tpusim_report::sweep::{self, Network, Shared, SweepSpec};
use tpusim_report::{html, terminal, Request, DEFAULT_MODEL};

/// Arguments of `tpusim report`.
///
/// Examples:
///   `tpusim report` (ResNet-50, batch 1, 224×224, bf16 on TPU v5e);
///   `tpusim report resnet18 --chip bm1684x`;
///   `tpusim report mobilenetv2 --chip v6e --batch 8 --dtype int8 --html report.html`;
///   `tpusim report vgg16 --json > vgg16.json`;
///   `tpusim report --sweep grid.toml --out runs.csv` (or `--out runs.parquet`).
#[derive(Args)]
pub struct ReportArgs {
    /// The network: a built-in name (resnet18, resnet50, mobilenetv2, vgg16; see
    /// `tpusim plan --list`), an ONNX file (`model.onnx`) or a SCALE-Sim topology CSV
    /// (`net.csv`). Default: resnet50.
    #[arg(value_name = "MODEL")]
    model: Option<String>,
    /// Chip: a TPU from the chip database (v3, v4p, v5e, v5p, v6e; `tpusim chip list`)
    /// or an NPU preset (bm1684x, bm1688, …; `tpusim lmem presets`). A transformer given
    /// as ONNX is planned on an NPU in TPU-MLIR's form and layer groups, as `tpusim plan`
    /// plans it; built-in and config.json transformers are timed on TPUs only.
    #[arg(long, default_value = "v5e")]
    chip: String,
    /// Batch size N (images per run).
    #[arg(long, default_value_t = 1)]
    batch: u64,
    /// Element type of activations and weights: bf16, f16, f32, int8 (s8), u8; a
    /// built-in transformer also takes fp8, int4 and mxfp4 (its weights and KV cache).
    /// Default: bf16 on a TPU, f16 on an NPU.
    #[arg(long)]
    dtype: Option<String>,
    /// NPUs: element type the network's inputs arrive in — f32 (default, as TPU-MLIR
    /// compiles an ONNX model: a cast op converts them on the chip, as in `tpusim plan`)
    /// or `same` (already in --dtype). TPUs take their inputs in --dtype.
    #[arg(long, value_name = "TYPE")]
    input_dtype: Option<String>,
    /// Input height and width in pixels, `H,W` (or one number for both); built-in models
    /// default to 224,224; ONNX: overrides the file's when given.
    #[arg(long, value_name = "H,W")]
    resolution: Option<String>,
    /// TPU VMEM size in bytes (e.g. `128MiB`), for chips whose database entry does not
    /// give it, or to see what a different VMEM would do.
    #[arg(long, value_name = "BYTES")]
    vmem: Option<String>,
    /// Report the layers as written: no folding of batch-norm and ReLU into the
    /// producing conv, no merging of a linear 1×1 conv into the conv that alone reads it
    /// (TPU-MLIR's inference form, which the report uses by default, as `tpusim plan`
    /// does).
    #[arg(long)]
    no_fuse: bool,
    /// Your own chip: a TOML in the chip database's schema (a TPU: `tpusim chip show v5e
    /// --toml`; its name or an alias must name a TPU generation) or in the NPU preset
    /// schema (`tpusim lmem show bm1684x --toml`). Overrides --chip.
    #[arg(long, value_name = "FILE")]
    chip_file: Option<PathBuf>,
    /// Print the whole report as one JSON document: model, chip, total_time_s,
    /// roofline_lower_bound_s, flops, bytes_logical, bytes_moved, layers[name, op, flops,
    /// bytes_logical, bytes_moved, compute_s, memory_s, bound, group], groups[ops,
    /// time_s], plus tensors, peak rates and more. Sizes in bytes, times in seconds.
    #[arg(long, conflicts_with = "sweep")]
    json: bool,
    /// Also write a self-contained HTML page (summary, time breakdown, roofline, memory
    /// plans, layout of the worst-padded tensor, every table; no external resources) to
    /// FILE. A transformer on a TPU (built-in, config.json or ONNX): its step's time by
    /// operation and by unit and the HBM it holds, with every figure. With --sweep: a
    /// page of throughput against batch per chip and model, and every run.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Print only the summary, not the per-layer table.
    #[arg(long)]
    summary: bool,
    /// Transformers (MODEL a built-in LLM such as llama-3-8b or gpt2, or a Hugging Face
    /// config.json): prefill (the prompt) or decode (one token per sequence). See
    /// `tpusim llm report --help`.
    #[arg(long, value_name = "prefill|decode")]
    phase: Option<String>,
    /// Transformers: prompt tokens per sequence in prefill (default 2048).
    #[arg(long)]
    seq: Option<String>,
    /// Transformers: KV-cache length per sequence in decode (default 2048).
    #[arg(long)]
    context: Option<String>,
    /// Transformers: time every matmul with the systolic model too, cross-checked on
    /// the cycle-accurate engine (see `tpusim llm report --help`).
    #[arg(long)]
    systolic_cycles: bool,
    /// Run a grid of reports from a TOML file (`models`, `chips`, optional `batches`,
    /// `dtypes`; for transformers `phases`, `seqs`, `contexts`) in parallel on all
    /// cores and write one row per run: the same engine and the same figures as
    /// Python's `tpusim.sweep`.
    #[arg(long, value_name = "FILE.toml")]
    sweep: Option<PathBuf>,
    /// With --sweep: write the rows to FILE instead of stdout, as Parquet when FILE ends
    /// in `.parquet` (or with `--format parquet`), else as CSV.
    #[arg(long, value_name = "FILE", requires = "sweep")]
    out: Option<PathBuf>,
    /// With --sweep: the table's format. Default: Parquet for an --out FILE ending in
    /// `.parquet`, else CSV. Parquet needs --out.
    #[arg(long, value_enum, requires = "sweep")]
    format: Option<TableFormat>,
}

/// How `report --sweep` writes its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum TableFormat {
    /// Comma-separated text, a header line first.
    Csv,
    /// One Parquet file (columns typed; an empty cell is null).
    Parquet,
}

impl TableFormat {
    /// The format asked, else the one `out`'s extension names.
    fn of(asked: Option<TableFormat>, out: Option<&Path>) -> TableFormat {
        asked.unwrap_or_else(|| {
            let parquet = out
                .and_then(|p| p.extension())
                .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
            if parquet {
                TableFormat::Parquet
            } else {
                TableFormat::Csv
            }
        })
    }
}

fn vmem(args: &ReportArgs) -> Result<Option<u64>> {
    args.vmem
        .as_deref()
        .map(|v| crate::util::parse_bytes(v).with_context(|| "--vmem"))
        .transpose()
}

/// The user's chip file, read (bounded like every chip TOML).
fn chip_file(args: &ReportArgs) -> Result<Option<tpusim_report::ChipFile>> {
    args.chip_file
        .as_ref()
        .map(|p| {
            Ok(tpusim_report::ChipFile {
                text: crate::input::read_input(p, crate::input::InputKind::ChipToml)?,
                origin: p.display().to_string(),
            })
        })
        .transpose()
}

/// The NPU that --chip-file (read as an NPU preset when it is no TPU chip) or --chip (an
/// NPU preset's name) gives, if any.
fn npu(args: &ReportArgs) -> Result<Option<tpusim_planner::NpuChip>> {
    if let Some(p) = &args.chip_file {
        let text = crate::input::read_input(p, crate::input::InputKind::ChipToml)?;
        if tpusim_chip::Chip::from_toml_str(&text, &p.display().to_string()).is_ok() {
            return Ok(None);
        }
        return Ok(tpusim_planner::NpuChip::from_toml(&text).ok());
    }
    Ok(tpusim_planner::NpuChip::preset(&args.chip).ok())
}

/// A built-in LLM name or a model config JSON.
fn is_transformer(model: &str) -> bool {
    model.to_ascii_lowercase().ends_with(".json") || tpusim_llm::zoo::lookup(model).is_ok()
}

/// An ONNX MODEL that is a transformer (see `tpusim_graph::nd::is_transformer_onnx`)
/// as its bytes without the weights' data (`slim_onnx`: the file is memory-mapped and
/// the weights' pages never read), or `None` for anything else.
pub(crate) fn transformer_onnx(model: &str) -> Result<Option<Vec<u8>>> {
    use crate::input::{read_bytes, InputKind};
    if !model.to_ascii_lowercase().ends_with(".onnx") {
        return Ok(None);
    }
    let path = Path::new(model);
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read ONNX file '{model}'"))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read ONNX file '{model}'"))?;
    let slim = if meta.is_file() && meta.len() <= InputKind::Onnx.limit() && meta.len() > 0 {
        // SAFETY: read-only map of a regular file; a file changed while mapped can give
        // wrong bytes, which the protobuf walk and the importer reject as malformed.
        let map = unsafe { memmap2::Mmap::map(&file) }
            .with_context(|| format!("cannot map '{model}'"))?;
        tpusim_graph::nd::slim_onnx(&map)
    } else {
        // fifos, empty or oversized files: read (and refused) as every ONNX input is
        tpusim_graph::nd::slim_onnx(&read_bytes(path, InputKind::Onnx)?)
    };
    Ok(slim.filter(|b| tpusim_graph::nd::is_transformer_onnx(b)))
}

/// `tpusim report MODEL` for a transformer: `tpusim llm report` with --dtype as the
/// weight and KV precision.
fn transformer(args: &ReportArgs, model: String) -> Result<()> {
    let dtype = args.dtype.clone().unwrap_or_else(|| "bf16".into());
    super::llm::report::run(super::llm::report::ReportArgs {
        model,
        chip: args.chip.clone(),
        phase: args.phase.clone().unwrap_or_else(|| "prefill".into()),
        batch: args.batch.to_string(),
        seq: args.seq.clone().unwrap_or_else(|| "2048".into()),
        context: args.context.clone().unwrap_or_else(|| "2048".into()),
        weights: dtype.clone(),
        kv_dtype: dtype,
        file: crate::cmd::chip::args::ChipFile {
            chip_file: args.chip_file.clone(),
        },
        systolic_cycles: args.systolic_cycles,
        topology: None,
        svg: None,
        html: args.html.clone(),
        summary: args.summary,
        json: args.json,
    })
}

/// Run `tpusim report`.
pub fn run(args: ReportArgs) -> Result<()> {
    if let Some(file) = &args.sweep {
        return run_sweep(&args, file);
    }
    let model = args
        .model
        .clone()
        .unwrap_or_else(|| DEFAULT_MODEL.to_string());
    let cnn_only = [
        ("--resolution", args.resolution.is_some()),
        ("--vmem", args.vmem.is_some()),
        ("--input-dtype", args.input_dtype.is_some()),
        ("--no-fuse", args.no_fuse),
    ];
    let transformer_onnx = transformer_onnx(&model)?;
    if is_transformer(&model) || transformer_onnx.is_some() {
        if let Some((flag, _)) = cnn_only.iter().find(|f| f.1) {
            bail!("{flag} applies to CNNs; '{model}' is a transformer (its shapes come from --batch, --seq and --context)");
        }
    }
    if is_transformer(&model) {
        if npu(&args)?.is_some() {
            bail!("'{model}' on an NPU: the built-in and config.json transformers are timed on TPUs; on an NPU give the model as an ONNX export (e.g. torch.onnx.export or optimum), which is planned in layer groups as `tpusim plan` plans it");
        }
        return transformer(&args, model);
    }
    if let Some(bytes) = transformer_onnx {
        let onnx_args = super::llm::onnx::OnnxArgs {
            path: model.clone(),
            chip: args.chip.clone(),
            batch: args.batch,
            seq: args.seq.clone(),
            context: args.context.clone(),
            dtype: args.dtype.clone(),
            chip_file: args.chip_file.clone(),
            summary: args.summary,
            json: args.json,
            html: args.html.clone(),
        };
        if let Some(chip) = npu(&args)? {
            if args.html.is_some() {
                bail!("--html covers transformer graphs on TPUs so far; on an NPU ('{}') use --json, or `tpusim plan {model} --chip {}` for the plan", args.chip, args.chip);
            }
            return super::llm::onnx_npu::run(&onnx_args, &bytes, &chip);
        }
        return super::llm::onnx::run(&onnx_args, &bytes);
    }
    if args.phase.is_some() || args.seq.is_some() || args.context.is_some() || args.systolic_cycles
    {
        bail!("--phase, --seq, --context and --systolic-cycles apply to transformers; '{model}' is a CNN (built-in) or an ONNX/topology file");
    }
    let req = Request {
        model: crate::input::model_source(&model)?,
        chip: args.chip.clone(),
        batch: args.batch,
        dtype: args.dtype.clone(),
        resolution: parse_resolution(args.resolution.as_deref())?,
        vmem_bytes: vmem(&args)?,
        input_dtype: args.input_dtype.clone(),
        fuse: !args.no_fuse,
        chip_file: chip_file(&args)?,
    };
    // a bar over the plan's group search (the long part of a large network); indicatif
    // draws nothing when stderr is not a terminal
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} {bar:20} op {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(format!("planning {} on {}", req.model.name(), args.chip));
    let result = tpusim_report::report_with_progress(&req, &|done, all| {
        bar.set_length(all as u64);
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    let result = result.map_err(report_error);
    let from_file = [".onnx", ".csv"]
        .iter()
        .any(|e| model.to_ascii_lowercase().ends_with(e));
    let r = if from_file {
        result.with_context(|| format!("'{model}'"))?
    } else {
        result?
    };
    if let Some(path) = &args.html {
        write_atomic(path, html::render(&r).as_bytes())?;
    }
    if args.json {
        print_json(&r)?;
    } else if args.summary {
        print!("{}", crate::util::shown_text(&terminal::summary(&r)));
    } else {
        print!("{}", crate::util::shown_text(&terminal::render(&r)));
    }
    Ok(())
}

fn run_sweep(args: &ReportArgs, file: &Path) -> Result<()> {
    let format = TableFormat::of(args.format, args.out.as_deref());
    if format == TableFormat::Parquet && args.out.is_none() {
        bail!("--format parquet writes a file: give it with --out FILE.parquet");
    }
    let text = crate::input::read_input(file, crate::input::InputKind::SweepToml)?;
    let spec = SweepSpec::parse(&text).with_context(|| format!("'{}'", file.display()))?;
    let resolution = parse_resolution(args.resolution.as_deref())?;
    let vmem_bytes = vmem(args)?;
    // a chip file stands for the sweep's chip of the same name
    let user_chip = chip_file(args)?;
    let user_chip_name = match &user_chip {
        Some(f) => Some(
            tpusim_report::Machine::from_toml(&f.text, &f.origin, vmem_bytes)?
                .name()
                .to_string(),
        ),
        None => None,
    };
    // read every model file once, before the parallel part
    let mut networks: HashMap<String, Network> = HashMap::new();
    for m in &spec.models {
        if !networks.contains_key(m) {
            let network = if is_transformer(m) {
                Network::Transformer(Box::new(super::llm::args::model(m)?))
            } else {
                Network::Cnn(crate::input::model_source(m)?)
            };
            networks.insert(m.clone(), network);
        }
    }
    let shared = Shared {
        resolution,
        vmem_bytes,
        input_dtype: args.input_dtype.clone(),
        fuse: !args.no_fuse,
    };
    let points = spec.points();
    let bar =
        ProgressBar::with_draw_target(Some(points.len() as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs {elapsed} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let rows = sweep::run_points(
        &points,
        |p| {
            let file = user_chip
                .as_ref()
                .filter(|_| user_chip_name.as_deref() == Some(p.chip.as_str()));
            match networks.get(&p.model) {
                Some(network) => sweep::run(p, network, &shared, file),
                None => sweep::Figures::of(Err(format!("model '{}' was not read", p.model))),
            }
        },
        || bar.inc(1),
    );
    bar.finish_and_clear();
    let mut outputs = crate::output::Outputs::default();
    if let Some(path) = &args.html {
        outputs.add(path, tpusim_report::sweep_html::render(&rows).into_bytes());
    }
    match (format, &args.out) {
        (TableFormat::Parquet, Some(path)) => {
            outputs.add(path, sweep::parquet(&rows).map_err(report_error)?)
        }
        (TableFormat::Csv, Some(path)) => outputs.add(path, sweep::csv(&rows).into_bytes()),
        _ => print!("{}", sweep::csv(&rows)),
    }
    outputs.commit()?;
    let failed = rows.iter().filter(|r| r.figures.error.is_some()).count();
    if failed > 0 {
        eprintln!(
            "warning: {failed} of {} runs failed (see the error column)",
            rows.len()
        );
    }
    Ok(())
}

/// A report error as the CLI exits with it: tpusim's own failures (a plan the planner's
/// verifier rejected) are internal (exit 1), everything else bad input (exit 2).
pub(crate) fn report_error(e: tpusim_report::ReportError) -> anyhow::Error {
    if e.is_internal() {
        anyhow::Error::new(e).context(Internal("internal error (a bug in tpusim)".into()))
    } else {
        e.into()
    }
}

#[cfg(test)]
mod error_tests {
    use super::report_error;
    use crate::util::exit_code;
    use tpusim_planner::PlanError;
    use tpusim_report::ReportError;

    #[test]
    fn a_planner_bug_exits_1_and_bad_input_2_with_the_cause_kept() {
        let bug = report_error(ReportError::Plan {
            context: "planning 'resnet18' on bm1684x".into(),
            source: PlanError::Invalid("group 0: block overlap".into()),
        });
        assert_eq!(exit_code(&bug), 1);
        let text = format!("{bug:#}");
        assert!(text.contains("internal error"), "{text}");
        assert!(text.contains("block overlap"), "{text}");
        assert!(bug.chain().any(|c| c.downcast_ref::<PlanError>().is_some()));
        let bad = report_error(ReportError::Plan {
            context: "planning".into(),
            source: PlanError::BadGraph("tensor 9".into()),
        });
        assert_eq!(exit_code(&bad), 2);
        let dtype = report_error(ReportError::BadDtype {
            given: "f8".into(),
            why: "unknown".into(),
        });
        assert_eq!(exit_code(&dtype), 2);
    }
}

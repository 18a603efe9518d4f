//! `tpusim plan`: layer groups — plan a network into NPU local memory (TPU-MLIR style),
//! verify plan files, list the built-in models, and exchange groupings with TPU-MLIR.

use crate::input::{read_input, InputKind};
use crate::output::Outputs;
use crate::util::{print_json, Internal};
use anyhow::{anyhow, bail, Result};
use clap::{Args, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use tpusim_graph::Graph;
use tpusim_planner::NpuChip;
use tpusim_planner::{Allocator, Plan, PlanOptions, Search};

/// Arguments of `tpusim plan`.
///
/// Examples:
///   `tpusim plan resnet18` (ResNet-18, batch 1, 224×224, bm1684x, f16);
///   `tpusim plan resnet50 --chip bm1688 --batch 4 --json > plan.json`;
///   `tpusim plan mobilenetv2 --svg lmem.svg`;
///   `tpusim plan model.onnx --export-tpu-mlir model.layer_group_cache.json`;
///   `tpusim plan gpt2.onnx --seq 256` (a transformer export: its TPU-MLIR layers in
///   layer groups, attention and embedding global);
///   `tpusim plan verify plan.json`; `tpusim plan --list`.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct PlanArgs {
    #[command(subcommand)]
    cmd: Option<PlanCmd>,
    /// The network: a built-in name (see --list: resnet18, resnet50, mobilenetv2,
    /// vgg16), an ONNX file (`model.onnx`, a CNN or a transformer export) or a SCALE-Sim
    /// topology CSV (`net.csv`).
    #[arg(value_name = "MODEL", required_unless_present = "list")]
    model: Option<String>,
    /// List the built-in models and exit.
    #[arg(long)]
    list: bool,
    /// Chip preset (see `tpusim lmem presets`): bm1684x, bm1688, bm1690, cv183x, …
    #[arg(long, default_value = "bm1684x", conflicts_with = "chip_file")]
    chip: String,
    /// A chip described in TOML (as `tpusim lmem show bm1684x --toml` prints) instead
    /// of a preset.
    #[arg(long, value_name = "FILE")]
    chip_file: Option<PathBuf>,
    /// Element type of activations and weights: f16, bf16, f32, int8 (s8), u8, …
    #[arg(long, default_value = "f16")]
    dtype: String,
    /// Element type the network's inputs arrive in: f32 (default: an ONNX model's
    /// inputs are f32, and TPU-MLIR keeps them so unless `model_deploy --quant_input`),
    /// or `same` (already in --dtype). When it differs from --dtype, a cast op after
    /// each input converts it on the chip, alone or inside the first group.
    #[arg(long, value_name = "TYPE", default_value = "f32")]
    input_dtype: String,
    /// Batch size N (built-in models and topology CSVs: default 1; ONNX: overrides the
    /// file's batch when given).
    #[arg(long)]
    batch: Option<u64>,
    /// Input height and width in pixels, `H,W` (or one number for both); built-in
    /// models default to 224,224; ONNX: overrides the file's when given.
    #[arg(long, value_name = "H,W")]
    resolution: Option<String>,
    /// Transformers (an ONNX export): tokens per sequence, binding the graph's dynamic
    /// sequence axes (default 128; a graph exported at fixed shapes keeps its own).
    #[arg(long, value_name = "N")]
    seq: Option<String>,
    /// Transformers (an ONNX export): cached tokens, binding dynamic past axes (default 0).
    #[arg(long, value_name = "N")]
    context: Option<String>,
    /// Print the full plan as one JSON document (fields: chip, lane_bytes, banks,
    /// groups[ops, nsecs, hsecs, blocks[name, kind, addr, size, start_ts, end_ts],
    /// timesteps, gmem_bytes, cycles], global_ops, gmem_bytes, gmem_bytes_all_global,
    /// cycles, cycles_all_global, …). Sizes in bytes, times in seconds.
    #[arg(long)]
    json: bool,
    /// Write the local-memory picture (time × address per group, banks marked) to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Write the grouping as a TPU-MLIR layer-group cache JSON (what its
    /// `LOAD_TPU_GROUP=1` reads) to FILE. Ops are planned in TPU-MLIR's own op order, so
    /// each group is a consecutive run for it too; compile with `LOAD_TPU_GROUP=1
    /// tpuc-opt … --layer-group="… lgcache=true"` (see bench/plan-tpumlir-ours.sh).
    #[arg(long, value_name = "FILE")]
    export_tpu_mlir: Option<PathBuf>,
    /// Use the grouping of a TPU-MLIR layer-group cache JSON instead of searching, to
    /// evaluate TPU-MLIR's choice with this cost model. For a CNN, a group whose
    /// `shape_secs` do not fit, or that TPU-MLIR cannot cut so, is planned at the first
    /// slicing that does, with a note saying why. For a transformer, each cache
    /// group is the run of layers it names, at its `shape_secs`; groups our model would
    /// refuse are priced all the same and named in a note (`tpu_mlir_import` in --json).
    #[arg(long, value_name = "FILE")]
    import_tpu_mlir: Option<PathBuf>,
    /// Apply the spec's h/2 rule (a slicing fails when a tensor's H slices repeat more
    /// than half its rows). Off by default, as in TPU-MLIR.
    #[arg(long)]
    h_half_rule: bool,
    /// Group search: `best` (dynamic program, each group keeps the cheapest of its
    /// first fitting slicings; default) or `dp` (dynamic program, first fitting slicing,
    /// like TPU-MLIR's default).
    #[arg(long, value_enum, default_value = "best")]
    search: SearchArg,
    /// Local-memory allocator: `tpu-mlir` (default: groups of two or more ops are
    /// software-pipelined and placed as TPU-MLIR 1.30.2 places them — its allocator
    /// reproduced, 18 of its groups to the byte — with a margin so that an exported
    /// plan allocates in TPU-MLIR at its slicing) or `spec` (the spec's order: resident
    /// weights, longest lifetime, largest; bank preferences; in-place adds).
    #[arg(long, value_enum, default_value = "tpu-mlir")]
    allocator: AllocatorArg,
    /// Plan the graph as written, without folding batch-norm and ReLU into the
    /// producing conv or merging a linear 1×1 conv into the conv that alone reads it
    /// (TPU-MLIR plans the folded, merged form; so do we by default).
    #[arg(long)]
    no_fuse: bool,
}

/// Group search strategies.
#[derive(Clone, Copy, ValueEnum)]
enum SearchArg {
    /// Dynamic program + best of the first fitting slicings.
    Best,
    /// Dynamic program + first fitting slicing (TPU-MLIR's default).
    Dp,
}

/// Local-memory allocators.
#[derive(Clone, Copy, ValueEnum)]
enum AllocatorArg {
    /// TPU-MLIR's greedy allocator on its pipelined time steps.
    TpuMlir,
    /// The spec's order with bank preferences.
    Spec,
}

/// Verbs of `tpusim plan`.
#[derive(Subcommand)]
enum PlanCmd {
    /// Check a plan file (as `tpusim plan MODEL --json` writes): no overlapping live
    /// blocks, blocks fit the lane, slices cover every output, backward ranges, loads
    /// before uses. Exit code 2 with the violations if it is invalid. A valid plan with a
    /// group cut along H in a way TPU-MLIR 1.30.2 cannot slice (a value its readers need
    /// in different rows) gets a note (`tpu_mlir_cannot_cut` in --json): its export
    /// would not compile.
    ///
    /// Example: `tpusim plan resnet18 --json > p.json && tpusim plan verify p.json`
    Verify {
        /// The plan JSON file.
        #[arg(value_name = "PLAN.json")]
        file: PathBuf,
        /// Print one JSON document (`valid`, `groups`, `ops`, `error`).
        #[arg(long)]
        json: bool,
    },
}

/// Run `tpusim plan`.
pub fn run(args: PlanArgs) -> Result<()> {
    if let Some(PlanCmd::Verify { file, json }) = args.cmd {
        return verify(&file, json);
    }
    if args.list {
        return list(args.json);
    }
    let model = args
        .model
        .clone()
        .ok_or_else(|| anyhow!("give a MODEL (see `tpusim plan --list`)"))?;
    if let Some(bytes) = super::report::transformer_onnx(&model)? {
        return transformer(&args, &model, &bytes);
    }
    if tpusim_llm::zoo::lookup(&model).is_ok() || model.to_ascii_lowercase().ends_with(".json") {
        bail!("'{model}' is a built-in or config.json transformer: plan it on an NPU from an ONNX export of it (torch.onnx.export or optimum), or time it on a TPU with `tpusim report {model}`");
    }
    if args.seq.is_some() || args.context.is_some() {
        bail!("--seq and --context apply to transformers (an ONNX export); '{model}' is a CNN");
    }
    let chip = load_chip(&args)?;
    let dtype: tpusim_layout::ElementType = args.dtype.parse().map_err(|_| {
        anyhow!(
            "unknown --dtype '{}' (try f16, bf16, f32, int8)",
            args.dtype
        )
    })?;
    let input_bits = match args.input_dtype.as_str() {
        "same" => dtype.bits(),
        t => t
            .parse::<tpusim_layout::ElementType>()
            .map_err(|_| anyhow!("unknown --input-dtype '{t}' (try f32, or same for the --dtype)"))?
            .bits(),
    };
    let how = tpusim_planner::Preparation {
        fuse: !args.no_fuse,
        input_bits: (input_bits != dtype.bits()).then_some(input_bits),
        f32_ops: chip.f32_ops_at(dtype),
    };
    let graph = load_graph(
        &model,
        args.batch,
        crate::util::parse_resolution(args.resolution.as_deref())?,
        how,
    )?;
    let opts = PlanOptions {
        dtype,
        h_half_rule: args.h_half_rule,
        search: match args.search {
            SearchArg::Best => Search::DpBestSlicing,
            SearchArg::Dp => Search::Dp,
        },
        allocator: match args.allocator {
            AllocatorArg::TpuMlir => Allocator::TpuMlir,
            AllocatorArg::Spec => Allocator::Spec,
        },
        ..PlanOptions::default()
    };
    // Notes about an import are printed only once the plan exists: a failing command
    // prints its one error line and nothing else.
    let mut notes = Vec::new();
    let plan = match &args.import_tpu_mlir {
        Some(path) => {
            let text = read_input(path, InputKind::TpuMlirCache)?;
            let cache = tpusim_planner::tpumlir::parse(&text)?;
            let imported = tpusim_planner::tpumlir::import(&graph, &cache)?;
            if !imported.unmatched.is_empty() || !imported.split_at.is_empty() {
                notes.push(format!(
                    "{} TPU-MLIR loc(s) match no op here (e.g. its casts); groups split at {} op(s) we run globally",
                    imported.unmatched.len(),
                    imported.split_at.len()
                ));
            }
            if !imported.cut_at.is_empty() {
                notes.push(format!(
                    "groups longer than {} ops cut before {}",
                    tpusim_planner::MAX_GROUP_OPS,
                    imported.cut_at.join(", ")
                ));
            }
            let plan = tpusim_planner::plan_with_groups(&graph, &chip, &opts, &imported.requests)?;
            notes.extend(reslice_notes(&graph, &plan, &imported.requests));
            plan
        }
        None => tpusim_planner::plan(&graph, &chip, &opts).map_err(planner_error)?,
    };
    if !args.json {
        for note in &notes {
            eprintln!("note: {}", crate::util::shown(note));
        }
    }
    let mut outputs = Outputs::default();
    if let Some(path) = &args.svg {
        outputs.add(path, tpusim_planner::svg::render(&plan).into_bytes());
    }
    if let Some(path) = &args.export_tpu_mlir {
        let cache = tpusim_planner::tpumlir::export(&plan);
        outputs.add(path, tpusim_planner::tpumlir::to_text(&cache).into_bytes());
    }
    outputs.commit()?;
    if args.json {
        print_json(&plan)
    } else {
        print!(
            "{}",
            crate::util::shown_text(&tpusim_planner::text::summary(&plan))
        );
        Ok(())
    }
}

/// A verifier rejection of a plan we just made is our bug (exit 1), not bad input; the
/// planner's error is kept as the cause.
pub(crate) fn planner_error(e: tpusim_planner::PlanError) -> anyhow::Error {
    if e.is_internal() {
        anyhow::Error::new(e).context(Internal(
            "internal error: the planner made an invalid plan".into(),
        ))
    } else {
        e.into()
    }
}

/// A transformer ONNX: its TPU-MLIR form planned in layer groups, as `tpusim report` does
/// on an NPU.
fn transformer(args: &PlanArgs, model: &str, bytes: &[u8]) -> Result<()> {
    if args.svg.is_some() {
        bail!("--svg covers CNN plans so far; '{model}' is a transformer");
    }
    let onnx_args = super::llm::onnx::OnnxArgs {
        path: model.to_string(),
        chip: args.chip.clone(),
        batch: args.batch.unwrap_or(1),
        seq: args.seq.clone(),
        context: args.context.clone(),
        dtype: Some(args.dtype.clone()),
        chip_file: args.chip_file.clone(),
        summary: false,
        json: args.json,
        html: None,
    };
    let chip = load_chip(args)?;
    let (planned, imported) = match &args.import_tpu_mlir {
        Some(path) => {
            let text = read_input(path, InputKind::TpuMlirCache)?;
            let cache = tpusim_planner::tpumlir::parse(&text)?;
            let (planned, report) =
                super::llm::onnx_npu::plan_imported(&onnx_args, bytes, &chip, &cache)?;
            (planned, Some(report))
        }
        None => (super::llm::onnx_npu::plan(&onnx_args, bytes, &chip)?, None),
    };
    let bits = planned.plan.dtype_bits;
    let exporting = args.export_tpu_mlir.is_some();
    for note in super::llm::onnx_npu::tpu_mlir_notes(&planned.graph, &chip, bits, exporting) {
        eprintln!("note: {}", crate::util::shown(&note));
    }
    if let Some(path) = &args.export_tpu_mlir {
        let cache = tpusim_planner::tpumlir::nd_export::export_nd(
            &planned.graph,
            &chip,
            planned.dtype,
            &planned.plan,
        );
        let mut outputs = Outputs::default();
        outputs.add(path, tpusim_planner::tpumlir::to_text(&cache).into_bytes());
        outputs.commit()?;
    }
    if let (false, Some(report)) = (args.json, &imported) {
        for note in super::llm::onnx_npu::import_notes(report) {
            eprintln!("note: {}", crate::util::shown(&note));
        }
    }
    super::llm::onnx_npu::print(&onnx_args, &planned, imported.as_ref())
}

fn load_chip(args: &PlanArgs) -> Result<NpuChip> {
    match &args.chip_file {
        Some(p) => {
            let text = read_input(p, InputKind::ChipToml)?;
            Ok(NpuChip::from_toml(&text)?)
        }
        None => Ok(NpuChip::preset(&args.chip)?),
    }
}

fn load_graph(
    model: &str,
    batch: Option<u64>,
    res: Option<(u64, u64)>,
    how: tpusim_planner::Preparation,
) -> Result<Graph> {
    let g = crate::input::model_source(model)?.import(batch, res)?;
    // fused (as TPU-MLIR plans) unless told otherwise; inputs cast on the chip when
    // they arrive in another type; the chip's f32 ops between casts; ops in TPU-MLIR's
    // topological order, so that an exported grouping is runs of consecutive ops for
    // TPU-MLIR too
    Ok(tpusim_planner::prepare(&g, how)?)
}

fn list(json: bool) -> Result<()> {
    let models = tpusim_graph::models::list();
    if json {
        let v: Vec<_> = models
            .iter()
            .map(|(n, d)| serde_json::json!({ "name": n, "description": d }))
            .collect();
        return print_json(&serde_json::json!({ "models": v }));
    }
    println!("{:<12} description", "model");
    for (n, d) in models {
        println!("{n:<12} {d}");
    }
    Ok(())
}

fn verify(file: &Path, json: bool) -> Result<()> {
    let text = read_input(file, InputKind::PlanJson)?;
    let plan: Plan = serde_json::from_str(&text)
        .map_err(|e| anyhow!("'{}' is not a plan JSON: {e}", file.display()))?;
    let result = tpusim_planner::verify::verify(&plan);
    let ops: usize = plan.groups.iter().map(|g| g.ops.len()).sum::<usize>() + plan.global_ops.len();
    let uncut = cuts_tpu_mlir_cannot_make(&plan);
    if json {
        print_json(&serde_json::json!({
            "valid": result.is_ok(),
            "groups": plan.groups.len(),
            "ops": ops,
            "error": result.as_ref().err().map(|e| e.to_string()),
            "tpu_mlir_cannot_cut": uncut
                .iter()
                .map(|c| serde_json::json!({"group": c.group, "value": c.value}))
                .collect::<Vec<_>>(),
        }))?;
    } else if result.is_ok() {
        for c in &uncut {
            eprintln!(
                "note: group {} is cut in {} H slices, which TPU-MLIR 1.30.2 cannot make: its readers need '{}' in different rows and one cannot take margins (an export of this plan will not compile)",
                c.group, c.hsecs, c.value
            );
        }
        println!(
            "valid: {} groups, {} global ops, {} ops on {} ({} bytes/lane, {} banks)",
            plan.groups.len(),
            plan.global_ops.len(),
            ops,
            plan.chip,
            plan.lane_bytes,
            plan.banks
        );
    }
    result.map_err(|e| anyhow!("{}: {e}", file.display()))
}

/// A note for each imported group planned at other slices than its cache asks for: the
/// cache's cut does not fit our reproduction of TPU-MLIR's allocator, or TPU-MLIR
/// cannot make it (a value readers need in different rows, named).
fn reslice_notes(
    graph: &tpusim_graph::Graph,
    plan: &tpusim_planner::Plan,
    requests: &[tpusim_planner::GroupRequest],
) -> Vec<String> {
    let mut notes = Vec::new();
    for r in requests {
        let Some((n, h)) = r.secs else { continue };
        let Some(first) = graph.ops.get(r.first) else {
            continue;
        };
        let Some(g) = plan
            .groups
            .iter()
            .find(|g| g.ops.first() == Some(&first.name))
        else {
            continue;
        };
        if (g.nsecs, g.hsecs) == (n, h) {
            continue;
        }
        let last = g.ops.last().map_or("?", String::as_str);
        let why = match tpusim_planner::tpumlir::margins::unmergeable_value_of_cut(
            graph, r.first, r.last, n, h,
        ) {
            Some(v) => format!(
                "TPU-MLIR cannot cut it so: its readers need '{v}' in different rows and one cannot take margins"
            ),
            None => "it does not fit local memory so".to_string(),
        };
        notes.push(format!(
            "group {}..{last}: the cache asks for {n}x{h} (N x H) slices, but {why}; planned at {}x{}",
            first.name, g.nsecs, g.hsecs
        ));
    }
    notes
}

/// A group of a plan cut along H in a way TPU-MLIR cannot slice.
struct UncutGroup {
    /// Index of the group in the plan.
    group: usize,
    /// Its H slices.
    hsecs: u64,
    /// The value its readers need in different rows.
    value: String,
}

/// The groups of `plan` that TPU-MLIR 1.30.2 cannot cut as the plan does
/// (`tpumlir::margins`), found on the plan's own graph by the groups' op names.
fn cuts_tpu_mlir_cannot_make(plan: &Plan) -> Vec<UncutGroup> {
    let id = |name: &String| plan.graph.ops.iter().position(|o| &o.name == name);
    plan.groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.hsecs > 1)
        .filter_map(|(i, g)| {
            let (first, last) = (id(g.ops.first()?)?, id(g.ops.last()?)?);
            let value = tpusim_planner::tpumlir::margins::unmergeable_value_of_cut(
                &plan.graph,
                first,
                last,
                g.nsecs,
                g.hsecs,
            )?;
            Some(UncutGroup {
                group: i,
                hsecs: g.hsecs,
                value,
            })
        })
        .collect()
}

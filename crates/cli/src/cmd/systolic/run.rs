//! `tpusim systolic run`: SCALE-Sim-style topology runs.

use crate::input::{read_input, InputKind};
use crate::output::Outputs;
use crate::util::print_json;
use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use tpusim_systolic::scalesim::{compat, config::ScaleConfig, layout, ours, report, topology};

/// Arguments of `tpusim systolic run`.
#[derive(Args)]
pub struct RunArgs {
    /// SCALE-Sim config file (.cfg): array size, SRAM sizes, dataflow, bandwidth mode.
    #[arg(long, short = 'c')]
    pub config: PathBuf,
    /// SCALE-Sim topology CSV: conv layers or GEMM rows (`Layer,M,N,K,`), told apart by
    /// the header.
    #[arg(long, short = 't')]
    pub topology: PathBuf,
    /// SCALE-Sim 3 layout CSV (its `-l`): the IFMAP/FILTER layouts the config's
    /// `IfmapCustomLayout` / `FilterCustomLayout` use (SCALE-Sim takes its first row for
    /// every layer). Read and checked whenever given.
    #[arg(long, short = 'l')]
    pub layout: Option<PathBuf>,
    /// Force the topology format as SCALE-Sim's `-i` does: gemm or conv.
    #[arg(short = 'i', value_name = "gemm|conv")]
    pub input_type: Option<String>,
    /// Folder for the reports; they go to OUT/<run_name>/ as SCALE-Sim writes them.
    #[arg(long, short = 'p', default_value = ".")]
    pub out: PathBuf,
    /// Reproduce SCALE-Sim 3.0.0's numbers exactly (its fold padding, off-by-one,
    /// prefetch, refetch, write-back and stall model, in CALC and USER mode, N:M
    /// sparsity and custom layouts with SRAM bank conflicts), e.g. operands larger than
    /// half their SRAM refetched and the array stalled as it reports; with
    /// `SparsitySupport` it writes SPARSE_REPORT.csv too. Refuses (exit 2, with the
    /// reason) only where SCALE-Sim itself crashes or loops forever, or a layer exceeds
    /// the replay limits. Default: our own model (see the crate docs for every
    /// difference; it ignores sparsity and layouts).
    #[arg(long)]
    pub scalesim_compat: bool,
    /// Our model only: expose every weight load instead of double-buffering it.
    #[arg(long)]
    pub no_double_buffer: bool,
    /// Print one JSON document (per-layer rows) instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct LayerJson {
    layer: String,
    total_cycles_incl_prefetch: i64,
    total_cycles: u64,
    stall_cycles: u64,
    overall_util_percent: f64,
    mapping_efficiency_percent: f64,
    compute_util_percent: f64,
    sram_ifmap_reads: u64,
    sram_filter_reads: u64,
    sram_ofmap_writes: u64,
    dram_ifmap_reads: u64,
    dram_filter_reads: u64,
    dram_ofmap_writes: u64,
    /// SPARSE_REPORT.csv's figures, with `SparsitySupport`.
    #[serde(skip_serializing_if = "Option::is_none")]
    sparse: Option<SparseJson>,
}

#[derive(Serialize)]
struct SparseJson {
    representation: String,
    original_filter_storage: u64,
    new_storage: f64,
    filter_metadata_storage: f64,
}

fn sparse_json(r: &report::LayerReport) -> Option<SparseJson> {
    let s = r.sparse.as_ref()?;
    Some(SparseJson {
        representation: s.representation.clone(),
        original_filter_storage: s.original_storage,
        new_storage: s.new_storage.value(),
        filter_metadata_storage: s.metadata_storage.value(),
    })
}

#[derive(Serialize)]
struct RunJson {
    run_name: String,
    model: &'static str,
    report_dir: String,
    total_cycles: u64,
    layers: Vec<LayerJson>,
}

pub fn run(a: RunArgs) -> Result<()> {
    let text = read_input(&a.config, InputKind::ScaleSimConfig)?;
    let file = a.config.display().to_string();
    let cfg = if a.scalesim_compat {
        ScaleConfig::parse_compat(&text, &file)?
    } else {
        ScaleConfig::parse(&text, &file)?
    };
    let fmt = match a.input_type.as_deref() {
        None => None,
        Some("gemm") => Some(topology::TopoFormat::Gemm),
        Some("conv") => Some(topology::TopoFormat::Conv),
        Some(o) => bail!("-i '{o}' must be gemm or conv"),
    };
    let (_, layers) = topology::parse_topology(
        &read_input(&a.topology, InputKind::Topology)?,
        &a.topology.display().to_string(),
        fmt,
    )?;
    let custom = cfg.layout.ifmap_custom || cfg.layout.filter_custom;
    if a.scalesim_compat && custom && a.layout.is_none() {
        bail!("config {file} sets IfmapCustomLayout or FilterCustomLayout: give SCALE-Sim's layout file with --layout (-l)");
    }
    let layout = match &a.layout {
        Some(p) => Some(layout::parse_layout(
            &read_input(p, InputKind::ScaleSimLayout)?,
            &p.display().to_string(),
        )?),
        None => None,
    };
    let mut reps = Vec::with_capacity(layers.len());
    for l in &layers {
        let r = if a.scalesim_compat {
            compat::layer_report_with_layout(&cfg, layout.as_ref(), l)?
        } else {
            ours::layer_report(&cfg, l, !a.no_double_buffer)?
        };
        reps.push(r);
    }
    let dir = a.out.join(&cfg.run_name);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create '{}'", dir.display()))?;
    let mut outputs = Outputs::default();
    outputs.add(
        &dir.join("COMPUTE_REPORT.csv"),
        report::compute_csv(&reps).into_bytes(),
    );
    outputs.add(
        &dir.join("BANDWIDTH_REPORT.csv"),
        report::bandwidth_csv(&reps).into_bytes(),
    );
    outputs.add(
        &dir.join("DETAILED_ACCESS_REPORT.csv"),
        report::detail_csv(&reps).into_bytes(),
    );
    if let Some(text) = report::sparse_csv(&reps) {
        outputs.add(&dir.join("SPARSE_REPORT.csv"), text.into_bytes());
    }
    outputs.commit()?;
    let model = if a.scalesim_compat {
        "scalesim-compat"
    } else {
        "tpusim"
    };
    let total: u64 = reps.iter().map(|r| r.total_cycles).sum();
    if a.json {
        return print_json(&RunJson {
            run_name: cfg.run_name.clone(),
            model,
            report_dir: dir.display().to_string(),
            total_cycles: total,
            layers: reps
                .iter()
                .map(|r| LayerJson {
                    layer: r.name.clone(),
                    total_cycles_incl_prefetch: r.cycles_incl_prefetch,
                    total_cycles: r.total_cycles,
                    stall_cycles: r.stall_cycles,
                    overall_util_percent: r.overall_util,
                    mapping_efficiency_percent: r.mapping_efficiency,
                    compute_util_percent: r.compute_util,
                    sram_ifmap_reads: r.sram[0].count,
                    sram_filter_reads: r.sram[1].count,
                    sram_ofmap_writes: r.sram[2].count,
                    dram_ifmap_reads: r.dram[0].count,
                    dram_filter_reads: r.dram[1].count,
                    dram_ofmap_writes: r.dram[2].count,
                    sparse: sparse_json(r),
                })
                .collect(),
        });
    }
    println!(
        "{} ({}x{} {}, model {}) -> {}",
        cfg.run_name,
        cfg.array.rows,
        cfg.array.cols,
        cfg.dataflow,
        model,
        dir.display()
    );
    println!(
        "  {:<16} {:>12} {:>12} {:>8} {:>9} {:>9} {:>9}",
        "layer", "cycles+pref", "cycles", "stalls", "util %", "map %", "comp %"
    );
    for r in &reps {
        println!(
            "  {:<16} {:>12} {:>12} {:>8} {:>9.2} {:>9.2} {:>9.2}",
            crate::util::shown(&r.name),
            r.cycles_incl_prefetch,
            r.total_cycles,
            r.stall_cycles,
            r.overall_util,
            r.mapping_efficiency,
            r.compute_util
        );
    }
    println!("  {:<16} {:>12} {:>12}", "total", "", total);
    Ok(())
}

//! `tpusim report MODEL.onnx --chip bm1684x` (and `tpusim plan`) for a transformer graph:
//! its TPU-MLIR form planned in layer groups on the NPU (`tpusim_planner::nd_plan`),
//! checked by the verifier, each run timed.

use super::onnx::{import_bound, OnnxArgs};
use crate::util::print_json;
use anyhow::{anyhow, Result};
use tpusim_graph::nd::{NdGraph, Work};
use tpusim_planner::nd_global::NdLayer;
use tpusim_planner::nd_plan::{plan_document, plan_verified, NdGroup, NdPlan};
use tpusim_planner::tpumlir::nd_cache::{self, imported_document, ImportReport};
use tpusim_planner::tpumlir::Cache;
use tpusim_planner::NpuChip;

/// A transformer graph planned on an NPU.
pub struct Planned {
    /// The imported graph.
    pub graph: NdGraph,
    /// Its element type.
    pub dtype: tpusim_layout::ElementType,
    /// Its plan, verified.
    pub plan: NdPlan,
}

/// Import, plan and verify it on `chip`.
pub fn plan(a: &OnnxArgs, onnx: &[u8], chip: &NpuChip) -> Result<Planned> {
    let (graph, dtype) = graph_of(a, onnx)?;
    let plan = plan_verified(&graph, chip, dtype).map_err(crate::cmd::plan::planner_error)?;
    Ok(Planned { graph, dtype, plan })
}

/// Import it and plan it on `chip` with the grouping of TPU-MLIR's `cache`.
pub fn plan_imported(
    a: &OnnxArgs,
    onnx: &[u8],
    chip: &NpuChip,
    cache: &Cache,
) -> Result<(Planned, ImportReport)> {
    let (graph, dtype) = graph_of(a, onnx)?;
    let (plan, report) = nd_cache::plan_imported(&graph, chip, dtype, cache)
        .map_err(crate::cmd::plan::planner_error)?;
    Ok((Planned { graph, dtype, plan }, report))
}

fn graph_of(a: &OnnxArgs, onnx: &[u8]) -> Result<(NdGraph, tpusim_layout::ElementType)> {
    let dtype_name = a.dtype.as_deref().unwrap_or("f16");
    let dtype: tpusim_layout::ElementType = dtype_name
        .parse()
        .map_err(|_| anyhow!("unknown --dtype '{dtype_name}' (try f16, bf16, f32, int8)"))?;
    let graph = import_bound(a, onnx)?;
    Ok((graph, dtype))
}

/// The lines to print (on stderr) about an imported grouping.
pub fn import_notes(imported: &ImportReport) -> Vec<String> {
    let groups = imported.groups;
    let names = |ks: &[usize]| {
        ks.iter()
            .map(|k| format!("g{k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut notes = Vec::new();
    if !imported.unmatched.is_empty() {
        notes.push(format!(
            "{} TPU-MLIR name(s) match no layer here, e.g. '{}'",
            imported.unmatched.len(),
            imported.unmatched[0]
        ));
    }
    if !imported.refused.is_empty() {
        notes.push(format!(
            "{} of TPU-MLIR's {groups} groups do not fit by our model (its allocator as we reproduce it refuses them): {}",
            imported.refused.len(),
            names(&imported.refused)
        ));
    }
    if !imported.ungroupable.is_empty() {
        notes.push(format!(
            "groups holding a layer our search never groups: {}",
            names(&imported.ungroupable)
        ));
    }
    notes
}

/// Import, plan, verify and print it on `chip`.
pub fn run(a: &OnnxArgs, onnx: &[u8], chip: &NpuChip) -> Result<()> {
    let planned = plan(a, onnx, chip)?;
    for note in tpu_mlir_notes(&planned.graph, chip, planned.plan.dtype_bits, false) {
        eprintln!("note: {}", crate::util::shown(&note));
    }
    print(a, &planned, None)
}

/// What to say of TPU-MLIR 1.30.2 and `g` on `chip`: the ops it cannot convert at all
/// (then it compiles neither its grouping nor ours), and the attentions it fuses that
/// the plan does not model ([`fusion_notes`]).
pub fn tpu_mlir_notes(g: &NdGraph, chip: &NpuChip, bits: u32, exporting: bool) -> Vec<String> {
    let mut notes = Vec::new();
    let refused = tpusim_planner::tpumlir::nd_unconvertible::unconvertible_nodes(g);
    if let Some(first) = refused.first() {
        let more = and_more(refused.len());
        notes.push(format!(
            "TPU-MLIR 1.30.2 cannot convert {first}{more}, so it compiles this \
             graph in no grouping (neither its own nor an exported cache) and these cycles \
             cannot be checked against it; a TorchScript export (torch.onnx.export(..., \
             dynamo=False, opset_version=17)) of eager attention writes none of these ops \
             (transformers 4.44 traces with it; 4.57 and 5 do not, and the dynamo \
             exporter writes opset 18 at least)"
        ));
    }
    notes.extend(fusion_notes(g, chip, bits, exporting));
    notes
}

/// " and N more" after the first of `n` things named (nothing when `n` is 1).
fn and_more(n: usize) -> String {
    match n {
        0 | 1 => String::new(),
        n => format!(" and {} more", n - 1),
    }
}

/// What to say when TPU-MLIR 1.30.2 will fuse some of `g`'s attentions into
/// `tpu.Attention` on `chip` that the planner does not model in `bits`-bit data (an F32
/// plan): its cycles are for the unfused ops, and an export names ops
/// TPU-MLIR no longer has. The ones it models need no note: the plan lists their heads.
fn fusion_notes(g: &NdGraph, chip: &NpuChip, bits: u32, exporting: bool) -> Vec<String> {
    let fused =
        tpusim_planner::tpumlir::nd_fusion::unmodelled_attentions(g, &chip.geometry.name, bits);
    let Some(first) = fused.first() else {
        return Vec::new();
    };
    let more = and_more(fused.len());
    let mut notes = vec![format!(
        "TPU-MLIR 1.30.2 fuses the attention before '{first}'{more} into tpu.Attention on \
         {} (its ConvertMatMul2Attention), which tpusim models only for a 16-bit plan; these \
         cycles are for the unfused ops",
        chip.geometry.name
    )];
    if exporting {
        notes.push(
            "the exported cache names the unfused ops, so TPU-MLIR will not compile it \
             (\"operand #0 does not dominate this use\")"
                .to_string(),
        );
    }
    notes
}

/// Print a planned graph as `a` asks (`--json`, `--summary`), with what the model says
/// of an imported grouping.
pub fn print(a: &OnnxArgs, p: &Planned, imported: Option<&ImportReport>) -> Result<()> {
    let (g, plan) = (&p.graph, &p.plan);
    if a.json {
        return print_json(&match imported {
            Some(r) => imported_document(g, plan, r),
            None => plan_document(g, plan),
        });
    }
    let mut out = summary(g, plan);
    if !a.summary {
        out += &run_table(plan);
    }
    print!("{}", crate::util::shown_text(&out));
    Ok(())
}

fn summary(g: &NdGraph, p: &NdPlan) -> String {
    let inputs: Vec<String> = g
        .inputs
        .iter()
        .map(|i| format!("{} {:?}", i.name, i.dims))
        .collect();
    let groups = p.groups.iter().filter(|r| r.end - r.start > 1);
    let grouped: usize = groups.clone().map(|r| r.end - r.start).sum();
    format!(
        "{} (ONNX transformer graph, {}) on {} in {}-bit data: TPU-MLIR's {} layers in layer groups\n  \
         run               {} cycles = {:.4} ms at {:.0} MHz\n  \
         groups            {} groups hold {} of the layers; the rest run as global layers\n  \
         ungrouped         {} cycles with every layer global ({:.2}×)\n  \
         parameters        {}\n",
        g.name,
        inputs.join(", "),
        p.chip,
        p.dtype_bits,
        p.layers.len(),
        p.cycles,
        p.seconds * 1e3,
        p.clock_hz / 1e6,
        groups.count(),
        grouped,
        p.ungrouped_cycles,
        p.ungrouped_cycles as f64 / p.cycles.max(1) as f64,
        g.parameters
    )
}

/// The first `n` characters of `s`.
fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn kind(l: &NdLayer) -> String {
    match (l.f32, l.nodes, l.work) {
        _ if l.heads_as_batch => format!("{} (heads)", l.op_type),
        (true, _, _) => format!("{} (f32)", l.op_type),
        (_, 2.., _) => format!("{} ({} nodes)", l.op_type, l.nodes),
        (_, _, Work::Matmul { .. }) => format!("{} (MAC)", l.op_type),
        _ => l.op_type.clone(),
    }
}

fn run_table(p: &NdPlan) -> String {
    let mut out = format!(
        "\n{:<7} {:<28} {:<20} {:>10} {:>10} {:>10} {:>6}\n",
        "run", "layer", "type", "compute", "transfer", "cycles", "share"
    );
    for (k, r) in p.groups.iter().enumerate() {
        out += &run_rows(k, r, &p.layers[r.start..r.end], p.cycles);
    }
    out + "(a group keeps what passes between its layers in local memory: only what enters is\n \
           loaded and only what leaves is stored; `global` layers run alone from global memory)\n"
}

fn run_rows(k: usize, r: &NdGroup, layers: &[NdLayer], total: u64) -> String {
    let share = 100.0 * r.cycles as f64 / total.max(1) as f64;
    if let [l] = layers {
        return format!(
            "{:<7} {:<28} {:<20} {:>10} {:>10} {:>10} {:>5.1}%\n",
            "global",
            cut(&l.name, 28),
            cut(&kind(l), 20),
            r.compute_cycles,
            r.dma_cycles,
            r.cycles,
            share
        );
    }
    let mut out = format!(
        "{:<7} {:<28} {:<20} {:>10} {:>10} {:>10} {:>5.1}%\n",
        format!("g{k}"),
        format!("{} layers, {} B a lane", layers.len(), r.lane_bytes),
        format!("in {} B, out {} B", r.load_bytes, r.store_bytes),
        r.compute_cycles,
        r.dma_cycles,
        r.cycles,
        share
    );
    for l in layers {
        out += &format!(
            "{:<7}   {:<26} {}\n",
            "",
            cut(&l.name, 26),
            cut(&kind(l), 20)
        );
    }
    out
}

//! `tpusim report MODEL.onnx --chip bm1684x` for a transformer graph: every node timed as
//! a global layer of the NPU (`tpusim_planner::nd_global`), the way TPU-MLIR runs the ops
//! it does not group. Layer-group planning of transformers is not there yet, so the total
//! is the ungrouped one.

use super::onnx::{bind, OnnxArgs};
use crate::fmt::bytes;
use crate::util::print_json;
use anyhow::{anyhow, Context, Result};
use tpusim_graph::nd::{import_onnx, Work};
use tpusim_planner::nd_global::{time_nd_graph, NdLayer};
use tpusim_planner::NpuChip;

/// Import and time it on `chip`.
pub fn run(a: &OnnxArgs, onnx: &[u8], chip: &NpuChip) -> Result<()> {
    let bind = bind(a)?;
    let dtype_name = a.dtype.as_deref().unwrap_or("f16");
    let dtype: tpusim_layout::ElementType = dtype_name
        .parse()
        .map_err(|_| anyhow!("unknown --dtype '{dtype_name}' (try f16, bf16, f32, int8)"))?;
    let g = import_onnx(onnx, &bind).with_context(|| format!("'{}'", a.path))?;
    let t = time_nd_graph(&g, chip, dtype)?;
    if a.json {
        return print_json(&serde_json::json!({
            "model": g.name,
            "inputs": g.inputs,
            "parameters": g.parameters,
            "grouping": "none: every layer a global layer",
            "npu": t,
        }));
    }
    let inputs: Vec<String> = g
        .inputs
        .iter()
        .map(|i| format!("{} {:?}", i.name, i.dims))
        .collect();
    let mut out = format!(
        "{} (ONNX transformer graph, {}) on {} in {}-bit data, every layer a global layer\n",
        g.name,
        inputs.join(", "),
        t.chip,
        t.dtype_bits
    );
    out += &format!(
        "  run               {} cycles = {:.4} ms at {:.0} MHz (no layer groups: an upper bound)\n",
        t.cycles,
        t.seconds * 1e3,
        t.clock_hz / 1e6
    );
    out += &format!(
        "  parts             compute {} cycles, transfers {} cycles, {} moved\n",
        t.compute_cycles,
        t.dma_cycles,
        bytes(t.bytes as f64)
    );
    out += &format!("  parameters        {}\n", g.parameters);
    if !a.summary {
        out += &layer_table(&t.layers, t.cycles);
    }
    print!("{}", crate::util::shown_text(&out));
    Ok(())
}

/// The first `n` characters of `s`.
fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn layer_table(layers: &[NdLayer], total: u64) -> String {
    let mut out = format!(
        "\n{:<28} {:<20} {:>12} {:>10} {:>10} {:>10} {:>6}\n",
        "node", "type", "bytes", "compute", "transfer", "cycles", "share"
    );
    for l in layers {
        let kind = match (l.f32, l.nodes, l.work) {
            (true, _, _) => format!("{} (f32)", l.op_type),
            (_, 2.., _) => format!("{} ({} nodes)", l.op_type, l.nodes),
            (_, _, Work::Matmul { .. }) => format!("{} (MAC)", l.op_type),
            _ => l.op_type.clone(),
        };
        out += &format!(
            "{:<28} {:<20} {:>12} {:>10} {:>10} {:>10} {:>5.1}%\n",
            cut(&l.name, 28),
            cut(&kind, 20),
            bytes(l.bytes as f64),
            l.compute_cycles,
            l.dma_cycles,
            l.cycles,
            100.0 * l.cycles as f64 / total.max(1) as f64
        );
    }
    out + "(TPU-MLIR's layers of the graph: norms, SiLU and biases fused, f32 parts between casts;\n each run alone from global memory, one after another)\n"
}

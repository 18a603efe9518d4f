//! A transformer layer on a systolic array: its GEMMs (the attention matmuls batched
//! over key/value heads and sequences) as a SCALE-Sim GEMM topology, and their
//! cycles on the chip's MXU from the analytic model, cross-checked against the
//! cycle-accurate engine where the engine can run them.

use crate::error::{bad, Result};
use crate::model::Model;
use crate::ops::{ops, Scope, Workload};
use serde::Serialize;
use std::fmt::Write;
use tpusim_chip::Chip;
use tpusim_systolic::{
    analyze, bf16, run_gemm, ArraySpec, Dataflow, Gemm, Matrix, RunOptions, Workload as Wl,
};

/// The largest GEMM (MACs of one instance) the engine cross-check runs.
pub const ENGINE_CHECK_MACS: u64 = 1 << 28;

/// Rows a topology may expand batched GEMMs into.
pub const MAX_TOPOLOGY_ROWS: u64 = 100_000;

/// One GEMM of a step: `batch` instances of `[m, k]·[k, n]`, run `count` times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerGemm {
    /// The operation (`qkv`, `scores`, …).
    pub name: String,
    /// Runs per step (layers, or 1).
    pub count: u64,
    /// The layers it runs in.
    pub scope: Scope,
    /// Independent instances per run.
    pub batch: u64,
    /// Rows of A.
    pub m: u64,
    /// Reduction length.
    pub k: u64,
    /// Columns of W.
    pub n: u64,
}

/// A GEMM's cycles on one MXU, and its time on the chip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GemmCycles {
    /// The GEMM.
    #[serde(flatten)]
    pub gemm: LayerGemm,
    /// Cycles of one instance (analytic model, weight stationary, double buffered).
    pub cycles: u64,
    /// Fraction of the array's PE-cycles doing useful MACs.
    pub utilization: f64,
    /// Cycles the cycle-accurate engine measured for one instance (when run).
    pub engine_cycles: Option<u64>,
    /// Seconds per step: `cycles × batch × count` spread over the chip's MXUs.
    pub time_s: f64,
}

/// The GEMMs of one step (per layer with `count` = layers, then the head).
pub fn gemms(model: &Model, w: &Workload) -> Result<Vec<LayerGemm>> {
    Ok(ops(model, w)?
        .into_iter()
        .filter_map(|o| {
            o.gemm.map(|g| LayerGemm {
                name: o.name.clone(),
                count: o.count,
                scope: o.scope,
                batch: g.batch,
                m: g.m,
                k: g.k,
                n: g.n,
            })
        })
        .collect())
}

/// One layer's GEMMs as a SCALE-Sim GEMM topology (`Layer, M, N, K,`; SCALE-Sim's
/// C\[M,N\] = A\[M,K\]·W\[K,N\]), batched GEMMs expanded one row per instance. With
/// a sliding window on some layers, the layer is one with full attention.
pub fn topology_csv(gemms: &[LayerGemm]) -> Result<String> {
    let full = gemms.iter().any(|g| g.scope == Scope::FullAttentionLayers);
    let in_layer = |g: &&LayerGemm| match g.scope {
        Scope::Layers => true,
        Scope::FullAttentionLayers => true,
        Scope::WindowedLayers => !full,
        Scope::Once => false,
    };
    let rows: u64 = gemms.iter().filter(in_layer).map(|g| g.batch).sum();
    if rows > MAX_TOPOLOGY_ROWS {
        return Err(bad(
            "--topology",
            rows,
            format!(
                "rows: one layer expands to more than {MAX_TOPOLOGY_ROWS}; use a smaller --batch"
            ),
        ));
    }
    let mut out = String::from("Layer, M, N, K,\n");
    for g in gemms.iter().filter(in_layer) {
        for i in 0..g.batch {
            let name = if g.batch > 1 {
                format!("{}.{i}", g.name)
            } else {
                g.name.clone()
            };
            let _ = writeln!(out, "{name}, {}, {}, {},", g.m, g.n, g.k);
        }
    }
    Ok(out)
}

fn array(chip: &Chip) -> Result<(ArraySpec, f64, f64)> {
    let side = chip.mxu_dim.ok_or_else(|| {
        bad(
            "--chip",
            &chip.name,
            "has no mxu_dim: not a systolic MXU chip",
        )
    })?;
    let clock = chip.clock_hz.or(chip.implied_clock_hz()).ok_or_else(|| {
        bad(
            "--chip",
            &chip.name,
            "has no clock_hz and no MXU figures to imply one",
        )
    })?;
    let arrays = f64::from(chip.mxus_per_core) * f64::from(chip.cores_per_chip);
    let spec = ArraySpec::new(u64::from(side), u64::from(side))
        .map_err(|e| bad("--chip", &chip.name, e))?;
    Ok((spec, clock, arrays))
}

/// Cycles of every GEMM on the chip's MXU; with `engine`, instances of at most
/// [`ENGINE_CHECK_MACS`] also run on the cycle-accurate engine (bf16 operands).
pub fn cycles(chip: &Chip, gemms: &[LayerGemm], engine: bool) -> Result<Vec<GemmCycles>> {
    let (spec, clock, arrays) = array(chip)?;
    let opts = RunOptions {
        dataflow: Dataflow::Ws,
        double_buffer: true,
    };
    gemms
        .iter()
        .map(|g| {
            let shape = Gemm::new(g.m, g.k, g.n).map_err(|e| bad("gemm", &g.name, e))?;
            let s =
                analyze(spec, &Wl::from_gemm(shape), opts).map_err(|e| bad("gemm", &g.name, e))?;
            let engine_cycles = if engine && shape.macs() <= ENGINE_CHECK_MACS {
                Some(engine_run(spec, opts, g)?)
            } else {
                None
            };
            let runs = (g.batch * g.count) as f64;
            Ok(GemmCycles {
                gemm: g.clone(),
                cycles: s.cycles,
                utilization: s.utilization,
                engine_cycles,
                time_s: s.cycles as f64 * runs / arrays / clock,
            })
        })
        .collect()
}

/// One instance through the engine with small deterministic bf16 values.
fn engine_run(spec: ArraySpec, opts: RunOptions, g: &LayerGemm) -> Result<u64> {
    let value = |i: usize, j: usize| bf16::from_f32(((i * 7 + j * 13) % 17) as f32 / 16.0 - 0.5);
    let a = Matrix::from_fn(g.m as usize, g.k as usize, value);
    let w = Matrix::from_fn(g.k as usize, g.n as usize, value);
    let run = run_gemm(spec, opts, &a, &w).map_err(|e| bad("gemm", &g.name, e))?;
    Ok(run.stats.cycles)
}

/// A transformer report with, when asked, its GEMMs timed on the systolic model and
/// cross-checked on the engine (what `tpusim report MODEL --systolic-cycles --json`
/// prints).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checked {
    /// The report.
    #[serde(flatten)]
    pub report: crate::tpu::TransformerReport,
    /// The GEMMs' cycles (with `systolic_cycles`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub systolic: Option<Vec<GemmCycles>>,
}

/// Time one step on `chip`, and its GEMMs on the systolic model and engine when
/// `systolic_cycles`.
pub fn report(model: &Model, chip: &Chip, w: &Workload, systolic_cycles: bool) -> Result<Checked> {
    let report = crate::tpu::report(model, chip, w)?;
    let systolic = if systolic_cycles {
        Some(cycles(chip, &gemms(model, w)?, true)?)
    } else {
        None
    };
    Ok(Checked { report, systolic })
}

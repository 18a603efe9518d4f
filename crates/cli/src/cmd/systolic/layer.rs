//! `tpusim systolic gemm` and `tpusim systolic conv`.

use super::ArrayArgs;
use crate::util::{print_json, write_atomic};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;
use tpusim_systolic as sy;
use tpusim_systolic::LayerOut;

/// How figures are computed.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Mode {
    /// Closed-form model: microseconds for any size.
    Analytic,
    /// Cycle-accurate engine on random i8 data (same figures, real products; limited
    /// to about 2e11 MACs).
    Cycle,
}

/// Arguments of `tpusim systolic gemm`.
#[derive(Args)]
pub struct GemmArgs {
    /// Rows of A and C (M), e.g. 512. Accepts 1e3-style numbers.
    #[arg(long)]
    pub m: String,
    /// Reduction length (K), e.g. 1024.
    #[arg(long)]
    pub k: String,
    /// Columns of W and C (N), e.g. 768.
    #[arg(long)]
    pub n: String,
    #[command(flatten)]
    pub array: ArrayArgs,
    /// analytic (default) or cycle (run the cycle-accurate engine).
    #[arg(long, value_enum, default_value = "analytic")]
    pub mode: Mode,
    /// Seed of the random operands in cycle mode.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Draw the array (PEs with their first fold's weights) and a cycle-by-cycle
    /// timeline of busy PEs into this SVG file (ws dataflow, arrays up to 32×32,
    /// up to 4096 cycles).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<std::path::PathBuf>,
    /// Print SCALE-Sim 3.0.0's compute figures for this GEMM instead of ours (its
    /// Total Cycles, Overall/Mapping/Compute Util %; no stalls, as in CALC mode).
    #[arg(long)]
    pub scalesim_compat: bool,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// The `--json` document of `gemm --scalesim-compat`.
#[derive(Serialize)]
struct CompatOut {
    model: &'static str,
    m: u64,
    k: u64,
    n: u64,
    rows: u64,
    cols: u64,
    dataflow: String,
    total_cycles: u64,
    overall_util_percent: f64,
    mapping_efficiency_percent: f64,
    compute_util_percent: f64,
    sram_ifmap_reads: u64,
    sram_filter_reads: u64,
    sram_ofmap_writes: u64,
}

fn scalesim_gemm(a: &GemmArgs, g: sy::Gemm, arr: sy::ArraySpec, o: sy::RunOptions) -> Result<()> {
    use sy::scalesim::{compat, config, topology::TopoLayer};
    // SRAMs too large to matter: only the compute columns are read
    let sram = [1 << 20; 3];
    let cfg = config::ScaleConfig::of_parts(arr.rows, arr.cols, o.dataflow.name(), sram, None, 10)?;
    let l = TopoLayer::gemm("gemm".into(), g.m, g.n, g.k);
    let r = compat::compute_report(&cfg, &l)?;
    let out = CompatOut {
        model: "scalesim-compat",
        m: g.m,
        k: g.k,
        n: g.n,
        rows: arr.rows,
        cols: arr.cols,
        dataflow: o.dataflow.name().into(),
        total_cycles: r.total_cycles,
        overall_util_percent: r.overall_util,
        mapping_efficiency_percent: r.mapping_efficiency,
        compute_util_percent: r.compute_util,
        sram_ifmap_reads: r.sram[0].count,
        sram_filter_reads: r.sram[1].count,
        sram_ofmap_writes: r.sram[2].count,
    };
    if a.json {
        return print_json(&out);
    }
    println!(
        "GEMM C[{},{}] = A[{},{}]·W[{},{}] as SCALE-Sim 3.0.0 counts it",
        g.m, g.n, g.m, g.k, g.k, g.n
    );
    println!(
        "  array {}x{}  dataflow {}",
        arr.rows, arr.cols, out.dataflow
    );
    println!("  {:<20} {:>16}", "Total Cycles", out.total_cycles);
    println!(
        "  {:<20} {:>16}",
        "Overall Util %",
        format!("{:.2}", out.overall_util_percent)
    );
    println!(
        "  {:<20} {:>16}",
        "Mapping Eff %",
        format!("{:.2}", out.mapping_efficiency_percent)
    );
    println!(
        "  {:<20} {:>16}",
        "Compute Util %",
        format!("{:.2}", out.compute_util_percent)
    );
    println!("  {:<20} {:>16}", "SRAM IFMAP reads", out.sram_ifmap_reads);
    println!(
        "  {:<20} {:>16}",
        "SRAM Filter reads", out.sram_filter_reads
    );
    println!(
        "  {:<20} {:>16}",
        "SRAM OFMAP writes", out.sram_ofmap_writes
    );
    Ok(())
}

/// Arguments of `tpusim systolic conv`.
#[derive(Args)]
pub struct ConvArgs {
    /// Input size H,W,C (pixels, pixels, channels), e.g. 56,56,64.
    #[arg(long)]
    pub ifmap: String,
    /// Filter size KH,KW,M (pixels, pixels, output channels), e.g. 3,3,128.
    #[arg(long)]
    pub filter: String,
    /// Stride (same in both directions).
    #[arg(long, default_value_t = 1)]
    pub stride: u64,
    /// Zero padding on each side (pixels).
    #[arg(long, default_value_t = 0)]
    pub pad: u64,
    /// Dilation of the filter (1 = dense).
    #[arg(long, default_value_t = 1)]
    pub dilation: u64,
    /// Channel groups (C and M must divide by it; C = M = groups is depthwise).
    #[arg(long, default_value_t = 1)]
    pub groups: u64,
    /// Images in the batch.
    #[arg(long, default_value_t = 1)]
    pub batch: u64,
    #[command(flatten)]
    pub array: ArrayArgs,
    /// analytic (default) or cycle (run the cycle-accurate engine).
    #[arg(long, value_enum, default_value = "analytic")]
    pub mode: Mode,
    /// Seed of the random operands in cycle mode.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn parse_count(text: &str, what: &str) -> Result<u64> {
    let v = crate::util::parse_quantity(text).with_context(|| format!("--{what}"))?;
    if v.fract() != 0.0 || v >= 1.8e19 {
        bail!("--{what} '{text}' must be a whole number");
    }
    Ok(v as u64)
}

pub(super) fn options(a: &ArrayArgs) -> Result<(sy::ArraySpec, sy::RunOptions)> {
    let arr = sy::ArraySpec::new(a.rows, a.cols)?;
    let df = sy::Dataflow::parse(&a.dataflow)?;
    Ok((
        arr,
        sy::RunOptions {
            dataflow: df,
            double_buffer: !a.no_double_buffer,
        },
    ))
}

/// SplitMix64: the CLI's deterministic operand generator.
pub(super) struct Rng(pub u64);
impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    pub(super) fn i8(&mut self) -> i8 {
        self.next() as u8 as i8
    }
    /// Uniform in [-1, 1).
    pub(super) fn unit(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

fn out(
    s: &sy::Stats,
    g: sy::Gemm,
    groups: u64,
    arr: sy::ArraySpec,
    o: sy::RunOptions,
    mode: Mode,
) -> LayerOut {
    let mode = if mode == Mode::Analytic {
        "analytic"
    } else {
        "cycle"
    };
    LayerOut::new(s, g, groups, arr, o, mode)
}

fn print_table(title: &str, o: &LayerOut) {
    println!("{title}");
    println!(
        "  array {}x{}  dataflow {}  double buffer {}  mode {}",
        o.rows,
        o.cols,
        o.dataflow,
        if o.double_buffer { "yes" } else { "no" },
        o.mode
    );
    let rows: [(&str, String); 12] = [
        ("cycles", o.cycles.to_string()),
        ("compute cycles", o.compute_cycles.to_string()),
        ("weight load cycles", o.weight_load_cycles.to_string()),
        ("MACs", o.macs.to_string()),
        ("busy PE cycles", o.busy_pe_cycles.to_string()),
        ("utilization", format!("{:.2} %", o.utilization * 100.0)),
        (
            "mapping efficiency",
            format!("{:.2} %", o.mapping_efficiency * 100.0),
        ),
        ("folds", o.folds.to_string()),
        ("SRAM reads (elems)", o.sram_reads.to_string()),
        ("SRAM writes (elems)", o.sram_writes.to_string()),
        ("DRAM reads (elems)", o.dram_reads.to_string()),
        ("DRAM writes (elems)", o.dram_writes.to_string()),
    ];
    for (k, v) in rows {
        println!("  {k:<20} {v:>16}");
    }
}

pub fn run_gemm(a: GemmArgs) -> Result<()> {
    let g = sy::Gemm::new(
        parse_count(&a.m, "m")?,
        parse_count(&a.k, "k")?,
        parse_count(&a.n, "n")?,
    )?;
    let (arr, o) = options(&a.array)?;
    if a.scalesim_compat {
        return scalesim_gemm(&a, g, arr, o);
    }
    let stats = match a.mode {
        Mode::Analytic => sy::analyze(arr, &sy::Workload::from_gemm(g), o)?,
        Mode::Cycle => {
            sy::check_engine_limits(arr, g)?;
            let needed = sy::gemm_run_bytes::<i8>(arr, o.dataflow, g, false);
            sy::check_engine_memory(needed, crate::util::memory_budget())?;
            let mut rng = Rng(a.seed);
            let am = sy::Matrix::from_fn(g.m as usize, g.k as usize, |_, _| rng.i8());
            let wm = sy::Matrix::from_fn(g.k as usize, g.n as usize, |_, _| rng.i8());
            sy::run_gemm(arr, o, &am, &wm)?.stats
        }
    };
    if let Some(path) = &a.svg {
        let mut rng = Rng(a.seed);
        let svg = super::svg_for_gemm(arr, g, &mut rng)?;
        write_atomic(path, svg.as_bytes())?;
    }
    let lo = out(&stats, g, 1, arr, o, a.mode);
    if a.json {
        print_json(&lo)
    } else {
        print_table(
            &format!(
                "GEMM C[{},{}] = A[{},{}]·W[{},{}]",
                g.m, g.n, g.m, g.k, g.k, g.n
            ),
            &lo,
        );
        Ok(())
    }
}

fn triple(text: &str, what: &str) -> Result<[u64; 3]> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() != 3 {
        bail!("--{what} '{text}' must be three comma-separated numbers");
    }
    let mut v = [0u64; 3];
    for (i, p) in parts.iter().enumerate() {
        v[i] = parse_count(p.trim(), what)?;
    }
    Ok(v)
}

pub fn run_conv(a: ConvArgs) -> Result<()> {
    let [h, w, c] = triple(&a.ifmap, "ifmap")?;
    let [kh, kw, m] = triple(&a.filter, "filter")?;
    let conv = sy::Conv {
        batch: a.batch,
        in_h: h,
        in_w: w,
        in_c: c,
        kh,
        kw,
        out_c: m,
        stride_h: a.stride,
        stride_w: a.stride,
        pad_h: a.pad,
        pad_w: a.pad,
        dil_h: a.dilation,
        dil_w: a.dilation,
        groups: a.groups,
    };
    let (oh, ow) = conv.validate()?;
    let g = conv.gemm()?;
    let (arr, o) = options(&a.array)?;
    let wl = sy::Workload::from_conv(&conv)?;
    let stats = match a.mode {
        Mode::Analytic => sy::analyze(arr, &wl, o)?,
        Mode::Cycle => {
            sy::check_conv_engine_limits(arr, &conv)?;
            let needed = sy::conv_run_bytes::<i8>(arr, o.dataflow, &conv)?;
            sy::check_engine_memory(needed, crate::util::memory_budget())?;
            let mut rng = Rng(a.seed);
            let input: Vec<i8> = (0..conv.input_elems()).map(|_| rng.i8()).collect();
            let filter: Vec<i8> = (0..conv.filter_elems()).map(|_| rng.i8()).collect();
            sy::run_conv(arr, o, &conv, &input, &filter)?.stats
        }
    };
    let lo = out(&stats, g, conv.groups, arr, o, a.mode);
    if a.json {
        print_json(&lo)
    } else {
        print_table(
            &format!(
                "conv {}x{}x{} * {}x{}x{} (batch {}, stride {}, pad {}, dilation {}, groups {}) -> {}x{}x{}; im2col GEMM per group M={} K={} N={}",
                h, w, c, kh, kw, m, a.batch, a.stride, a.pad, a.dilation, a.groups, oh, ow, m, g.m, g.k, g.n
            ),
            &lo,
        );
        Ok(())
    }
}

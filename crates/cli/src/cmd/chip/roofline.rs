//! `tpusim roofline matmul|op|elementwise|reduce`: time of an operation against a
//! chip's compute and memory roofs, with `--svg` plots.

use super::args::{parse_array, rate, ChipFile};
use crate::fmt::{bytes as fbytes, sci, table, time};
use crate::util::{parse_quantity, print_json, write_atomic};
use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use serde::Serialize;
use std::path::PathBuf;
use tpusim_chip::roofline::{elementwise_counts, estimate, matmul, matmul_class, reduction_counts};
use tpusim_chip::svg::{roofline_svg, PlotPoint};
use tpusim_chip::{Chip, Matmul, RateClass, Roofline, Roofs, Source, Unit};
use tpusim_layout::ElementType;

/// Options every roofline verb shares.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// Chip name or alias (`tpusim chip list`), e.g. v5e, v6e, h100.
    #[arg(long)]
    chip: String,
    /// Where operands come from: `hbm` (HBM ↔ VMEM), `vmem` (VMEM → MXU, 22× HBM),
    /// or `host` (host DRAM over PCIe).
    #[arg(long, default_value = "hbm", value_name = "hbm|vmem|host")]
    from: String,
    /// Override the source's bandwidth, bytes/s (e.g. `--bw 1.5e10` for the book's
    /// PCIe figure).
    #[arg(long, value_name = "B/s")]
    bw: Option<String>,
    /// Override the compute peak, FLOP/s (e.g. `--peak 1e14`).
    #[arg(long, value_name = "FLOP/s")]
    peak: Option<String>,
    /// One JSON document with exact numbers (times in seconds).
    #[arg(long)]
    json: bool,
    /// Also write a log-log roofline plot of the chip with this op on it (SVG).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    #[command(flatten)]
    file: ChipFile,
}

/// Verbs of `tpusim roofline`.
#[derive(Subcommand)]
pub enum RooflineCmd {
    /// A matmul x[B,D] @ W[D,F] (optionally batched) on the MXU; weight dims are padded
    /// to the MXU size (128; 256 on v6e) and the critical batch size is reported.
    ///
    /// Example: `tpusim roofline matmul --chip v5e --b 512 --d 4096 --f 16384 --dtype int8`
    Matmul {
        /// Rows of the activations (batch size B).
        #[arg(long, value_name = "B")]
        b: String,
        /// Contracting dimension D.
        #[arg(long, value_name = "D")]
        d: String,
        /// Output features F.
        #[arg(long, value_name = "F")]
        f: String,
        /// Independent matmuls of this shape (batched matmul, every operand batched).
        #[arg(long, default_value = "1", value_name = "N")]
        batch: String,
        /// Element type of the activations (and, by default, weights and result):
        /// bf16, f32, int8, int4, fp8 (or any XLA name such as s8, f8e4m3fn).
        #[arg(long, default_value = "bf16")]
        dtype: String,
        /// Element type of the weights (default: --dtype).
        #[arg(long)]
        weights_dtype: Option<String>,
        /// Element type of the result (default: --dtype).
        #[arg(long)]
        out_dtype: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Any operation given as FLOPs and bytes.
    ///
    /// Example (minimum sampling latency of a 200e9-parameter bf16 model on 32 v4p):
    /// `tpusim roofline op --chip v4p --flops 0 --bytes 400e9 --chips 32`
    Op {
        /// Floating-point operations (`2.7e11`).
        #[arg(long)]
        flops: String,
        /// Bytes moved over the source link (`16e9`, `16GB`).
        #[arg(long)]
        bytes: String,
        /// Split the work evenly over this many chips (the estimate is per chip).
        #[arg(long, default_value = "1")]
        chips: String,
        /// Unit doing the arithmetic: `mxu` (matrix unit) or `vpu` (vector unit).
        #[arg(long, default_value = "mxu", value_name = "mxu|vpu")]
        unit: String,
        /// Dtype whose MXU rate applies: bf16, f32, int8, int4, fp8.
        #[arg(long, default_value = "bf16")]
        dtype: String,
        #[command(flatten)]
        common: Common,
    },
    /// An elementwise op on the vector unit: reads --inputs arrays, writes one.
    ///
    /// Example: `tpusim roofline elementwise --chip v5p --array bf16[8192,8192] --inputs 2`
    Elementwise {
        /// The array: `bf16[8192,8192]`.
        #[arg(long, value_name = "TYPE[DIMS]")]
        array: String,
        /// Arrays read (each the size of --array).
        #[arg(long, default_value = "1")]
        inputs: u64,
        /// Vector operations per output element.
        #[arg(long, default_value = "1")]
        flops_per_element: f64,
        #[command(flatten)]
        common: Common,
    },
    /// A sum-reduction over some axes on the vector unit.
    ///
    /// Example: `tpusim roofline reduce --chip v5e --array f32[4096,8192] --axes 1`
    Reduce {
        /// The input array: `f32[4096,8192]`.
        #[arg(long, value_name = "TYPE[DIMS]")]
        array: String,
        /// Axes reduced, comma-separated indices: `1` or `0,1`.
        #[arg(long)]
        axes: String,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Serialize)]
struct Out<'a, T: Serialize> {
    chip: &'a str,
    source: Source,
    unit: Unit,
    dtype: &'a str,
    #[serde(flatten)]
    estimate: T,
}

#[derive(Serialize)]
struct WithBatch {
    #[serde(flatten)]
    roofline: Roofline,
    critical_batch: Option<f64>,
    chips: u64,
}

fn count(flag: &str, text: &str) -> Result<u64> {
    let v = parse_quantity(text).with_context(|| flag.to_string())?;
    if v.fract() != 0.0 || !(1.0..1.8e19).contains(&v) {
        bail!("{flag} must be a whole number >= 1, got {text}");
    }
    Ok(v as u64)
}

fn dtype(flag: &str, text: &str) -> Result<ElementType> {
    let t: ElementType = text.parse().map_err(|e| anyhow!("{flag}: {e}"))?;
    RateClass::of(t).map_err(|e| anyhow!("{flag}: {e}"))?;
    Ok(t)
}

fn roofs(c: &Common, chip: &Chip, unit: Unit, class: RateClass) -> Result<Roofs> {
    let source = Source::parse(&c.from)?;
    let bw = c.bw.as_deref().map(|b| rate("--bw", b)).transpose()?;
    let peak = c.peak.as_deref().map(|p| rate("--peak", p)).transpose()?;
    Ok(Roofs::of(chip, unit, class, source, peak, bw)?)
}

fn plot(c: &Common, chip: &Chip, r: &Roofline, label: &str) -> Result<()> {
    let Some(path) = &c.svg else { return Ok(()) };
    let mut extra = Vec::new();
    if let Some(b) = &c.bw {
        extra.push((format!("--bw ({})", c.from), rate("--bw", b)?));
    }
    let achieved = if r.t_lower_s > 0.0 {
        r.flops / r.t_lower_s
    } else {
        0.0
    };
    let point = PlotPoint {
        label: label.to_string(),
        intensity: r.intensity,
        flops_per_s: achieved,
    };
    write_atomic(path, roofline_svg(chip, Some(&point), &extra).as_bytes())
}

fn print_roofline(r: &Roofline, extra: Vec<(&str, String)>) {
    let mut rows = vec![
        ("flops", sci(r.flops, "FLOP")),
        ("bytes", fbytes(r.bytes)),
        ("t_math", time(r.t_math_s)),
        ("t_comms", time(r.t_comms_s)),
        ("t_lower (max)", time(r.t_lower_s)),
        ("t_upper (sum)", time(r.t_upper_s)),
        ("intensity", sci(r.intensity, "FLOP/B")),
        ("critical_intensity", sci(r.critical_intensity, "FLOP/B")),
        ("bound", r.bound.clone()),
        ("peak", sci(r.peak_flops_per_s, "FLOP/s")),
        ("bandwidth", sci(r.bandwidth_bytes_per_s, "B/s")),
    ];
    rows.extend(extra);
    table(&rows);
}

/// Run one `tpusim roofline` verb.
pub fn run(cmd: RooflineCmd) -> Result<()> {
    match cmd {
        RooflineCmd::Matmul {
            b,
            d,
            f,
            batch,
            dtype: dt,
            weights_dtype,
            out_dtype,
            common,
        } => {
            let chip = common.file.resolve(&common.chip)?;
            let x = dtype("--dtype", &dt)?;
            let w = weights_dtype
                .as_deref()
                .map(|t| dtype("--weights-dtype", t))
                .transpose()?
                .unwrap_or(x);
            let o = out_dtype
                .as_deref()
                .map(|t| dtype("--out-dtype", t))
                .transpose()?
                .unwrap_or(x);
            let mm = Matmul {
                batch: count("--batch", &batch)?,
                b: count("--b", &b)?,
                d: count("--d", &d)?,
                f: count("--f", &f)?,
                x_dtype: x,
                w_dtype: w,
                out_dtype: o,
            };
            let class = matmul_class(&chip, x, w)?;
            let rf = roofs(&common, &chip, Unit::Mxu, class)?;
            let e = matmul(&chip, &mm, &rf)?;
            plot(
                &common,
                &chip,
                &e.roofline,
                &format!("matmul B={} D={} F={}", mm.b, mm.d, mm.f),
            )?;
            if common.json {
                return print_json(&Out {
                    chip: &chip.name,
                    source: Source::parse(&common.from)?,
                    unit: Unit::Mxu,
                    dtype: class.name(),
                    estimate: &e,
                });
            }
            let pad = match e.mxu_dim {
                Some(m) => format!(
                    "D {} -> {}, F {} -> {} (MXU {m}x{m})",
                    mm.d, e.padded_d, mm.f, e.padded_f
                ),
                None => "none (no systolic MXU)".into(),
            };
            print_roofline(
                &e.roofline,
                vec![
                    ("rate class", class.name().to_string()),
                    ("padding", pad),
                    (
                        "critical_batch",
                        e.critical_batch
                            .map(|c| format!("{c:.1} (compute bound when B > this)"))
                            .unwrap_or_else(|| "none: never compute bound at this D, F".into()),
                    ),
                ],
            );
            Ok(())
        }
        RooflineCmd::Op {
            flops,
            bytes,
            chips,
            unit,
            dtype: dt,
            common,
        } => {
            let chip = common.file.resolve(&common.chip)?;
            let unit = match unit.to_ascii_lowercase().as_str() {
                "mxu" => Unit::Mxu,
                "vpu" => Unit::Vpu,
                other => bail!("--unit: '{other}' is not mxu or vpu"),
            };
            let class = RateClass::of(dtype("--dtype", &dt)?)?;
            let n = count("--chips", &chips)?;
            let fl = parse_quantity(&flops).context("--flops")?;
            let by = parse_quantity(&bytes).context("--bytes")?;
            let rf = roofs(&common, &chip, unit, class)?;
            let (fl, by) = (fl / n as f64, by / n as f64);
            let r = estimate(fl, fl, by, &rf)?;
            plot(&common, &chip, &r, "op")?;
            if common.json {
                return print_json(&Out {
                    chip: &chip.name,
                    source: Source::parse(&common.from)?,
                    unit,
                    dtype: class.name(),
                    estimate: WithBatch {
                        roofline: r,
                        critical_batch: None,
                        chips: n,
                    },
                });
            }
            let note = if n > 1 {
                vec![("chips", format!("{n} (figures per chip)"))]
            } else {
                vec![]
            };
            print_roofline(&r, note);
            Ok(())
        }
        RooflineCmd::Elementwise {
            array,
            inputs,
            flops_per_element,
            common,
        } => {
            let chip = common.file.resolve(&common.chip)?;
            let (t, dims, _) = parse_array(&array)?;
            let elements = dims.iter().product::<u64>();
            let (fl, by) = elementwise_counts(t, elements, inputs, flops_per_element)?;
            vector_op(&common, &chip, t, fl, by as f64, "elementwise")
        }
        RooflineCmd::Reduce {
            array,
            axes,
            common,
        } => {
            let chip = common.file.resolve(&common.chip)?;
            let (t, dims, _) = parse_array(&array)?;
            let axes = axes
                .split(',')
                .map(|a| {
                    a.trim()
                        .parse::<usize>()
                        .map_err(|_| anyhow!("--axes: '{a}' is not an axis index"))
                })
                .collect::<Result<Vec<_>>>()?;
            let (fl, by, _) = reduction_counts(t, &dims, &axes)?;
            vector_op(&common, &chip, t, fl, by as f64, "reduce")
        }
    }
}

fn vector_op(
    common: &Common,
    chip: &Chip,
    t: ElementType,
    fl: f64,
    by: f64,
    label: &str,
) -> Result<()> {
    let class = RateClass::of(t)?;
    let rf = roofs(common, chip, Unit::Vpu, class)?;
    let r = estimate(fl, fl, by, &rf)?;
    plot(common, chip, &r, label)?;
    if common.json {
        return print_json(&Out {
            chip: &chip.name,
            source: Source::parse(&common.from)?,
            unit: Unit::Vpu,
            dtype: t.name(),
            estimate: WithBatch {
                roofline: r,
                critical_batch: None,
                chips: 1,
            },
        });
    }
    print_roofline(&r, vec![("unit", "vpu (vector unit)".into())]);
    Ok(())
}

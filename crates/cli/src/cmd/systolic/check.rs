//! `tpusim systolic check`: the engine against a plain matmul and the analytic model.

use super::layer::{options, parse_count, Rng};
use super::ArrayArgs;
use crate::util::print_json;
use anyhow::{bail, Result};
use clap::Args;
use serde::Serialize;
use tpusim_systolic as sy;

/// Arguments of `tpusim systolic check`.
#[derive(Args)]
pub struct CheckArgs {
    /// Rows of A and C (M).
    #[arg(long)]
    pub m: String,
    /// Reduction length (K).
    #[arg(long)]
    pub k: String,
    /// Columns of W and C (N).
    #[arg(long)]
    pub n: String,
    #[command(flatten)]
    pub array: ArrayArgs,
    /// Operand type: i8 (i32 accumulate), i32 (i64), bf16 (f32), f32.
    #[arg(long, default_value = "i8")]
    pub dtype: String,
    /// Seed of the random operands.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct CheckOut {
    dtype: String,
    m: u64,
    k: u64,
    n: u64,
    rows: u64,
    cols: u64,
    dataflow: String,
    double_buffer: bool,
    engine_cycles: u64,
    analytic_cycles: u64,
    cycles_match: bool,
    stats_match: bool,
    max_abs_error: f64,
    products_match: bool,
    engine_seconds: f64,
}

fn go<E: sy::Element>(
    arr: sy::ArraySpec,
    o: sy::RunOptions,
    a: &sy::Matrix<E>,
    w: &sy::Matrix<E>,
) -> Result<(sy::Stats, f64, f64)> {
    let t0 = std::time::Instant::now();
    let run = sy::run_gemm(arr, o, a, w)?;
    let dt = t0.elapsed().as_secs_f64();
    let reference = sy::reference_matmul(a, w)?;
    Ok((run.stats, sy::max_abs_diff(&run.c, &reference), dt))
}

/// Refuse a check whose operands, engine run and reference product need more memory
/// than the machine can give.
fn check_memory<E: sy::Element>(arr: sy::ArraySpec, o: sy::RunOptions, g: sy::Gemm) -> Result<()> {
    let needed = sy::gemm_run_bytes::<E>(arr, o.dataflow, g, true);
    Ok(sy::check_engine_memory(
        needed,
        crate::util::memory_budget(),
    )?)
}

pub fn run(a: CheckArgs) -> Result<()> {
    let g = sy::Gemm::new(
        parse_count(&a.m, "m")?,
        parse_count(&a.k, "k")?,
        parse_count(&a.n, "n")?,
    )?;
    let (arr, o) = options(&a.array)?;
    sy::check_engine_limits(arr, g)?;
    let (m, k, n) = (g.m as usize, g.k as usize, g.n as usize);
    let mut rng = Rng(a.seed);
    let (stats, err, dt, tol) = match a.dtype.as_str() {
        "i8" => {
            check_memory::<i8>(arr, o, g)?;
            let am = sy::Matrix::from_fn(m, k, |_, _| rng.i8());
            let wm = sy::Matrix::from_fn(k, n, |_, _| rng.i8());
            let (s, e, t) = go(arr, o, &am, &wm)?;
            (s, e, t, 0.0)
        }
        "i32" => {
            check_memory::<i32>(arr, o, g)?;
            let am = sy::Matrix::from_fn(m, k, |_, _| rng.next() as i32);
            let wm = sy::Matrix::from_fn(k, n, |_, _| rng.next() as i32);
            let (s, e, t) = go(arr, o, &am, &wm)?;
            (s, e, t, 0.0)
        }
        "bf16" => {
            check_memory::<sy::bf16>(arr, o, g)?;
            let am = sy::Matrix::from_fn(m, k, |_, _| sy::bf16::from_f32(rng.unit()));
            let wm = sy::Matrix::from_fn(k, n, |_, _| sy::bf16::from_f32(rng.unit()));
            let (s, e, t) = go(arr, o, &am, &wm)?;
            (s, e, t, 1e-5 * k as f64)
        }
        "f32" => {
            check_memory::<f32>(arr, o, g)?;
            let am = sy::Matrix::from_fn(m, k, |_, _| rng.unit());
            let wm = sy::Matrix::from_fn(k, n, |_, _| rng.unit());
            let (s, e, t) = go(arr, o, &am, &wm)?;
            (s, e, t, 1e-5 * k as f64)
        }
        other => bail!("--dtype '{other}' is not one of i8, i32, bf16, f32"),
    };
    let an = sy::analyze(arr, &sy::Workload::from_gemm(g), o)?;
    let co = CheckOut {
        dtype: a.dtype.clone(),
        m: g.m,
        k: g.k,
        n: g.n,
        rows: arr.rows,
        cols: arr.cols,
        dataflow: o.dataflow.name().into(),
        double_buffer: o.double_buffer,
        engine_cycles: stats.cycles,
        analytic_cycles: an.cycles,
        cycles_match: stats.cycles == an.cycles,
        stats_match: stats == an,
        max_abs_error: err,
        products_match: err <= tol,
        engine_seconds: dt,
    };
    if a.json {
        print_json(&co)?;
    } else {
        println!(
            "check {} GEMM M={} K={} N={} on {}x{} {} (double buffer {})",
            co.dtype,
            co.m,
            co.k,
            co.n,
            co.rows,
            co.cols,
            co.dataflow,
            if co.double_buffer { "yes" } else { "no" }
        );
        println!("  engine cycles      {:>12}", co.engine_cycles);
        println!(
            "  analytic cycles    {:>12}   {}",
            co.analytic_cycles,
            if co.stats_match {
                "all figures equal"
            } else {
                "DIFFERENT"
            }
        );
        println!(
            "  max |engine - matmul| {:>9.3e}   {}",
            co.max_abs_error,
            if co.products_match { "ok" } else { "MISMATCH" }
        );
        println!("  engine time        {:>12.4} s", co.engine_seconds);
    }
    if !co.products_match || !co.stats_match {
        return Err(crate::util::Internal(
            "engine disagrees with the reference (see above)".into(),
        )
        .into());
    }
    Ok(())
}

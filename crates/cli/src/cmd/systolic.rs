//! `tpusim systolic …`: GEMMs and convolutions on a systolic array (analytic model or
//! cycle-accurate engine), engine self-checks, and SCALE-Sim-style topology runs.

mod check;
mod layer;
mod run;

use anyhow::Result;
use clap::{Args, Subcommand};

/// Verbs of `tpusim systolic`.
#[derive(Subcommand)]
pub enum SystolicCmd {
    /// One GEMM C[M,N] = A[M,K]·W[K,N] on an R×C array: cycles, utilization, traffic.
    ///
    /// Example: tpusim systolic gemm --m 512 --k 768 --n 1024 --rows 128 --cols 128 (SCALE-Sim M,N,K = 512,1024,768)
    Gemm(layer::GemmArgs),
    /// One convolution (lowered to GEMMs by im2col) on an R×C array.
    ///
    /// Example: tpusim systolic conv --ifmap 56,56,64 --filter 3,3,64 --pad 1 --batch 8
    Conv(layer::ConvArgs),
    /// Run the cycle-accurate engine on random data, compare its product with a plain
    /// matmul and its cycles with the analytic model.
    ///
    /// Example: tpusim systolic check --m 100 --k 70 --n 50 --rows 16 --cols 16 --dtype bf16
    Check(check::CheckArgs),
    /// A SCALE-Sim-style run of a whole topology: writes COMPUTE_REPORT.csv,
    /// BANDWIDTH_REPORT.csv and DETAILED_ACCESS_REPORT.csv.
    ///
    /// Example: tpusim systolic run --config scale.cfg --topology resnet.csv --out results --scalesim-compat
    Run(run::RunArgs),
}

/// Array, dataflow and buffering options shared by `gemm`, `conv` and `check`.
#[derive(Args, Clone)]
pub struct ArrayArgs {
    /// PE rows R of the array (e.g. 128 for a TPU MXU, 4 for the seed's example).
    #[arg(long, default_value_t = 128)]
    pub rows: u64,
    /// PE columns C of the array.
    #[arg(long, default_value_t = 128)]
    pub cols: u64,
    /// Dataflow: ws (weight stationary, TPU/seed), os (output stationary), is (input
    /// stationary).
    #[arg(long, default_value = "ws")]
    pub dataflow: String,
    /// Expose every stationary-operand load (os: drain) instead of double-buffering it
    /// behind the previous fold's computation.
    #[arg(long)]
    pub no_double_buffer: bool,
}

/// Run one `tpusim systolic` verb.
pub fn run(cmd: SystolicCmd) -> Result<()> {
    match cmd {
        SystolicCmd::Gemm(a) => layer::run_gemm(a),
        SystolicCmd::Conv(a) => layer::run_conv(a),
        SystolicCmd::Check(a) => check::run(a),
        SystolicCmd::Run(a) => run::run(a),
    }
}

/// Random i8 operands through the traced ws engine, drawn as SVG.
fn svg_for_gemm(
    arr: tpusim_systolic::ArraySpec,
    g: tpusim_systolic::Gemm,
    rng: &mut layer::Rng,
) -> Result<String> {
    use tpusim_systolic as sy;
    if arr.pes() > sy::SVG_MAX_PES {
        anyhow::bail!(
            "--svg draws arrays of at most {} PEs (got {}x{})",
            sy::SVG_MAX_PES,
            arr.rows,
            arr.cols
        );
    }
    let folds = sy::fold_count(sy::Dataflow::Ws, arr, g);
    let est = folds.saturating_mul(g.m + 2 * arr.rows + arr.cols);
    if est > sy::SVG_MAX_CYCLES {
        anyhow::bail!(
            "--svg draws at most {} cycles; this GEMM needs about {est}",
            sy::SVG_MAX_CYCLES
        );
    }
    let am = sy::Matrix::from_fn(g.m as usize, g.k as usize, |_, _| (rng.next() % 10) as i8);
    let wm = sy::Matrix::from_fn(g.k as usize, g.n as usize, |_, _| (rng.next() % 10) as i8);
    let (_, traces) = sy::trace_ws(arr, &am, &wm)?;
    let (r, c) = (arr.rows as usize, arr.cols as usize);
    let weights: Vec<f64> = (0..r * c)
        .map(|p| {
            let (i, j) = (p / c, p % c);
            if i < wm.rows && j < wm.cols {
                wm.at(i, j) as f64
            } else {
                0.0
            }
        })
        .collect();
    Ok(sy::render_ws_svg(arr, &weights, &traces)?)
}

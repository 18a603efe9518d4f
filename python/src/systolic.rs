//! `tpusim.systolic`: GEMMs on an R×C array, analytic or cycle-accurate on real operands.

use crate::errors::{bad, detached, json};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use tpusim_systolic as sy;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(systolic_gemm_json, m)?)?;
    m.add_function(wrap_pyfunction!(systolic_run_i8, m)?)?;
    m.add_function(wrap_pyfunction!(systolic_run_f32, m)?)?;
    m.add_function(wrap_pyfunction!(systolic_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(scalesim_sweep, m)?)?;
    Ok(())
}

fn setup(
    rows: u64,
    cols: u64,
    dataflow: &str,
    double_buffer: bool,
) -> PyResult<(sy::ArraySpec, sy::RunOptions)> {
    Ok((
        sy::ArraySpec::new(rows, cols).map_err(bad)?,
        sy::RunOptions {
            dataflow: sy::Dataflow::parse(dataflow).map_err(bad)?,
            double_buffer,
        },
    ))
}

/// `tpusim systolic gemm --m M --k K --n N --json` (analytic model).
#[pyfunction]
#[pyo3(signature = (m, k, n, rows, cols, dataflow, double_buffer))]
fn systolic_gemm_json(
    m: u64,
    k: u64,
    n: u64,
    rows: u64,
    cols: u64,
    dataflow: &str,
    double_buffer: bool,
) -> PyResult<String> {
    let g = sy::Gemm::new(m, k, n).map_err(bad)?;
    let (arr, o) = setup(rows, cols, dataflow, double_buffer)?;
    let s = sy::analyze(arr, &sy::Workload::from_gemm(g), o).map_err(bad)?;
    json(&sy::LayerOut::new(&s, g, 1, arr, o, "analytic"))
}

/// Run the cycle-accurate engine on `a` (M×K) and `w` (K×N).
fn run<'py, E: sy::Element + numpy::Element, A: numpy::Element + Copy>(
    py: Python<'py>,
    a: PyReadonlyArray2<'py, E>,
    w: PyReadonlyArray2<'py, E>,
    arr: sy::ArraySpec,
    o: sy::RunOptions,
    widen: impl Fn(&E::Acc) -> A + Send + Sync,
) -> PyResult<(Bound<'py, PyArray2<A>>, String)> {
    let (m, k) = a.as_array().dim();
    let (k2, n) = w.as_array().dim();
    if k != k2 {
        return Err(bad(format!("a is {m}×{k} but w is {k2}×{n}: K must agree")));
    }
    let am = sy::Matrix::from_vec(m, k, a.as_array().iter().copied().collect()).map_err(bad)?;
    let wm = sy::Matrix::from_vec(k, n, w.as_array().iter().copied().collect()).map_err(bad)?;
    let g = sy::Gemm::new(m as u64, k as u64, n as u64).map_err(bad)?;
    sy::check_engine_limits(arr, g).map_err(bad)?;
    let r = detached(py, || sy::run_gemm(arr, o, &am, &wm))?;
    let out = json(&sy::LayerOut::new(&r.stats, g, 1, arr, o, "cycle"))?;
    let c: Vec<A> = r.c.data.iter().map(widen).collect();
    let c = c.into_pyarray(py).reshape([m, n])?;
    Ok((c, out))
}

/// The engine on int8 operands: the int32 product and the run's summary JSON.
#[pyfunction]
#[pyo3(signature = (a, w, rows, cols, dataflow, double_buffer))]
fn systolic_run_i8<'py>(
    py: Python<'py>,
    a: PyReadonlyArray2<'py, i8>,
    w: PyReadonlyArray2<'py, i8>,
    rows: u64,
    cols: u64,
    dataflow: &str,
    double_buffer: bool,
) -> PyResult<(Bound<'py, PyArray2<i32>>, String)> {
    let (arr, o) = setup(rows, cols, dataflow, double_buffer)?;
    run(py, a, w, arr, o, |x: &i32| *x)
}

/// The engine on float32 operands: the float32 product and the run's summary JSON.
#[pyfunction]
#[pyo3(signature = (a, w, rows, cols, dataflow, double_buffer))]
fn systolic_run_f32<'py>(
    py: Python<'py>,
    a: PyReadonlyArray2<'py, f32>,
    w: PyReadonlyArray2<'py, f32>,
    rows: u64,
    cols: u64,
    dataflow: &str,
    double_buffer: bool,
) -> PyResult<(Bound<'py, PyArray2<f32>>, String)> {
    let (arr, o) = setup(rows, cols, dataflow, double_buffer)?;
    run(py, a, w, arr, o, |x: &f32| *x)
}

/// The analytic model over many configurations at once (every core, GIL released):
/// cycles and utilization per row of the given columns; a row whose configuration is
/// invalid gets 0 cycles and NaN utilization.
#[pyfunction]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn systolic_sweep<'py>(
    py: Python<'py>,
    m: PyReadonlyArray1<'py, u64>,
    k: PyReadonlyArray1<'py, u64>,
    n: PyReadonlyArray1<'py, u64>,
    rows: PyReadonlyArray1<'py, u64>,
    cols: PyReadonlyArray1<'py, u64>,
    dataflow: &str,
    double_buffer: bool,
) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<f64>>)> {
    use rayon::prelude::*;
    let cols_in = [
        m.as_slice(),
        k.as_slice(),
        n.as_slice(),
        rows.as_slice(),
        cols.as_slice(),
    ];
    let [m, k, n, r, c] = cols_in.map(|x| x.map_err(bad));
    let (m, k, n, r, c) = (m?, k?, n?, r?, c?);
    let len = m.len();
    if [k.len(), n.len(), r.len(), c.len()]
        .iter()
        .any(|&l| l != len)
    {
        return Err(bad("m, k, n, rows and cols must have the same length"));
    }
    let df = sy::Dataflow::parse(dataflow).map_err(bad)?;
    let out: Vec<(u64, f64)> = detached(py, || -> Result<_, String> {
        Ok((0..len)
            .into_par_iter()
            .map(|i| {
                let run = || -> sy::Result<sy::Stats> {
                    let arr = sy::ArraySpec::new(r[i], c[i])?;
                    let g = sy::Gemm::new(m[i], k[i], n[i])?;
                    let o = sy::RunOptions {
                        dataflow: df,
                        double_buffer,
                    };
                    sy::analyze(arr, &sy::Workload::from_gemm(g), o)
                };
                run().map_or((0, f64::NAN), |s| (s.cycles, s.utilization))
            })
            .collect())
    })?;
    let (cy, ut): (Vec<u64>, Vec<f64>) = out.into_iter().unzip();
    Ok((cy.into_pyarray(py), ut.into_pyarray(py)))
}

/// One GEMM of a SCALE-Sim sweep: the array, its SRAMs and bandwidth.
#[derive(Debug, serde::Deserialize)]
struct ScaleSimRow {
    m: u64,
    k: u64,
    n: u64,
    rows: u64,
    cols: u64,
    dataflow: String,
    /// IFMAP, FILTER and OFMAP SRAM sizes, KiB.
    sram_kb: [u64; 3],
    /// USER mode at this many words/cycle; `None`: CALC mode.
    bandwidth: Option<u64>,
    /// USER mode: the IFMAP and FILTER interfaces' words/cycle.
    bank_bandwidth: u64,
}

/// What SCALE-Sim 3.0.0 reports for one GEMM (`--scalesim-compat`), or why not.
#[derive(Debug, Default, serde::Serialize)]
struct ScaleSimFigures {
    cycles: Option<u64>,
    stall_cycles: Option<u64>,
    cycles_incl_prefetch: Option<i64>,
    utilization: Option<f64>,
    dram_ifmap_reads: Option<u64>,
    dram_filter_reads: Option<u64>,
    dram_ofmap_writes: Option<u64>,
    error: Option<String>,
}

fn scalesim_row(r: &ScaleSimRow) -> sy::Result<ScaleSimFigures> {
    use sy::scalesim::{compat, config::ScaleConfig, topology::TopoLayer};
    let cfg = ScaleConfig::of_parts(
        r.rows,
        r.cols,
        &r.dataflow,
        r.sram_kb,
        r.bandwidth,
        r.bank_bandwidth,
    )?;
    let rep = compat::layer_report(&cfg, &TopoLayer::gemm("gemm".into(), r.m, r.n, r.k))?;
    Ok(ScaleSimFigures {
        cycles: Some(rep.total_cycles),
        stall_cycles: Some(rep.stall_cycles),
        cycles_incl_prefetch: Some(rep.cycles_incl_prefetch),
        utilization: Some(rep.compute_util / 100.0),
        dram_ifmap_reads: Some(rep.dram[0].count),
        dram_filter_reads: Some(rep.dram[1].count),
        dram_ofmap_writes: Some(rep.dram[2].count),
        error: None,
    })
}

/// SCALE-Sim 3.0.0's numbers (`tpusim systolic run --scalesim-compat`) for many GEMMs
/// (a JSON list of rows: m, k, n, rows, cols, dataflow, sram_kb, bandwidth), on every
/// core with the GIL released; a JSON list of their figures, a row that SCALE-Sim
/// cannot run (or that exceeds the replay limits) keeping its reason in `error`.
#[pyfunction]
fn scalesim_sweep(py: Python<'_>, rows: &str) -> PyResult<String> {
    use rayon::prelude::*;
    let rows: Vec<ScaleSimRow> = serde_json::from_str(rows).map_err(bad)?;
    let out = detached(py, || -> Result<Vec<ScaleSimFigures>, String> {
        Ok(rows
            .par_iter()
            .map(|r| {
                scalesim_row(r).unwrap_or_else(|e| ScaleSimFigures {
                    error: Some(e.to_string()),
                    ..ScaleSimFigures::default()
                })
            })
            .collect())
    })?;
    json(&out)
}

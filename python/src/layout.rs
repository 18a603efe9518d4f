//! `tpusim.layout`: XLA shapes, sizes, TPU default tilings, data conversion, HLO padding.

use crate::errors::{bad, detached, json};
use numpy::{PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use tpusim_layout::{parse_valid, shape_info, ArrayShape, ElementType, Relayout, Shape, TpuGen};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(layout_info, m)?)?;
    m.add_function(wrap_pyfunction!(layout_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(layout_tpu_default, m)?)?;
    m.add_function(wrap_pyfunction!(layout_convert_plan, m)?)?;
    m.add_function(wrap_pyfunction!(layout_convert, m)?)?;
    m.add_function(wrap_pyfunction!(layout_hlo_padding, m)?)?;
    m.add_function(wrap_pyfunction!(layout_size, m)?)?;
    m.add_function(wrap_pyfunction!(bench_layout_size, m)?)?;
    m.add_function(wrap_pyfunction!(bench_layout_convert, m)?)?;
    Ok(())
}

fn array(text: &str) -> PyResult<ArrayShape> {
    match parse_valid(text).map_err(bad)? {
        Shape::Array(a) => Ok(a),
        _ => Err(bad(format!("'{text}' is not an array shape"))),
    }
}

/// `tpusim layout info SHAPE --json`: one object for an array, a list for a tuple.
#[pyfunction]
fn layout_info(shape: &str) -> PyResult<String> {
    let s = parse_valid(shape).map_err(bad)?;
    let infos = s
        .arrays()
        .iter()
        .map(|a| shape_info(a))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    match (&s, infos.as_slice()) {
        (_, []) => Err(bad(format!("'{shape}' holds no array"))),
        (Shape::Array(_), [one]) => json(one),
        _ => json(&infos),
    }
}

/// The shape as XLA prints it (validated).
#[pyfunction]
fn layout_normalize(shape: &str) -> PyResult<String> {
    Ok(parse_valid(shape).map_err(bad)?.to_string())
}

/// The layout XLA:TPU gives an array of `dtype` and `dims` on `generation`.
#[pyfunction]
fn layout_tpu_default(dtype: &str, dims: Vec<u64>, generation: &str) -> PyResult<String> {
    let t: ElementType = dtype.parse().map_err(|_| {
        bad(format!(
            "unknown element type '{dtype}' (try bf16, f32, s8)"
        ))
    })?;
    let gen: TpuGen = generation.parse().map_err(bad)?;
    Ok(tpusim_layout::tpu_default(t, &dims, gen)
        .map_err(bad)?
        .to_string())
}

/// (source bytes, destination bytes) of converting `frm` into `to`.
#[pyfunction]
fn layout_convert_plan(frm: &str, to: &str) -> PyResult<(u64, u64)> {
    let r = Relayout::new(&array(frm)?, &array(to)?).map_err(bad)?;
    Ok((r.src_bytes(), r.dst_bytes()))
}

/// Write the bytes of `src` (laid out as `frm`) into `dst` laid out as `to`, with the
/// GIL released. Both are flat byte views of the caller's arrays: no copy is made.
#[pyfunction]
fn layout_convert(
    py: Python<'_>,
    src: PyReadonlyArray1<'_, u8>,
    mut dst: PyReadwriteArray1<'_, u8>,
    frm: &str,
    to: &str,
) -> PyResult<()> {
    let r = Relayout::new(&array(frm)?, &array(to)?).map_err(bad)?;
    let src = src.as_slice().map_err(bad)?;
    let dst = dst.as_slice_mut().map_err(bad)?;
    if src.len() as u64 != r.src_bytes() || dst.len() as u64 != r.dst_bytes() {
        return Err(bad(format!(
            "{frm} holds {} bytes and {to} {} bytes; got {} and {}",
            r.src_bytes(),
            r.dst_bytes(),
            src.len(),
            dst.len()
        )));
    }
    detached(py, || r.run(src, dst))
}

/// Padding of every array in an HLO dump (`tpusim layout hlo`): arrays and skipped lines.
#[pyfunction]
fn layout_hlo_padding(text: &str) -> PyResult<String> {
    match tpusim_layout::hlo::padding(text) {
        Some(p) => json(&p),
        None => Err(bad("no HLO module found (expected a line 'HloModule …')")),
    }
}

fn size_of(shape: &str) -> Result<u64, String> {
    let a = match parse_valid(shape).map_err(|e| e.to_string())? {
        Shape::Array(a) => a,
        _ => return Err(format!("'{shape}' is not an array shape")),
    };
    tpusim_layout::sizes(&a)
        .map(|s| s.array_size_bytes)
        .map_err(|e| e.to_string())
}

/// Bytes XLA allocates for an array shape (its ArraySize).
#[pyfunction]
fn layout_size(shape: &str) -> PyResult<u64> {
    size_of(shape).map_err(bad)
}

/// Benchmark baseline (bench/python.py): seconds per `layout_size` call made from Rust.
#[pyfunction]
fn bench_layout_size(shape: &str, iters: u64) -> PyResult<f64> {
    let t = std::time::Instant::now();
    for _ in 0..iters {
        std::hint::black_box(size_of(std::hint::black_box(shape)).map_err(bad)?);
    }
    Ok(t.elapsed().as_secs_f64() / iters.max(1) as f64)
}

/// Benchmark baseline (bench/python.py): seconds of the in-memory conversion kernel on
/// Rust-owned buffers (the best of `iters` runs).
#[pyfunction]
fn bench_layout_convert(frm: &str, to: &str, iters: u64) -> PyResult<f64> {
    let r = Relayout::new(&array(frm)?, &array(to)?).map_err(bad)?;
    let src: Vec<u8> = (0..r.src_bytes()).map(|i| i as u8).collect();
    let mut dst = vec![0u8; r.dst_bytes() as usize];
    let mut best = f64::INFINITY;
    for _ in 0..iters.max(1) {
        let t = std::time::Instant::now();
        r.run(&src, &mut dst).map_err(bad)?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

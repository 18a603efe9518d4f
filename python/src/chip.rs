//! `tpusim.chip`: the chip database, rooflines, slices and collectives.

use crate::errors::{bad, json};
use pyo3::prelude::*;
use tpusim_chip::{Collective, RateClass, Slice, Source};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(chip_names, m)?)?;
    m.add_function(wrap_pyfunction!(chip_json, m)?)?;
    m.add_function(wrap_pyfunction!(chip_roofline, m)?)?;
    m.add_function(wrap_pyfunction!(chip_collective, m)?)?;
    m.add_function(wrap_pyfunction!(chip_slice, m)?)?;
    Ok(())
}

/// Names of the built-in chips.
#[pyfunction]
fn chip_names() -> PyResult<Vec<String>> {
    Ok(tpusim_chip::builtin()
        .map_err(bad)?
        .into_iter()
        .map(|c| c.name)
        .collect())
}

/// Every figure of one chip (its TOML fields).
#[pyfunction]
fn chip_json(name: &str) -> PyResult<String> {
    json(&tpusim_chip::lookup(name).map_err(bad)?)
}

/// The roofline of `flops` over `bytes` on `chip`'s MXUs at bf16, the bytes read from
/// `source` (hbm, vmem, pcie, ici).
#[pyfunction]
fn chip_roofline(name: &str, flops: f64, bytes: f64, source: &str) -> PyResult<String> {
    let chip = tpusim_chip::lookup(name).map_err(bad)?;
    let source = Source::parse(source).map_err(bad)?;
    json(&tpusim_chip::roofline(&chip, flops, bytes, source).map_err(bad)?)
}

/// `tpusim comm KIND CHIP SHAPE --axes AXES --bytes BYTES --json`: a collective over
/// mesh axes of a slice, with the chip's hop latency and ICI bandwidth.
#[pyfunction]
fn chip_collective(
    kind: &str,
    name: &str,
    shape: &str,
    axes: &str,
    bytes: f64,
) -> PyResult<String> {
    let chip = tpusim_chip::lookup(name).map_err(bad)?;
    let dims = tpusim_chip::parse_shape(shape).map_err(bad)?;
    let s = Slice::new(&chip, &dims).map_err(bad)?;
    let axes = s.parse_axes(axes).map_err(bad)?;
    let kind = Collective::parse(kind).map_err(bad)?;
    let e = tpusim_chip::collective(
        &s,
        kind,
        &axes,
        bytes,
        s.chip.hop_latency_s,
        s.chip.ici_bidi_bytes_per_s,
    )
    .map_err(bad)?;
    json(&e)
}

/// `tpusim slice info CHIP SHAPE --dtype DTYPE --json`: chips, hosts, peak, HBM, hops
/// and bisection of a slice (the chip's wraparound rule).
#[pyfunction]
fn chip_slice(name: &str, shape: &str, dtype: &str) -> PyResult<String> {
    let chip = tpusim_chip::lookup(name).map_err(bad)?;
    let dims = tpusim_chip::parse_shape(shape).map_err(bad)?;
    let s = Slice::new(&chip, &dims).map_err(bad)?;
    let t: tpusim_layout::ElementType = dtype.parse().map_err(|e| bad(format!("dtype: {e}")))?;
    let class = RateClass::of(t).map_err(bad)?;
    json(&s.info(class).map_err(bad)?)
}

//! `tpusim.lmem`: strides and addresses of a tensor in an NPU's local memory.

use crate::errors::{bad, json};
use pyo3::prelude::*;
use tpusim_lmem::{Chip, ElementIndex, ElementType, LocalLayout, Placement, TensorShape};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(lmem_strides, m)?)?;
    m.add_function(wrap_pyfunction!(lmem_address, m)?)?;
    Ok(())
}

fn placement(
    shape: &str,
    dtype: &str,
    layout: &str,
    start_npu: u64,
    start_addr: u64,
) -> PyResult<Placement> {
    let shape: TensorShape = shape.parse().map_err(|e| bad(format!("shape: {e}")))?;
    let dtype: ElementType = dtype.parse().map_err(|e| bad(format!("dtype: {e}")))?;
    let layout: LocalLayout = layout.parse().map_err(|e| bad(format!("layout: {e}")))?;
    Ok(Placement::at(shape, dtype, layout, start_npu, start_addr))
}

/// Strides (elements) of the tensor and its bytes per lane (local layouts).
#[pyfunction]
#[pyo3(signature = (chip, shape, dtype, layout, start_npu, start_addr))]
fn lmem_strides(
    chip: &str,
    shape: &str,
    dtype: &str,
    layout: &str,
    start_npu: u64,
    start_addr: u64,
) -> PyResult<String> {
    let chip = Chip::preset(chip).map_err(bad)?;
    let t = placement(shape, dtype, layout, start_npu, start_addr)?;
    t.validate(&chip).map_err(bad)?;
    let s = t.strides(&chip).map_err(bad)?;
    let lane_bytes = if t.layout.is_local() {
        Some(t.lane_bytes(&chip).map_err(bad)?)
    } else {
        None
    };
    json(&serde_json::json!({"strides": s, "lane_bytes": lane_bytes}))
}

/// `tpusim lmem addr … --json`: where element `index` lives.
#[pyfunction]
#[pyo3(signature = (chip, shape, dtype, layout, start_npu, start_addr, index))]
#[allow(clippy::too_many_arguments)]
fn lmem_address(
    chip: &str,
    shape: &str,
    dtype: &str,
    layout: &str,
    start_npu: u64,
    start_addr: u64,
    index: &str,
) -> PyResult<String> {
    let chip = Chip::preset(chip).map_err(bad)?;
    let t = placement(shape, dtype, layout, start_npu, start_addr)?;
    let idx = ElementIndex::parse(index).map_err(|e| bad(format!("index: {e}")))?;
    let a = t.address(&chip, &idx).map_err(bad)?;
    json(&serde_json::json!({
        "index": [idx.n, idx.c, idx.d, idx.h, idx.w],
        "lane": a.lane,
        "offset": a.offset,
        "bit": a.bit,
        "address": a.address,
    }))
}

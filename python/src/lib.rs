//! `tpusim._native`: the Rust side of the `tpusim` Python package. Each function takes
//! plain values, calls the same library crates the CLI calls, and returns what the CLI's
//! `--json` prints (as JSON text the Python side loads) or numpy arrays. Long work runs
//! with the GIL released. Errors are `tpusim.BadInput` (the input was wrong: the message
//! names it) or `tpusim.Error` (anything else, a caught panic included).

use pyo3::prelude::*;

mod chip;
mod errors;
mod layout;
mod llm;
mod lmem;
mod report;
mod systolic;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("BadInput", py.get_type::<errors::BadInput>())?;
    layout::register(m)?;
    report::register(m)?;
    chip::register(m)?;
    lmem::register(m)?;
    llm::register(m)?;
    systolic::register(m)?;
    Ok(())
}

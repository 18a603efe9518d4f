//! The package's exceptions and the one way every call reaches them.

use pyo3::create_exception;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

create_exception!(
    _native,
    Error,
    pyo3::exceptions::PyException,
    "Every tpusim error."
);
create_exception!(
    _native,
    BadInput,
    Error,
    "The input was wrong; the message names what and why."
);

/// A bad-input error with `message`.
pub fn bad(message: impl std::fmt::Display) -> PyErr {
    BadInput::new_err(message.to_string())
}

/// An internal error with `message`.
pub fn internal(message: impl std::fmt::Display) -> PyErr {
    Error::new_err(message.to_string())
}

/// Run `work` with the GIL released; its error is bad input, a panic an internal error.
pub fn detached<T: Send, E: std::fmt::Display + Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, E> + Send,
) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(work)))
        .map_err(|p| {
            internal(format!(
                "internal error (please report it): {}",
                panic_text(&p)
            ))
        })?
        .map_err(bad)
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

/// JSON text of a value (what the CLI's `--json` prints, compact).
pub fn json<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(internal)
}

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
    detached_judged(py, work, |_| false)
}

/// [`detached`] for work whose errors can be tpusim's own: those `is_internal` picks
/// are internal errors (`tpusim.Error`), the rest bad input (`tpusim.BadInput`).
pub fn detached_judged<T: Send, E: std::fmt::Display + Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, E> + Send,
    is_internal: fn(&E) -> bool,
) -> PyResult<T> {
    match py.detach(|| catch_unwind(AssertUnwindSafe(work))) {
        Err(p) => Err(internal(format!(
            "internal error (please report it): {}",
            panic_text(&p)
        ))),
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) if is_internal(&e) => {
            Err(internal(format!("internal error (please report it): {e}")))
        }
        Ok(Err(e)) => Err(bad(e)),
    }
}

/// An error message, and whether it is tpusim's own failure rather than bad input.
#[derive(Debug)]
pub struct Failure {
    /// The message.
    pub message: String,
    /// Whether it is tpusim's own failure.
    pub internal: bool,
}

impl Failure {
    /// A failure judged by its source's own rule.
    pub fn judged(message: impl std::fmt::Display, internal: bool) -> Failure {
        Failure {
            message: message.to_string(),
            internal,
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            message,
            internal: false,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
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

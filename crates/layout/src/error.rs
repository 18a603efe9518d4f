//! The crate's error type. Every message carries the offending input; parse and
//! validation errors also carry the 1-based column of the offending token.

/// Anything that can go wrong in this crate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// The text is not a shape in XLA's format.
    #[error("column {column}: {message} (at '{token}' in '{text}')")]
    Parse {
        /// 1-based column of the offending token.
        column: usize,
        /// The offending token (or `end of input`).
        token: String,
        /// What was expected or wrong.
        message: String,
        /// The whole input text.
        text: String,
    },
    /// The shape parses but breaks one of XLA's layout rules.
    #[error("column {column}: {message} (at '{token}' in '{text}')")]
    Invalid {
        /// 1-based column of the offending token (0 when the shape was not parsed
        /// from text).
        column: usize,
        /// The offending token as printed.
        token: String,
        /// Which rule is broken.
        message: String,
        /// The whole shape text.
        text: String,
    },
    /// The shape is valid XLA but this operation cannot handle it (e.g. `?` dims for a
    /// size, a tuple where an array is needed).
    #[error("{0}")]
    Unsupported(String),
    /// A size computation overflowed u64.
    #[error("size overflow: {0} does not fit in 64 bits")]
    Overflow(String),
    /// An index is outside the shape or the physical buffer.
    #[error("{0}")]
    OutOfRange(String),
    /// Data given for conversion does not match the layouts.
    #[error("{0}")]
    Data(String),
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, LayoutError>;

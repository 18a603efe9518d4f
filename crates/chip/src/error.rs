//! The one error type of this crate: every variant names the offending input.

use thiserror::Error;

/// What went wrong in a chip, roofline, slice, transfer or collective computation.
/// Every message carries the input at fault, so a caller can print it as is.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ChipError {
    /// No chip in the database has this name or alias.
    #[error("unknown chip '{given}' (known: {known})")]
    UnknownChip {
        /// The name asked for.
        given: String,
        /// Comma-separated names of the known chips.
        known: String,
    },
    /// A chip description (TOML) does not parse or does not fit the schema.
    #[error("chip file {origin}: {message}")]
    BadChipFile {
        /// Where the text came from (file name or built-in name).
        origin: String,
        /// What the parser or validator found.
        message: String,
    },
    /// A figure of a chip is out of range (not positive, not finite, inconsistent).
    #[error("chip '{chip}': field '{field}' {problem}")]
    BadFigure {
        /// Chip name.
        chip: String,
        /// TOML field name.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The chip lacks a figure that this computation needs.
    #[error("chip '{chip}' has no '{field}' figure, needed for {purpose}")]
    MissingFigure {
        /// Chip name.
        chip: String,
        /// TOML field name that is absent.
        field: String,
        /// What the figure was needed for.
        purpose: String,
    },
    /// A dtype this model has no compute rate class for.
    #[error("element type '{0}' has no compute rate class (use bf16, f32, int8, int4 or fp8)")]
    UnsupportedDtype(String),
    /// A slice shape string could not be parsed.
    #[error("bad slice shape '{given}': {problem}")]
    BadShape {
        /// The text given.
        given: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The slice does not fit the chip's pod or interconnect.
    #[error("slice {shape} does not fit {chip}: {problem}")]
    SliceDoesNotFit {
        /// The slice shape, e.g. `4x4x8`.
        shape: String,
        /// Chip name.
        chip: String,
        /// Why not.
        problem: String,
    },
    /// A chip coordinate is malformed or outside the slice.
    #[error("bad chip coordinate '{given}' for slice {shape}: {problem}")]
    BadCoordinate {
        /// The coordinate text or value given.
        given: String,
        /// The slice shape.
        shape: String,
        /// Why it is rejected.
        problem: String,
    },
    /// A mesh axis name is unknown or repeated.
    #[error("bad axis '{given}' for slice {shape}: {problem}")]
    BadAxis {
        /// The axis as given.
        given: String,
        /// The slice shape.
        shape: String,
        /// Why it is rejected.
        problem: String,
    },
    /// A numeric argument is out of its domain (negative, zero where not allowed, NaN).
    #[error("{what} must be {expected}, got {given}")]
    BadValue {
        /// What the value is.
        what: String,
        /// What would be accepted.
        expected: String,
        /// The value given.
        given: String,
    },
    /// An integer size computation overflowed u64.
    #[error("size overflow computing {0} (beyond 2^64)")]
    Overflow(String),
    /// A computed real figure left f64's range (user numbers at its edges).
    #[error("{0} overflows: the numbers given put it beyond f64's range (about 1.8e308); check their units")]
    FloatOverflow(String),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, ChipError>;

/// Check that a user-given real number is finite and strictly positive.
pub(crate) fn positive(what: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(ChipError::BadValue {
            what: what.to_string(),
            expected: "a finite number > 0".into(),
            given: format!("{v}"),
        })
    }
}

/// Check that a figure computed from user numbers is finite (`1e308 / 1e-300` is not).
pub(crate) fn computed(what: &str, v: f64) -> Result<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(ChipError::FloatOverflow(what.to_string()))
    }
}

/// Check that a user-given real number is finite and not negative.
pub(crate) fn non_negative(what: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(ChipError::BadValue {
            what: what.to_string(),
            expected: "a finite number >= 0".into(),
            given: format!("{v}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computed_refuses_what_left_f64() {
        assert_eq!(computed("t", 1.5).unwrap(), 1.5);
        for v in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e308 / 1e-300] {
            let e = computed("the compute time", v).unwrap_err().to_string();
            assert!(e.starts_with("the compute time overflows"), "{e}");
        }
    }
}

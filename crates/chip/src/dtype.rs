//! Compute-rate classes of element types: which peak FLOP/s figure of a chip applies
//! to an operation on that type, and how many bytes its elements take.

use crate::error::{ChipError, Result};
use serde::Serialize;
use tpusim_layout::ElementType;

/// The compute-rate class of an element type: the MXU peak differs per class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RateClass {
    /// bfloat16 (and f16, which TPUs run at the bf16 rate).
    Bf16,
    /// float32 at full precision (on TPUs: several bf16 passes).
    F32,
    /// 8-bit integers (s8, u8).
    Int8,
    /// 4-bit integers (s4, u4).
    Int4,
    /// 8-bit floats (every f8 variant) and f4.
    Fp8,
}

impl RateClass {
    /// The class of an element type; pred, wide integers, f64 and complex have none.
    pub fn of(t: ElementType) -> Result<RateClass> {
        use ElementType::*;
        Ok(match t {
            Bf16 | F16 => RateClass::Bf16,
            F32 => RateClass::F32,
            S8 | U8 => RateClass::Int8,
            S4 | U4 => RateClass::Int4,
            F8e5m2 | F8e4m3 | F8e4m3fn | F8e4m3b11fnuz | F8e3m4 | F8e5m2fnuz | F8e4m3fnuz
            | F8e8m0fnu | F6e2m3fn | F6e3m2fn | F4e2m1fn => RateClass::Fp8,
            other => return Err(ChipError::UnsupportedDtype(other.name().to_string())),
        })
    }

    /// Lower-case name as used in JSON and the chip TOML (`bf16`, `f32`, `int8`, …).
    pub fn name(self) -> &'static str {
        match self {
            RateClass::Bf16 => "bf16",
            RateClass::F32 => "f32",
            RateClass::Int8 => "int8",
            RateClass::Int4 => "int4",
            RateClass::Fp8 => "fp8",
        }
    }

    /// All classes, narrowest rate last is not implied; order used in listings.
    pub fn all() -> [RateClass; 5] {
        [
            RateClass::Bf16,
            RateClass::F32,
            RateClass::Int8,
            RateClass::Int4,
            RateClass::Fp8,
        ]
    }
}

/// Bytes of `elements` values of type `t`, packed (4-bit types take half a byte; the
/// total is rounded up to whole bytes). Errors on u64 overflow.
pub fn packed_bytes(t: ElementType, elements: u64) -> Result<u64> {
    let bits = elements
        .checked_mul(u64::from(t.bits()))
        .ok_or_else(|| ChipError::Overflow(format!("bytes of {elements} x {t}")))?;
    Ok(bits.div_ceil(8))
}

/// Bytes per element of `t` when packed, as a real number (0.5 for 4-bit types).
pub fn bytes_per_element(t: ElementType) -> f64 {
    f64::from(t.bits()) / 8.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_sizes() {
        assert_eq!(RateClass::of(ElementType::S4).unwrap(), RateClass::Int4);
        assert_eq!(
            RateClass::of(ElementType::F8e4m3fn).unwrap(),
            RateClass::Fp8
        );
        assert!(RateClass::of(ElementType::C64).is_err());
        assert_eq!(packed_bytes(ElementType::S4, 3).unwrap(), 2);
        assert_eq!(
            packed_bytes(ElementType::Bf16, 8 * 128 * 8192).unwrap(),
            16_777_216
        );
        assert!(packed_bytes(ElementType::F64, u64::MAX).is_err());
    }
}

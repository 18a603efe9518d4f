//! Element types of XLA shapes: names as XLA prints them, storage bits, and the common
//! aliases users type (`int8`, `fp16`, `float32`, …).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// An XLA primitive element type.
///
/// `bits()` is the storage width XLA uses for the type inside an array (pred is stored
/// as one byte although it carries one bit; sub-byte types occupy their bit width only
/// when a layout's `E(n)` says so — see [`ElementType::storage_bits`]).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum ElementType {
    Pred,
    S1,
    S2,
    S4,
    S8,
    S16,
    S32,
    S64,
    U1,
    U2,
    U4,
    U8,
    U16,
    U32,
    U64,
    F16,
    Bf16,
    F32,
    F64,
    C64,
    C128,
    F8e5m2,
    F8e4m3,
    F8e4m3fn,
    F8e4m3b11fnuz,
    F8e3m4,
    F8e5m2fnuz,
    F8e4m3fnuz,
    F8e8m0fnu,
    F6e2m3fn,
    F6e3m2fn,
    F4e2m1fn,
}

use ElementType::*;

/// Every element type with its canonical (XLA, lower-case) name and its bit width.
const TABLE: &[(ElementType, &str, u32)] = &[
    (Pred, "pred", 8),
    (S1, "s1", 1),
    (S2, "s2", 2),
    (S4, "s4", 4),
    (S8, "s8", 8),
    (S16, "s16", 16),
    (S32, "s32", 32),
    (S64, "s64", 64),
    (U1, "u1", 1),
    (U2, "u2", 2),
    (U4, "u4", 4),
    (U8, "u8", 8),
    (U16, "u16", 16),
    (U32, "u32", 32),
    (U64, "u64", 64),
    (F16, "f16", 16),
    (Bf16, "bf16", 16),
    (F32, "f32", 32),
    (F64, "f64", 64),
    (C64, "c64", 64),
    (C128, "c128", 128),
    (F8e5m2, "f8e5m2", 8),
    (F8e4m3, "f8e4m3", 8),
    (F8e4m3fn, "f8e4m3fn", 8),
    (F8e4m3b11fnuz, "f8e4m3b11fnuz", 8),
    (F8e3m4, "f8e3m4", 8),
    (F8e5m2fnuz, "f8e5m2fnuz", 8),
    (F8e4m3fnuz, "f8e4m3fnuz", 8),
    (F8e8m0fnu, "f8e8m0fnu", 8),
    (F6e2m3fn, "f6e2m3fn", 6),
    (F6e3m2fn, "f6e3m2fn", 6),
    (F4e2m1fn, "f4e2m1fn", 4),
];

/// Names people use outside XLA, mapped to XLA's types (lower-case keys).
const ALIASES: &[(&str, ElementType)] = &[
    ("bool", Pred),
    ("int4", S4),
    ("uint4", U4),
    ("int8", S8),
    ("i8", S8),
    ("uint8", U8),
    ("int16", S16),
    ("i16", S16),
    ("uint16", U16),
    ("int32", S32),
    ("i32", S32),
    ("uint32", U32),
    ("int64", S64),
    ("i64", S64),
    ("uint64", U64),
    ("fp16", F16),
    ("half", F16),
    ("float16", F16),
    ("bfloat16", Bf16),
    ("fp32", F32),
    ("float", F32),
    ("float32", F32),
    ("fp64", F64),
    ("double", F64),
    ("float64", F64),
    ("complex64", C64),
    ("complex128", C128),
    ("fp8", F8e4m3fn),
    ("fp8e4m3", F8e4m3fn),
    ("fp8e5m2", F8e5m2),
    ("fp4", F4e2m1fn),
];

/// Error for a name that is no element type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown element type '{0}' (expected an XLA type such as f32, bf16, s8, pred, f8e4m3fn)")]
pub struct UnknownElementType(pub String);

impl ElementType {
    /// All element types, in XLA's declaration order.
    pub fn all() -> impl Iterator<Item = ElementType> {
        TABLE.iter().map(|&(t, _, _)| t)
    }

    /// XLA's canonical lower-case name (`f32`, `bf16`, `pred`, …).
    pub fn name(self) -> &'static str {
        TABLE
            .iter()
            .find(|e| e.0 == self)
            .map(|e| e.1)
            .unwrap_or("?")
    }

    /// Bit width of one element as XLA stores it in an array without `E(n)`:
    /// pred is 8 (one byte), sub-byte types report their own width (1, 2 or 4) here —
    /// use [`ElementType::storage_bits`] for what an untiled, un-packed array occupies.
    pub fn bits(self) -> u32 {
        TABLE.iter().find(|e| e.0 == self).map(|e| e.2).unwrap_or(8)
    }

    /// Bits one element occupies in memory when no `E(n)` packing is given: sub-byte
    /// types occupy a whole byte, everything else its width.
    pub fn storage_bits(self) -> u32 {
        self.bits().max(8)
    }

    /// Bytes one element occupies in memory without packing (`storage_bits / 8`).
    pub fn storage_bytes(self) -> u64 {
        u64::from(self.storage_bits() / 8)
    }

    /// True for the sub-byte types (s1, s2, s4, u1, u2, u4, f6e2m3fn, f6e3m2fn, f4e2m1fn).
    pub fn is_sub_byte(self) -> bool {
        self.bits() < 8
    }

    /// True for floating-point types (including the f8/f4 families), false for
    /// integers, pred and complex.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            F16 | Bf16
                | F32
                | F64
                | F8e5m2
                | F8e4m3
                | F8e4m3fn
                | F8e4m3b11fnuz
                | F8e3m4
                | F8e5m2fnuz
                | F8e4m3fnuz
                | F8e8m0fnu
                | F6e2m3fn
                | F6e3m2fn
                | F4e2m1fn
        )
    }

    /// Parse an exact XLA type name, case-insensitive (`F32`, `bf16`); no aliases.
    pub fn from_xla_name(s: &str) -> Option<ElementType> {
        let lower = s.to_ascii_lowercase();
        TABLE.iter().find(|e| e.1 == lower).map(|e| e.0)
    }
}

impl FromStr for ElementType {
    type Err = UnknownElementType;

    /// Parse an XLA name (any case) or a common alias (`int8`, `fp16`, `float32`, …).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(t) = ElementType::from_xla_name(s) {
            return Ok(t);
        }
        let lower = s.to_ascii_lowercase();
        ALIASES
            .iter()
            .find(|a| a.0 == lower)
            .map(|a| a.1)
            .ok_or_else(|| UnknownElementType(s.to_string()))
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<ElementType> for String {
    fn from(t: ElementType) -> String {
        t.name().to_string()
    }
}

impl TryFrom<String> for ElementType {
    type Error = UnknownElementType;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_case_is_ignored() {
        for t in ElementType::all() {
            assert_eq!(t.name().parse::<ElementType>().unwrap(), t);
            assert_eq!(t.name().to_uppercase().parse::<ElementType>().unwrap(), t);
        }
        assert_eq!(ElementType::all().count(), TABLE.len());
    }

    #[test]
    fn widths_follow_the_spec() {
        assert_eq!(Pred.bits(), 8);
        assert_eq!(S4.bits(), 4);
        assert_eq!(S4.storage_bits(), 8);
        assert_eq!(C128.bits(), 128);
        assert_eq!(F4e2m1fn.bits(), 4);
        assert_eq!(Bf16.storage_bytes(), 2);
    }

    #[test]
    fn aliases_and_errors() {
        assert_eq!("int8".parse::<ElementType>().unwrap(), S8);
        assert_eq!("FP16".parse::<ElementType>().unwrap(), F16);
        let e = "f33".parse::<ElementType>().unwrap_err();
        assert!(e.to_string().contains("'f33'"));
    }
}

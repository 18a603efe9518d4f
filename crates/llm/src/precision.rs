//! Storage precisions of weights, KV caches, parameters and optimizer state.

use crate::error::{bad, Result};
use serde::Serialize;

/// How a tensor is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// 32-bit float.
    F32,
    /// bfloat16.
    Bf16,
    /// 8-bit float.
    Fp8,
    /// 8-bit integer.
    Int8,
    /// 4-bit integer.
    Int4,
    /// OCP Microscaling FP4: E2M1 values in blocks of 32 sharing one E8M0 scale
    /// (4.25 bits a value), as GPT-OSS ships its experts' matrices.
    Mxfp4,
}

/// Values sharing one scale in an MX block (OCP Microscaling Formats v1.0).
pub const MX_BLOCK: u64 = 32;

impl Precision {
    /// Parse `f32`/`fp32`/`float32`, `bf16`/`bfloat16`, `fp8`, `int8`/`s8`, `int4`/`s4`,
    /// `mxfp4`.
    pub fn parse(what: &str, text: &str) -> Result<Precision> {
        Ok(match text.trim().to_ascii_lowercase().as_str() {
            "f32" | "fp32" | "float32" => Precision::F32,
            "bf16" | "bfloat16" => Precision::Bf16,
            "fp8" | "f8" => Precision::Fp8,
            "int8" | "s8" | "i8" => Precision::Int8,
            "int4" | "s4" | "i4" => Precision::Int4,
            "mxfp4" => Precision::Mxfp4,
            _ => return Err(bad(what, text, "use f32, bf16, fp8, int8, int4 or mxfp4")),
        })
    }

    /// Bytes per element (0.5 for int4; 17/32 for mxfp4: half a byte a value and one
    /// scale byte a block of 32).
    pub fn bytes(self) -> f64 {
        match self {
            Precision::F32 => 4.0,
            Precision::Bf16 => 2.0,
            Precision::Fp8 | Precision::Int8 => 1.0,
            Precision::Int4 => 0.5,
            Precision::Mxfp4 => 0.5 + 1.0 / MX_BLOCK as f64,
        }
    }

    /// The element type of a block-scaled format's scales (mxfp4: `f8e8m0fnu`, one
    /// per [`MX_BLOCK`] values); `None` for the others.
    pub fn scale_type(self) -> Option<tpusim_layout::ElementType> {
        match self {
            Precision::Mxfp4 => Some(tpusim_layout::ElementType::F8e8m0fnu),
            _ => None,
        }
    }

    /// The XLA element type its values are stored as (fp8 as `f8e4m3fn`, mxfp4 as
    /// `f4e2m1fn`, its scales apart: [`Precision::scale_type`]).
    pub fn element_type(self) -> tpusim_layout::ElementType {
        use tpusim_layout::ElementType;
        match self {
            Precision::F32 => ElementType::F32,
            Precision::Bf16 => ElementType::Bf16,
            Precision::Fp8 => ElementType::F8e4m3fn,
            Precision::Int8 => ElementType::S8,
            Precision::Int4 => ElementType::S4,
            Precision::Mxfp4 => ElementType::F4e2m1fn,
        }
    }

    /// Lower-case name (`bf16`, `int8`, …).
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
            Precision::Int8 => "int8",
            Precision::Int4 => "int4",
            Precision::Mxfp4 => "mxfp4",
        }
    }
}

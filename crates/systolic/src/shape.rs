//! Problem and hardware shapes: the array, the dataflow, a GEMM and a convolution
//! (lowered to GEMMs by im2col).

use crate::error::{add, mul, zero, Result, SystolicError};
use serde::Serialize;

/// Which operand stays in the PEs while the others stream past.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dataflow {
    /// Weight stationary (the seed's and the TPU MXU's): W tiles sit in the PEs, rows of
    /// A stream in from the left, partial sums flow down.
    Ws,
    /// Output stationary: each PE owns one output `C[m][n]`; A streams right, W streams
    /// down, results drain after the reduction.
    Os,
    /// Input stationary: tiles of Aᵀ sit in the PEs, columns of W stream in from the
    /// left, partial sums (of Cᵀ) flow down.
    Is,
}

impl Dataflow {
    /// Parse `ws`, `os` or `is` (case-insensitive).
    pub fn parse(text: &str) -> Result<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "ws" => Ok(Dataflow::Ws),
            "os" => Ok(Dataflow::Os),
            "is" => Ok(Dataflow::Is),
            _ => Err(SystolicError::Dataflow(text.to_string())),
        }
    }
    /// The short lowercase name (`ws`, `os`, `is`).
    pub fn name(self) -> &'static str {
        match self {
            Dataflow::Ws => "ws",
            Dataflow::Os => "os",
            Dataflow::Is => "is",
        }
    }
    /// All three dataflows, in a fixed order.
    pub const ALL: [Dataflow; 3] = [Dataflow::Ws, Dataflow::Os, Dataflow::Is];
}

impl std::fmt::Display for Dataflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An R×C systolic array of processing elements (PEs), each doing one
/// multiply-accumulate per cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ArraySpec {
    /// Number of PE rows R (≥ 1).
    pub rows: u64,
    /// Number of PE columns C (≥ 1).
    pub cols: u64,
}

impl ArraySpec {
    /// An R×C array; both sides must be at least 1.
    pub fn new(rows: u64, cols: u64) -> Result<Self> {
        if rows == 0 {
            return Err(zero("array rows"));
        }
        if cols == 0 {
            return Err(zero("array columns"));
        }
        mul(rows, cols, "array PE count")?;
        Ok(ArraySpec { rows, cols })
    }
    /// Number of PEs, R·C.
    pub fn pes(&self) -> u64 {
        self.rows * self.cols
    }
}

/// A matrix product C\[M,N\] = A\[M,K\]·W\[K,N\] (SCALE-Sim's meaning of M, N, K).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Gemm {
    /// Rows of A and C (for a convolution: output pixels × batch).
    pub m: u64,
    /// Reduction length (for a convolution: kernel height · width · input channels).
    pub k: u64,
    /// Columns of W and C (for a convolution: output channels).
    pub n: u64,
}

impl Gemm {
    /// A GEMM with all three dimensions ≥ 1 and M·N·K representable in u64.
    pub fn new(m: u64, k: u64, n: u64) -> Result<Self> {
        for (v, w) in [(m, "GEMM M"), (k, "GEMM K"), (n, "GEMM N")] {
            if v == 0 {
                return Err(zero(w));
            }
        }
        mul(mul(m, k, "GEMM M·K")?, n, "GEMM M·K·N")?;
        Ok(Gemm { m, k, n })
    }
    /// Multiply-accumulates in the product, M·N·K.
    pub fn macs(&self) -> u64 {
        self.m * self.n * self.k
    }
}

/// A 2-D convolution (NHWC input, KH×KW filters), lowered to `groups` GEMMs by im2col:
/// M = batch · out_h · out_w, K = KH · KW · in_c / groups, N = out_c / groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Conv {
    /// Images in the batch.
    pub batch: u64,
    /// Input height (pixels, before padding).
    pub in_h: u64,
    /// Input width (pixels, before padding).
    pub in_w: u64,
    /// Input channels.
    pub in_c: u64,
    /// Filter height.
    pub kh: u64,
    /// Filter width.
    pub kw: u64,
    /// Output channels (number of filters).
    pub out_c: u64,
    /// Vertical stride.
    pub stride_h: u64,
    /// Horizontal stride.
    pub stride_w: u64,
    /// Zero padding added above and below (pixels, each side).
    pub pad_h: u64,
    /// Zero padding added left and right (pixels, each side).
    pub pad_w: u64,
    /// Vertical dilation (1 = dense filter).
    pub dil_h: u64,
    /// Horizontal dilation (1 = dense filter).
    pub dil_w: u64,
    /// Channel groups (1 = ordinary conv, in_c = out_c = groups: depthwise).
    pub groups: u64,
}

impl Conv {
    /// A dense, unpadded, stride-1 convolution of one image (set the other fields
    /// directly, then call [`Conv::validate`]).
    pub fn simple(in_h: u64, in_w: u64, in_c: u64, kh: u64, kw: u64, out_c: u64) -> Self {
        Conv {
            batch: 1,
            in_h,
            in_w,
            in_c,
            kh,
            kw,
            out_c,
            stride_h: 1,
            stride_w: 1,
            pad_h: 0,
            pad_w: 0,
            dil_h: 1,
            dil_w: 1,
            groups: 1,
        }
    }

    /// Check every field and return the output size (out_h, out_w).
    pub fn validate(&self) -> Result<(u64, u64)> {
        let named = [
            (self.batch, "batch"),
            (self.in_h, "input height"),
            (self.in_w, "input width"),
            (self.in_c, "input channels"),
            (self.kh, "filter height"),
            (self.kw, "filter width"),
            (self.out_c, "output channels"),
            (self.stride_h, "stride"),
            (self.stride_w, "stride"),
            (self.dil_h, "dilation"),
            (self.dil_w, "dilation"),
            (self.groups, "groups"),
        ];
        for (v, w) in named {
            if v == 0 {
                return Err(zero(w));
            }
        }
        if self.in_c % self.groups != 0 || self.out_c % self.groups != 0 {
            return Err(SystolicError::BadConv(format!(
                "{} input channels and {} output channels must both divide by {} groups",
                self.in_c, self.out_c, self.groups
            )));
        }
        let oh = out_size(
            self.in_h,
            self.kh,
            self.stride_h,
            self.pad_h,
            self.dil_h,
            "height",
        )?;
        let ow = out_size(
            self.in_w,
            self.kw,
            self.stride_w,
            self.pad_w,
            self.dil_w,
            "width",
        )?;
        let g = self.gemm_unchecked(oh, ow)?;
        mul(g.macs(), self.groups, "convolution MACs")?;
        mul(
            mul(
                mul(self.batch, self.in_h, "input size")?,
                self.in_w,
                "input size",
            )?,
            self.in_c,
            "input size",
        )?;
        Ok((oh, ow))
    }

    fn gemm_unchecked(&self, oh: u64, ow: u64) -> Result<Gemm> {
        let m = mul(mul(self.batch, oh, "conv M")?, ow, "conv M")?;
        let k = mul(
            mul(self.kh, self.kw, "conv K")?,
            self.in_c / self.groups,
            "conv K",
        )?;
        Gemm::new(m, k, self.out_c / self.groups)
    }

    /// The GEMM one group lowers to (all `groups` GEMMs have this shape).
    pub fn gemm(&self) -> Result<Gemm> {
        let (oh, ow) = self.validate()?;
        self.gemm_unchecked(oh, ow)
    }

    /// Elements of the (unpadded) input tensor, batch·H·W·C.
    pub fn input_elems(&self) -> u64 {
        self.batch * self.in_h * self.in_w * self.in_c
    }
    /// Elements of all filters, KH·KW·(in_c/groups)·out_c.
    pub fn filter_elems(&self) -> u64 {
        self.kh * self.kw * (self.in_c / self.groups) * self.out_c
    }
}

/// Output size along one axis: ⌊(in + 2·pad − dil·(k−1) − 1) / stride⌋ + 1.
fn out_size(input: u64, k: u64, stride: u64, pad: u64, dil: u64, axis: &str) -> Result<u64> {
    let padded = add(input, mul(2, pad, "padded input")?, "padded input")?;
    let span = add(mul(dil, k - 1, "dilated filter")?, 1, "dilated filter")?;
    if span > padded {
        return Err(SystolicError::BadConv(format!(
            "filter {axis} {k} (dilation {dil}, spanning {span}) is larger than the padded input {axis} {padded}"
        )));
    }
    Ok((padded - span) / stride + 1)
}

/// What runs on the array: `repeat` independent copies of one GEMM (a convolution with
/// `groups` groups is `groups` copies), one after another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Workload {
    /// The GEMM each copy computes.
    pub gemm: Gemm,
    /// How many copies (≥ 1).
    pub repeat: u64,
    /// Distinct operand elements the layer reads from DRAM at least once
    /// (A and W for a GEMM; input tensor and filters for a conv).
    pub unique_inputs: u64,
    /// Distinct result elements (C, or the output tensor).
    pub unique_outputs: u64,
}

impl Workload {
    /// One GEMM.
    pub fn from_gemm(gemm: Gemm) -> Self {
        Workload {
            gemm,
            repeat: 1,
            unique_inputs: (gemm.m * gemm.k).saturating_add(gemm.k * gemm.n),
            unique_outputs: gemm.m * gemm.n,
        }
    }
    /// A convolution, lowered by im2col into `groups` GEMMs.
    pub fn from_conv(conv: &Conv) -> Result<Self> {
        let gemm = conv.gemm()?;
        Ok(Workload {
            gemm,
            repeat: conv.groups,
            unique_inputs: conv.input_elems().saturating_add(conv.filter_elems()),
            unique_outputs: gemm.m * gemm.n * conv.groups,
        })
    }
    /// Total multiply-accumulates, repeat · M·N·K.
    pub fn macs(&self) -> u64 {
        self.gemm.macs() * self.repeat
    }
}

/// ⌈a / b⌉ for b ≥ 1.
pub(crate) fn ceil_div(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

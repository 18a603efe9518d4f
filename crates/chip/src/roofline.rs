//! Roofline estimates: time of an operation as the larger (lower bound) or the sum
//! (upper bound) of its compute time and the time to move its bytes over one link.
//!
//! `T_math = FLOPs / peak`, `T_comms = bytes / bandwidth`; the operation is compute
//! bound when `T_math ≥ T_comms`, i.e. when its arithmetic intensity (FLOPs per byte)
//! reaches the chip's critical intensity `peak / bandwidth`.

use crate::chip::Chip;
use crate::dtype::{bytes_per_element, packed_bytes, RateClass};
use crate::error::{computed, non_negative, positive, ChipError, Result};
use serde::Serialize;
use tpusim_layout::ElementType;

/// Where an operation's operands come from (and results go to).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// HBM ↔ VMEM, at `hbm_bytes_per_s`.
    Hbm,
    /// VMEM → MXU, at `hbm_bytes_per_s × vmem_bw_ratio`.
    Vmem,
    /// Host DRAM over PCIe, at `pcie_bytes_per_s`.
    Host,
}

impl Source {
    /// Name of the link that carries the bytes: `hbm`, `vmem` or `pcie` (the value of
    /// `bound` when this link, not compute, limits the operation).
    pub fn link(self) -> &'static str {
        match self {
            Source::Hbm => "hbm",
            Source::Vmem => "vmem",
            Source::Host => "pcie",
        }
    }

    /// Parse `hbm`, `vmem` or `host` (also `pcie`), case-insensitive.
    pub fn parse(s: &str) -> Result<Source> {
        match s.trim().to_ascii_lowercase().as_str() {
            "hbm" => Ok(Source::Hbm),
            "vmem" => Ok(Source::Vmem),
            "host" | "pcie" => Ok(Source::Host),
            _ => Err(ChipError::BadValue {
                what: "operand source".into(),
                expected: "hbm, vmem or host".into(),
                given: s.to_string(),
            }),
        }
    }

    /// Bandwidth of this source on `chip`, bytes/s.
    pub fn bandwidth(self, chip: &Chip) -> Result<f64> {
        match self {
            Source::Hbm => Ok(chip.hbm_bytes_per_s),
            Source::Host => Ok(chip.pcie_bytes_per_s),
            Source::Vmem => chip
                .vmem_bytes_per_s()
                .ok_or_else(|| ChipError::MissingFigure {
                    chip: chip.name.clone(),
                    field: "vmem_bw_ratio".into(),
                    purpose: "a roofline from VMEM (give the bandwidth with --bw)".into(),
                }),
        }
    }
}

/// Which unit does the arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// The matrix unit (MXU / tensor cores): peak per dtype.
    Mxu,
    /// The vector unit (elementwise ops, reductions): `vpu_flops_per_s`.
    Vpu,
}

impl Unit {
    /// Peak rate of this unit on `chip` for a rate class, operations/s.
    pub fn peak(self, chip: &Chip, class: RateClass) -> Result<f64> {
        match self {
            Unit::Mxu => Ok(chip.peak(class).ops_per_s),
            Unit::Vpu => chip
                .vpu_flops_per_s()
                .ok_or_else(|| ChipError::MissingFigure {
                    chip: chip.name.clone(),
                    field: "vpu_flops_per_s (or clock_hz and vpu_alus_per_lane)".into(),
                    purpose: "a vector-unit roofline (give the rate with --peak)".into(),
                }),
        }
    }
}

/// The roofs an estimate is made against: a compute peak and one link's bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Roofs {
    /// Compute peak, FLOP/s.
    pub peak_flops_per_s: f64,
    /// Bandwidth of the link carrying the bytes, bytes/s.
    pub bandwidth_bytes_per_s: f64,
    /// Name of that link (`hbm`, `vmem`, `pcie`, …).
    pub link: &'static str,
}

impl Roofs {
    /// The roofs of `chip` for a unit, dtype class and source; `peak` / `bw` override
    /// the chip's figures when given (the book's problems sometimes assume others).
    pub fn of(
        chip: &Chip,
        unit: Unit,
        class: RateClass,
        source: Source,
        peak: Option<f64>,
        bw: Option<f64>,
    ) -> Result<Roofs> {
        let peak_flops_per_s = match peak {
            Some(p) => positive("peak FLOP/s", p)?,
            None => unit.peak(chip, class)?,
        };
        let bandwidth_bytes_per_s = match bw {
            Some(b) => positive("bandwidth", b)?,
            None => source.bandwidth(chip)?,
        };
        Ok(Roofs {
            peak_flops_per_s,
            bandwidth_bytes_per_s,
            link: source.link(),
        })
    }

    /// FLOPs per byte at which compute time equals transfer time.
    pub fn critical_intensity(&self) -> f64 {
        self.peak_flops_per_s / self.bandwidth_bytes_per_s
    }
}

/// A roofline estimate (field names are the CLI's JSON contract).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Roofline {
    /// Useful floating-point operations.
    pub flops: f64,
    /// Bytes moved over the link.
    pub bytes: f64,
    /// Compute time, seconds (FLOPs the hardware executes / peak).
    pub t_math_s: f64,
    /// Transfer time, seconds (bytes / bandwidth).
    pub t_comms_s: f64,
    /// max(T_math, T_comms): perfect overlap.
    pub t_lower_s: f64,
    /// T_math + T_comms: no overlap.
    pub t_upper_s: f64,
    /// FLOPs per byte of this operation.
    pub intensity: f64,
    /// FLOPs per byte at which the chip turns compute bound.
    pub critical_intensity: f64,
    /// `compute` or the name of the limiting link.
    pub bound: String,
    /// Compute peak used, FLOP/s.
    pub peak_flops_per_s: f64,
    /// Bandwidth used, bytes/s.
    pub bandwidth_bytes_per_s: f64,
}

/// Roofline of `flops` useful FLOPs (of which the hardware executes `executed_flops`,
/// more when dimensions are padded) and `bytes` over the given roofs.
pub fn estimate(flops: f64, executed_flops: f64, bytes: f64, roofs: &Roofs) -> Result<Roofline> {
    non_negative("FLOPs", flops)?;
    non_negative("executed FLOPs", executed_flops)?;
    non_negative("bytes", bytes)?;
    let t_math_s = computed(
        "the compute time (FLOPs / peak)",
        executed_flops / roofs.peak_flops_per_s,
    )?;
    let t_comms_s = computed(
        "the transfer time (bytes / bandwidth)",
        bytes / roofs.bandwidth_bytes_per_s,
    )?;
    computed("the time without overlap", t_math_s + t_comms_s)?;
    let bound = if t_math_s >= t_comms_s && executed_flops > 0.0 {
        "compute".to_string()
    } else {
        roofs.link.to_string()
    };
    Ok(Roofline {
        flops,
        bytes,
        t_math_s,
        t_comms_s,
        t_lower_s: t_math_s.max(t_comms_s),
        t_upper_s: t_math_s + t_comms_s,
        intensity: if bytes > 0.0 {
            flops / bytes
        } else {
            f64::INFINITY
        },
        critical_intensity: roofs.critical_intensity(),
        bound,
        peak_flops_per_s: roofs.peak_flops_per_s,
        bandwidth_bytes_per_s: roofs.bandwidth_bytes_per_s,
    })
}

/// Roofline of a generic operation on `chip`: `flops` on the MXU at the bf16 rate
/// (use [`Roofs::of`] + [`estimate`] for other units, dtypes or overrides) with
/// `bytes` coming from `source`. The entry point for callers that already counted.
pub fn roofline(chip: &Chip, flops: f64, bytes: f64, source: Source) -> Result<Roofline> {
    let roofs = Roofs::of(chip, Unit::Mxu, RateClass::Bf16, source, None, None)?;
    estimate(flops, flops, bytes, &roofs)
}

/// A matmul `[batch] × [B, D] @ [D, F] → [B, F]` with its operand types.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Matmul {
    /// Independent matmuls (batched matmul); 1 for a plain one.
    pub batch: u64,
    /// Rows of the activations (the batch size B of the book).
    pub b: u64,
    /// Contracting dimension.
    pub d: u64,
    /// Output features.
    pub f: u64,
    /// Type of the activations x[B, D].
    pub x_dtype: ElementType,
    /// Type of the weights W[D, F].
    pub w_dtype: ElementType,
    /// Type of the result [B, F].
    pub out_dtype: ElementType,
}

/// A matmul's roofline with its padding and critical batch size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatmulEstimate {
    /// The roofline (FLOPs are the useful 2·batch·B·D·F; T_math uses padded dims).
    #[serde(flatten)]
    pub roofline: Roofline,
    /// Rate class the MXU runs at (the slower of the two operand types).
    pub rate_class: RateClass,
    /// MXU side the weight dims are padded to (None: no padding modelled).
    pub mxu_dim: Option<u32>,
    /// D rounded up to a multiple of the MXU side.
    pub padded_d: u64,
    /// F rounded up to a multiple of the MXU side.
    pub padded_f: u64,
    /// FLOPs the MXU executes including padding.
    pub padded_flops: f64,
    /// Bytes of x, W and the result.
    pub x_bytes: u64,
    /// Bytes of the weights.
    pub w_bytes: u64,
    /// Bytes of the result.
    pub out_bytes: u64,
    /// Smallest B (real) at which this matmul is compute bound for its D and F on
    /// these roofs; None when no batch size makes it compute bound.
    pub critical_batch: Option<f64>,
}

fn round_up(v: u64, m: u64) -> Result<u64> {
    v.div_ceil(m)
        .checked_mul(m)
        .ok_or_else(|| ChipError::Overflow(format!("padding {v} to a multiple of {m}")))
}

fn mul3(a: u64, b: u64, c: u64, what: &str) -> Result<u64> {
    a.checked_mul(b)
        .and_then(|x| x.checked_mul(c))
        .ok_or_else(|| ChipError::Overflow(what.to_string()))
}

/// Rate class of a matmul with these operand types: the slower of the two.
pub fn matmul_class(chip: &Chip, x: ElementType, w: ElementType) -> Result<RateClass> {
    let cx = RateClass::of(x)?;
    let cw = RateClass::of(w)?;
    Ok(if chip.peak(cx).ops_per_s <= chip.peak(cw).ops_per_s {
        cx
    } else {
        cw
    })
}

/// Roofline of a matmul on `chip` against `roofs` (see [`Roofs::of`] with
/// [`matmul_class`]). Bytes are x + W + result, each read or written once.
pub fn matmul(chip: &Chip, mm: &Matmul, roofs: &Roofs) -> Result<MatmulEstimate> {
    for (what, v) in [("batch", mm.batch), ("B", mm.b), ("D", mm.d), ("F", mm.f)] {
        if v == 0 {
            return Err(ChipError::BadValue {
                what: format!("matmul dimension {what}"),
                expected: "at least 1".into(),
                given: "0".into(),
            });
        }
    }
    let rate_class = matmul_class(chip, mm.x_dtype, mm.w_dtype)?;
    let (padded_d, padded_f) = match chip.mxu_dim {
        Some(m) => (round_up(mm.d, u64::from(m))?, round_up(mm.f, u64::from(m))?),
        None => (mm.d, mm.f),
    };
    let n = mm.batch;
    let x_bytes = packed_bytes(mm.x_dtype, mul3(n, mm.b, mm.d, "x elements")?)?;
    let w_bytes = packed_bytes(mm.w_dtype, mul3(n, mm.d, mm.f, "W elements")?)?;
    let out_bytes = packed_bytes(mm.out_dtype, mul3(n, mm.b, mm.f, "result elements")?)?;
    let bytes = x_bytes
        .checked_add(w_bytes)
        .and_then(|s| s.checked_add(out_bytes))
        .ok_or_else(|| ChipError::Overflow("matmul bytes".into()))?;
    let (nf, bf, df, ff) = (n as f64, mm.b as f64, mm.d as f64, mm.f as f64);
    let (pdf, pff) = (padded_d as f64, padded_f as f64);
    let flops = 2.0 * nf * bf * df * ff;
    let padded_flops = 2.0 * nf * bf * pdf * pff;
    let roofline = estimate(flops, padded_flops, bytes as f64, roofs)?;
    // 2·B·Dp·Fp / R = (B·(D·sx + F·so) + D·F·sw) / W, solved for B.
    let (r, w) = (roofs.peak_flops_per_s, roofs.bandwidth_bytes_per_s);
    let (sx, sw, so) = (
        bytes_per_element(mm.x_dtype),
        bytes_per_element(mm.w_dtype),
        bytes_per_element(mm.out_dtype),
    );
    let denom = 2.0 * pdf * pff / r - (df * sx + ff * so) / w;
    let critical_batch = (denom > 0.0).then(|| df * ff * sw / w / denom);
    Ok(MatmulEstimate {
        roofline,
        rate_class,
        mxu_dim: chip.mxu_dim,
        padded_d,
        padded_f,
        padded_flops,
        x_bytes,
        w_bytes,
        out_bytes,
        critical_batch,
    })
}

/// Counts of an elementwise operation over `elements` values of type `dtype`:
/// `inputs` arrays read, one written, `flops_per_element` operations each.
/// Returns (FLOPs, bytes).
pub fn elementwise_counts(
    dtype: ElementType,
    elements: u64,
    inputs: u64,
    flops_per_element: f64,
) -> Result<(f64, u64)> {
    non_negative("FLOPs per element", flops_per_element)?;
    let one = packed_bytes(dtype, elements)?;
    let arrays = inputs
        .checked_add(1)
        .ok_or_else(|| ChipError::Overflow("input count".into()))?;
    let bytes = one
        .checked_mul(arrays)
        .ok_or_else(|| ChipError::Overflow(format!("bytes of {arrays} arrays of {one} B")))?;
    Ok((elements as f64 * flops_per_element, bytes))
}

/// Counts of a sum-reduction of an array `dims` of `dtype` over the axes `axes`:
/// one add per input element beyond the first of each output; reads the input,
/// writes the output. Returns (FLOPs, bytes, output elements).
pub fn reduction_counts(
    dtype: ElementType,
    dims: &[u64],
    axes: &[usize],
) -> Result<(f64, u64, u64)> {
    let mut input: u64 = 1;
    let mut output: u64 = 1;
    for (i, &d) in dims.iter().enumerate() {
        input = input
            .checked_mul(d)
            .ok_or_else(|| ChipError::Overflow("reduction input elements".into()))?;
        if !axes.contains(&i) {
            output = output.saturating_mul(d);
        }
    }
    if let Some(&a) = axes.iter().find(|&&a| a >= dims.len()) {
        return Err(ChipError::BadValue {
            what: "reduction axis".into(),
            expected: format!("below the rank {}", dims.len()),
            given: a.to_string(),
        });
    }
    let bytes = packed_bytes(dtype, input)?
        .checked_add(packed_bytes(dtype, output)?)
        .ok_or_else(|| ChipError::Overflow("reduction bytes".into()))?;
    Ok(((input - output.min(input)) as f64, bytes, output))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::lookup;

    #[test]
    fn problem_4_hbm_and_vmem() {
        let chip = lookup("v5e").unwrap();
        let mm = Matmul {
            batch: 1,
            b: 271,
            d: 4096,
            f: 16384,
            x_dtype: ElementType::S8,
            w_dtype: ElementType::S8,
            out_dtype: ElementType::S8,
        };
        let class = matmul_class(&chip, mm.x_dtype, mm.w_dtype).unwrap();
        assert_eq!(class, RateClass::Int8);
        let roofs = Roofs::of(&chip, Unit::Mxu, class, Source::Hbm, None, None).unwrap();
        let e = matmul(&chip, &mm, &roofs).unwrap();
        // exact: (D F / W) / (2 D F / R - (D + F) / W)
        let (d, f, r, w) = (4096.0, 16384.0, 3.94e14, 8.1e11);
        let exact = (d * f / w) / (2.0 * d * f / r - (d + f) / w);
        assert!((e.critical_batch.unwrap() - exact).abs() < 1e-9 * exact);
        assert!((exact - 262.7).abs() < 0.1);
        let roofs = Roofs::of(&chip, Unit::Mxu, class, Source::Vmem, None, None).unwrap();
        let e = matmul(&chip, &mm, &roofs).unwrap();
        assert!((e.critical_batch.unwrap() - 11.09).abs() < 0.01);
    }

    #[test]
    fn padding_to_the_mxu() {
        let chip = lookup("v6e").unwrap();
        let mm = Matmul {
            batch: 2,
            b: 8,
            d: 300,
            f: 100,
            x_dtype: ElementType::Bf16,
            w_dtype: ElementType::Bf16,
            out_dtype: ElementType::Bf16,
        };
        let roofs = Roofs::of(&chip, Unit::Mxu, RateClass::Bf16, Source::Hbm, None, None).unwrap();
        let e = matmul(&chip, &mm, &roofs).unwrap();
        assert_eq!((e.padded_d, e.padded_f), (512, 256));
        assert_eq!(e.roofline.flops, 2.0 * 2.0 * 8.0 * 300.0 * 100.0);
        assert_eq!(e.padded_flops, 2.0 * 2.0 * 8.0 * 512.0 * 256.0);
        assert_eq!(e.x_bytes, 2 * 8 * 300 * 2);
    }

    #[test]
    fn counts() {
        let (f, b) = elementwise_counts(ElementType::Bf16, 1000, 2, 1.0).unwrap();
        assert_eq!((f, b), (1000.0, 6000));
        let (f, b, o) = reduction_counts(ElementType::F32, &[4, 8], &[1]).unwrap();
        assert_eq!((f, b, o), (28.0, 4 * 32 + 4 * 4, 4));
        assert!(reduction_counts(ElementType::F32, &[4], &[1]).is_err());
    }
}

//! Strides and element storage: how far apart neighbouring elements are inside one
//! lane (local layouts) or in DDR (global), in storage slots.
//!
//! A *slot* is one element, except on chips with the 4N layout (bm1684) where an 8-bit
//! tensor packs 4 batches (16-bit: 2) into one 4-byte slot; there N is counted in groups
//! of 4 (or 2) batches.

use crate::chip::Chip;
use crate::error::{align_up, mul, LmemError, Result};
use crate::shape::{LocalLayout, TensorShape};
use serde::{Deserialize, Serialize};
use tpusim_layout::ElementType;

/// How one element type is stored on a chip in a given layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Storage {
    /// Bits of one element (4 for s4/u4, 8 for s8, 16 for f16, …; pred counts 8).
    pub elem_bits: u64,
    /// Bits of one storage slot: `elem_bits`, or 32 in the 4N layout.
    pub slot_bits: u64,
    /// Batches packed into one slot: 1, or 32 / elem_bits in the 4N layout.
    pub n_pack: u64,
    /// EU_NUM: slots per EU row, `eu_bytes · 8 / slot_bits` (an int4 element counts
    /// half a byte, so s4 has twice the EU_NUM of s8).
    pub eu_num: u64,
}

impl Storage {
    /// The storage of `dtype` on `chip` in `layout` (the 4N packing applies to local
    /// layouts of chips with `align_4n`).
    pub fn new(chip: &Chip, dtype: ElementType, layout: LocalLayout) -> Result<Storage> {
        let elem_bits = u64::from(dtype.bits());
        let (slot_bits, n_pack) = if chip.align_4n && layout.is_local() {
            match elem_bits {
                8 | 16 | 32 => (32, 32 / elem_bits),
                _ => {
                    return Err(LmemError::Unsupported4N {
                        chip: chip.name.clone(),
                        dtype,
                    })
                }
            }
        } else {
            (elem_bits, 1)
        };
        let eu_bits = mul(chip.eu_bytes, 8, "EU_BYTES in bits")?;
        if eu_bits % slot_bits != 0 || eu_bits < slot_bits {
            return Err(LmemError::EuNum {
                eu_bytes: chip.eu_bytes,
                dtype,
            });
        }
        Ok(Storage {
            elem_bits,
            slot_bits,
            n_pack,
            eu_num: eu_bits / slot_bits,
        })
    }

    /// Bytes `slots` storage slots occupy, rounded up to whole bytes.
    pub fn slot_bytes(&self, slots: u64) -> Result<u64> {
        Ok(mul(slots, self.slot_bits, "size in bits")?.div_ceil(8))
    }
}

/// EU_NUM of `dtype` on `chip`: elements (slots, in the 4N layout) one EU row holds.
pub fn eu_num(chip: &Chip, dtype: ElementType) -> Result<u64> {
    Ok(Storage::new(chip, dtype, LocalLayout::Aligned)?.eu_num)
}

/// Element strides (in storage slots) of a tensor. For local layouts they measure
/// distance inside one lane: `c` is the distance from channel c to channel c + NPU_NUM,
/// `n` from batch n to batch n + 1 (n + 4 or n + 2 batches in the 4N layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Strides {
    /// N_stride.
    pub n: u64,
    /// C_stride.
    pub c: u64,
    /// D_stride (H·H_stride; meaningful for 5-D tensors).
    pub d: u64,
    /// H_stride.
    pub h: u64,
    /// W_stride (always 1).
    pub w: u64,
}

/// Rows of a lane one batch occupies: ceil((start_npu + C) / NPU_NUM).
pub fn rows_per_batch(chip: &Chip, c: u64, start_npu: u64) -> Result<u64> {
    let chans = crate::error::add(start_npu, c, "start_npu + C")?;
    Ok(chans.div_ceil(chip.npu_num))
}

/// Error unless `start_npu` is a valid lane of `chip`.
pub(crate) fn check_start_npu(chip: &Chip, start_npu: u64) -> Result<()> {
    if start_npu >= chip.npu_num {
        return Err(LmemError::StartNpu {
            given: start_npu,
            npu_num: chip.npu_num,
        });
    }
    Ok(())
}

/// Strides of `shape` in `layout` when its channel 0 sits on lane `start_npu`
/// (ignored for `Global`). Local layouts:
/// aligned C = align_up(D·H·W, EU_NUM), compact C = D·H·W, line H = align_up(W, EU_NUM)
/// and C = D·H·H_stride; N = ceil((start_npu + C)/NPU_NUM)·C_stride.
pub fn strides(
    chip: &Chip,
    shape: &TensorShape,
    dtype: ElementType,
    layout: LocalLayout,
    start_npu: u64,
) -> Result<Strides> {
    shape.validate()?;
    let st = Storage::new(chip, dtype, layout)?;
    if layout == LocalLayout::Global {
        let h = shape.w;
        let d = mul(shape.h, h, "D_stride")?;
        let c = mul(shape.depth(), d, "C_stride")?;
        let n = mul(shape.c, c, "N_stride")?;
        return Ok(Strides { n, c, d, h, w: 1 });
    }
    check_start_npu(chip, start_npu)?;
    let h = match layout {
        LocalLayout::Line => align_up(shape.w, st.eu_num, "H_stride")?,
        _ => shape.w,
    };
    let d = mul(shape.h, h, "D_stride")?;
    let dhw = mul(shape.depth(), d, "C_stride")?;
    let c = match layout {
        LocalLayout::Aligned => align_up(dhw, st.eu_num, "C_stride")?,
        _ => dhw,
    };
    let n = mul(rows_per_batch(chip, shape.c, start_npu)?, c, "N_stride")?;
    Ok(Strides { n, c, d, h, w: 1 })
}

/// Lanes a tensor of `shape` touches: min(C, NPU_NUM).
pub fn lanes_used(chip: &Chip, shape: &TensorShape) -> u64 {
    shape.c.min(chip.npu_num)
}

/// Bytes of the tensor's region in each lane before rounding to EU_BYTES:
/// ceil(N / n_pack) · N_stride slots, in bytes (rounded up to a whole byte for s4).
/// This is what TPU-MLIR reports as a local tensor's `out_size`
/// (`Arch::get_tensor_lmem_bytes`) when the tensor starts on lane 0.
pub fn lane_bytes_unaligned(
    chip: &Chip,
    shape: &TensorShape,
    dtype: ElementType,
    layout: LocalLayout,
    start_npu: u64,
) -> Result<u64> {
    if !layout.is_local() {
        return Err(LmemError::NotLocal {
            what: "bytes per lane",
        });
    }
    let st = Storage::new(chip, dtype, layout)?;
    let s = strides(chip, shape, dtype, layout, start_npu)?;
    st.slot_bytes(mul(shape.n.div_ceil(st.n_pack), s.n, "bytes per lane")?)
}

/// Bytes each lane must reserve for the tensor in a local layout:
/// ceil(N / n_pack) · N_stride slots, in bytes, rounded up to EU_BYTES (so the next
/// tensor can start EU-aligned). For an s4 tensor a slot is half a byte.
pub fn lane_bytes(
    chip: &Chip,
    shape: &TensorShape,
    dtype: ElementType,
    layout: LocalLayout,
    start_npu: u64,
) -> Result<u64> {
    let bytes = lane_bytes_unaligned(chip, shape, dtype, layout, start_npu)?;
    align_up(bytes, chip.eu_bytes, "bytes per lane")
}

/// Bytes of a tensor in global (contiguous) memory: elements · bits / 8, rounded up.
pub fn global_bytes(shape: &TensorShape, dtype: ElementType) -> Result<u64> {
    shape.validate()?;
    Ok(mul(shape.elements()?, u64::from(dtype.bits()), "size in bits")?.div_ceil(8))
}

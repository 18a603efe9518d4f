//! A tensor placed in memory (shape, dtype, layout, start lane, start address): whether
//! it fits, which banks it spans, the address of any element and the inverse.

use crate::chip::Chip;
use crate::error::{add, mul, LmemError, Result};
use crate::shape::{ElementIndex, LocalLayout, TensorShape};
use crate::strides::{self, check_start_npu, Storage, Strides};
use serde::{Deserialize, Serialize};
use tpusim_layout::ElementType;

/// A tensor placed in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// The tensor's shape.
    pub shape: TensorShape,
    /// Its element type.
    pub dtype: ElementType,
    /// Its layout.
    pub layout: LocalLayout,
    /// Lane of channel 0 (local layouts; 0 for global).
    pub start_npu: u64,
    /// Start address in bytes: from the start of each lane (local layouts) or of global
    /// memory (`Global`). Aligned and line layouts need a multiple of EU_BYTES.
    pub start_addr: u64,
}

/// Where a tensor sits inside each lane and which banks it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneFit {
    /// Bytes reserved per lane.
    pub lane_bytes: u64,
    /// First byte (the start address).
    pub start: u64,
    /// One past the last reserved byte.
    pub end: u64,
    /// First bank touched.
    pub first_bank: u64,
    /// Last bank touched (inclusive).
    pub last_bank: u64,
}

/// The address of one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElementAddress {
    /// Lane holding the element (`None` in global memory).
    pub lane: Option<u64>,
    /// Byte offset from the start of the lane (local) or of global memory.
    pub offset: u64,
    /// Bit inside that byte where the element starts (non-zero only for sub-byte types).
    pub bit: u64,
    /// Flat address: lane · lane_bytes + offset (local), or the offset (global).
    pub address: u64,
}

/// Banks a byte range `[start, start + bytes)` of a lane spans: (first, last), inclusive.
/// An empty range spans the bank of `start`.
pub fn banks_spanned(chip: &Chip, start: u64, bytes: u64) -> Result<(u64, u64)> {
    let end = add(start, bytes, "end address")?;
    if end > chip.lane_bytes {
        return Err(LmemError::DoesNotFit {
            needed: bytes,
            start,
            available: chip.lane_bytes.saturating_sub(start),
            lane_bytes: chip.lane_bytes,
        });
    }
    let bb = chip.bank_bytes();
    Ok((start / bb, end.saturating_sub(1).max(start) / bb))
}

impl Placement {
    /// A placement at lane 0, address 0.
    pub fn new(shape: TensorShape, dtype: ElementType, layout: LocalLayout) -> Placement {
        Placement {
            shape,
            dtype,
            layout,
            start_npu: 0,
            start_addr: 0,
        }
    }

    /// A placement starting at lane `start_npu` (local layouts; a global layout has no
    /// lanes, so it starts at lane 0) and byte `start_addr`.
    pub fn at(
        shape: TensorShape,
        dtype: ElementType,
        layout: LocalLayout,
        start_npu: u64,
        start_addr: u64,
    ) -> Placement {
        Placement {
            shape,
            dtype,
            layout,
            start_npu: if layout.is_local() { start_npu } else { 0 },
            start_addr,
        }
    }

    /// Check the placement against `chip`: valid shape, start lane, EU_NUM and (for
    /// aligned and line layouts) an EU_BYTES-aligned start address.
    pub fn validate(&self, chip: &Chip) -> Result<()> {
        self.shape.validate()?;
        Storage::new(chip, self.dtype, self.layout)?;
        if self.layout.is_local() {
            check_start_npu(chip, self.start_npu)?;
            if matches!(self.layout, LocalLayout::Aligned | LocalLayout::Line)
                && self.start_addr % chip.eu_bytes != 0
            {
                return Err(LmemError::Unaligned {
                    addr: self.start_addr,
                    eu_bytes: chip.eu_bytes,
                    layout: self.layout.name(),
                });
            }
        }
        Ok(())
    }

    /// How elements are stored (EU_NUM, slot size, 4N packing).
    pub fn storage(&self, chip: &Chip) -> Result<Storage> {
        Storage::new(chip, self.dtype, self.layout)
    }

    /// Strides in slots (see [`strides::strides`]).
    pub fn strides(&self, chip: &Chip) -> Result<Strides> {
        strides::strides(chip, &self.shape, self.dtype, self.layout, self.start_npu)
    }

    /// Bytes reserved per lane (local) — see [`strides::lane_bytes`].
    pub fn lane_bytes(&self, chip: &Chip) -> Result<u64> {
        strides::lane_bytes(chip, &self.shape, self.dtype, self.layout, self.start_npu)
    }

    /// Where the tensor sits in each lane, or [`LmemError::DoesNotFit`].
    pub fn fit(&self, chip: &Chip) -> Result<LaneFit> {
        self.validate(chip)?;
        let lane_bytes = self.lane_bytes(chip)?;
        let (first_bank, last_bank) = banks_spanned(chip, self.start_addr, lane_bytes)?;
        Ok(LaneFit {
            lane_bytes,
            start: self.start_addr,
            end: self.start_addr + lane_bytes,
            first_bank,
            last_bank,
        })
    }

    /// True when the tensor fits in the lanes from its start address.
    pub fn fits(&self, chip: &Chip) -> Result<bool> {
        match self.fit(chip) {
            Ok(_) => Ok(true),
            Err(LmemError::DoesNotFit { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Address of element `idx`: lane = (start_npu + c) mod NPU_NUM, row =
    /// (start_npu + c) div NPU_NUM, offset = start_addr + (n·N_stride + row·C_stride +
    /// d·D_stride + h·H_stride + w) slots, address = lane · lane_bytes + offset.
    /// In the 4N layout n counts in groups of n_pack batches and the batch inside the
    /// group picks the byte inside the 4-byte slot.
    pub fn address(&self, chip: &Chip, idx: &ElementIndex) -> Result<ElementAddress> {
        Addresser::new(chip, self)?.address(idx)
    }

    /// The inverse of [`Placement::address`]: the element whose storage starts in byte
    /// `offset` of lane `lane` (for sub-byte types, the element starting at bit 0 of
    /// that byte; for wider types, the element covering the byte), or `None` when the
    /// byte is padding, before the tensor, or beyond it. For `Global`, `lane` must be 0
    /// and `offset` counts from the start of global memory.
    pub fn locate(&self, chip: &Chip, lane: u64, offset: u64) -> Result<Option<ElementIndex>> {
        self.validate(chip)?;
        let local = self.layout.is_local();
        if local {
            if lane >= chip.npu_num {
                return Err(LmemError::LaneOutOfRange {
                    lane,
                    npu_num: chip.npu_num,
                });
            }
            if offset >= chip.lane_bytes {
                return Err(LmemError::OffsetOutOfRange {
                    offset,
                    lane_bytes: chip.lane_bytes,
                });
            }
        } else if lane != 0 {
            return Err(LmemError::LaneOutOfRange { lane, npu_num: 1 });
        }
        let Some(rel) = offset.checked_sub(self.start_addr) else {
            return Ok(None);
        };
        let st = self.storage(chip)?;
        let s = self.strides(chip)?;
        let bits = mul(rel, 8, "offset in bits")?;
        let slot = bits / st.slot_bits;
        let sub_n = (bits % st.slot_bits) / st.elem_bits;
        let (group, r) = (slot / s.n, slot % s.n);
        let (row, r) = (r / s.c, r % s.c);
        let (d, r) = (r / s.d, r % s.d);
        let (h, w) = (r / s.h, r % s.h);
        let sh = &self.shape;
        if d >= sh.depth() || h >= sh.h || w >= sh.w {
            return Ok(None);
        }
        let n = add(mul(group, st.n_pack, "batch")?, sub_n, "batch")?;
        if n >= sh.n {
            return Ok(None);
        }
        let c = if local {
            let pos = add(mul(row, chip.npu_num, "channel")?, lane, "channel")?;
            match pos.checked_sub(self.start_npu) {
                Some(c) => c,
                None => return Ok(None),
            }
        } else {
            row
        };
        if c >= sh.c {
            return Ok(None);
        }
        Ok(Some(ElementIndex { n, c, d, h, w }))
    }
}

/// True when `shape` in `layout` from lane `start_npu` and address `start_addr` fits
/// in `chip`'s lanes (errors for invalid input, `Ok(false)` when it is too large).
pub fn fits(
    chip: &Chip,
    shape: &TensorShape,
    dtype: ElementType,
    layout: LocalLayout,
    start_npu: u64,
    start_addr: u64,
) -> Result<bool> {
    Placement {
        shape: *shape,
        dtype,
        layout,
        start_npu,
        start_addr,
    }
    .fits(chip)
}

/// Address of element `idx` of a placed tensor (see [`Placement::address`]).
pub fn address(chip: &Chip, tensor: &Placement, idx: &ElementIndex) -> Result<ElementAddress> {
    tensor.address(chip, idx)
}

/// Element at `(lane, offset)` of a placed tensor (see [`Placement::locate`]).
pub fn locate(
    chip: &Chip,
    tensor: &Placement,
    lane: u64,
    offset: u64,
) -> Result<Option<ElementIndex>> {
    tensor.locate(chip, lane, offset)
}

/// A placed tensor's address computation with everything that does not depend on the
/// element checked and precomputed once: use it to address many elements
/// ([`Placement::address`] builds one per call).
#[derive(Debug, Clone, Copy)]
pub struct Addresser {
    tensor: Placement,
    storage: Storage,
    strides: Strides,
    npu_num: u64,
    lane_bytes: u64,
}

impl Addresser {
    /// Validate `tensor` on `chip` and precompute its strides. Also checks that the
    /// whole tensor's offsets fit in u64, so [`Addresser::address`] needs no overflow
    /// checks.
    pub fn new(chip: &Chip, tensor: &Placement) -> Result<Addresser> {
        tensor.validate(chip)?;
        let storage = tensor.storage(chip)?;
        let strides = tensor.strides(chip)?;
        let extent = if tensor.layout.is_local() {
            strides::lane_bytes_unaligned(
                chip,
                &tensor.shape,
                tensor.dtype,
                tensor.layout,
                tensor.start_npu,
            )?
        } else {
            strides::global_bytes(&tensor.shape, tensor.dtype)?
        };
        let end = add(tensor.start_addr, extent, "end address")?;
        if tensor.layout.is_local() {
            mul(chip.npu_num, chip.lane_bytes, "address")?;
        }
        mul(end, 8, "offset in bits")?;
        Ok(Addresser {
            tensor: *tensor,
            storage,
            strides,
            npu_num: chip.npu_num,
            lane_bytes: chip.lane_bytes,
        })
    }

    /// Address of element `idx` (see [`Placement::address`]); errors for an index
    /// outside the shape or an element beyond the end of its lane.
    pub fn address(&self, idx: &ElementIndex) -> Result<ElementAddress> {
        let t = &self.tensor;
        idx.check(&t.shape)?;
        let (st, s) = (&self.storage, &self.strides);
        let (lane, row) = if t.layout.is_local() {
            let pos = t.start_npu + idx.c;
            (Some(pos % self.npu_num), pos / self.npu_num)
        } else {
            (None, idx.c)
        };
        // In range by construction: every term is below the extent checked in `new`.
        let slot = (idx.n / st.n_pack) * s.n + row * s.c + idx.d * s.d + idx.h * s.h + idx.w;
        let bits = slot * st.slot_bits + (idx.n % st.n_pack) * st.elem_bits;
        let offset = t.start_addr + bits / 8;
        let address = match lane {
            Some(l) => {
                if offset >= self.lane_bytes {
                    // The tensor overflows its lane: this element would land in the next lane.
                    return Err(LmemError::OffsetOutOfRange {
                        offset,
                        lane_bytes: self.lane_bytes,
                    });
                }
                l * self.lane_bytes + offset
            }
            None => offset,
        };
        Ok(ElementAddress {
            lane,
            offset,
            bit: bits % 8,
            address,
        })
    }
}

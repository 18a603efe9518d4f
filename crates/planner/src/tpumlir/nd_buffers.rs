//! The local buffers TPU-MLIR 1.30.2 gives a transformer layer inside a layer group:
//! bytes of every lane the layer keeps for its own work while it runs, beside its
//! input and output. A group whose values fit a lane without them may not fit with them,
//! and TPU-MLIR refuses it ("local memory allocate failed").
//!
//! Each rule is TPU-MLIR's `getBufferSize_bm1684x` where its source has one (softmax,
//! the activations, the heads-as-batch matmul), or read off the `buffer_size` it
//! allocates in the transformer zoo's `*_final.mlir` where the size comes from its
//! closed backend (LayerNorm, RMSNorm). `bench/tpumlir_tx_buffers.py` collects those
//! sizes (`tests/data/tx_zoo/local_buffers.jsonl`, bm1684x and bm1688), and
//! `tests/nd_buffers.rs` checks every one.
//!
//! Shapes are TPU-MLIR's local NCHW view of a value: channels over the lanes, each
//! plane's H·W elements aligned to EU_BYTES. Every other layer tpusim groups (Add, Mul,
//! MulConst, SubConst, Where, Cast, Slice, Concat, weight matmuls at 16 bits) has none.

use tpusim_graph::Shape4;

/// The lanes a group's values spread over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lanes {
    /// Lanes (NPU_NUM).
    pub count: u64,
    /// Bytes of one EU row (EU_BYTES): each plane is aligned to it.
    pub eu_bytes: u64,
}

impl Lanes {
    fn align(&self, bytes: u64) -> u64 {
        bytes
            .div_ceil(self.eu_bytes.max(1))
            .saturating_mul(self.eu_bytes.max(1))
    }

    /// Elements of `bytes` bytes each in one EU row (EU_NUM).
    fn eu_num(&self, bytes: u64) -> u64 {
        (self.eu_bytes / bytes.max(1)).max(1)
    }

    /// Rows of `c` channels one lane holds.
    fn per_lane(&self, c: u64) -> u64 {
        c.div_ceil(self.count.max(1))
    }
}

/// One value a layer reads or writes, as the group holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operand {
    /// The whole value.
    pub whole: Shape4,
    /// The slice of it one step of the group works on.
    pub slice: Shape4,
    /// Bytes of one element as the layer reads it (4 for what runs in f32).
    pub bytes: u64,
}

/// What a layer is, as far as its buffer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BufferKind {
    /// Along the last dim.
    Softmax,
    /// With a mean and a reciprocal deviation per row.
    LayerNorm,
    /// With a reciprocal root mean square per row.
    RmsNorm,
    /// An activation on TPU-MLIR's SFU (its `ActiveOp`).
    Active(ActiveMode),
    /// Attention's matmul with the heads as a batch (`hdim_is_batch`), right operand
    /// transposed or not.
    HeadsAsBatchMatmul,
    /// No buffer.
    None,
}

/// TPU-MLIR's `ActiveMode`s that tpusim's transformer layers lower to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActiveMode {
    /// Two work tensors and a 32-entry exp table: SiLU, sigmoid, tanh, exp.
    TwoWorkAndExpTable,
    /// Erf's: three work tensors, exp and erf tables.
    Erf,
    /// GELU's (erf form): four work tensors, exp and erf tables.
    Gelu,
    /// ln's: two work tensors and two tables.
    Log,
}

impl BufferKind {
    /// The kind of a layer of tpusim's TPU-MLIR form, by its op type.
    pub fn of(op_type: &str, heads_as_batch: bool) -> BufferKind {
        match op_type {
            "Softmax" => BufferKind::Softmax,
            "LayerNormalization" | "LayerNorm" => BufferKind::LayerNorm,
            "RMSNorm" => BufferKind::RmsNorm,
            "SiLU" | "Sigmoid" | "Tanh" | "Exp" => {
                BufferKind::Active(ActiveMode::TwoWorkAndExpTable)
            }
            "Erf" => BufferKind::Active(ActiveMode::Erf),
            "Gelu" => BufferKind::Active(ActiveMode::Gelu),
            "Log" => BufferKind::Active(ActiveMode::Log),
            "MatMul" if heads_as_batch => BufferKind::HeadsAsBatchMatmul,
            _ => BufferKind::None,
        }
    }
}

/// Bytes of every lane a layer of `kind` keeps for its work, reading `reads` (for a
/// matmul: left, right) and writing `out`.
pub fn buffer_bytes(kind: BufferKind, reads: &[Operand], out: &Operand, lanes: Lanes) -> u64 {
    let Some(x) = reads.first() else {
        return 0;
    };
    match kind {
        BufferKind::Softmax => softmax(x, lanes),
        BufferKind::LayerNorm => norm(x, 2, lanes),
        BufferKind::RmsNorm => norm(x, 1, lanes),
        BufferKind::Active(mode) => active(mode, x, lanes),
        BufferKind::HeadsAsBatchMatmul => match reads.get(1) {
            Some(right) => heads_as_batch_matmul(x, right, out, lanes),
            None => 0,
        },
        BufferKind::None => 0,
    }
}

/// `SoftmaxOp::getBufferSize_bm1684x` along the last dim: two f32 copies of a sample's
/// planes, its rows' maxima, and tables of 32 and 192 words.
fn softmax(x: &Operand, lanes: Lanes) -> u64 {
    let s = x.slice;
    let per_lane = lanes.per_lane(s.c);
    let planes = per_lane.saturating_mul(lanes.align(s.h.saturating_mul(s.w).saturating_mul(4)));
    let maxima = per_lane.saturating_mul(lanes.align(s.h.saturating_mul(x.bytes)));
    planes
        .saturating_mul(2)
        .saturating_add(maxima)
        .saturating_add(lanes.align(32 * 4) + lanes.align(192 * 4))
}

/// A norm over each plane (its last dim): two f32 copies of every plane a lane holds,
/// and `stats` EU rows per plane (LayerNorm's mean and deviation, RMSNorm's one).
/// Read off TPU-MLIR's allocations: [2, 96, 256] f16 takes 8,704 B on bm1684x (4 planes
/// a lane × (2 × 1,024 + 2 × 64)), RMSNorm [1, 256, 320] 10,496 B.
fn norm(x: &Operand, stats: u64, lanes: Lanes) -> u64 {
    let s = x.slice;
    let planes = s.n.saturating_mul(lanes.per_lane(s.c));
    let row = lanes.align(s.h.saturating_mul(s.w).saturating_mul(4));
    planes.saturating_mul(
        row.saturating_mul(2)
            .saturating_add(stats.saturating_mul(lanes.eu_bytes)),
    )
}

/// `ActiveOp::getBufferSize_bm1684x`: work tensors the size of one sample's input
/// planes on a lane, and coefficient tables of the input's type.
fn active(mode: ActiveMode, x: &Operand, lanes: Lanes) -> u64 {
    let s = x.slice;
    let tensor = lanes
        .per_lane(s.c)
        .saturating_mul(lanes.align(s.h.saturating_mul(s.w).saturating_mul(x.bytes)));
    let table = |entries: u64| lanes.align(entries * x.bytes);
    match mode {
        ActiveMode::TwoWorkAndExpTable => tensor.saturating_mul(2).saturating_add(table(32)),
        ActiveMode::Erf => tensor
            .saturating_mul(3)
            .saturating_add(table(32) + table(10)),
        ActiveMode::Gelu => tensor
            .saturating_mul(4)
            .saturating_add(table(32) + table(10)),
        ActiveMode::Log => tensor.saturating_add(table(32)).saturating_mul(2),
    }
}

/// `MatMulOp::getBufferSize_bm1684x` with the heads as a batch ([b, s, heads, d] values:
/// N = b, C = s, H = heads, W = d), left operand not transposed, at 16 or 32 bits: room
/// to rearrange an operand whose rows are not EU-aligned or span more than the lanes,
/// and the output's when it spans more than the lanes or is not aligned. Past 200 of
/// its `mm2` cycles the kernel works the lanes' rows at a time and rearranges less.
/// Nothing when a step holds a single head.
fn heads_as_batch_matmul(left: &Operand, right: &Operand, out: &Operand, lanes: Lanes) -> u64 {
    if left.slice.h <= 1 {
        return 0;
    }
    let (inb, outb) = (left.bytes, out.bytes);
    let unaligned =
        |elements: u64, bytes: u64| (elements.saturating_mul(bytes)) % lanes.eu_bytes.max(1) != 0;
    let rows = |c: u64, w: u64, bytes: u64| {
        bytes.saturating_mul(lanes.per_lane(c)).saturating_mul(
            w.div_ceil(lanes.eu_num(bytes))
                .saturating_mul(lanes.eu_num(bytes)),
        )
    };
    let out_rows = out.slice.c;
    let out_cols = out.whole.w;
    let (w0, c0) = (left.whole.w, left.whole.c);
    let (w1, c1) = (right.whole.w, right.whole.c);
    let mm2_cycles = w0
        .div_ceil(lanes.eu_num(inb))
        .saturating_mul(out_cols.div_ceil(4));
    let optimised = mm2_cycles > 200;
    let mut bytes = 0u64;
    if unaligned(w0, inb) || (c0 > lanes.count && !optimised) {
        bytes = bytes.saturating_add(rows(out_rows, w0, inb));
    }
    if unaligned(w1, inb) || c1 > lanes.count {
        bytes = bytes.saturating_add(rows(c1, w1, inb));
    }
    let held_rows = if optimised {
        out_rows.min(lanes.count)
    } else {
        out_rows
    };
    if held_rows > lanes.count || unaligned(out_cols, outb) {
        bytes = bytes.saturating_add(rows(held_rows, out_cols, outb));
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    const BM1684X: Lanes = Lanes {
        count: 64,
        eu_bytes: 64,
    };

    fn f16(n: u64, c: u64, h: u64, w: u64) -> Operand {
        let s = Shape4::new(n, c, h, w);
        Operand {
            whole: s,
            slice: s,
            bytes: 2,
        }
    }

    #[test]
    fn a_layer_of_no_kind_keeps_nothing() {
        let x = f16(1, 64, 128, 1);
        assert_eq!(buffer_bytes(BufferKind::None, &[x], &x, BM1684X), 0);
        assert_eq!(
            buffer_bytes(BufferKind::of("Add", false), &[x], &x, BM1684X),
            0
        );
        assert_eq!(
            buffer_bytes(BufferKind::of("MatMul", false), &[x, x], &x, BM1684X),
            0
        );
    }

    #[test]
    fn a_matmul_on_one_head_a_step_keeps_nothing() {
        let q = f16(1, 128, 1, 32);
        let out = f16(1, 128, 1, 128);
        assert_eq!(heads_as_batch_matmul(&q, &q, &out, BM1684X), 0);
    }
}

//! How the chip stores each tensor, and what that costs in bytes.
//!
//! **TPU** (layout crate): an activation (n, c, h, w) is the XLA array `[n, h, w, c]`
//! with the feature dimension c minor (on the 128 lanes, as the MXU contracts over it)
//! and w second-minor; a matrix activation (h = w = 1) is `[n, c]`. A conv filter
//! (o, i, kh, kw) is `[kh, kw, i, o]` (HWIO, o minor), a gemm weight (k, n) is `[k, n]`,
//! a per-channel vector (bias, batch-norm scale) is rank 1 `[c]`. The layout is what
//! XLA:TPU gives those dims (`tpu_default`: the generation's minor-to-major order and
//! tiles, checked against libtpu compiles in `tests/xla_reference.rs`), and the bytes
//! are XLA's allocation size (ArraySize). So a 3-channel NHWC input is stored
//! `{2,1,3,0:T(8,128)(2,1)}` (W·C on the tiles, 344,064 B at 224²), not with its 3
//! channels padded to 128 lanes.
//!
//! **NPU** (lmem crate): global memory is contiguous (bytes moved = logical bytes); in
//! local memory a tensor reserves, in every lane, its EU-aligned per-lane size (channels
//! over lanes, weights laid out as the planner lays them out), so its on-chip footprint
//! is that size × NPU_NUM.

use crate::error::{ReportError, Result};
use crate::machine::Machine;
use crate::model::LayoutPicture;
use tpusim_graph::{Graph, OpKind, TensorId, TensorKind};
use tpusim_layout::{sizes, tpu_default, ArrayShape, ElementType, TileDim};

/// Largest picture grid side; bigger grids are averaged down to this.
pub const PICTURE_MAX: usize = 48;

/// How one tensor is stored.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Text of the stored form (XLA shape with layout, or the LMEM layout).
    pub layout: String,
    /// Logical bytes (elements × element bytes).
    pub bytes_logical: u64,
    /// Bytes moved when the whole tensor goes between off-chip memory and the chip
    /// (TPU: the tiled allocation; NPU: logical, GMEM is contiguous).
    pub bytes_moved: u64,
    /// Bytes the stored form occupies (TPU: tiled allocation; NPU: LMEM footprint over
    /// all lanes).
    pub bytes_stored: u64,
    /// What to draw for it.
    pub shape: PictureShape,
}

/// The geometry a [`LayoutPicture`] is drawn from.
#[derive(Debug, Clone, Copy)]
pub enum PictureShape {
    /// TPU: the two minor physical dims (second-minor, minor) and the first tile.
    Tiles {
        /// Second-minor dim size.
        second: u64,
        /// Minor dim size.
        minor: u64,
        /// Tile rows.
        tile_rows: u64,
        /// Tile columns.
        tile_cols: u64,
        /// Product of the other (major) dims.
        slabs: u64,
    },
    /// NPU: channels over lanes, each channel region `used` of `stride` elements.
    Lanes {
        /// Channels.
        channels: u64,
        /// Lanes (NPU_NUM).
        lanes: u64,
        /// Elements per channel region actually used.
        used: u64,
        /// Elements per channel region reserved (C_stride).
        stride: u64,
    },
}

fn overflow(what: &str) -> ReportError {
    ReportError::Overflow(what.to_string())
}

/// Logical bytes of `elements` elements of `dtype`.
pub fn logical_bytes(elements: u64, dtype: ElementType) -> Result<u64> {
    let bits = u128::from(elements) * u128::from(dtype.storage_bits());
    u64::try_from(bits.div_ceil(8)).map_err(|_| overflow("logical bytes"))
}

/// The role a weight tensor plays, found from the op that uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Activation,
    ConvFilter,
    GemmWeight,
    Vector,
}

fn role(g: &Graph, t: TensorId) -> Role {
    let tensor = &g.tensors[t];
    if tensor.kind == TensorKind::Activation {
        return Role::Activation;
    }
    for op in &g.ops {
        if op.weights.first() == Some(&t) {
            match op.kind {
                OpKind::Conv(_) | OpKind::Deconv { .. } => return Role::ConvFilter,
                OpKind::Gemm => return Role::GemmWeight,
                _ => {}
            }
        }
    }
    Role::Vector
}

/// The TPU array (XLA shape with its default tiled layout) a tensor is stored as.
pub fn tpu_array(
    g: &Graph,
    t: TensorId,
    dtype: ElementType,
    gen: tpusim_layout::TpuGen,
) -> Result<ArrayShape> {
    let s = g.tensors[t].shape;
    let lower = |e: tpusim_layout::LayoutError| ReportError::Lower {
        context: format!("layout of tensor '{}'", g.tensors[t].name),
        message: e.to_string(),
    };
    // dims in logical order (most major first); the last is minor, the one before it
    // second-minor
    let dims: Vec<u64> = match role(g, t) {
        Role::Activation if s.h == 1 && s.w == 1 => vec![s.n, s.c],
        Role::Activation => vec![s.n, s.h, s.w, s.c],
        Role::ConvFilter if s.h == 1 && s.w == 1 => vec![s.c, s.n],
        Role::ConvFilter => vec![s.h, s.w, s.c, s.n],
        Role::GemmWeight => vec![
            s.n,
            s.c.checked_mul(s.h)
                .and_then(|x| x.checked_mul(s.w))
                .ok_or_else(|| overflow("gemm weight"))?,
        ],
        Role::Vector => vec![s.elements().ok_or_else(|| overflow("weight elements"))?],
    };
    // XLA:TPU's own choice for these dims (minor-to-major order and tiles), which a
    // libtpu compile gives every entry parameter and activation
    // (tests/data/xla/, tests/xla_reference.rs)
    tpu_default(dtype, &dims, gen).map_err(lower)
}

fn tile_of(a: &ArrayShape) -> (u64, u64) {
    let first = a.layout.as_ref().and_then(|l| l.tiles.first());
    let size = |d: &TileDim| if let TileDim::Size(x) = d { *x } else { 1 };
    match first.map(|t| t.dims.as_slice()) {
        Some([c]) => (1, size(c)),
        Some([.., r, c]) => (size(r), size(c)),
        _ => (1, 1),
    }
}

/// How tensor `t` of the graph is stored on `machine` at `dtype` (or at the element type
/// the graph fixes for it: an f32 network input ahead of its cast).
pub fn stored(machine: &Machine, g: &Graph, t: TensorId, dtype: ElementType) -> Result<Stored> {
    let dtype = tpusim_planner::tensor_type(g, t, dtype);
    let tensor = &g.tensors[t];
    let s = tensor.shape;
    let elements = s
        .elements()
        .ok_or_else(|| overflow(&format!("elements of '{}'", tensor.name)))?;
    let bytes_logical = logical_bytes(elements, dtype)?;
    match machine {
        Machine::Tpu(tpu) => {
            let a = tpu_array(g, t, dtype, tpu.gen)?;
            let sz = sizes(&a).map_err(|e| ReportError::Lower {
                context: format!("size of '{a}'"),
                message: e.to_string(),
            })?;
            let dims: Vec<u64> = a.dims.iter().filter_map(|d| d.allocated()).collect();
            let (second, minor) = match dims.as_slice() {
                [m] => (1, *m),
                [.., a2, a1] => (*a2, *a1),
                [] => (1, 1),
            };
            let slabs = dims.iter().rev().skip(2).product::<u64>().max(1);
            let (tile_rows, tile_cols) = tile_of(&a);
            Ok(Stored {
                layout: a.to_string(),
                bytes_logical,
                bytes_moved: sz.array_size_bytes,
                bytes_stored: sz.array_size_bytes,
                shape: PictureShape::Tiles {
                    second,
                    minor,
                    tile_rows,
                    tile_cols,
                    slabs,
                },
            })
        }
        Machine::Npu(npu) => {
            let chip = &npu.chip.geometry;
            let (n, c, h, w) = if tensor.kind == TensorKind::Weight {
                tpusim_planner::weight_local_shape(s)
            } else {
                (s.n, s.c, s.h, s.w)
            };
            let lower = |source: tpusim_planner::PlanError| ReportError::Plan {
                context: format!("LMEM size of '{}'", tensor.name),
                source,
            };
            let lane = tpusim_planner::lane_size(chip, dtype, n, c, h, w).map_err(lower)?;
            let footprint = lane
                .checked_mul(chip.npu_num)
                .ok_or_else(|| overflow("LMEM footprint"))?;
            let eu = tpusim_lmem::eu_num(chip, dtype).map_err(|e| ReportError::BadDtype {
                given: dtype.name().into(),
                why: e.to_string(),
            })?;
            let hw = h.saturating_mul(w).max(1);
            let stride = hw.div_ceil(eu.max(1)).saturating_mul(eu.max(1));
            Ok(Stored {
                layout: format!(
                    "lmem aligned {n}x{c}x{h}x{w}: {lane} B in each of {} lanes",
                    chip.npu_num
                ),
                bytes_logical,
                bytes_moved: bytes_logical,
                bytes_stored: footprint,
                shape: PictureShape::Lanes {
                    channels: c.max(1),
                    lanes: chip.npu_num,
                    used: hw,
                    stride,
                },
            })
        }
    }
}

/// Average a `rows × cols` grid down to at most [`PICTURE_MAX`] per side.
fn shrink(
    rows: usize,
    cols: usize,
    cell: impl Fn(usize, usize) -> f64,
) -> (usize, usize, Vec<f64>) {
    let fr = rows.div_ceil(PICTURE_MAX).max(1);
    let fc = cols.div_ceil(PICTURE_MAX).max(1);
    let (r2, c2) = (rows.div_ceil(fr), cols.div_ceil(fc));
    let mut out = Vec::with_capacity(r2 * c2);
    for i in 0..r2 {
        for j in 0..c2 {
            let (mut sum, mut cnt) = (0.0, 0.0);
            for r in i * fr..((i + 1) * fr).min(rows) {
                for c in j * fc..((j + 1) * fc).min(cols) {
                    sum += cell(r, c);
                    cnt += 1.0;
                }
            }
            out.push(if cnt > 0.0 { sum / cnt } else { 0.0 });
        }
    }
    (r2, c2, out)
}

/// The picture of a stored tensor.
pub fn picture(name: &str, st: &Stored) -> LayoutPicture {
    match st.shape {
        PictureShape::Tiles {
            second,
            minor,
            tile_rows,
            tile_cols,
            slabs,
        } => {
            let (tr, tc) = (tile_rows.max(1), tile_cols.max(1));
            // the padded slab, cut into at most PICTURE_MAX cells per side; a cell's fill
            // is the share of it inside the real [second × minor] region
            let rows_p = second.div_ceil(tr).max(1) * tr;
            let cols_p = minor.div_ceil(tc).max(1) * tc;
            let cr = rows_p.div_ceil(PICTURE_MAX as u64).max(1);
            let cc = cols_p.div_ceil(PICTURE_MAX as u64).max(1);
            let rows = rows_p.div_ceil(cr) as usize;
            let cols = cols_p.div_ceil(cc) as usize;
            let overlap = |start: u64, len: u64, real: u64| real.saturating_sub(start).min(len);
            let mut fill = Vec::with_capacity(rows * cols);
            for r in 0..rows as u64 {
                for c in 0..cols as u64 {
                    let h = overlap(r * cr, cr, second) as f64;
                    let w = overlap(c * cc, cc, minor) as f64;
                    fill.push(h * w / (cr * cc) as f64);
                }
            }
            LayoutPicture {
                tensor: name.to_string(),
                caption: format!(
                    "{}: one [{second} x {minor}] slab (of {slabs}) padded to [{rows_p} x {cols_p}] by ({tr},{tc}) tiles; each cell is {cr} x {cc} elements",
                    st.layout
                ),
                row_label: format!("second-minor dim, {cr} per cell"),
                col_label: format!("minor dim, {cc} per cell"),
                rows,
                cols,
                fill,
            }
        }
        PictureShape::Lanes {
            channels,
            lanes,
            used,
            stride,
        } => {
            let lanes_n = lanes.max(1);
            let rows = channels.div_ceil(lanes_n).max(1) as usize;
            let fill = |r: usize, c: usize| {
                let ch = r as u64 * lanes_n + c as u64;
                if ch < channels {
                    used as f64 / stride.max(1) as f64
                } else {
                    0.0
                }
            };
            let (r2, c2, f) = shrink(rows, lanes_n as usize, fill);
            LayoutPicture {
                tensor: name.to_string(),
                caption: format!("{}: {channels} channels over {lanes} lanes, each channel region {used} of {stride} elements used", st.layout),
                row_label: "channel rows (channel = row x lanes + lane)".into(),
                col_label: format!("lanes (NPU_NUM = {lanes})"),
                rows: r2,
                cols: c2,
                fill: f,
            }
        }
    }
}

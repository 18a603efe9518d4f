//! A nearest upsample run as a global layer, as TPU-MLIR 1.30.2's backend runs it: its
//! input loaded, copied into place by `(s_w + s_h − 1)` element-wise copy commands of
//! `s_w` times the input a lane row each (`s_w` along W, then `s_h − 1` along H), and its
//! output stored, one after another. Both transfers move as global tensors do: at the
//! chip's global tensor rate where it has one (bm1688), else as flat byte ranges
//! (bm1684x).
//!
//! Measured on 16 single-upsample networks forced global, both chips
//! (`bench/tpumlir_global_upsample.py`: 3 to 96 channels, 10² to 64², ×2, ×3 and ×4):
//! on bm1688 every load, store and copy pass within 2 cycles of this, whole layers
//! within 0.2 %; on bm1684x every store within 4 cycles and the copies within 4 cycles a
//! command (each has an overhead not modelled), but loads of 4.6 to 19.2 KB take 56 to
//! 98 cycles more than flat (a floor not modelled), so whole layers within 4.5 % but the
//! smallest (657 cycles, 95 short). Priced before
//! as a group's scatter-gather pass with activation transfers overlapped: 1.07 to 4.8
//! times over.

use crate::cost::{bytes_of, flat_dma_cycles, global_tensor_cycles, Dir, GlobalOpCost};
use crate::timing::Timing;
use tpusim_graph::{Graph, Op, OpKind, Shape4};

/// The cost of `op`, a nearest upsample of `bits`-bit elements run globally on a chip of
/// `lanes` lanes, its copies taking `compute` cycles where the caller times them; `None`
/// for any other op or a malformed one.
pub fn global_upsample_cost(
    graph: &Graph,
    op: &Op,
    bits: u32,
    lanes: u64,
    t: &Timing,
    compute: Option<f64>,
) -> Option<GlobalOpCost> {
    let OpKind::Upsample { scale_h, scale_w } = op.kind else {
        return None;
    };
    let x = graph.tensors.get(*op.inputs.first()?)?;
    let y = graph.tensors.get(*op.outputs.first()?)?;
    let (xb, yb) = (x.bits.unwrap_or(bits), y.bits.unwrap_or(bits));
    let load = tensor_cycles(t, Dir::Load, x.shape, xb);
    let store = tensor_cycles(t, Dir::Store, y.shape, yb);
    let copies = compute.unwrap_or_else(|| copy_cycles(x.shape, scale_h, scale_w, lanes, t));
    let bytes = bytes_of(x.shape.elements()?, xb).saturating_add(bytes_of(y.shape.elements()?, yb));
    Some(GlobalOpCost {
        bytes,
        cycles: (load + copies + store).ceil() as u64,
        compute_cycles: copies.round() as u64,
        dma_cycles: (load + store).round() as u64,
    })
}

/// One transfer of a global tensor of shape `s`.
fn tensor_cycles(t: &Timing, dir: Dir, s: Shape4, bits: u32) -> f64 {
    if t.used.global_tensor_bytes_per_cycle > 0.0 {
        global_tensor_cycles(t, dir, s, bits)
    } else {
        flat_dma_cycles(t, dir, bytes_of(s.elements().unwrap_or(u64::MAX), bits))
    }
}

/// The copy commands: `s_w + s_h − 1` of them, each over `s_w` times the input's
/// positions in every lane row (channels over the lanes, batches one after another), at
/// the element-wise rate.
fn copy_cycles(x: Shape4, scale_h: u64, scale_w: u64, lanes: u64, t: &Timing) -> f64 {
    let lane_rows = x.c.div_ceil(lanes.max(1)).saturating_mul(x.n);
    let positions = x.h.saturating_mul(x.w).saturating_mul(scale_w);
    let commands = scale_w.saturating_add(scale_h).saturating_sub(1);
    (lane_rows as f64) * (positions as f64) * (commands as f64) / t.eltwise_per_cycle_per_lane
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpusim_graph::GraphBuilder;
    use tpusim_layout::ElementType;

    /// One row of `tests/data/tpumlir_global_upsample.jsonl`: TPU-MLIR's commands of a
    /// global upsample, in cycles.
    #[derive(serde::Deserialize)]
    struct Measured {
        chip: String,
        c: u64,
        h: u64,
        scale: u64,
        load: f64,
        copies: f64,
        store: f64,
        span: f64,
    }

    fn ours(m: &Measured) -> (GlobalOpCost, f64, f64) {
        let npu = crate::NpuChip::preset(&m.chip).unwrap();
        let t = npu.timing_at(ElementType::F16).unwrap();
        let mut b = GraphBuilder::new("up");
        let x = b.input("x", Shape4::new(1, m.c, m.h, m.h));
        let kind = OpKind::Upsample {
            scale_h: m.scale,
            scale_w: m.scale,
        };
        let y = b.add_op("up", kind, &[x], &[]).unwrap();
        b.output(y);
        let g = b.finish().unwrap();
        let lanes = npu.geometry.npu_num;
        let c = global_upsample_cost(&g, &g.ops[0], 16, lanes, &t, None).unwrap();
        let load = tensor_cycles(&t, Dir::Load, g.tensors[x].shape, 16);
        let store = tensor_cycles(&t, Dir::Store, g.tensors[y].shape, 16);
        (c, load, store)
    }

    #[test]
    fn global_upsamples_take_what_tpu_mlirs_programs_take() {
        let rows = include_str!("../tests/data/tpumlir_global_upsample.jsonl");
        for line in rows.lines() {
            let m: Measured = serde_json::from_str(line).unwrap();
            let (c, load, store) = ours(&m);
            let case = format!("{} c{} h{} x{}", m.chip, m.c, m.h, m.scale);
            let copies = c.compute_cycles as f64;
            assert!((store - m.store).abs() <= 4.0, "{case}: store {store}");
            // each copy command has an overhead of a few cycles, not modelled
            let commands = (2 * m.scale - 1) as f64;
            assert!(
                (copies - m.copies).abs() <= 4.0 * commands,
                "{case}: copies {copies}"
            );
            let (load_off, total_off) = match m.chip.as_str() {
                "bm1688" => (2.0, 0.002),
                // small loads pay a floor on bm1684x that flat transfers do not have
                _ => (100.0, 0.15),
            };
            assert!((load - m.load).abs() <= load_off, "{case}: load {load}");
            let r = c.cycles as f64 / m.span;
            assert!(
                (r - 1.0).abs() <= total_off,
                "{case}: {} ({r:.3})",
                c.cycles
            );
        }
    }
}

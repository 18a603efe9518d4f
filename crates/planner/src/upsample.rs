//! The index table of a nearest upsample. TPU-MLIR 1.30.2 runs a nearest Resize in a
//! layer group as `tpu.Upsample`, which reads a table of 16-bit indices as a weight
//! (`is_idx_weight`), one entry for each output position spread over the lanes:
//! [1, NPU_NUM, 1, ⌈H · W / NPU_NUM⌉]. On bm1684x the zoo's 40×40 and 20×20 outputs
//! read [1, 64, 1, 25] and [1, 64, 1, 7] tables, each in 1,213 cycles (64 small planes
//! at 4× the floor). On bm1688 the aspp_like net's 80×80 output reads [1, 32, 1, 200]
//! in 1,058. The planner gives each upsample that table as a weight, so a group holds
//! it, loads it and times the load as any coefficient's
//! (`cost::weight_load_cycles`). A global upsample is never charged for it: none of
//! the zoo's compiles ran one global.

use crate::tpumlir::ChipCalibration;
use crate::NpuChip;
use tpusim_graph::{Graph, OpKind, Shape4, Tensor, TensorKind};

/// Bits of an index.
const INDEX_BITS: u32 = 16;

/// `g` with each upsample's index table for `chip` (named `<op>_indices`, a 16-bit
/// weight), on a chip with TPU-MLIR figures (its presets' `tpu_mlir_*` keys); on others
/// (a TPU seen as lanes by the report) `g` as it is.
pub fn with_index_tables(g: &Graph, chip: &NpuChip) -> Graph {
    let mut out = g.clone();
    if chip.tpu_mlir == ChipCalibration::default() {
        return out;
    }
    let lanes = chip.geometry.npu_num.max(1);
    for i in 0..out.ops.len() {
        if !matches!(out.ops[i].kind, OpKind::Upsample { .. }) {
            continue;
        }
        let Some(y) = out.ops[i].outputs.first().and_then(|&y| out.tensors.get(y)) else {
            continue;
        };
        let positions = y.shape.h.saturating_mul(y.shape.w);
        let table = Tensor {
            name: format!("{}_indices", out.ops[i].name),
            shape: Shape4::new(1, lanes, 1, positions.div_ceil(lanes).max(1)),
            kind: TensorKind::Weight,
            bits: Some(INDEX_BITS),
        };
        out.tensors.push(table);
        let id = out.tensors.len() - 1;
        out.ops[i].weights.push(id);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::weight_load_cycles;
    use tpusim_graph::GraphBuilder;
    use tpusim_layout::ElementType;

    fn upsample(hw: u64) -> Graph {
        let mut b = GraphBuilder::new("up");
        let x = b.input("x", Shape4::new(1, 32, hw, hw));
        let kind = OpKind::Upsample {
            scale_h: 2,
            scale_w: 2,
        };
        let y = b.add_op("up", kind, &[x], &[]).unwrap();
        b.output(y);
        b.finish().unwrap()
    }

    /// The tables of the zoo's compiles, their shapes and their loads' cycles.
    #[test]
    fn index_tables_load_as_the_zoo_compiled_them() {
        for (chip, out_hw, k, compiled) in [
            ("bm1684x", 40u64, 25u64, 1_213.0),
            ("bm1684x", 20, 7, 1_213.0),
            ("bm1688", 80, 200, 1_058.0),
        ] {
            let npu = NpuChip::preset(chip).unwrap();
            let t = npu.timing_at(ElementType::F16).unwrap();
            let g = with_index_tables(&upsample(out_hw / 2), &npu);
            let w = g.ops[0].weights[0];
            let s = g.tensors[w].shape;
            assert_eq!((s.c, s.w), (npu.geometry.npu_num, k), "{chip} {out_hw}");
            let got = weight_load_cycles(&t, s, 16);
            let r = got / compiled;
            assert!(
                (0.97..1.03).contains(&r),
                "{chip} {out_hw}: {got:.0} ({r:.3}x)"
            );
        }
    }
}

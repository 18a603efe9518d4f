//! Compute cycles of first-layer convs (TPU-MLIR's "3ic" lowering) against TPU-MLIR
//! 1.30.2's codegen profiles, F16, one image unsliced: ResNet's 7×7/2 conv on 3×224²
//! (64 channels) and MobileNetV2's 3×3/2 one (32 channels). The profiles' TIU commands
//! of each conv: bm1684x 34,516 (CONV 21,952, lane broadcast 6,272, layout 5,488, 4
//! small ones 804) and 20,800 (3,136, 6,272, 10,584, 808); bm1688, cut in 4 H slices
//! (rows recomputed at the cuts): 236,824 and 61,368. Which fold TPU-MLIR chose is in
//! its final MLIR (`use_3ic_optimize`: 17 = kernel rows, 19 = the whole kernel): the
//! whole kernel only for the 3×3 conv on bm1684x, where 27 channels fit one pass of
//! EU_NUM = 32 (bm1688: EU_NUM = 8). Our figures: 33,712, 16,464, 178,752, 53,312.

use tpusim_graph::builder::GraphBuilder;
use tpusim_graph::Shape4;
use tpusim_layout::ElementType;
use tpusim_lmem::Chip;
use tpusim_planner::cost::op_cycles;
use tpusim_planner::options::Timing;

fn first_conv_cycles(chip: &str, k: u64, c_out: u64) -> f64 {
    let mut b = GraphBuilder::new("first");
    let x = b.input("x", Shape4::new(1, 3, 224, 224));
    let y = b.conv("conv", x, c_out, k, 2, k / 2, 1, true).unwrap();
    b.output(y);
    let g = b.finish().unwrap();
    let chip = Chip::preset(chip).unwrap();
    let t = Timing::for_chip(&chip, ElementType::F16).unwrap();
    op_cycles(&g, &g.ops[0], 1, 112, chip.npu_num, &t)
}

#[test]
fn first_layer_convs_cost_what_tpu_mlir_profiles() {
    for (chip, k, c_out, measured, tol) in [
        ("bm1684x", 7, 64, 34_516.0, 0.03),
        ("bm1684x", 3, 32, 20_800.0, 0.25),
        ("bm1688", 7, 64, 236_824.0, 0.30),
        ("bm1688", 3, 32, 61_368.0, 0.15),
    ] {
        let ours = first_conv_cycles(chip, k, c_out);
        let r = ours / measured;
        assert!(
            (r - 1.0).abs() <= tol,
            "{chip} {k}x{k} conv: ours {ours:.0}, TPU-MLIR {measured} ({r:.2}x)"
        );
    }
    // the folded CONV command and the broadcast exactly, bm1684x ResNet conv1
    assert_eq!(
        first_conv_cycles("bm1684x", 7, 64),
        21_952.0 + 6_272.0 + 5_488.0
    );
}

//! Single CNN ops against TPU-MLIR 1.30.2's own compiles of them: the networks of
//! `bench/tpumlir_cnn_op_sweep.py`, a tuning set apart from the zoo, each one op under
//! study inside a layer group, read by `bench/tpumlir_cnn_op_sweep_read.py` into
//! `tests/data/cnn_*_sweep.jsonl` (the op's TIU commands from the codegen profile, its
//! `buffer_size` and `use_3ic_optimize` from the final MLIR).

use crate::cost::op_cycles;
use crate::timing::Timing;
use crate::NpuChip;
use tpusim_graph::builder::GraphBuilder;
use tpusim_graph::{Activation, Graph, OpKind, PoolParams, Shape4};
use tpusim_layout::ElementType;

/// One op of a sweep as TPU-MLIR compiled it.
struct SweepRow {
    /// The network, named after its op's parameters.
    net: String,
    /// The chip compiled for.
    chip: String,
    /// The network's input, N, C, H, W.
    input: [u64; 4],
    /// The op's TIU cycles in the codegen profile.
    cycles: f64,
    /// Its local buffer in the final MLIR (0: none).
    buffer: u64,
    /// Its `use_3ic_optimize` (convs only).
    fold: Option<u64>,
}

/// The rows of `tests/data/<file>`.
fn sweep_rows(file: &str) -> Vec<SweepRow> {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let rows = text.lines().map(|line| {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let dims: Vec<u64> = v["input_shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        SweepRow {
            net: v["net"].as_str().unwrap().to_string(),
            chip: v["chip"].as_str().unwrap().to_string(),
            input: dims.try_into().unwrap(),
            cycles: v["cycles"].as_f64().unwrap(),
            buffer: v["buffer_size"].as_u64().unwrap(),
            fold: v["use_3ic_optimize"].as_u64(),
        }
    });
    rows.collect()
}

/// The numbers in a network's name, in order (`avg_c16_s56_k3s2p1`: 16, 56, 3, 2, 1).
fn name_numbers(net: &str) -> Vec<u64> {
    net.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

impl SweepRow {
    /// The chip preset and its F16 timing.
    fn chip(&self) -> (NpuChip, Timing) {
        let chip = NpuChip::preset(&self.chip).unwrap();
        let t = chip.timing_at(ElementType::F16).unwrap();
        (chip, t)
    }

    /// Our cycles for `g`'s op `name`, all its batches and output rows at once, within
    /// `tolerance` of the profile's.
    fn assert_cycles(&self, g: &Graph, name: &str, tolerance: f64) {
        let op = g.ops.iter().find(|o| o.name == name).unwrap();
        let out = g.tensors[op.outputs[0]].shape;
        let (chip, t) = self.chip();
        let ours = op_cycles(g, op, out.n, out.h, chip.geometry.npu_num, &t);
        let (net, chip) = (&self.net, &self.chip);
        assert!(
            (ours / self.cycles - 1.0).abs() <= tolerance,
            "{net} {chip}: ours {ours}, TPU-MLIR {}",
            self.cycles
        );
    }

    /// Our local buffer for `g`'s op `name` is TPU-MLIR's, asked at the type of the op's
    /// output as the planner asks it.
    fn assert_buffer(&self, g: &Graph, name: &str) {
        let op = g.ops.iter().find(|o| o.name == name).unwrap();
        let (x, y) = (
            g.tensors[op.inputs[0]].shape,
            g.tensors[op.outputs[0]].shape,
        );
        let dtype = match g.tensors[op.outputs[0]].bits {
            Some(32) => ElementType::F32,
            _ => ElementType::F16,
        };
        let (chip, t) = self.chip();
        let buffer = crate::timestep::buffer_size(
            &chip.geometry,
            dtype,
            &op.kind,
            (x.n, x.c, x.h, x.w),
            (y.n, y.c, y.h, y.w),
            t.ic_parallel,
        )
        .unwrap();
        let (net, chip) = (&self.net, &self.chip);
        assert_eq!(buffer.unwrap_or(0), self.buffer, "{net} {chip}: buffer");
    }
}

/// Depthwise convs on 4 to 48 channels (3×3 and 5×5, 32² and 64², one image; `--set
/// convs`, `cnn_op_sweep.jsonl`): where TPU-MLIR's weight reorder folds the kernel rows
/// (`use_3ic_optimize` set), ours does; every conv's cycles are its profile's TIU
/// commands within 3 % (the fold's lane broadcasts, its layout pass and the CONV
/// command; a pass of the chip's input channels on the CONV unit up to 32 channels on
/// bm1684x and 16 on bm1688; EU_NUM taps on the pooling unit above); and its local
/// buffer is TPU-MLIR's `buffer_size` (the fold's, none on the CONV unit, the depthwise
/// one on the pooling unit).
#[test]
fn depthwise_convs_on_few_channels_cost_what_tpu_mlir_compiles() {
    let mut checked = 0;
    for row in sweep_rows("cnn_op_sweep.jsonl")
        .into_iter()
        .filter(|r| r.net.starts_with("dw_"))
    {
        let [c, hw, k] = name_numbers(&row.net)[..] else {
            panic!("{}", row.net)
        };
        let mut b = GraphBuilder::new("dw");
        let x = b.input("x", Shape4::new(1, c, hw, hw));
        let y = b.conv("dw", x, c, k, 1, k / 2, c, true).unwrap();
        b.output(y);
        let g = b.finish().unwrap();
        let (_, t) = row.chip();
        let folded = crate::timestep::is_3ic_conv(&g.ops[0].kind, c, t.ic_parallel);
        assert_eq!(
            folded,
            row.fold.unwrap() != 0,
            "{} {}: fold",
            row.net,
            row.chip
        );
        row.assert_cycles(&g, "dw", 0.03);
        row.assert_buffer(&g, "dw");
        checked += 1;
    }
    assert_eq!(checked, 56);
}

/// Adds of 8 to 64 channels on 25² and 50² (`--set convs`, `cnn_op_sweep.jsonl`): 2
/// cycles an EU row of positions, exactly, on both chips (TPU-MLIR's own layer-group
/// estimate says 4: `crate::cost::OpModel::Estimate`).
#[test]
fn adds_cost_what_tpu_mlir_compiles() {
    let mut checked = 0;
    let adds = sweep_rows("cnn_op_sweep.jsonl")
        .into_iter()
        .filter(|r| r.net.starts_with("add_"));
    for row in adds {
        let [_, c, hw, _] = row.input;
        let mut b = GraphBuilder::new("add");
        let x = b.input("x", Shape4::new(1, c, hw, hw));
        let z = b.input("z", Shape4::new(1, c, hw, hw));
        let y = b.add_op("add", OpKind::Add, &[x, z], &[]).unwrap();
        b.output(y);
        row.assert_cycles(&b.finish().unwrap(), "add", 0.0);
        checked += 1;
    }
    assert_eq!(checked, 16);
}

/// Max and average pools (2×2/2, 3×3/1, 3×3/2, 5×5/1, padded and not, 16 to 80
/// channels, batches 1 and 4; `--set pools`, `cnn_pool_sweep.jsonl`): every pool's
/// cycles are its profile's TIU commands within 1 % (the pooling unit's `PorD`, an
/// average pool's in f32 as `prepare` runs it under F16; with a stride, the chip's
/// `pool_stride_factor`; the corrections of windows over padding, `crate::pool_edges`),
/// and its local buffer is TPU-MLIR's `buffer_size`.
#[test]
fn pools_cost_what_tpu_mlir_compiles() {
    let mut checked = 0;
    for row in sweep_rows("cnn_pool_sweep.jsonl") {
        // {avg,max}_c<C>_s<HW>_k<K>s<S>p<P>[_b4][_inc]
        let [c, hw, k, s, p, ..] = name_numbers(&row.net)[..] else {
            panic!("{}", row.net)
        };
        let avg = row.net.starts_with("avg");
        let pool = PoolParams {
            kernel: [k, k],
            stride: [s, s],
            pad: [p; 4],
            ceil_mode: false,
            count_include_pad: row.net.ends_with("_inc"),
        };
        let kind = if avg {
            OpKind::AvgPool(pool)
        } else {
            OpKind::MaxPool(pool)
        };
        let mut b = GraphBuilder::new("pool");
        let x = b.input("x", Shape4::new(row.input[0], c, hw, hw));
        let y = b.add_op("pool", kind, &[x], &[]).unwrap();
        b.output(y);
        let g =
            tpusim_graph::cast::cast_wide(&b.finish().unwrap(), |o| avg && o.name == "pool", 32);
        row.assert_cycles(&g, "pool", 0.01);
        row.assert_buffer(&g, "pool");
        checked += 1;
    }
    assert_eq!(checked, 80);
}

/// Convs with a fused ReLU or ReLU6 (TPU-MLIR's `do_relu`, `relu_limit` 6 for ReLU6):
/// 1×1, 3×3, strided and depthwise, on both chips (`--set fused`,
/// `cnn_fused_act_sweep.jsonl`): a ReLU6 is two passes over the output (a max and a
/// min), a ReLU one, and each conv's cycles are its profile's TIU commands within 1 %.
#[test]
fn fused_relu6_takes_two_passes_as_tpu_mlir_compiles_it() {
    let mut checked = 0;
    for row in sweep_rows("cnn_fused_act_sweep.jsonl") {
        let [_, c, hw, _] = row.input;
        let act = if row.net.starts_with("fused_relu6") {
            Activation::Relu6
        } else {
            Activation::Relu
        };
        // fused_<act>_dw_c<C>_s<HW>: 3×3/1 depthwise; fused_<act>_c<C>_s<HW>_k<K>s<S>
        let (k, s, groups) = match row.net.split_once("_k") {
            Some((_, ks)) => match name_numbers(ks)[..] {
                [k, s] => (k, s, 1),
                _ => panic!("{}", row.net),
            },
            None => (3, 1, c),
        };
        let mut b = GraphBuilder::new("fused");
        let x = b.input("x", Shape4::new(1, c, hw, hw));
        let y = b.conv("conv", x, c, k, s, k / 2, groups, true).unwrap();
        b.set_fused_act(0, act);
        b.output(y);
        row.assert_cycles(&b.finish().unwrap(), "conv", 0.01);
        checked += 1;
    }
    assert_eq!(checked, 16);
}

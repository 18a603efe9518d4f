//! Grouped LayerNorms and RMSNorms against TPU-MLIR 1.30.2's own groups of the transformer
//! zoo (`bench/tpumlir_norm_rows.py`, `tests/data/tpumlir_norms.csv`): every slice timed
//! by the chip's local kernel figures (`norm_kernel`), which were read off the commands
//! of the tuned networks' norms; the held-out networks' are the check.

use tpusim_layout::ElementType;
use tpusim_planner::norm_kernel::NormSlice;
use tpusim_planner::NpuChip;

/// One grouped norm of the CSV.
struct Measured {
    chip: String,
    split: String,
    net: String,
    op: String,
    n_slices: Vec<u64>,
    c_slices: Vec<u64>,
    width: u64,
    cycles: f64,
}

fn numbers(field: &str) -> Vec<u64> {
    field.split(' ').map(|x| x.parse().unwrap()).collect()
}

fn measured() -> Vec<Measured> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tpumlir_norms.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("chip,split,net,op,n_slices,c_slices,width,cycles")
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Measured {
                chip: f[0].into(),
                split: f[1].into(),
                net: f[2].into(),
                op: f[3].into(),
                n_slices: numbers(f[4]),
                c_slices: numbers(f[5]),
                width: f[6].parse().unwrap(),
                cycles: f[7].parse().unwrap(),
            }
        })
        .collect()
}

/// Our cycles for `m`: each of its slices by its chip's kernel at f16.
fn ours(m: &Measured) -> f64 {
    let chip = NpuChip::preset(&m.chip).unwrap();
    let t = chip.timing_at(ElementType::F16).unwrap();
    // our form's names: ONNX LayerNormalization, the fused RMSNorm
    let op = if m.op == "LayerNorm" {
        "LayerNormalization"
    } else {
        m.op.as_str()
    };
    let figures = t.local_norms.of(op).expect("the chip file gives the norm");
    let lanes = chip.geometry.npu_num;
    let eu = t.eltwise_per_cycle_per_lane as u64;
    let mut cycles = 0.0;
    for &n in &m.n_slices {
        for &c in &m.c_slices {
            let slice = NormSlice {
                lane_rows: n * c.div_ceil(lanes),
                width: m.width,
            };
            cycles += slice.cycles(eu, &figures);
        }
    }
    cycles
}

/// Every norm of `split` within `bound` of its profiled cycles; how many there were.
fn within(split: &str, bound: f64) -> usize {
    let rows: Vec<Measured> = measured()
        .into_iter()
        .filter(|m| m.split == split)
        .collect();
    for m in &rows {
        let ratio = ours(m) / m.cycles;
        assert!(
            (ratio - 1.0).abs() <= bound,
            "{} {} {} {:?}x{:?}x{}: {ratio:.4} of {} cycles",
            m.chip,
            m.net,
            m.op,
            m.n_slices,
            m.c_slices,
            m.width,
            m.cycles
        );
    }
    rows.len()
}

#[test]
fn the_tuned_networks_norms_are_their_commands() {
    // the figures were read off these: exact
    assert_eq!(within("tuned", 0.0005), 12);
}

#[test]
fn the_held_out_networks_norms_lie_on_the_same_commands() {
    // a row of 112 or 208 elements on bm1684x (3.5 and 6.5 EU passes) takes a little
    // less than whole passes: 1.5 % over at most
    assert!(within("held_out", 0.016) >= 80);
}

#[test]
fn both_chips_and_both_norms_are_covered() {
    let rows = measured();
    for chip in ["bm1684x", "bm1688"] {
        for op in ["LayerNorm", "RMSNorm"] {
            let n = rows
                .iter()
                .filter(|m| m.chip == chip && m.op == op && m.split == "held_out")
                .count();
            assert!(n >= 10, "{chip} {op}: {n} held-out norms");
        }
    }
}

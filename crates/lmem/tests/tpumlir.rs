//! tpusim-lmem against TPU-MLIR 1.30.2: every local tensor of two compiled models
//! (ResNet-18 and a small MobileNetV2-like net, bm1684x, F16). For each op inside a
//! layer group TPU-MLIR records the bytes per lane it reserved (`out_size`) and the start
//! address (`out_addr`); we recompute the size from the slice shape and dtype.
//! Data: `tests/data/tpumlir_bm1684x_f16.csv`, made as `tests/data/README.md` says.

use tpusim_lmem::*;

struct Row {
    what: String,
    dtype: ElementType,
    eu_align: bool,
    shape: TensorShape,
    out_addr: u64,
    out_size: u64,
}

fn rows() -> Vec<Row> {
    let text = include_str!("data/tpumlir_bm1684x_f16.csv");
    let mut out = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("model,"))
    {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 13, "{line}");
        let num = |i: usize| f[i].parse::<u64>().unwrap();
        let dtype = match f[3] {
            "f16" => ElementType::F16,
            "f32" => ElementType::F32,
            "bf16" => ElementType::Bf16,
            "si8" | "i8" => ElementType::S8,
            "ui8" => ElementType::U8,
            "si32" | "i32" => ElementType::S32,
            other => panic!("dtype {other} in {line}"),
        };
        let d = num(7);
        out.push(Row {
            what: format!("{} line {} {} {}", f[0], f[1], f[2], f[12]),
            dtype,
            eu_align: num(4) == 1,
            shape: if d > 1 {
                TensorShape::ncdhw(num(5), num(6), d, num(8), num(9))
            } else {
                TensorShape::nchw(num(5), num(6), num(8), num(9))
            },
            out_addr: num(10),
            out_size: num(11),
        });
    }
    out
}

#[test]
fn lane_sizes_match_tpu_mlir() {
    let chip = Chip::preset("bm1684x").unwrap();
    let rows = rows();
    assert!(rows.len() > 100, "{} rows", rows.len());
    for r in &rows {
        assert_eq!(
            r.shape.d, None,
            "no 5-D tensors in these models: {}",
            r.what
        );
        let layout = if r.eu_align {
            LocalLayout::Aligned
        } else {
            LocalLayout::Compact
        };
        let ours = lane_bytes_unaligned(&chip, &r.shape, r.dtype, layout, 0).unwrap();
        assert_eq!(ours, r.out_size, "{}", r.what);
        // Our reservation is the same rounded up to EU_BYTES, and it fits where TPU-MLIR put it.
        let t = Placement {
            start_addr: r.out_addr,
            ..Placement::new(r.shape, r.dtype, layout)
        };
        let fit = t.fit(&chip).unwrap();
        assert!(
            fit.lane_bytes >= r.out_size && fit.lane_bytes - r.out_size < chip.eu_bytes,
            "{}",
            r.what
        );
    }
}

#[test]
fn tpu_mlir_starts_every_local_tensor_eu_aligned() {
    // Also the compact (eu_align = false) ones: the allocator aligns every start.
    for r in rows() {
        assert_eq!(r.out_addr % 64, 0, "{}", r.what);
    }
}

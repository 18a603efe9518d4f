//! Relayout throughput against a memcpy of the same bytes, measured in the same run.
//!
//! `cargo bench -p tpusim-layout --bench convert` (sizes: f32[8192,8192] = 256 MiB,
//! bf16[8192,8192] = 128 MiB). Baselines: `copy_from_slice` on one thread, and the
//! same split over rayon's threads (all cores, like the kernels).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rayon::prelude::*;
use std::hint::black_box;
use tpusim_layout::{parse_array, tpu_default, ElementType, Relayout, TpuGen};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("convert_8192x8192");
    g.sample_size(10);
    for (name, logical, tiled) in [
        (
            "f32_T(8,128)",
            "f32[8192,8192]",
            "f32[8192,8192]{1,0:T(8,128)}",
        ),
        (
            "bf16_T(8,128)(2,1)",
            "bf16[8192,8192]",
            "bf16[8192,8192]{1,0:T(8,128)(2,1)}",
        ),
    ] {
        let a = parse_array(logical).unwrap();
        let b = parse_array(tiled).unwrap();
        let to = Relayout::new(&a, &b).unwrap();
        let from = Relayout::new(&b, &a).unwrap();
        let n = to.src_bytes() as usize;
        let src: Vec<u8> = (0..n).map(|i| (i % 253) as u8).collect();
        let mut dst = vec![0u8; to.dst_bytes() as usize];
        let mut back = vec![0u8; n];
        g.throughput(Throughput::Bytes(n as u64));
        g.bench_function(format!("{name}/memcpy_1thread"), |bch| {
            bch.iter(|| dst.copy_from_slice(black_box(&src)))
        });
        g.bench_function(format!("{name}/memcpy_parallel"), |bch| {
            bch.iter(|| {
                dst.par_chunks_mut(1 << 20)
                    .zip(src.par_chunks(1 << 20))
                    .for_each(|(d, s)| d.copy_from_slice(s))
            })
        });
        g.bench_function(format!("{name}/to_tiled"), |bch| {
            bch.iter(|| to.run(black_box(&src), &mut dst).unwrap())
        });
        to.run(&src, &mut dst).unwrap();
        g.bench_function(format!("{name}/from_tiled"), |bch| {
            bch.iter(|| from.run(black_box(&dst), &mut back).unwrap())
        });
        assert_eq!(back, src);
    }
    g.finish();

    let mut g = c.benchmark_group("tpu_default");
    let shapes: Vec<(ElementType, Vec<u64>)> = (0..1000u64)
        .map(|i| {
            let t = [ElementType::F32, ElementType::Bf16, ElementType::S8][(i % 3) as usize];
            (t, vec![1 + i % 17, 1 + (i * 7) % 1000, 1 + (i * 13) % 300])
        })
        .collect();
    g.throughput(Throughput::Elements(shapes.len() as u64));
    g.bench_function("1000_rank3_shapes", |bch| {
        bch.iter(|| {
            for (t, d) in &shapes {
                black_box(tpu_default(*t, d, TpuGen::V5e).unwrap());
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

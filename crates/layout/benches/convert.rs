//! Relayout throughput against a memcpy of the same bytes, measured in the same run.
//!
//! `cargo bench -p tpusim-layout --bench convert` (sizes: f32[8192,8192] = 256 MiB,
//! bf16[8192,8192] = 128 MiB). Baselines, same bytes, same run: `copy_from_slice`
//! (glibc `memcpy`) on one thread, and the same split over rayon's threads in
//! `threads` equal chunks (one large `memcpy` per core, so glibc keeps its large-copy
//! strategy) and in 4 MiB chunks (the kernels' task size); the figure to beat is the best
//! of the three. Every destination is allocated and written once before timing
//! (pre-faulted), for the baselines and the kernels alike, and criterion's warm-up runs
//! each routine before it is measured. The `*_fresh_4k` / `*_fresh_thp` routines instead
//! allocate the destination inside the timed loop (first-touch faults, as numpy's fresh
//! arrays pay them; numpy advises MADV_HUGEPAGE, hence the THP variant). For ratios that
//! survive this VM's bandwidth drift, see `benches/ratio.rs` (interleaved rounds).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rayon::prelude::*;
use std::hint::black_box;
use tpusim_layout::{parse_array, tpu_default, ElementType, Relayout, TpuGen};

mod support;
use support::{aligned, fill_pattern, Anon};

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
        // Buffers start on a 64-byte cache line, as the CLI's memory-mapped files do.
        let mut src_buf = aligned(n);
        let src = &mut src_buf.0[src_buf.1..src_buf.1 + n];
        fill_pattern(src);
        let src: &[u8] = src;
        // Pre-fault: write every page of both destinations before any timing.
        let (mut dst_buf, mut back_buf) = (aligned(to.dst_bytes() as usize), aligned(n));
        let dst = &mut dst_buf.0[dst_buf.1..dst_buf.1 + to.dst_bytes() as usize];
        let back = &mut back_buf.0[back_buf.1..back_buf.1 + n];
        dst.fill(1);
        back.fill(1);
        let threads = rayon::current_num_threads().max(1);
        g.throughput(Throughput::Bytes(n as u64));
        g.bench_function(format!("{name}/memcpy_1thread"), |bch| {
            bch.iter(|| dst.copy_from_slice(black_box(src)))
        });
        for (label, chunk) in [
            ("memcpy_parallel_per_thread", n.div_ceil(threads)),
            ("memcpy_parallel_4MiB", 4 << 20),
        ] {
            g.bench_function(format!("{name}/{label}"), |bch| {
                bch.iter(|| {
                    dst.par_chunks_mut(chunk)
                        .zip(black_box(src).par_chunks(chunk))
                        .for_each(|(d, s)| d.copy_from_slice(s))
                })
            });
        }
        g.bench_function(format!("{name}/to_tiled"), |bch| {
            bch.iter(|| to.run(black_box(src), dst).unwrap())
        });
        to.run(src, dst).unwrap();
        g.bench_function(format!("{name}/from_tiled"), |bch| {
            bch.iter(|| from.run(black_box(dst), back).unwrap())
        });
        // Fresh destinations, allocated inside the timed routine as numpy's
        // `np.ascontiguousarray` does, so the copy pays the first-touch page faults (and
        // the unmap when the buffer is dropped): `fresh_4k` is a plain anonymous mapping
        // (what `vec![0u8; n]` gets from calloc; 4 KiB pages under this machine's THP
        // "madvise" setting), `fresh_thp` the same advised MADV_HUGEPAGE (what numpy does
        // for every allocation of 4 MiB or more on Linux). A memcpy into the same kind of
        // fresh buffer is the same-run reference.
        for (label, thp) in [("fresh_4k", false), ("fresh_thp", true)] {
            g.bench_function(format!("{name}/memcpy_1thread_{label}"), |bch| {
                bch.iter(|| {
                    let mut d = Anon::new(n, thp);
                    d.as_mut().copy_from_slice(black_box(src));
                    d
                })
            });
            g.bench_function(format!("{name}/to_tiled_{label}"), |bch| {
                bch.iter(|| {
                    let mut d = Anon::new(to.dst_bytes() as usize, thp);
                    to.run(black_box(src), d.as_mut()).unwrap();
                    d
                })
            });
            g.bench_function(format!("{name}/from_tiled_{label}"), |bch| {
                bch.iter(|| {
                    let mut d = Anon::new(n, thp);
                    from.run(black_box(&*dst), d.as_mut()).unwrap();
                    d
                })
            });
        }
        // Round trip check (also when a filter skipped the timed runs); a bool, so a
        // mismatch does not print 256 MiB of bytes.
        from.run(dst, back).unwrap();
        assert!(back[..] == src[..], "{name}: round trip differs");
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

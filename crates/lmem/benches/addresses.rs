//! Cost of the checked address API against the bare formula, in the same run.
//!
//! `api_address`: `Placement::address` for every element of a 1x64x56x56 f16 tensor on
//! bm1684x (validation, bounds and overflow checks included). `baseline_formula`: the same
//! addresses from the spec's formula with unchecked arithmetic, strides precomputed.
//! `api_addresser`: the same through a precomputed `Addresser`.
//! `api_locate`: `Placement::locate` for every 2-byte step of lane 0's reservation.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use tpusim_lmem::*;

fn bench(c: &mut Criterion) {
    let chip = Chip::preset("bm1684x").unwrap();
    let shape = TensorShape::nchw(1, 64, 56, 56);
    let t = Placement {
        start_npu: 3,
        start_addr: 4096,
        ..Placement::new(shape, ElementType::F16, LocalLayout::Aligned)
    };
    let s = t.strides(&chip).unwrap();
    let mut g = c.benchmark_group("lmem_address_1x64x56x56_f16");
    g.sample_size(20);
    g.bench_function("api_address", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for n in 0..shape.n {
                for ch in 0..shape.c {
                    for h in 0..shape.h {
                        for w in 0..shape.w {
                            let a = t
                                .address(
                                    &chip,
                                    &ElementIndex {
                                        n,
                                        c: ch,
                                        d: 0,
                                        h,
                                        w,
                                    },
                                )
                                .unwrap();
                            acc = acc.wrapping_add(a.address);
                        }
                    }
                }
            }
            black_box(acc)
        })
    });
    let addr = Addresser::new(&chip, &t).unwrap();
    g.bench_function("api_addresser", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for n in 0..shape.n {
                for ch in 0..shape.c {
                    for h in 0..shape.h {
                        for w in 0..shape.w {
                            acc = acc.wrapping_add(
                                addr.address(&ElementIndex {
                                    n,
                                    c: ch,
                                    d: 0,
                                    h,
                                    w,
                                })
                                .unwrap()
                                .address,
                            );
                        }
                    }
                }
            }
            black_box(acc)
        })
    });
    g.bench_function("baseline_formula", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for n in 0..shape.n {
                for ch in 0..shape.c {
                    let pos = black_box(t.start_npu) + ch;
                    let (lane, row) = (pos % chip.npu_num, pos / chip.npu_num);
                    for h in 0..shape.h {
                        for w in 0..shape.w {
                            let off = t.start_addr + (n * s.n + row * s.c + h * s.h + w) * 2;
                            acc = acc.wrapping_add(lane * chip.lane_bytes + off);
                        }
                    }
                }
            }
            black_box(acc)
        })
    });
    let lb = t.lane_bytes(&chip).unwrap();
    g.bench_function("api_locate", |b| {
        b.iter(|| {
            let mut found = 0u64;
            for lane in 0..chip.npu_num {
                let mut off = t.start_addr;
                while off < t.start_addr + lb {
                    if t.locate(&chip, lane, off).unwrap().is_some() {
                        found += 1;
                    }
                    off += 2;
                }
            }
            black_box(found)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

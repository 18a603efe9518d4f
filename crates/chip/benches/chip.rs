//! Speed of the chip model's hot paths, each beside a baseline measured in the same
//! run: chip lookup (cached database) vs parsing one chip's TOML; closed-form hop
//! distance over every pair of a v5e pod vs breadth-first search from every chip.
//! Run: `cargo bench -p tpusim-chip --bench chip -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::collections::VecDeque;
use tpusim_chip::{lookup, Chip, Slice};

fn bfs_all_pairs(s: &Slice) -> u64 {
    let (a, b) = (s.dims[0] as usize, s.dims[1] as usize);
    let mut total = 0u64;
    for src in 0..a * b {
        let mut dist = vec![u64::MAX; a * b];
        dist[src] = 0;
        let mut q = VecDeque::from([src]);
        while let Some(c) = q.pop_front() {
            let (i, j) = (c / b, c % b);
            let nb = [
                ((i + 1) % a, j),
                ((i + a - 1) % a, j),
                (i, (j + 1) % b),
                (i, (j + b - 1) % b),
            ];
            for (x, y) in nb {
                let n = x * b + y;
                if dist[n] == u64::MAX {
                    dist[n] = dist[c] + 1;
                    q.push_back(n);
                }
            }
        }
        total += dist.iter().sum::<u64>();
    }
    total
}

fn closed_form_all_pairs(s: &Slice) -> u64 {
    let (a, b) = (s.dims[0], s.dims[1]);
    let mut total = 0u64;
    for i in 0..a {
        for j in 0..b {
            for k in 0..a {
                for l in 0..b {
                    total += s.distance(&[i, j], &[k, l]).unwrap();
                }
            }
        }
    }
    total
}

fn benches(c: &mut Criterion) {
    let text = tpusim_chip::database::builtin_toml("v5e").unwrap();
    c.bench_function("baseline: parse v5e TOML", |bch| {
        bch.iter(|| Chip::from_toml_str(black_box(text), "bench").unwrap())
    });
    c.bench_function("lookup v5e (cached database)", |bch| {
        bch.iter(|| lookup(black_box("v5e")).unwrap())
    });
    let pod = Slice::new(&lookup("v5e").unwrap(), &[16, 16]).unwrap();
    assert_eq!(bfs_all_pairs(&pod), closed_form_all_pairs(&pod));
    c.bench_function("baseline: BFS all pairs v5e 16x16", |bch| {
        bch.iter(|| bfs_all_pairs(black_box(&pod)))
    });
    c.bench_function("closed-form all pairs v5e 16x16", |bch| {
        bch.iter(|| closed_form_all_pairs(black_box(&pod)))
    });
}

criterion_group! {
    name = chip;
    config = Criterion::default().sample_size(10);
    targets = benches
}
criterion_main!(chip);

//! Relayout throughput as a ratio to memcpy, measured interleaved: every round times a
//! 1-thread memcpy, a 2-thread memcpy (one chunk per rayon thread) and the kernel on the
//! same buffers back to back, and the ratio is taken within the round (best memcpy of
//! the round / kernel). A stricter copy reference is timed in the same rounds: the
//! identity relayout (row-major → row-major, i.e. our own 2-thread copy with streaming
//! stores), because glibc's `memcpy` sizes its non-temporal threshold from the L3 size
//! the VM reports (260 MiB) and so copies these 128–256 MiB buffers with ordinary stores
//! (read-for-ownership traffic) that a streaming-store kernel can beat. On a shared VM whose memory bandwidth drifts by 2× within a
//! minute (other tenants, a 260 MiB L3 shared with them), a ratio of two medians taken a
//! minute apart (criterion's `convert` bench) can land anywhere; the median of per-round
//! ratios does not.
//!
//! `cargo bench -p tpusim-layout --bench ratio [ROUNDS]` (default 21 rounds). All
//! buffers are 64-byte aligned and pre-faulted; one untimed round warms up.

use rayon::prelude::*;
use std::hint::black_box;
use std::time::Instant;
use tpusim_layout::{parse_array, Relayout};

mod support;
use support::{aligned, fill_pattern};

fn secs(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(21);
    let threads = rayon::current_num_threads().max(1);
    println!("rounds {rounds}, rayon threads {threads}");
    println!("| case | memcpy 1t ms | memcpy {threads}t ms | streaming copy ms | kernel ms | kernel GiB/s | best memcpy / kernel (median of rounds) | min..max | streaming copy / kernel (median) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, logical, tiled) in [
        ("f32", "f32[8192,8192]", "f32[8192,8192]{1,0:T(8,128)}"),
        (
            "bf16",
            "bf16[8192,8192]",
            "bf16[8192,8192]{1,0:T(8,128)(2,1)}",
        ),
    ] {
        let a = parse_array(logical).unwrap();
        let b = parse_array(tiled).unwrap();
        let to = Relayout::new(&a, &b).unwrap();
        let identity = Relayout::new(&a, &a).unwrap();
        let from = Relayout::new(&b, &a).unwrap();
        let n = to.src_bytes() as usize;
        let (mut sb, so) = aligned(n);
        let src = &mut sb[so..so + n];
        fill_pattern(src);
        let src: &[u8] = src;
        let (mut tb, to_off) = aligned(n);
        let tiled_buf = &mut tb[to_off..to_off + n];
        let (mut bb, bo) = aligned(n);
        let back = &mut bb[bo..bo + n];
        to.run(src, tiled_buf).unwrap();
        from.run(tiled_buf, back).unwrap();
        assert!(back[..] == src[..], "{name}: round trip differs");
        for (dir, plan, input) in [
            ("to tiled", &to, src.to_vec()),
            ("from tiled", &from, tiled_buf.to_vec()),
        ] {
            let (mut ib, io) = aligned(n);
            let inp = &mut ib[io..io + n];
            inp.copy_from_slice(&input);
            drop(input);
            let inp: &[u8] = inp;
            let (mut db, d_o) = aligned(n);
            let dst = &mut db[d_o..d_o + n];
            let chunk = n.div_ceil(threads);
            let (mut m1, mut m2, mut k, mut r) = (vec![], vec![], vec![], vec![]);
            let (mut sc, mut rs) = (vec![], vec![]);
            for round in 0..=rounds {
                let a1 = secs(|| dst.copy_from_slice(black_box(inp)));
                let a2 = secs(|| {
                    dst.par_chunks_mut(chunk)
                        .zip(black_box(inp).par_chunks(chunk))
                        .for_each(|(d, s)| d.copy_from_slice(s))
                });
                let ss = secs(|| identity.run(black_box(inp), dst).unwrap());
                let kk = secs(|| plan.run(black_box(inp), dst).unwrap());
                if round > 0 {
                    sc.push(ss);
                    rs.push(ss / kk);
                    r.push(a1.min(a2) / kk);
                    m1.push(a1);
                    m2.push(a2);
                    k.push(kk);
                }
            }
            let (lo, hi) = r
                .iter()
                .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
            let km = median(k);
            println!(
                "| {name}[8192,8192] {dir} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | **{:.2}** | {:.2}..{:.2} | {:.2} |",
                median(m1) * 1e3,
                median(m2) * 1e3,
                median(sc) * 1e3,
                km * 1e3,
                n as f64 / km / (1u64 << 30) as f64,
                median(r),
                lo,
                hi,
                median(rs)
            );
        }
    }
}

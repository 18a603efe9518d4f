//! Times the cycle-accurate engine and the analytic model on GEMMs, for
//! `bench/systolic_bench.py`. Usage: `systolic_bench M,K,N,R,C,DF [...]`; prints one
//! line per layer: `M K N R C DF engine_seconds analytic_seconds engine_cycles
//! analytic_cycles scalesim_cycles threads`.

use std::time::Instant;
use tpusim_systolic::*;

fn main() {
    for spec in std::env::args().skip(1) {
        let p: Vec<&str> = spec.split(',').collect();
        assert_eq!(p.len(), 6, "expected M,K,N,R,C,DF, got {spec}");
        let n = |i: usize| p[i].parse::<u64>().expect("number");
        let (m, k, nn, r, c) = (n(0), n(1), n(2), n(3), n(4));
        let df = Dataflow::parse(p[5]).expect("dataflow");
        let arr = ArraySpec::new(r, c).unwrap();
        let g = Gemm::new(m, k, nn).unwrap();
        let opts = RunOptions {
            dataflow: df,
            double_buffer: false,
        };
        let mut s = 1u64;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 56) as i8
        };
        let a = Matrix::from_fn(m as usize, k as usize, |_, _| rnd());
        let w = Matrix::from_fn(k as usize, nn as usize, |_, _| rnd());
        let mut best = f64::MAX;
        let mut ecycles = 0;
        for _ in 0..3 {
            let t0 = Instant::now();
            let run = run_gemm(arr, opts, &a, &w).unwrap();
            best = best.min(t0.elapsed().as_secs_f64());
            ecycles = run.stats.cycles;
        }
        let wl = Workload::from_gemm(g);
        let iters = 2000;
        let t0 = Instant::now();
        let mut acycles = 0;
        for _ in 0..iters {
            acycles =
                std::hint::black_box(analyze(arr, std::hint::black_box(&wl), opts).unwrap()).cycles;
        }
        let at = t0.elapsed().as_secs_f64() / iters as f64;
        let sc = scalesim::compat::total_cycles(df, r, c, g);
        println!(
            "{m} {k} {nn} {r} {c} {} {best:.6} {at:.9} {ecycles} {acycles} {sc} {}",
            df.name(),
            rayon::current_num_threads()
        );
    }
}

//! The cycle-accurate engine against (1) a plain matmul / direct convolution and (2) the
//! analytic model, on random shapes, for every dataflow, with and without double
//! buffering.

use proptest::prelude::*;
use tpusim_systolic::*;

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

fn rand_i8(rows: usize, cols: usize, seed: u64) -> Matrix<i8> {
    let mut s = seed;
    Matrix::from_fn(rows, cols, |_, _| (lcg(&mut s) % 255) as i32 as i8)
}

fn expected_folds(arr: ArraySpec, df: Dataflow, g: Gemm) -> Vec<FoldTiming> {
    folds(df, arr, g).map(|f| fold_timing(df, arr, f)).collect()
}

fn df_strategy() -> impl Strategy<Value = Dataflow> {
    prop_oneof![Just(Dataflow::Ws), Just(Dataflow::Os), Just(Dataflow::Is)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn engine_equals_matmul_and_analytic(
        m in 1usize..40, k in 1usize..40, n in 1usize..40,
        r in 1u64..10, c in 1u64..10, df in df_strategy(), db in any::<bool>(), seed in any::<u64>()
    ) {
        let arr = ArraySpec::new(r, c).unwrap();
        let a = rand_i8(m, k, seed);
        let w = rand_i8(k, n, seed ^ 0xabcdef);
        let opts = RunOptions { dataflow: df, double_buffer: db };
        let run = run_gemm(arr, opts, &a, &w).unwrap();
        prop_assert_eq!(&run.c, &reference_matmul(&a, &w).unwrap());
        let g = Gemm::new(m as u64, k as u64, n as u64).unwrap();
        prop_assert_eq!(&run.folds, &expected_folds(arr, df, g));
        let an = analyze(arr, &Workload::from_gemm(g), opts).unwrap();
        prop_assert_eq!(run.stats, an);
        prop_assert_eq!(an.busy_pe_cycles, an.macs);
        prop_assert!(an.utilization <= 1.0 + 1e-12);
        prop_assert_eq!(an.cycles, an.compute_cycles + an.weight_load_cycles);
    }

    #[test]
    fn conv_engine_equals_direct_conv_and_analytic(
        batch in 1u64..3, h in 1u64..9, w in 1u64..9, cg in 1u64..4, groups in 1u64..3,
        kh in 1u64..4, kw in 1u64..4, ng in 1u64..5, stride in 1u64..3, pad in 0u64..2, dil in 1u64..3,
        r in 1u64..7, c in 1u64..7, df in df_strategy(), db in any::<bool>(), seed in any::<u64>()
    ) {
        let conv = Conv { batch, in_h: h, in_w: w, in_c: cg * groups, kh, kw, out_c: ng * groups,
            stride_h: stride, stride_w: stride, pad_h: pad, pad_w: pad, dil_h: dil, dil_w: dil, groups };
        prop_assume!(conv.validate().is_ok());
        let mut s = seed;
        let input: Vec<i8> = (0..conv.input_elems()).map(|_| (lcg(&mut s) % 255) as i32 as i8).collect();
        let filter: Vec<i8> = (0..conv.filter_elems()).map(|_| (lcg(&mut s) % 255) as i32 as i8).collect();
        let arr = ArraySpec::new(r, c).unwrap();
        let opts = RunOptions { dataflow: df, double_buffer: db };
        let run = run_conv(arr, opts, &conv, &input, &filter).unwrap();
        prop_assert_eq!(&run.output, &conv_reference(&conv, &input, &filter).unwrap());
        let an = analyze(arr, &Workload::from_conv(&conv).unwrap(), opts).unwrap();
        prop_assert_eq!(run.stats, an);
    }

    #[test]
    fn float_engines_within_rounding(
        m in 1usize..24, k in 1usize..60, n in 1usize..24, r in 1u64..9, c in 1u64..9,
        df in df_strategy(), seed in any::<u64>()
    ) {
        let arr = ArraySpec::new(r, c).unwrap();
        let opts = RunOptions { dataflow: df, double_buffer: true };
        let mut s = seed;
        let mut f = || (lcg(&mut s) % 2001) as f32 / 1000.0 - 1.0;
        let a32 = Matrix::from_fn(m, k, |_, _| f());
        let w32 = Matrix::from_fn(k, n, |_, _| f());
        let run = run_gemm(arr, opts, &a32, &w32).unwrap();
        let err = max_abs_diff(&run.c, &reference_matmul(&a32, &w32).unwrap());
        prop_assert!(err <= 1e-5 * k as f64, "f32 error {}", err);
        let ab = Matrix::from_fn(m, k, |i, j| bf16::from_f32(a32.at(i, j)));
        let wb = Matrix::from_fn(k, n, |i, j| bf16::from_f32(w32.at(i, j)));
        let run = run_gemm(arr, opts, &ab, &wb).unwrap();
        let err = max_abs_diff(&run.c, &reference_matmul(&ab, &wb).unwrap());
        prop_assert!(err <= 1e-5 * k as f64, "bf16 error {}", err);
        // i32 → i64 is exact
        let ai = Matrix::from_fn(m, k, |i, j| (a32.at(i, j) * 1e6) as i32);
        let wi = Matrix::from_fn(k, n, |i, j| (w32.at(i, j) * 1e6) as i32);
        let run = run_gemm(arr, opts, &ai, &wi).unwrap();
        prop_assert_eq!(run.c, reference_matmul(&ai, &wi).unwrap());
    }
}

#[test]
fn full_folds_without_double_buffering_are_closed_form() {
    // ws, N and K multiples of the array: F·(2R + C + M − 2), one more than SCALE-Sim's
    let arr = ArraySpec::new(8, 8).unwrap();
    let g = Gemm::new(30, 16, 24).unwrap();
    let s = analyze(
        arr,
        &Workload::from_gemm(g),
        RunOptions {
            dataflow: Dataflow::Ws,
            double_buffer: false,
        },
    )
    .unwrap();
    assert_eq!(s.folds, 6);
    assert_eq!(s.cycles, 6 * (16 + 8 + 30 - 2));
    assert_eq!(s.weight_load_cycles, 6 * 8);
}

#[test]
fn double_buffering_hides_loads_for_long_streams() {
    // M ≥ R + K_f + N_f − 2: no bubble; only the first load is exposed
    let arr = ArraySpec::new(8, 8).unwrap();
    let g = Gemm::new(100, 32, 32).unwrap();
    let s = analyze(
        arr,
        &Workload::from_gemm(g),
        RunOptions {
            dataflow: Dataflow::Ws,
            double_buffer: true,
        },
    )
    .unwrap();
    assert_eq!(s.folds, 16);
    assert_eq!(s.weight_load_cycles, 8);
    assert_eq!(s.cycles, 8 + 16 * 100 + 8 + 8 - 2);
}

/// Fuzz findings: `systolic conv --mode cycle` allocated the whole input before any
/// check (a 1e10-element input with stride 1e5 lowers to a 1×1 GEMM: allocation abort),
/// and GEMMs within the old 2e11-MAC limit ran for minutes to hours (4096³ on 128×128,
/// or 2.1e9 MACs stepped one by one on a 1×1 array).
#[test]
fn engine_limits_bound_memory_and_work_before_running() {
    let arr = ArraySpec::new(128, 128).unwrap();
    let one = ArraySpec::new(1, 1).unwrap();
    let mut conv = Conv::simple(100_000, 100_000, 1, 1, 1, 1);
    conv.stride_h = 100_000;
    conv.stride_w = 100_000;
    assert_eq!(conv.gemm().unwrap(), Gemm::new(1, 1, 1).unwrap());
    let e = check_conv_engine_limits(arr, &conv)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("input elements") && e.contains("10000000000"),
        "{e}"
    );
    // 2^40 groups of a 1×1×1 GEMM: tiny per group, huge filter and work in total.
    let mut depthwise = Conv::simple(1, 1, 1 << 40, 1, 1, 1 << 40);
    depthwise.groups = 1 << 40;
    let e = check_conv_engine_limits(arr, &depthwise)
        .unwrap_err()
        .to_string();
    assert!(e.contains("input elements"), "{e}");
    assert!(check_conv_engine_limits(arr, &Conv::simple(8, 8, 4, 3, 3, 8)).is_ok());

    let e = check_engine_limits(arr, Gemm::new(4096, 4096, 4096).unwrap()).unwrap_err();
    assert!(e.to_string().contains("MACs for the cycle engine"), "{e}");
    let e = check_engine_limits(one, Gemm::new(16384, 16384, 8).unwrap()).unwrap_err();
    assert!(e.to_string().contains("MACs per PE"), "{e}");
    assert!(check_engine_limits(arr, Gemm::new(2048, 2048, 2048).unwrap()).is_ok());
    assert!(check_engine_limits(one, Gemm::new(4096, 4096, 16).unwrap()).is_ok());
}

//! The analytic model applies whole runs of identical folds at once once the schedule
//! is in a steady state (`analytic::push_repeated`); it must give exactly what pushing
//! every fold gives, for every dataflow, buffering and fold grid.

use proptest::prelude::*;
use tpusim_systolic::{
    analyze, analyze_fold_by_fold, ArraySpec, Dataflow, Gemm, RunOptions, Workload,
};

#[allow(clippy::too_many_arguments)]
fn both(m: u64, k: u64, n: u64, r: u64, c: u64, df: Dataflow, db: bool, repeat: u64) {
    let a = ArraySpec::new(r, c).unwrap();
    let mut wl = Workload::from_gemm(Gemm::new(m, k, n).unwrap());
    wl.repeat = repeat;
    let o = RunOptions {
        dataflow: df,
        double_buffer: db,
    };
    let fast = analyze(a, &wl, o).unwrap();
    let slow = analyze_fold_by_fold(a, &wl, o).unwrap();
    assert_eq!(
        fast, slow,
        "{m}x{k}x{n} on {r}x{c} {df:?} db={db} repeat {repeat}"
    );
}

#[test]
fn edges_of_the_grid() {
    for df in [Dataflow::Ws, Dataflow::Os, Dataflow::Is] {
        for db in [true, false] {
            for (m, k, n, r, c) in [
                (1, 1, 1, 1, 1),
                (1, 1, 1, 128, 128),
                (4096, 4096, 4096, 128, 128),
                (3, 1000, 7, 8, 8),
                (1000, 3, 1000, 8, 8),
                (512, 129, 257, 128, 128),
                (2, 4096, 2, 4, 4),
            ] {
                both(m, k, n, r, c, df, db, 1);
                both(m, k, n, r, c, df, db, 3);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn fast_equals_fold_by_fold(
        m in 1u64..600, k in 1u64..600, n in 1u64..600,
        r in 1u64..40, c in 1u64..40,
        df in prop_oneof![Just(Dataflow::Ws), Just(Dataflow::Os), Just(Dataflow::Is)],
        db in any::<bool>(), repeat in 1u64..4,
    ) {
        both(m, k, n, r, c, df, db, repeat);
    }
}

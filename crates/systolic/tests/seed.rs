//! The seed's 4×4 example: our weight-stationary engine against the seed program's own
//! printed output (tests/data/seed_4x4_output.txt, see tests/data/README.md).

use tpusim_systolic::*;

/// One clock's feature and psum registers (4×4 each).
type Clock = (Vec<Vec<i32>>, Vec<Vec<i32>>);

struct SeedRun {
    a: Vec<Vec<i32>>,
    b_copy: Vec<Vec<i32>>,
    /// per clock: (feature 4×4, psum 4×4)
    clocks: Vec<Clock>,
}

fn rows(lines: &[&str]) -> Vec<Vec<i32>> {
    lines
        .iter()
        .map(|l| {
            l.trim()
                .trim_end_matches(',')
                .split(',')
                .map(|x| x.trim().parse().unwrap())
                .collect()
        })
        .collect()
}

fn parse() -> SeedRun {
    let text = include_str!("data/seed_4x4_output.txt");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "A");
    assert_eq!(lines[5], "B");
    let a = rows(&lines[1..5]);
    let b_copy = rows(&lines[6..10]);
    let mut clocks = Vec::new();
    let mut i = 10;
    while i < lines.len() {
        assert_eq!(lines[i], format!("clock={}", clocks.len()));
        assert_eq!(lines[i + 1], "feature:");
        assert_eq!(lines[i + 6], "psum:");
        clocks.push((rows(&lines[i + 2..i + 6]), rows(&lines[i + 7..i + 11])));
        i += 11;
    }
    SeedRun { a, b_copy, clocks }
}

#[test]
#[allow(clippy::needless_range_loop)]
fn seed_products_cycles_and_registers() {
    let s = parse();
    let n = 4usize;
    assert_eq!(
        s.clocks.len(),
        3 * n - 2,
        "the seed program runs 3N−2 clocks"
    );
    // Seed: PE(i,j) holds B_copy[i][j] = B[j][i]; row i takes A[i][t−i]; C = B·A.
    // Our GEMM: stream X[s][i] = A[i][s] (X = Aᵀ), stationary W = B_copy; Y = X·W = (B·A)ᵀ.
    let x = Matrix::from_fn(n, n, |r, c| s.a[c][r] as i8);
    let w = Matrix::from_fn(n, n, |r, c| s.b_copy[r][c] as i8);
    let arr = ArraySpec::new(4, 4).unwrap();
    let (y, traces) = trace_ws(arr, &x, &w).unwrap();
    // (a) products equal those leaving the seed's bottom row: column j at clock t
    // carries C[j][t − j − (N−1)]
    for (t, (_, psum)) in s.clocks.iter().enumerate() {
        for j in 0..n {
            if t >= j + n - 1 && t - j - (n - 1) < n {
                let k = t - j - (n - 1);
                assert_eq!(y.at(k, j), psum[n - 1][j], "C[{j}][{k}] at clock {t}");
            }
        }
    }
    // (b) 3N−2 cycles after the weight load
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0].len(), 3 * n - 2);
    let run = run_gemm(
        arr,
        RunOptions {
            dataflow: Dataflow::Ws,
            double_buffer: false,
        },
        &x,
        &w,
    )
    .unwrap();
    assert_eq!(run.folds[0].span, 3 * n as u64 - 2);
    assert_eq!(run.folds[0].pre, 4);
    assert_eq!(run.stats.cycles, 4 + 3 * n as u64 - 2);
    assert_eq!(run.stats.weight_load_cycles, 4);
    assert_eq!(run.stats.compute_cycles, 10);
    assert_eq!(run.stats.macs, 64);
    assert_eq!(run.c, y);
    // (c) every feature and psum register at every clock
    for (t, (feat, psum)) in s.clocks.iter().enumerate() {
        let snap = &traces[0][t];
        assert_eq!(snap.cycle, t as u64);
        for i in 0..n {
            for j in 0..n {
                assert_eq!(
                    snap.feature[i * n + j],
                    feat[i][j] as f64,
                    "feature ({i},{j}) clock {t}"
                );
                assert_eq!(
                    snap.psum[i * n + j],
                    psum[i][j] as f64,
                    "psum ({i},{j}) clock {t}"
                );
            }
        }
    }
    // and against a plain matmul
    assert_eq!(y, reference_matmul(&x, &w).unwrap());
}

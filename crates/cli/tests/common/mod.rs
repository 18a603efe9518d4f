//! Helpers shared by the CLI integration tests (each test file pulls them in with
//! `mod common;`).

use assert_cmd::Command;

/// The `tpusim` binary built by this package, ready for arguments.
pub fn tpusim() -> Command {
    Command::cargo_bin("tpusim").unwrap()
}

/// Asserts that a run was refused as bad input — exit code 2 and exactly one stderr line
/// `error: …` holding every needle — and returns that line.
#[allow(dead_code)]
pub fn bad_input(out: &std::process::Output, needles: &[&str]) -> String {
    let err = String::from_utf8_lossy(&out.stderr).trim_end().to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: ") && err.lines().count() == 1,
        "{err}"
    );
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
    err
}

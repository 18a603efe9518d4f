//! Helpers shared by the CLI integration tests (each test file pulls them in with
//! `mod common;`).

use assert_cmd::Command;

/// The `tpusim` binary built by this package, ready for arguments.
pub fn tpusim() -> Command {
    Command::cargo_bin("tpusim").unwrap()
}

/// Runs `tpusim ARGS` (which should print `--json`), asserts success, and parses stdout.
#[allow(dead_code)]
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = tpusim().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
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

/// A .npy (version 1.0) header written by hand, independent of tpusim's writer.
#[allow(dead_code)]
pub fn npy_header(descr: &str, shape: &str) -> Vec<u8> {
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    v.extend_from_slice(dict.as_bytes());
    v
}

/// A whole .npy file: [`npy_header`] then `data`.
#[allow(dead_code)]
pub fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut v = npy_header(descr, shape);
    v.extend_from_slice(data);
    v
}

/// Run `tpusim VERB ARGS… --json`, assert success, and parse its one JSON document.
#[allow(dead_code)]
pub fn json_of(verb: &str, args: &[&str]) -> serde_json::Value {
    let out = tpusim()
        .arg(verb)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

//! Helpers shared by the CLI integration tests (each test file pulls them in with
//! `mod common;`).

use assert_cmd::Command;

/// The `tpusim` binary built by this package, ready for arguments.
pub fn tpusim() -> Command {
    Command::cargo_bin("tpusim").unwrap()
}

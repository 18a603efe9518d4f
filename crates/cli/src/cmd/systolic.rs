//! `tpusim systolic …` (being built).

use anyhow::{bail, Result};
use clap::Subcommand;

/// Verbs of `tpusim systolic`.
#[derive(Subcommand)]
pub enum SystolicCmd {
    /// Not built yet.
    Todo,
}

/// Run one `tpusim systolic` verb.
pub fn run(cmd: SystolicCmd) -> Result<()> {
    match cmd {
        SystolicCmd::Todo => bail!("tpusim systolic is not built yet"),
    }
}

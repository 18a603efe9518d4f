//! `tpusim lmem …` (being built).

use anyhow::{bail, Result};
use clap::Subcommand;

/// Verbs of `tpusim lmem`.
#[derive(Subcommand)]
pub enum LmemCmd {
    /// Not built yet.
    Todo,
}

/// Run one `tpusim lmem` verb.
pub fn run(cmd: LmemCmd) -> Result<()> {
    match cmd {
        LmemCmd::Todo => bail!("tpusim lmem is not built yet"),
    }
}

//! `tpusim layout …` (being built).

use anyhow::{bail, Result};
use clap::Subcommand;

/// Verbs of `tpusim layout`.
#[derive(Subcommand)]
pub enum LayoutCmd {
    /// Not built yet.
    Todo,
}

/// Run one `tpusim layout` verb.
pub fn run(cmd: LayoutCmd) -> Result<()> {
    match cmd {
        LayoutCmd::Todo => bail!("tpusim layout is not built yet"),
    }
}

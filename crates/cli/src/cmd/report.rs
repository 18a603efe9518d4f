//! `tpusim report` (being built).

use anyhow::{bail, Result};
use clap::Args;

/// Arguments of `tpusim report`.
#[derive(Args)]
pub struct ReportArgs {}

/// Run `tpusim report`.
pub fn run(_: ReportArgs) -> Result<()> {
    bail!("tpusim report is not built yet")
}

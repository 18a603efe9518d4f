//! `tpusim plan` (being built).

use anyhow::{bail, Result};
use clap::Args;

/// Arguments of `tpusim plan`.
#[derive(Args)]
pub struct PlanArgs {}

/// Run `tpusim plan`.
pub fn run(_: PlanArgs) -> Result<()> {
    bail!("tpusim plan is not built yet")
}

//! `tpusim chip|roofline|slice|comm …` (being built).

use anyhow::{bail, Result};
use clap::Subcommand;

/// Verbs of `tpusim chip`.
#[derive(Subcommand)]
pub enum ChipCmd {
    /// Not built yet.
    Todo,
}
/// Verbs of `tpusim roofline`.
#[derive(Subcommand)]
pub enum RooflineCmd {
    /// Not built yet.
    Todo,
}
/// Verbs of `tpusim slice`.
#[derive(Subcommand)]
pub enum SliceCmd {
    /// Not built yet.
    Todo,
}
/// Verbs of `tpusim comm`.
#[derive(Subcommand)]
pub enum CommCmd {
    /// Not built yet.
    Todo,
}

/// Run `tpusim chip`.
pub fn run_chip(_: ChipCmd) -> Result<()> {
    bail!("not built yet")
}
/// Run `tpusim roofline`.
pub fn run_roofline(_: RooflineCmd) -> Result<()> {
    bail!("not built yet")
}
/// Run `tpusim slice`.
pub fn run_slice(_: SliceCmd) -> Result<()> {
    bail!("not built yet")
}
/// Run `tpusim comm`.
pub fn run_comm(_: CommCmd) -> Result<()> {
    bail!("not built yet")
}

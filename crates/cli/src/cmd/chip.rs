//! `tpusim chip|roofline|slice|comm …`: the chip database, roofline estimates, pod
//! slices and ICI/PCIe/DCN transfers and collectives (library: `tpusim-chip`).

pub(crate) mod args;
mod comm;
mod info;
mod roofline;
mod slice;

use anyhow::Result;

pub use comm::CommCmd;
pub use info::ChipCmd;
pub use roofline::RooflineCmd;
pub use slice::SliceCmd;

/// Run `tpusim chip`.
pub fn run_chip(cmd: ChipCmd) -> Result<()> {
    info::run(cmd)
}
/// Run `tpusim roofline`.
pub fn run_roofline(cmd: RooflineCmd) -> Result<()> {
    roofline::run(cmd)
}
/// Run `tpusim slice`.
pub fn run_slice(cmd: SliceCmd) -> Result<()> {
    slice::run(cmd)
}
/// Run `tpusim comm`.
pub fn run_comm(cmd: CommCmd) -> Result<()> {
    comm::run(cmd)
}

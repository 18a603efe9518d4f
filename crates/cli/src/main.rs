//! `tpusim`: the command-line program. One subcommand per area (`layout`, `chip`,
//! `roofline`, `slice`, `comm`, `lmem`, `systolic`, `plan`, `report`); every verb prints
//! a readable table by default and exactly one JSON document with `--json`.
//!
//! Errors print one line `error: …` on stderr; exit code 2 for bad input, 1 for an
//! internal failure (see [`util::exit_code`]).

mod cmd;
mod util;

use clap::{Parser, Subcommand};

/// Model how TPU-style accelerators lay out, move and compute tensors.
#[derive(Parser)]
#[command(name = "tpusim", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    area: Area,
}

#[derive(Subcommand)]
enum Area {
    /// XLA tiled layouts: parse, index, sizes, TPU defaults, convert data, HLO padding
    #[command(subcommand)]
    Layout(cmd::layout::LayoutCmd),
    /// TPU/GPU chip database: list chips, show every figure of one
    #[command(subcommand)]
    Chip(cmd::chip::ChipCmd),
    /// Roofline estimates: matmuls and ops against a chip's compute and memory roofs
    #[command(subcommand)]
    Roofline(cmd::chip::RooflineCmd),
    /// Slices of a TPU pod: chips, hosts, wraparound, hop distances
    #[command(subcommand)]
    Slice(cmd::chip::SliceCmd),
    /// Transfers and collectives over ICI, PCIe and DCN
    #[command(subcommand)]
    Comm(cmd::chip::CommCmd),
    /// NPU local memory (Sophgo style): presets, strides, addresses, lane maps
    #[command(subcommand)]
    Lmem(cmd::lmem::LmemCmd),
    /// Systolic arrays: cycle-accurate and analytic GEMM/conv, SCALE-Sim runs
    #[command(subcommand)]
    Systolic(cmd::systolic::SystolicCmd),
    /// Layer groups: plan a network into NPU local memory
    Plan(cmd::plan::PlanArgs),
    /// End to end: time a network on a chip and show where time and memory go
    Report(cmd::report::ReportArgs),
}

fn main() {
    restore_sigpipe();
    let cli = Cli::try_parse().unwrap_or_else(|e| usage_error(e));
    let result = match cli.area {
        Area::Layout(c) => cmd::layout::run(c),
        Area::Chip(c) => cmd::chip::run_chip(c),
        Area::Roofline(c) => cmd::chip::run_roofline(c),
        Area::Slice(c) => cmd::chip::run_slice(c),
        Area::Comm(c) => cmd::chip::run_comm(c),
        Area::Lmem(c) => cmd::lmem::run(c),
        Area::Systolic(c) => cmd::systolic::run(c),
        Area::Plan(a) => cmd::plan::run(a),
        Area::Report(a) => cmd::report::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(util::exit_code(&e));
    }
}

/// Help and version requests print as clap prints them; a command line clap rejects
/// becomes one line `error: …` (clap's message and its tip, without the usage block)
/// and exit code 2, like every other bad input.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    let mut line = String::new();
    for part in text
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
    {
        if !line.is_empty() {
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(part);
    }
    let line = line.strip_prefix("error: ").unwrap_or(&line);
    eprintln!("error: {line} (see --help)");
    std::process::exit(2);
}

/// Rust ignores SIGPIPE, so `tpusim … | head` would panic on the first write after the
/// reader left. Restore the default action: the process ends quietly, as Unix tools do.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up before any thread exists; SIG_DFL is a valid action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

//! `tpusim`: the command-line program. One subcommand per area (`layout`, `chip`,
//! `roofline`, `slice`, `comm`, `lmem`, `systolic`, `llm`, `plan`, `report`); every verb prints
//! a readable table by default and exactly one JSON document with `--json`.
//!
//! Errors print one line `error: …` on stderr; exit code 2 for bad input, 1 for an
//! internal failure (see [`util::exit_code`]).

mod cmd;
mod fmt;
mod input;
mod output;
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
    /// Transformers and LLMs on TPU slices: models, serve, train, sharding, validate
    #[command(subcommand)]
    Llm(cmd::llm::LlmCmd),
    /// Layer groups: plan a network into NPU local memory
    Plan(cmd::plan::PlanArgs),
    /// End to end: time a network on a chip and show where time and memory go
    Report(cmd::report::ReportArgs),
    /// Shell completions: `tpusim completions bash > /etc/bash_completion.d/tpusim`
    ///
    /// Shells: bash, zsh, fish, elvish, powershell. For zsh, write it to a folder on
    /// $fpath as `_tpusim`; for fish, to ~/.config/fish/completions/tpusim.fish.
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// The manual page: `tpusim man | man -l -`, or `tpusim man --out DIR` for one page
    /// per verb (tpusim.1, tpusim-report.1, …) to install under a man1 folder.
    Man {
        /// Write every page into this folder instead of printing the main one.
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
    },
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
        Area::Llm(c) => cmd::llm::run(c),
        Area::Plan(a) => cmd::plan::run(a),
        Area::Report(a) => cmd::report::run(a),
        Area::Completions { shell } => {
            cmd::docs::completions(shell, <Cli as clap::CommandFactory>::command())
        }
        Area::Man { out } => {
            cmd::docs::man(out.as_deref(), <Cli as clap::CommandFactory>::command())
        }
    };
    if let Err(e) = result {
        fail(&format!("{e:#}"), util::exit_code(&e));
    }
}

/// End the process on an error: one line `error: …` on stderr (control characters
/// escaped, long words cut: [`util::shown`]) and, under `--json`, one JSON object
/// `{"error": …, "kind": "bad_input" | "internal"}` on stdout. Exit code 2 for bad
/// input, 1 for an internal failure.
fn fail(message: &str, code: i32) -> ! {
    let message = util::shown(message);
    if json_requested() {
        let kind = if code == 1 { "internal" } else { "bad_input" };
        println!("{}", serde_json::json!({ "error": message, "kind": kind }));
    }
    eprintln!("error: {message}");
    std::process::exit(code);
}

/// True when the command line asks for JSON output (`--json` before any `--`).
fn json_requested() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
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
    fail(&format!("{} (see --help)", usage_tip(line)), 2);
}

/// clap's tip for a value that starts with `-` (`use '-- -1'`) does not work for an
/// option's value: name the form that does (`--batch=-1`), or drop the tip.
fn usage_tip(line: &str) -> String {
    let Some((before, tip)) = line.split_once("; tip: to pass '") else {
        return line.to_string();
    };
    let Some((value, _)) = tip.split_once("' as a value") else {
        return line.to_string();
    };
    let args: Vec<String> = std::env::args().collect();
    let option = args
        .windows(2)
        .find(|w| w[1] == value && w[0].starts_with("--"))
        .map(|w| w[0].clone());
    match option {
        Some(o) => {
            format!("{before}; tip: to give '{value}' as the value of {o}, write {o}={value}")
        }
        None => before.to_string(),
    }
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

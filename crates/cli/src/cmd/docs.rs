//! `tpusim completions SHELL` and `tpusim man`: generated from the same clap command
//! tree that parses the command line, so they never drift from it.

use crate::output::Outputs;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Print the completion script for `shell` on stdout.
pub fn completions(shell: clap_complete::Shell, mut cmd: clap::Command) -> Result<()> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "tpusim", &mut buf);
    std::io::stdout()
        .write_all(&buf)
        .context("writing to stdout")
}

/// The man page of `cmd` in roff.
fn page(cmd: clap::Command) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .context("rendering the man page")?;
    Ok(buf)
}

/// Print the main page, or write one page per command and verb into `out`.
pub fn man(out: Option<&Path>, cmd: clap::Command) -> Result<()> {
    let cmd = cmd.name("tpusim");
    let Some(dir) = out else {
        return std::io::stdout()
            .write_all(&page(cmd)?)
            .context("writing to stdout");
    };
    let mut outputs = Outputs::default();
    collect_pages(&mut outputs, dir, cmd.clone(), "tpusim")?;
    outputs.commit()
}

/// Queue the page of `cmd` (named `name`) and of every subcommand below it.
fn collect_pages(
    outputs: &mut Outputs,
    dir: &Path,
    mut cmd: clap::Command,
    name: &str,
) -> Result<()> {
    cmd.build();
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let sub_name = format!("{name}-{}", sub.get_name());
        collect_pages(outputs, dir, sub.clone().name(sub_name.clone()), &sub_name)?;
    }
    outputs.add(&dir.join(format!("{name}.1")), page(cmd)?);
    Ok(())
}

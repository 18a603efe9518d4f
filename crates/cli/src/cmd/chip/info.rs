//! `tpusim chip list|show`: the chip database.

use super::args::ChipFile;
use crate::fmt::{opt, sci, table};
use crate::util::print_json;
use anyhow::Result;
use clap::Subcommand;
use serde::Serialize;
use tpusim_chip::{Chip, Derived};

/// Verbs of `tpusim chip`.
#[derive(Subcommand)]
pub enum ChipCmd {
    /// List the built-in chips with their headline figures.
    ///
    /// Example: `tpusim chip list`
    List {
        /// One JSON document: {"chips": [every figure of every chip]}.
        #[arg(long)]
        json: bool,
    },
    /// Every figure of one chip, as named in its TOML file, plus derived figures
    /// (vpu_flops_per_s, vmem_bytes_per_s, peaks per dtype, critical intensities).
    ///
    /// Examples: `tpusim chip show v5p --json`, `tpusim chip show v5e --toml > my.toml`,
    /// `tpusim chip show mychip --chip-file my.toml`
    Show {
        /// Chip name or alias: v3, v4p, v5p, v5e, v6e, h100, b200.
        chip: String,
        /// One JSON document with every figure (sizes in bytes, rates per second).
        #[arg(long, conflicts_with = "toml")]
        json: bool,
        /// Print the chip's TOML source (a template for --chip-file).
        #[arg(long)]
        toml: bool,
        #[command(flatten)]
        file: ChipFile,
    },
}

#[derive(Serialize)]
struct Shown<'a> {
    #[serde(flatten)]
    chip: &'a Chip,
    #[serde(flatten)]
    derived: Derived,
}

/// Run one `tpusim chip` verb.
pub fn run(cmd: ChipCmd) -> Result<()> {
    match cmd {
        ChipCmd::List { json } => {
            let chips = tpusim_chip::builtin()?;
            if json {
                let shown: Vec<Shown> = chips
                    .iter()
                    .map(|c| Shown {
                        chip: c,
                        derived: c.derived(),
                    })
                    .collect();
                return print_json(&serde_json::json!({ "chips": shown }));
            }
            println!(
                "{:<6} {:<20} {:>8} {:>10} {:>10} {:>10} {:>10} {:>9}",
                "name", "chip", "HBM", "HBM B/s", "bf16 /s", "int8 /s", "ICI 1-way", "pod"
            );
            for c in &chips {
                println!(
                    "{:<6} {:<20} {:>6}GB {:>10.3e} {:>10.3e} {:>10} {:>10.3e} {:>9}",
                    c.name,
                    c.display_name,
                    c.hbm_bytes / 1_000_000_000,
                    c.hbm_bytes_per_s,
                    c.bf16_flops_per_s,
                    c.int8_ops_per_s
                        .map(|v| format!("{v:.3e}"))
                        .unwrap_or_else(|| "-".into()),
                    c.ici_one_way_bytes_per_s,
                    tpusim_chip::slice::format_shape(&c.pod_shape)
                );
            }
            Ok(())
        }
        ChipCmd::Show {
            chip,
            json,
            toml,
            file,
        } => {
            let c = file.resolve(&chip)?;
            if toml {
                if file.chip_file.is_some()
                    && !tpusim_chip::database::builtin()
                        .map(|b| b.contains(&c))
                        .unwrap_or(false)
                {
                    let path = file
                        .chip_file
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default();
                    print!(
                        "{}",
                        crate::input::read_input(
                            std::path::Path::new(&path),
                            crate::input::InputKind::ChipToml
                        )?
                    );
                } else {
                    print!("{}", tpusim_chip::database::builtin_toml(&c.name)?);
                }
                return Ok(());
            }
            let d = c.derived();
            if json {
                return print_json(&Shown {
                    chip: &c,
                    derived: d,
                });
            }
            show_table(&c, &d);
            Ok(())
        }
    }
}

fn show_table(c: &Chip, d: &Derived) {
    let shape = tpusim_chip::slice::format_shape;
    let mut rows: Vec<(&str, String)> = vec![
        ("chip", format!("{} ({})", c.display_name, c.name)),
        ("hbm_bytes", sci(c.hbm_bytes as f64, "B")),
        ("hbm_bytes_per_s", sci(c.hbm_bytes_per_s, "B/s")),
        ("vmem_bytes", opt(c.vmem_bytes.map(|v| v as f64), "B")),
        ("vmem_bytes_per_s", opt(d.vmem_bytes_per_s, "B/s")),
        ("cores_per_chip", c.cores_per_chip.to_string()),
        ("mxus_per_core", c.mxus_per_core.to_string()),
        (
            "mxu_dim",
            c.mxu_dim
                .map(|m| format!("{m}x{m}"))
                .unwrap_or_else(|| "-".into()),
        ),
        ("clock_hz", opt(c.clock_hz, "Hz")),
        ("vpu_flops_per_s", opt(d.vpu_flops_per_s, "FLOP/s")),
    ];
    for p in &d.peaks {
        let label: &'static str = match p.class.name() {
            "bf16" => "peak bf16",
            "f32" => "peak f32",
            "int8" => "peak int8",
            "int4" => "peak int4",
            _ => "peak fp8",
        };
        let origin = if p.origin == "table" {
            String::new()
        } else {
            format!("  ({})", p.origin)
        };
        rows.push((label, format!("{}{origin}", sci(p.ops_per_s, "op/s"))));
    }
    rows.extend([
        (
            "ici_one_way_bytes_per_s",
            sci(c.ici_one_way_bytes_per_s, "B/s per link"),
        ),
        (
            "ici_bidi_bytes_per_s",
            sci(c.ici_bidi_bytes_per_s, "B/s per link"),
        ),
        ("ici_links_per_chip", c.ici_links_per_chip.to_string()),
        ("pcie_bytes_per_s", sci(c.pcie_bytes_per_s, "B/s")),
        ("dcn_bytes_per_s", sci(c.dcn_bytes_per_s, "B/s")),
        (
            "pod_shape",
            format!("{} ({} chips)", shape(&c.pod_shape), d.pod_chips),
        ),
        (
            "host_shape",
            format!("{} ({} chips)", shape(&c.host_shape), d.chips_per_host),
        ),
        ("wraparound", format!("{:?}", c.wraparound)),
        ("hop_latency_s", sci(c.hop_latency_s, "s")),
        (
            "critical_intensity_hbm",
            sci(d.critical_intensity_hbm, "FLOP/B"),
        ),
        (
            "critical_intensity_vmem",
            opt(d.critical_intensity_vmem, "FLOP/B"),
        ),
        (
            "critical_intensity_pcie",
            sci(d.critical_intensity_pcie, "FLOP/B"),
        ),
        (
            "critical_batch_ici_bidi",
            sci(d.critical_batch_ici_bidi, "per chip"),
        ),
    ]);
    table(&rows);
}

//! `tpusim lmem …`: Sophgo-style NPU local memory — chip presets, strides, sizes,
//! element addresses (and back), lane-map pictures.

mod args;
mod report;

use anyhow::{Context, Result};
use args::{ChipArgs, TensorArgs};
use clap::Subcommand;
use std::path::PathBuf;
use tpusim_lmem::ElementIndex;

/// Verbs of `tpusim lmem`.
#[derive(Subcommand)]
pub enum LmemCmd {
    /// List the built-in chip presets (NPU_NUM, EU_BYTES, bytes per lane, banks).
    ///
    /// Example: `tpusim lmem presets`
    Presets {
        /// Print one JSON document instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show every figure of one chip preset (or of a --chip-file).
    ///
    /// Example: `tpusim lmem show bm1688 --json`
    Show {
        /// Preset name (see `tpusim lmem presets`); omit with --chip-file.
        #[arg(value_name = "PRESET", required_unless_present = "chip_file")]
        preset: Option<String>,
        /// Show the chip described by this TOML file instead.
        #[arg(long, value_name = "FILE", conflicts_with = "preset")]
        chip_file: Option<PathBuf>,
        /// Print one JSON document instead of a table.
        #[arg(long, conflicts_with = "toml")]
        json: bool,
        /// Print the chip as TOML (a starting point for --chip-file).
        #[arg(long)]
        toml: bool,
    },
    /// Strides (in elements) and per-lane size of a tensor in global or local memory.
    ///
    /// Example (the spec's seed vector: 4 NPUs, EU_BYTES 64 → N stride 64):
    /// `tpusim lmem strides --npu-num 4 --eu-bytes 64 --shape 2,3,4,5 --dtype f16 --start-npu 2`
    Strides {
        #[command(flatten)]
        chip: ChipArgs,
        #[command(flatten)]
        tensor: TensorArgs,
        /// Print one JSON document (fields n, c, d, h, w, lane_bytes, lanes_used,
        /// eu_num, …) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Address of one element: lane, byte offset in the lane, flat address.
    ///
    /// Example: `tpusim lmem addr --chip bm1684x --shape 1,96,28,28 --dtype f16 --index 0,70,3,4 --addr 32KiB`
    Addr {
        #[command(flatten)]
        chip: ChipArgs,
        #[command(flatten)]
        tensor: TensorArgs,
        /// Element index n,c,h,w (or n,c,d,h,w), zero-based.
        #[arg(long, value_name = "n,c,h,w")]
        index: String,
        /// Print one JSON document (fields lane, offset, bit, address) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The inverse of `addr`: which element (if any) is stored at a lane and byte offset.
    ///
    /// Example: `tpusim lmem locate --chip bm1684x --shape 1,96,28,28 --lane 6 --offset 34390`
    Locate {
        #[command(flatten)]
        chip: ChipArgs,
        #[command(flatten)]
        tensor: TensorArgs,
        /// Lane (NPU) index; 0 for the global layout.
        #[arg(long, value_name = "LANE")]
        lane: u64,
        /// Byte offset from the start of the lane (or of global memory), e.g. `34390`.
        #[arg(long, value_name = "BYTES")]
        offset: String,
        /// Print one JSON document (fields used, n, c, d, h, w) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Draw which lane holds what: lanes as columns, rows of channel regions per batch.
    ///
    /// Example: `tpusim lmem map --npu-num 4 --eu-bytes 64 --shape 2,3,4,5 --start-npu 2 --svg lanes.svg`
    Map {
        #[command(flatten)]
        chip: ChipArgs,
        #[command(flatten)]
        tensor: TensorArgs,
        /// Write the lane map here (SVG, written atomically).
        #[arg(long, value_name = "FILE")]
        svg: PathBuf,
        /// Print the summary as one JSON document.
        #[arg(long)]
        json: bool,
    },
}

/// Run one `tpusim lmem` verb.
pub fn run(cmd: LmemCmd) -> Result<()> {
    match cmd {
        LmemCmd::Presets { json } => report::presets(&tpusim_planner::NpuChip::presets(), json),
        LmemCmd::Show {
            preset,
            chip_file,
            json,
            toml,
        } => {
            let chip = ChipArgs {
                chip: preset,
                chip_file,
                npu_num: None,
                eu_bytes: None,
                lane_bytes: None,
                banks: None,
            }
            .resolve()?;
            report::show(&chip, json, toml)
        }
        LmemCmd::Strides { chip, tensor, json } => {
            let chip = chip.geometry()?;
            let t = tensor.resolve()?;
            report::strides(&chip, &t, json)
        }
        LmemCmd::Addr {
            chip,
            tensor,
            index,
            json,
        } => {
            let chip = chip.geometry()?;
            let t = tensor.resolve()?;
            let idx = ElementIndex::parse(&index).context("--index")?;
            let a = t.address(&chip, &idx)?;
            report::address(&idx, &a, json)
        }
        LmemCmd::Locate {
            chip,
            tensor,
            lane,
            offset,
            json,
        } => {
            let chip = chip.geometry()?;
            let t = tensor.resolve()?;
            let offset = crate::util::parse_bytes(&offset).context("--offset")?;
            let found = t.locate(&chip, lane, offset)?;
            report::located(lane, offset, found.as_ref(), json)
        }
        LmemCmd::Map {
            chip,
            tensor,
            svg,
            json,
        } => {
            let chip = chip.geometry()?;
            let t = tensor.resolve()?;
            let text = tpusim_lmem::svg::lane_map(&chip, &t)?;
            crate::util::write_atomic(&svg, text.as_bytes())?;
            report::strides(&chip, &t, json)?;
            if !json {
                println!("wrote {}", svg.display());
            }
            Ok(())
        }
    }
}

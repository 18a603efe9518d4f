//! `tpusim slice info|hops`: slices of a pod.

use super::args::Topo;
use crate::fmt::{bytes as fbytes, opt, sci, table};
use crate::util::print_json;
use anyhow::{anyhow, Result};
use clap::Subcommand;
use tpusim_chip::RateClass;

/// Verbs of `tpusim slice`.
#[derive(Subcommand)]
pub enum SliceCmd {
    /// Chips, hosts, TensorCores, FLOP/s, HBM, wraparound per axis, diameter and
    /// bisection bandwidth of a slice.
    ///
    /// Examples: `tpusim slice info v5e 16x16`, `tpusim slice info v5p 4x4x8 --json`
    Info {
        #[command(flatten)]
        topo: Topo,
        /// Dtype of the FLOP/s total: bf16, f32, int8, int4, fp8.
        #[arg(long, default_value = "bf16")]
        dtype: String,
        /// One JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Shortest-path hop count between two chips of a slice.
    ///
    /// Example: `tpusim slice hops v5e 4x4 --from 0,0 --to 3,3`
    Hops {
        #[command(flatten)]
        topo: Topo,
        /// Source chip coordinate `I,J[,K]`.
        #[arg(long)]
        from: String,
        /// Destination chip coordinate `I,J[,K]`.
        #[arg(long)]
        to: String,
        /// One JSON document.
        #[arg(long)]
        json: bool,
    },
}

/// Run one `tpusim slice` verb.
pub fn run(cmd: SliceCmd) -> Result<()> {
    match cmd {
        SliceCmd::Info { topo, dtype, json } => {
            let s = topo.slice()?;
            let t: tpusim_layout::ElementType =
                dtype.parse().map_err(|e| anyhow!("--dtype: {e}"))?;
            let class = RateClass::of(t)?;
            let info = s.info(class)?;
            if json {
                return print_json(&info);
            }
            table(&[
                ("slice", format!("{} {}", s.chip.display_name, s.shape())),
                ("chips", info.chips.to_string()),
                (
                    "hosts",
                    format!(
                        "{} (host {})",
                        info.hosts,
                        tpusim_chip::slice::format_shape(&s.chip.host_shape)
                    ),
                ),
                ("cores", info.cores.to_string()),
                ("wraparound", format!("{:?}", info.wraparound)),
                (
                    "flops_per_s",
                    sci(info.flops_per_s, &format!("{} FLOP/s", class.name())),
                ),
                ("hbm", fbytes(info.hbm_bytes as f64)),
                ("max_hops", info.max_hops.to_string()),
                (
                    "bisection",
                    format!(
                        "{} links, {}",
                        info.bisection_links.unwrap_or(0),
                        opt(info.bisection_bytes_per_s, "B/s one way")
                    ),
                ),
            ]);
            Ok(())
        }
        SliceCmd::Hops {
            topo,
            from,
            to,
            json,
        } => {
            let s = topo.slice()?;
            let a = s.parse_coord(&from)?;
            let b = s.parse_coord(&to)?;
            let hops = s.distance(&a, &b)?;
            let per_axis: Vec<u64> = (0..s.dims.len())
                .map(|i| s.axis_distance(i, a[i], b[i]))
                .collect();
            if json {
                return print_json(&serde_json::json!({
                    "hops": hops, "per_axis": per_axis, "wraparound": s.wraparound, "max_hops": s.max_hops()
                }));
            }
            table(&[
                ("hops", hops.to_string()),
                ("per axis", format!("{per_axis:?}")),
                ("wraparound", format!("{:?}", s.wraparound)),
                ("max_hops", s.max_hops().to_string()),
            ]);
            Ok(())
        }
    }
}

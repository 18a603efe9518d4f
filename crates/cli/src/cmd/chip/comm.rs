//! `tpusim comm …`: point-to-point, host, DCN transfers and collectives.

use super::args::{rate, seconds, Size, Topo};
use crate::fmt::{bytes as fbytes, sci, table, time};
use crate::util::print_json;
use anyhow::Result;
use clap::{Args, Subcommand};
use tpusim_chip::collective::{collective, Collective};
use tpusim_chip::transfer::{dcn, gather, host_load, host_to_chip, p2p};

/// Link options of ICI verbs.
#[derive(Args, Debug, Clone)]
pub struct Link {
    /// Latency per ICI hop, seconds (default: the chip's, 1e-6).
    #[arg(long, value_name = "S")]
    hop_latency: Option<String>,
    /// Override the link bandwidth, bytes/s (one direction per link for p2p and
    /// gather/scatter; both directions for collectives).
    #[arg(long, value_name = "B/s")]
    bw: Option<String>,
    /// One JSON document (times in seconds).
    #[arg(long)]
    json: bool,
}

/// Arguments of a collective.
#[derive(Args, Debug, Clone)]
pub struct CollectiveArgs {
    #[command(flatten)]
    topo: Topo,
    /// Mesh axes, comma-separated: X, Y, Z in the order of the shape (or 0, 1, 2).
    #[arg(long)]
    axes: String,
    #[command(flatten)]
    size: Size,
    #[command(flatten)]
    link: Link,
}

/// Verbs of `tpusim comm`.
#[derive(Subcommand)]
pub enum CommCmd {
    /// Point-to-point transfer between two chips of a slice over ICI: hops, ports
    /// used, first-byte time and total time.
    ///
    /// Example: `tpusim comm p2p v5e 4x4 --from 0,0 --to 3,3 --array bf16[8,128,8192]`
    P2p {
        #[command(flatten)]
        topo: Topo,
        /// Source chip `I,J[,K]`.
        #[arg(long)]
        from: String,
        /// Destination chip `I,J[,K]`.
        #[arg(long)]
        to: String,
        #[command(flatten)]
        size: Size,
        #[command(flatten)]
        link: Link,
    },
    /// Host ↔ one chip over PCIe.
    ///
    /// Example: `tpusim comm host v6e --bytes 16GB`
    Host {
        /// Chip name or alias.
        chip: String,
        #[command(flatten)]
        size: Size,
        /// Override the PCIe bandwidth, bytes/s.
        #[arg(long, value_name = "B/s")]
        bw: Option<String>,
        /// One JSON document.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        file: super::args::ChipFile,
    },
    /// Load an array sharded over a slice from host memory: every chip over its own
    /// PCIe link in parallel.
    ///
    /// Example: `tpusim comm host-load v5e 4x4 --bytes 16e9 --bw 1.5e10`
    HostLoad {
        #[command(flatten)]
        topo: Topo,
        #[command(flatten)]
        size: Size,
        /// Override the PCIe bandwidth per chip, bytes/s.
        #[arg(long, value_name = "B/s")]
        bw: Option<String>,
        /// One JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Slice → slice over DCN: HBM → PCIe → host → network → host → PCIe → HBM, the
    /// array sharded over every chip of the (equal) slices.
    ///
    /// Example: `tpusim comm dcn v5e 16x16 --bytes 100GB`
    Dcn {
        #[command(flatten)]
        topo: Topo,
        #[command(flatten)]
        size: Size,
        /// Override the DCN bandwidth per chip, bytes/s.
        #[arg(long, value_name = "B/s")]
        bw: Option<String>,
        /// Override the PCIe bandwidth per chip, bytes/s.
        #[arg(long, value_name = "B/s")]
        pcie_bw: Option<String>,
        /// One JSON document.
        #[arg(long)]
        json: bool,
    },
    /// AllGather over mesh axes: every chip ends with the whole array (--bytes = V).
    ///
    /// Example: `tpusim comm allgather v5e 16x16 --axes X --bytes 1GB`
    Allgather(CollectiveArgs),
    /// ReduceScatter over mesh axes (costs an AllGather).
    Reducescatter(CollectiveArgs),
    /// AllReduce over mesh axes (ReduceScatter + AllGather).
    Allreduce(CollectiveArgs),
    /// AllToAll over mesh axes (a quarter of an AllGather on rings, half on lines).
    Alltoall(CollectiveArgs),
    /// Gather every shard of an array into one chip (limited by its usable ports).
    ///
    /// Example: `tpusim comm gather v5e 4x4 --to 0,0 --bytes 16e9`
    Gather {
        #[command(flatten)]
        topo: Topo,
        /// The chip receiving everything, `I,J[,K]`.
        #[arg(long)]
        to: String,
        #[command(flatten)]
        size: Size,
        #[command(flatten)]
        link: Link,
    },
    /// Scatter an array from one chip to every chip (the reverse of gather).
    Scatter {
        #[command(flatten)]
        topo: Topo,
        /// The chip holding the whole array, `I,J[,K]`.
        #[arg(long)]
        from: String,
        #[command(flatten)]
        size: Size,
        #[command(flatten)]
        link: Link,
    },
}

fn latency(link: &Link, default: f64) -> Result<f64> {
    link.hop_latency
        .as_deref()
        .map(|t| seconds("--hop-latency", t))
        .transpose()
        .map(|v| v.unwrap_or(default))
}

fn bw(flag: &str, given: &Option<String>, default: f64) -> Result<f64> {
    given
        .as_deref()
        .map(|t| rate(flag, t))
        .transpose()
        .map(|v| v.unwrap_or(default))
}

/// Run one `tpusim comm` verb.
pub fn run(cmd: CommCmd) -> Result<()> {
    match cmd {
        CommCmd::P2p {
            topo,
            from,
            to,
            size,
            link,
        } => {
            let s = topo.slice()?;
            let (a, b) = (s.parse_coord(&from)?, s.parse_coord(&to)?);
            let v = size.bytes()?;
            let t = p2p(
                &s,
                &a,
                &b,
                v,
                latency(&link, s.chip.hop_latency_s)?,
                bw("--bw", &link.bw, s.chip.ici_one_way_bytes_per_s)?,
            )?;
            if link.json {
                return print_json(&serde_json::json!({
                    "hops": t.hops, "ports": t.ports, "first_byte_s": t.first_byte_s,
                    "total_s": t.total_s, "bandwidth_s": t.bandwidth_s, "t_upper_s": t.t_upper_s,
                    "bytes": v, "link_bytes_per_s": t.link_bytes_per_s,
                }));
            }
            table(&[
                ("bytes", fbytes(v)),
                ("hops", t.hops.to_string()),
                (
                    "ports",
                    format!("{} x {}", t.ports, sci(t.link_bytes_per_s, "B/s")),
                ),
                ("first byte", time(t.first_byte_s)),
                ("total (max)", time(t.total_s)),
                ("total (sum)", time(t.t_upper_s)),
            ]);
            Ok(())
        }
        CommCmd::Host {
            chip,
            size,
            bw: b,
            json,
            file,
        } => {
            let c = file.resolve(&chip)?;
            let v = size.bytes()?;
            let pcie = bw("--bw", &b, c.pcie_bytes_per_s)?;
            let t = host_to_chip(v, pcie)?;
            if json {
                return print_json(
                    &serde_json::json!({"time_s": t, "bytes": v, "pcie_bytes_per_s": pcie}),
                );
            }
            table(&[
                ("bytes", fbytes(v)),
                ("pcie", sci(pcie, "B/s")),
                ("time", time(t)),
            ]);
            Ok(())
        }
        CommCmd::HostLoad {
            topo,
            size,
            bw: b,
            json,
        } => {
            let s = topo.slice()?;
            let v = size.bytes()?;
            let h = host_load(&s, v, bw("--bw", &b, s.chip.pcie_bytes_per_s)?)?;
            if json {
                return print_json(&h);
            }
            table(&[
                ("bytes", fbytes(v)),
                (
                    "chips",
                    format!(
                        "{} on {} hosts, each {}",
                        h.chips,
                        h.hosts,
                        fbytes(h.bytes_per_chip)
                    ),
                ),
                ("pcie", sci(h.pcie_bytes_per_s, "B/s per chip")),
                ("time", time(h.time_s)),
            ]);
            Ok(())
        }
        CommCmd::Dcn {
            topo,
            size,
            bw: b,
            pcie_bw,
            json,
        } => {
            let s = topo.slice()?;
            let v = size.bytes()?;
            let d = dcn(
                &s,
                v,
                bw("--pcie-bw", &pcie_bw, s.chip.pcie_bytes_per_s)?,
                bw("--bw", &b, s.chip.dcn_bytes_per_s)?,
            )?;
            if json {
                return print_json(&d);
            }
            table(&[
                ("bytes", fbytes(v)),
                (
                    "chips",
                    format!("{} per slice, each {}", d.chips, fbytes(d.bytes_per_chip)),
                ),
                ("pcie stage", time(d.pcie_s)),
                ("dcn stage", time(d.dcn_s)),
                (
                    "time (pipelined)",
                    format!("{} ({}-bound)", time(d.time_s), d.bound),
                ),
                ("time (sum)", time(d.t_upper_s)),
            ]);
            Ok(())
        }
        CommCmd::Allgather(a) => run_collective(Collective::AllGather, a),
        CommCmd::Reducescatter(a) => run_collective(Collective::ReduceScatter, a),
        CommCmd::Allreduce(a) => run_collective(Collective::AllReduce, a),
        CommCmd::Alltoall(a) => run_collective(Collective::AllToAll, a),
        CommCmd::Gather {
            topo,
            to,
            size,
            link,
        } => run_gather(topo, &to, size, link),
        CommCmd::Scatter {
            topo,
            from,
            size,
            link,
        } => run_gather(topo, &from, size, link),
    }
}

fn run_gather(topo: Topo, at: &str, size: Size, link: Link) -> Result<()> {
    let s = topo.slice()?;
    let c = s.parse_coord(at)?;
    let v = size.bytes()?;
    let g = gather(
        &s,
        &c,
        v,
        latency(&link, s.chip.hop_latency_s)?,
        bw("--bw", &link.bw, s.chip.ici_one_way_bytes_per_s)?,
    )?;
    if link.json {
        return print_json(&g);
    }
    table(&[
        ("bytes", fbytes(v)),
        ("bytes through the chip", fbytes(g.bytes_moved)),
        ("ports", g.ports.to_string()),
        ("farthest chip", format!("{} hops", g.hops)),
        ("time", format!("{} ({}-bound)", time(g.time_s), g.regime)),
    ]);
    Ok(())
}

fn run_collective(kind: Collective, a: CollectiveArgs) -> Result<()> {
    let s = a.topo.slice()?;
    let axes = s.parse_axes(&a.axes)?;
    let v = a.size.bytes()?;
    let e = collective(
        &s,
        kind,
        &axes,
        v,
        latency(&a.link, s.chip.hop_latency_s)?,
        bw("--bw", &a.link.bw, s.chip.ici_bidi_bytes_per_s)?,
    )?;
    if a.link.json {
        return print_json(&e);
    }
    table(&[
        (
            "collective",
            format!(
                "{kind:?} of {} over axes {:?} (sizes {:?}, wraparound {:?})",
                fbytes(v),
                e.axes,
                e.axis_sizes,
                e.wraparound
            ),
        ),
        ("time", time(e.time_s)),
        ("regime", e.regime.clone()),
        ("hops", e.hops.to_string()),
        ("per hop", time(e.per_hop_s)),
        ("latency term", time(e.latency_s)),
        ("bandwidth term", time(e.bandwidth_s)),
    ]);
    Ok(())
}

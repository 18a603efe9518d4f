//! Transfers: point-to-point over ICI (latency per hop, every usable port), host ↔
//! chip over PCIe, loading a sharded array from hosts, gathering all shards into one
//! chip (or scattering them back), and slice ↔ slice over DCN.
//!
//! Following the book, a transfer's time is the larger of its latency term and its
//! bandwidth term (latency overlaps with streaming); the sum is reported as an upper
//! bound where it differs.

use crate::error::{computed, non_negative, positive, Result};
use crate::slice::Slice;
use serde::Serialize;

/// A point-to-point transfer between two chips of a slice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct P2p {
    /// Shortest-path hops between the chips.
    pub hops: u64,
    /// Links of the source (and, symmetrically, the destination) that start a
    /// shortest path: one per axis the chips differ on, two on a ring axis where both
    /// ways round are equally short.
    pub ports: u32,
    /// Time until the first byte arrives: hops × per-hop latency, seconds.
    pub first_byte_s: f64,
    /// Bytes / (ports × one-way link bandwidth), seconds.
    pub bandwidth_s: f64,
    /// max(first_byte_s, bandwidth_s), seconds (the book's estimate).
    pub total_s: f64,
    /// first_byte_s + bandwidth_s, seconds (no overlap).
    pub t_upper_s: f64,
    /// One-way bandwidth per link used, bytes/s.
    pub link_bytes_per_s: f64,
}

/// Point-to-point transfer of `bytes` from chip `from` to chip `to`, with
/// `hop_latency_s` per hop and `link_bytes_per_s` per link and direction.
pub fn p2p(
    slice: &Slice,
    from: &[u32],
    to: &[u32],
    bytes: f64,
    hop_latency_s: f64,
    link_bytes_per_s: f64,
) -> Result<P2p> {
    non_negative("bytes", bytes)?;
    non_negative("hop latency", hop_latency_s)?;
    positive("link bandwidth", link_bytes_per_s)?;
    let hops = slice.distance(from, to)?;
    let ports: u32 = (0..slice.dims.len())
        .map(|i| {
            let d = slice.axis_distance(i, from[i], to[i]);
            let n = u64::from(slice.dims[i]);
            match d {
                0 => 0,
                _ if slice.wraparound[i] && 2 * d == n => 2,
                _ => 1,
            }
        })
        .sum();
    let first_byte_s = computed(
        "the first-byte time (hops × hop latency)",
        hops as f64 * hop_latency_s,
    )?;
    let bandwidth_s = if ports == 0 {
        0.0
    } else {
        computed(
            "the transfer time (bytes / bandwidth)",
            bytes / (f64::from(ports) * link_bytes_per_s),
        )?
    };
    computed("the time without overlap", first_byte_s + bandwidth_s)?;
    Ok(P2p {
        hops,
        ports,
        first_byte_s,
        bandwidth_s,
        total_s: first_byte_s.max(bandwidth_s),
        t_upper_s: first_byte_s + bandwidth_s,
        link_bytes_per_s,
    })
}

/// Loading (or offloading) an array over PCIe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostLoad {
    /// Seconds until every chip holds its share.
    pub time_s: f64,
    /// Chips loading in parallel, each over its own PCIe link.
    pub chips: u64,
    /// Hosts those chips hang off.
    pub hosts: u64,
    /// Bytes each chip receives.
    pub bytes_per_chip: f64,
    /// PCIe bandwidth per chip used, bytes/s.
    pub pcie_bytes_per_s: f64,
}

/// Load `bytes`, sharded evenly over every chip of `slice`, from host memory: all
/// chips use their own PCIe link at once, so `time = bytes / (chips × pcie)`.
pub fn host_load(slice: &Slice, bytes: f64, pcie_bytes_per_s: f64) -> Result<HostLoad> {
    non_negative("bytes", bytes)?;
    positive("PCIe bandwidth", pcie_bytes_per_s)?;
    let chips = slice.chips();
    Ok(HostLoad {
        time_s: computed(
            "the load time (bytes / PCIe bandwidth)",
            bytes / (chips as f64 * pcie_bytes_per_s),
        )?,
        chips,
        hosts: slice.hosts(),
        bytes_per_chip: bytes / chips as f64,
        pcie_bytes_per_s,
    })
}

/// Time to move `bytes` between one chip and its host over PCIe, seconds.
pub fn host_to_chip(bytes: f64, pcie_bytes_per_s: f64) -> Result<f64> {
    non_negative("bytes", bytes)?;
    positive("PCIe bandwidth", pcie_bytes_per_s)?;
    computed(
        "the transfer time (bytes / PCIe bandwidth)",
        bytes / pcie_bytes_per_s,
    )
}

/// Gathering every shard into one chip, or scattering from it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gather {
    /// max(latency_s, bandwidth_s), seconds.
    pub time_s: f64,
    /// Bytes that cross the target chip's links (all shards but its own).
    pub bytes_moved: f64,
    /// In-slice links of the target chip.
    pub ports: u32,
    /// Most hops from the target to any chip.
    pub hops: u64,
    /// hops × per-hop latency, seconds.
    pub latency_s: f64,
    /// bytes_moved / (ports × one-way link bandwidth), seconds.
    pub bandwidth_s: f64,
    /// `latency` or `bandwidth`: which term sets the time.
    pub regime: String,
}

/// Gather an array of `bytes`, sharded evenly over `slice`, into chip `target` (a
/// scatter from it costs the same): limited by the target's in-slice links.
pub fn gather(
    slice: &Slice,
    target: &[u32],
    bytes: f64,
    hop_latency_s: f64,
    link_bytes_per_s: f64,
) -> Result<Gather> {
    non_negative("bytes", bytes)?;
    non_negative("hop latency", hop_latency_s)?;
    positive("link bandwidth", link_bytes_per_s)?;
    let ports = slice.ports_at(target)?;
    let hops = slice.eccentricity(target)?;
    let chips = slice.chips() as f64;
    let bytes_moved = bytes * (chips - 1.0) / chips;
    let latency_s = computed(
        "the latency (hops × hop latency)",
        hops as f64 * hop_latency_s,
    )?;
    let bandwidth_s = if ports == 0 {
        0.0
    } else {
        computed(
            "the transfer time (bytes / bandwidth)",
            bytes_moved / (f64::from(ports) * link_bytes_per_s),
        )?
    };
    Ok(Gather {
        time_s: latency_s.max(bandwidth_s),
        bytes_moved,
        ports,
        hops,
        latency_s,
        bandwidth_s,
        regime: if latency_s >= bandwidth_s && hops > 0 {
            "latency"
        } else {
            "bandwidth"
        }
        .into(),
    })
}

/// A slice ↔ slice transfer over the data-centre network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dcn {
    /// Pipelined time: the slowest stage, seconds.
    pub time_s: f64,
    /// Sum of the stages (no overlap), seconds.
    pub t_upper_s: f64,
    /// HBM → PCIe → host on the sending side (the same on the receiving side), s.
    pub pcie_s: f64,
    /// Host → network → host, at every sending chip's DCN share, seconds.
    pub dcn_s: f64,
    /// `pcie` or `dcn`: the slowest stage.
    pub bound: String,
    /// Chips sending (and receiving) in parallel.
    pub chips: u64,
    /// Bytes each chip sends.
    pub bytes_per_chip: f64,
}

/// Move `bytes`, sharded evenly over the chips of `slice`, to a second slice of the
/// same shape: HBM → PCIe → host → network → host → PCIe → HBM. Every chip drives
/// its own PCIe link and its share of DCN egress.
pub fn dcn(slice: &Slice, bytes: f64, pcie_bytes_per_s: f64, dcn_bytes_per_s: f64) -> Result<Dcn> {
    non_negative("bytes", bytes)?;
    positive("PCIe bandwidth", pcie_bytes_per_s)?;
    positive("DCN bandwidth", dcn_bytes_per_s)?;
    let chips = slice.chips();
    let per_chip = bytes / chips as f64;
    let pcie_s = computed(
        "the PCIe time (bytes / PCIe bandwidth)",
        per_chip / pcie_bytes_per_s,
    )?;
    let dcn_s = computed(
        "the DCN time (bytes / DCN bandwidth)",
        per_chip / dcn_bytes_per_s,
    )?;
    computed("the time without overlap", 2.0 * pcie_s + dcn_s)?;
    Ok(Dcn {
        time_s: pcie_s.max(dcn_s),
        t_upper_s: 2.0 * pcie_s + dcn_s,
        pcie_s,
        dcn_s,
        bound: if dcn_s >= pcie_s { "dcn" } else { "pcie" }.into(),
        chips,
        bytes_per_chip: per_chip,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::lookup;

    #[test]
    fn problem_5_and_6() {
        let v5e = lookup("v5e").unwrap();
        let s = Slice::new(&v5e, &[4, 4]).unwrap();
        let t = p2p(&s, &[0, 0], &[3, 3], 16_777_216.0, 1e-6, 4.5e10).unwrap();
        assert_eq!((t.hops, t.ports), (6, 2));
        assert!((t.first_byte_s - 6e-6).abs() < 1e-12);
        assert!((t.total_s - 16_777_216.0 / 9e10).abs() < 1e-12);
        let g = gather(&s, &[0, 0], 16e9, 1e-6, 4.5e10).unwrap();
        assert_eq!(g.ports, 2);
        assert!((g.time_s - 15e9 / 9e10).abs() < 1e-9);
        let h = host_load(&s, 16e9, 1.5e10).unwrap();
        assert!((h.time_s - 16e9 / 2.4e11).abs() < 1e-12);
        assert_eq!(h.hosts, 2);
        // a ring axis where both ways are equally short gives two ports
        let pod = Slice::new(&v5e, &[16, 16]).unwrap();
        assert_eq!(
            p2p(&pod, &[0, 0], &[8, 0], 1.0, 1e-6, 1.0).unwrap().ports,
            2
        );
        assert_eq!(
            p2p(&pod, &[0, 0], &[7, 0], 1.0, 1e-6, 1.0).unwrap().ports,
            1
        );
        let d = dcn(&s, 16e9, 1.6e10, 3.125e9).unwrap();
        assert_eq!(d.bound, "dcn");
        assert!((d.time_s - 1e9 / 3.125e9).abs() < 1e-12);
    }
}

//! Collectives on one or more axes of a slice (the book's sharding chapter):
//! AllGather, ReduceScatter, AllReduce and AllToAll on rings (wraparound) or lines.
//!
//! With V the bytes of the whole gathered array, W the bidirectional link bandwidth
//! and T_min the per-hop latency, an axis of n chips contributes
//! - with wraparound: n/2 hops and a bandwidth capacity of W (T = max(T_min·n/2, V/W));
//! - without: n−1 hops, each moving V/n one way at W/2, i.e. capacity (W/2)·n/(n−1).
//!
//! Over several axes the array is split between them: T = max(T_min·Σhops,
//! V / Σcapacity), which is the book's max(T_min·Σ|X_i|/2, V/(W·k)) on k rings.
//! ReduceScatter costs an AllGather; AllReduce is both (twice the time and hops);
//! AllToAll moves a quarter of the AllGather's bytes on a ring (half on a line).

use crate::error::{computed, non_negative, positive, ChipError, Result};
use crate::slice::Slice;
use serde::Serialize;

/// Which collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    /// Every chip ends with the whole array.
    AllGather,
    /// Every chip ends with one reduced shard (same cost as AllGather).
    ReduceScatter,
    /// ReduceScatter then AllGather.
    AllReduce,
    /// Every chip sends a distinct shard to every other.
    AllToAll,
}

impl Collective {
    /// Parse `allgather`, `reducescatter`, `allreduce`, `alltoall` (dashes and
    /// underscores ignored).
    pub fn parse(s: &str) -> Result<Collective> {
        let t: String = s
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .collect::<String>()
            .to_ascii_lowercase();
        match t.as_str() {
            "allgather" => Ok(Collective::AllGather),
            "reducescatter" => Ok(Collective::ReduceScatter),
            "allreduce" => Ok(Collective::AllReduce),
            "alltoall" => Ok(Collective::AllToAll),
            _ => Err(ChipError::BadValue {
                what: "collective".into(),
                expected: "allgather, reducescatter, allreduce or alltoall".into(),
                given: s.to_string(),
            }),
        }
    }
}

/// A collective's estimated time (field names are the CLI's JSON contract).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectiveEstimate {
    /// max(latency_s, bandwidth_s), seconds.
    pub time_s: f64,
    /// `latency` or `bandwidth`: which term sets the time.
    pub regime: String,
    /// Bandwidth time per hop (bandwidth_s / hops), seconds.
    pub per_hop_s: f64,
    /// Sequential hops (Σ n/2 on rings, n−1 on lines; doubled for AllReduce).
    pub hops: u64,
    /// hops × per-hop latency, seconds.
    pub latency_s: f64,
    /// Bytes / combined link capacity of the axes, seconds.
    pub bandwidth_s: f64,
    /// Axes used (0 = X).
    pub axes: Vec<usize>,
    /// Chips along each used axis.
    pub axis_sizes: Vec<u32>,
    /// Wraparound of each used axis.
    pub wraparound: Vec<bool>,
}

/// Time of collective `kind` of an array of `bytes` (V, the whole gathered array)
/// over `axes` of `slice`, with `hop_latency_s` per hop and `bidi_bytes_per_s` (W)
/// per link, both directions together.
pub fn collective(
    slice: &Slice,
    kind: Collective,
    axes: &[usize],
    bytes: f64,
    hop_latency_s: f64,
    bidi_bytes_per_s: f64,
) -> Result<CollectiveEstimate> {
    non_negative("bytes", bytes)?;
    non_negative("hop latency", hop_latency_s)?;
    positive("link bandwidth", bidi_bytes_per_s)?;
    if axes.is_empty() {
        return Err(ChipError::BadAxis {
            given: String::new(),
            shape: slice.shape(),
            problem: "name at least one axis".into(),
        });
    }
    let mut hops = 0u64;
    let mut capacity = 0.0f64;
    for &a in axes {
        if a >= slice.dims.len() {
            return Err(ChipError::BadAxis {
                given: a.to_string(),
                shape: slice.shape(),
                problem: format!("the slice has {} axes", slice.dims.len()),
            });
        }
        let n = slice.dims[a];
        if n < 2 {
            continue;
        }
        let nf = f64::from(n);
        let wrap = slice.wraparound[a];
        hops += if wrap {
            u64::from(n / 2)
        } else {
            u64::from(n - 1)
        };
        let mut cap = if wrap {
            bidi_bytes_per_s
        } else {
            bidi_bytes_per_s / 2.0 * nf / (nf - 1.0)
        };
        if kind == Collective::AllToAll {
            cap *= if wrap { 4.0 } else { 2.0 };
        }
        capacity += cap;
    }
    let mut bandwidth_s = if capacity > 0.0 {
        bytes / capacity
    } else {
        0.0
    };
    if kind == Collective::AllReduce {
        hops *= 2;
        bandwidth_s *= 2.0;
    }
    computed("the transfer time (bytes / bandwidth)", bandwidth_s)?;
    let latency_s = computed(
        "the latency (hops × hop latency)",
        hops as f64 * hop_latency_s,
    )?;
    Ok(CollectiveEstimate {
        time_s: latency_s.max(bandwidth_s),
        regime: if latency_s >= bandwidth_s && hops > 0 {
            "latency"
        } else {
            "bandwidth"
        }
        .into(),
        per_hop_s: if hops > 0 {
            bandwidth_s / hops as f64
        } else {
            0.0
        },
        hops,
        latency_s,
        bandwidth_s,
        axes: axes.to_vec(),
        axis_sizes: axes.iter().map(|&a| slice.dims[a]).collect(),
        wraparound: axes.iter().map(|&a| slice.wraparound[a]).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::lookup;

    #[test]
    fn book_formulas() {
        let v5e = lookup("v5e").unwrap();
        let pod = Slice::new(&v5e, &[16, 16]).unwrap();
        let w = 9e10;
        // one ring axis: max(T_min·n/2, V/W)
        let big = collective(&pod, Collective::AllGather, &[0], 1e9, 1e-6, w).unwrap();
        assert!((big.time_s - 1e9 / w).abs() < 1e-15);
        assert_eq!((big.hops, big.regime.as_str()), (8, "bandwidth"));
        assert!((big.per_hop_s - 2.0 * 1e9 / (16.0 * w)).abs() < 1e-15);
        let small = collective(&pod, Collective::AllGather, &[0], 1e4, 1e-6, w).unwrap();
        assert_eq!(small.regime, "latency");
        assert!((small.time_s - 8e-6).abs() < 1e-15);
        // two ring axes: V/(2W), latency Σ n/2
        let two = collective(&pod, Collective::ReduceScatter, &[0, 1], 1e9, 1e-6, w).unwrap();
        assert!((two.time_s - 1e9 / (2.0 * w)).abs() < 1e-15);
        assert_eq!(two.hops, 16);
        // a line: (n-1)·(V/n)/(W/2)
        let s = Slice::new(&v5e, &[4, 4]).unwrap();
        let line = collective(&s, Collective::AllGather, &[0], 1e9, 1e-6, w).unwrap();
        assert!((line.time_s - 3.0 * (1e9 / 4.0) / (w / 2.0)).abs() < 1e-12);
        let ar = collective(&pod, Collective::AllReduce, &[0], 1e9, 1e-6, w).unwrap();
        assert!((ar.time_s - 2e9 / w).abs() < 1e-15);
        let a2a = collective(&pod, Collective::AllToAll, &[0], 1e9, 1e-6, w).unwrap();
        assert!((a2a.time_s - 1e9 / (4.0 * w)).abs() < 1e-15);
    }
}

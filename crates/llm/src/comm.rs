//! Collective times on a strategy's sub-slice, through the chip model's
//! collectives (wraparound rules included), scaled by the efficiency figures.

use crate::axes::Placed;
use crate::calib::Efficiency;
use crate::error::Result;
use tpusim_chip::{collective::collective, Collective};

/// Seconds for one `kind` collective of `bytes` (the whole gathered array) over
/// every axis of `placed`.
pub fn time(placed: &Placed, kind: Collective, bytes: f64, eff: &Efficiency) -> Result<f64> {
    let s = &placed.slice;
    let axes: Vec<usize> = (0..s.dims.len()).collect();
    let est = collective(
        s,
        kind,
        &axes,
        bytes,
        s.chip.hop_latency_s * eff.hop_latency,
        s.chip.ici_bidi_bytes_per_s * eff.ici,
    )?;
    Ok(est.time_s)
}

/// The placement of `strategy`, if it is used.
pub fn find<'a>(placed: &'a [Placed], strategy: &str) -> Option<&'a Placed> {
    placed.iter().find(|p| p.strategy == strategy)
}

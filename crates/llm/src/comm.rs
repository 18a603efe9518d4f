//! Collective times on a strategy's sub-slice, through the chip model's
//! collectives (wraparound rules included), scaled by the efficiency figures.

use crate::axes::{Degrees, Placed};
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

/// Time of `kind` over `strategy`'s sub-slice, 0 when the strategy is unused.
fn on(
    placed: &[Placed],
    strategy: &str,
    kind: Collective,
    bytes: f64,
    eff: &Efficiency,
) -> Result<f64> {
    match find(placed, strategy) {
        Some(p) => time(p, kind, bytes, eff),
        None => Ok(0.0),
    }
}

/// One block's collectives (an MLP of hidden width F, or attention over its heads'
/// width) for `tokens` tokens under 2-D weight-stationary sharding, the book's algorithm
/// (Part 7, question 7): weights `W_in[D_X, F_YZ]`, `W_out[F_YZ, D_X]` with X = `tp_d`,
/// YZ = `tp`; the input AllGathered over YZ (`[B, D_XYZ] → [B, D_X]`), the partial sums
/// of `[B, F_YZ]` AllReduced over X, the output ReduceScattered over YZ (`→ [B, D_XYZ]`):
/// on a torus `2BD/(X·W) + 4BF/(YZ·W)` in bf16, each collective through the chip
/// model's times on the axes it runs over. A backward pass costs the same (each
/// collective's transpose: AllGather ↔ ReduceScatter, AllReduce ↔ AllReduce).
pub fn tp_2d_block(
    placed: &[Placed],
    deg: &Degrees,
    d_model: u64,
    tokens: f64,
    width: f64,
    eff: &Efficiency,
) -> Result<f64> {
    let (x, yz) = (deg.tp_d as f64, deg.tp as f64);
    let gathered = tokens * d_model as f64 / x * 2.0;
    Ok(on(placed, "tp", Collective::AllGather, gathered, eff)?
        + on(
            placed,
            "tp_d",
            Collective::AllReduce,
            tokens * width / yz * 2.0,
            eff,
        )?
        + on(placed, "tp", Collective::ReduceScatter, gathered, eff)?)
}

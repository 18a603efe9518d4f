//! SCALE-Sim 3.0.0's compute-side columns of one layer, before any stall: Total Cycles,
//! the three utilizations, the SRAM read/write counts and the demand rows where each
//! operand's SRAM traffic starts and stops (see `compat.rs` for the facts).
//!
//! Dense layers get every figure in closed form. Sparse layers (`sparsity.rs`) change
//! the operand matrices: the counts follow the same folds, the SRAM start/stop rows are
//! found by walking the demand rows from either end, and ws counts the IFMAP's reads as
//! SCALE-Sim does under sparsity (× M/N as floats; with `OptimizedMapping`, the whole
//! `skew_matrix_row_sparsity` demand, padding included) and its mapping efficiency from
//! the FILTER tile's −1 entries.

use super::demand::{Mapping, Operand};
use super::report::Access;
use super::sparsity::Operands;
use super::topology::TopoLayer;
use crate::error::{Result, SystolicError};
use crate::shape::Dataflow;

/// Largest element count the closed form scans for validity edges.
const SCAN_LIMIT: u64 = 1 << 22;
/// Most demand rows walked from either end to find a sparse operand's first and last.
const SCAN_ROWS: u64 = 1 << 22;
/// Most FILTER elements checked for the mapping efficiency of a row-wise sparse layer.
const MAX_TILE_CHECKS: u64 = 1 << 28;
/// Most folds.
pub(crate) const MAX_FOLDS: u64 = 50_000_000;

/// The compute side of one layer.
#[derive(Debug, Clone)]
pub(crate) struct ComputeSide {
    /// Total Cycles without stalls: `folds · Lf − 1`.
    pub(crate) total: u64,
    /// 100 × the dense layer's MACs (Overall Util's numerator).
    pub(crate) macs100: u64,
    /// Mapping Efficiency %.
    pub(crate) mapping: f64,
    /// Compute Util %.
    pub(crate) compute_util: f64,
    /// Demand rows (first, last) with IFMAP, FILTER and OFMAP traffic.
    pub(crate) rows: [(u64, u64); 3],
    /// SRAM IFMAP reads, FILTER reads, OFMAP writes.
    pub(crate) counts: [u64; 3],
    /// ws without `OptimizedMapping`: the IFMAP reads as SCALE-Sim's float.
    pub(crate) ifmap_reads_float: Option<f64>,
}

impl ComputeSide {
    /// The SRAM accesses, start and stop at their demand rows (+1 read latency).
    pub(crate) fn sram(&self) -> [Access; 3] {
        let at = |i: usize, latency: i64| Access {
            start: self.rows[i].0 as i64 + latency,
            stop: self.rows[i].1 as i64 + latency,
            count: self.counts[i],
        };
        [at(0, 1), at(1, 1), at(2, 0)]
    }

    /// Overall Util % for a layer that took `total` cycles.
    pub(crate) fn overall(&self, total: u64, pes: u64) -> f64 {
        self.macs100 as f64 / (total as u128 * pes as u128) as f64
    }
}

fn unsupported(l: &TopoLayer, why: String) -> SystolicError {
    SystolicError::NotReproduced {
        layer: l.name.clone(),
        why,
    }
}

/// SCALE-Sim's IFMAP operand element (ofmap pixel m, window index k) is a real
/// address (not −1): the window position lies inside the input.
fn ifmap_valid(l: &TopoLayer, ow: u64, m: u64, k: u64) -> bool {
    let (orow, ocol) = (m / ow, m % ow);
    let (ir, ic) = (orow * l.stride, ocol * l.stride);
    let crow = k / (l.filt_w * l.channels);
    let ccol = (k % (l.filt_w * l.channels)) / l.channels;
    crow + ir < l.ifmap_h && ccol + ic < l.ifmap_w
}

/// Last valid (t + j) over t < tn, j < jn with element op(t, j) valid (descending
/// scan): `Some(None)` when none is valid, `None` when the scan limit is hit.
fn diag_or_none(tn: u64, jn: u64, valid: impl Fn(u64, u64) -> bool) -> Option<Option<u64>> {
    let mut seen = 0u64;
    for s in (0..tn + jn - 1).rev() {
        let j_lo = s.saturating_sub(tn - 1);
        let j_hi = s.min(jn - 1);
        for j in j_lo..=j_hi {
            if valid(s - j, j) {
                return Some(Some(s));
            }
            seen += 1;
            if seen > SCAN_LIMIT {
                return None;
            }
        }
    }
    Some(None)
}

/// The compute side of `l` mapped as `map`.
pub(crate) fn compute_side(l: &TopoLayer, map: &Mapping) -> Result<ComputeSide> {
    let folds = map.folds();
    if folds > MAX_FOLDS {
        return Err(unsupported(l, format!("{folds} folds")));
    }
    let ovf = || crate::error::overflow("SCALE-Sim cycle count");
    let total = folds.checked_mul(map.lf).ok_or_else(ovf)? - 1;
    let g = l.scalesim_gemm()?;
    let macs100 =
        g.m.checked_mul(g.n)
            .and_then(|x| x.checked_mul(g.k))
            .and_then(|x| x.checked_mul(100))
            .ok_or_else(ovf)?;
    let (mapping, compute_util) = utilizations(l, map)?;
    let ifmap_rows = match map.ops {
        Operands::Dense => dense_ifmap_rows(l, map)?,
        _ => scanned_rows(l, map, Operand::Ifmap)?,
    };
    let filter_rows = match map.ops {
        Operands::Dense => dense_filter_rows(map),
        _ => scanned_rows(l, map, Operand::Filter)?,
    };
    let (counts, ifmap_reads_float) = counts(map);
    Ok(ComputeSide {
        total,
        macs100,
        mapping,
        compute_util,
        rows: [ifmap_rows, filter_rows, ofmap_rows(map)],
        counts,
        ifmap_reads_float,
    })
}

/// Mapping Efficiency % and Compute Util %, averaged over folds in SCALE-Sim's order.
fn utilizations(l: &TopoLayer, map: &Mapping) -> Result<(f64, f64)> {
    let (r, c, t) = (map.r, map.c, map.t);
    let pes = r * c;
    let cyc_fold = match map.df {
        Dataflow::Os => t + r + c - 2,
        _ => 2 * r + 2 * c + t - 3,
    };
    let row_wise = map.row_wise_width().is_some();
    if row_wise && map.k_f.saturating_mul(map.n) > MAX_TILE_CHECKS {
        return Err(unsupported(
            l,
            format!(
                "a compressed FILTER of {} x {} exceeds the check limit ({MAX_TILE_CHECKS})",
                map.k_f, map.n
            ),
        ));
    }
    let (mut map_sum, mut cu_sum) = (0.0f64, 0.0f64);
    for fc in 0..map.cf {
        let cu = (map.sc - fc * c).min(c);
        for fr in 0..map.rf {
            let ru = (map.sr - fr * r).min(r);
            let used = if row_wise {
                filter_tile_valid(map, fr * r, ru, fc * c, cu)
            } else {
                ru * cu
            };
            map_sum += used as f64 / pes as f64;
            cu_sum += (ru as u128 * cu as u128 * t as u128) as f64
                / (pes as u128 * cyc_fold as u128) as f64;
        }
    }
    let folds = map.folds() as f64;
    Ok((map_sum / folds * 100.0, cu_sum / folds * 100.0))
}

/// FILTER elements that are not −1 in rows `q0..q0+ru`, columns `n0..n0+cu`.
fn filter_tile_valid(map: &Mapping, q0: u64, ru: u64, n0: u64, cu: u64) -> u64 {
    let mut n = 0;
    for q in q0..q0 + ru {
        for col in n0..n0 + cu {
            n += map.filter_valid(q, col) as u64;
        }
    }
    n
}

/// SRAM IFMAP reads, FILTER reads, OFMAP writes, and the IFMAP's float count where
/// SCALE-Sim keeps one.
fn counts(map: &Mapping) -> ([u64; 3], Option<f64>) {
    let (r, c, t, m, n) = (map.r, map.c, map.t, map.m, map.n);
    let (k, kf, rf, cf) = (map.k_if, map.k_f, map.rf, map.cf);
    let mul = |xs: &[u64]| xs.iter().fold(1u64, |a, x| a.saturating_mul(*x));
    match map.df {
        Dataflow::Ws => {
            let ifmap = match (&map.ops, map.row_wise_width()) {
                (_, Some(width)) => mul(&[rf, cf, t + r - 1, width]),
                _ => mul(&[t, k, cf]),
            };
            let scaled = match &map.ops {
                Operands::Condensed(ratio) => Some(condensed_ifmap_reads(map, ratio.m, ratio.n)),
                _ => None,
            };
            let ifmap = scaled.map_or(ifmap, |f| f.round() as u64);
            ([ifmap, mul(&[kf, n]), mul(&[t, n, rf])], scaled)
        }
        Dataflow::Os => {
            let extra = mul(&[rf, cf, r + c]);
            (
                [
                    mul(&[k, m, cf]),
                    mul(&[k, n, rf]),
                    mul(&[m, n]).saturating_add(extra),
                ],
                None,
            )
        }
        Dataflow::Is => ([mul(&[k, m]), mul(&[k, n, cf]), mul(&[m, n, rf])], None),
    }
}

/// ws without `OptimizedMapping`: Σ over folds of (T × the fold's IFMAP columns) ×
/// (M / N), added as Python adds floats.
fn condensed_ifmap_reads(map: &Mapping, m: u64, n: u64) -> f64 {
    let ratio = m as f64 / n as f64;
    let mut sum = 0.0f64;
    for _fc in 0..map.cf {
        for fr in 0..map.rf {
            let cols = map.k_if.saturating_sub(fr * map.r).min(map.r);
            sum += map.t.saturating_mul(cols) as f64 * ratio;
        }
    }
    sum
}

/// The first and last demand rows where `op` reads a word, walked from either end.
fn scanned_rows(l: &TopoLayer, map: &Mapping, op: Operand) -> Result<(u64, u64)> {
    let reads = |row: u64| map.for_row(op, row, |_| Err(())).is_err();
    let rows = map.rows();
    let first = (0..rows).take(SCAN_ROWS as usize).find(|&r| reads(r));
    let last = (0..rows).rev().take(SCAN_ROWS as usize).find(|&r| reads(r));
    match (first, last) {
        (Some(f), Some(l_)) => Ok((f, l_)),
        _ => Err(unsupported(
            l,
            format!(
                "{} reads too sparse to locate its first and last demand rows",
                op.name()
            ),
        )),
    }
}

/// The OFMAP's first and last demand rows with a write.
fn ofmap_rows(map: &Mapping) -> (u64, u64) {
    let (r, c, t) = (map.r, map.c, map.t);
    let ru0 = map.sr.min(r);
    let cu_last = map.sc - (map.cf - 1) * c;
    let last_off = (map.folds() - 1) * map.lf;
    match map.df {
        Dataflow::Os => (t - 1 + r - ru0, last_off + t - 1 + r - 1 + cu_last - 1),
        _ => (2 * r - 1, last_off + 2 * r - 1 + t - 1 + cu_last - 1),
    }
}

/// A dense FILTER's first and last demand rows.
fn dense_filter_rows(map: &Mapping) -> (u64, u64) {
    let (r, t) = (map.r, map.t);
    let ru0 = map.sr.min(r);
    let ru_last = map.sr - (map.rf - 1) * r;
    let cu_last = map.sc - (map.cf - 1) * map.c;
    let last_off = (map.folds() - 1) * map.lf;
    match map.df {
        Dataflow::Ws => (r - ru0, last_off + r - 1),
        Dataflow::Os => (0, last_off + t - 1 + cu_last - 1),
        Dataflow::Is => (r, last_off + r + t - 1 + ru_last - 1),
    }
}

/// A dense IFMAP's first and last demand rows: the last fold holding a valid IFMAP
/// address (windows overhanging the input edge read nothing), searched from the end.
fn dense_ifmap_rows(l: &TopoLayer, map: &Mapping) -> Result<(u64, u64)> {
    let (r, c, t, sr, sc) = (map.r, map.c, map.t, map.sr, map.sc);
    let (rf, lf, folds) = (map.rf, map.lf, map.folds());
    let (_, ow) = l.scalesim_ofmap();
    let valid_if = |mm: u64, kk: u64| ifmap_valid(l, ow, mm, kk);
    let scan_err = || unsupported(l, "operand too sparse to locate its last address".into());
    let last_if = |rel: &dyn Fn(u64, u64) -> Option<Option<u64>>| -> Result<u64> {
        for f in (0..folds).rev() {
            match rel(f / rf, f % rf) {
                None => return Err(scan_err()),
                Some(Some(x)) => return Ok(f * lf + x),
                Some(None) => {}
            }
        }
        Err(scan_err())
    };
    match map.df {
        Dataflow::Ws => {
            let last = last_if(&|_fc, fr| {
                let (k0, kf) = (fr * r, (sr - fr * r).min(r));
                diag_or_none(t, kf, |tt, j| valid_if(tt, k0 + j)).map(|o| o.map(|x| r + x))
            })?;
            Ok((r, last))
        }
        Dataflow::Os => {
            let last = last_if(&|_fc, fr| {
                let (m0, mf) = (fr * r, (sr - fr * r).min(r));
                diag_or_none(t, mf, |tt, j| valid_if(m0 + j, tt))
            })?;
            Ok((0, last))
        }
        Dataflow::Is => {
            // stationary Aᵀ tile, flipped: tile row i (K index k0 + i) sits in row R−1−i
            let ru0 = sr.min(r);
            let mf0 = sc.min(c);
            if ru0.saturating_mul(mf0) > SCAN_LIMIT {
                return Err(scan_err());
            }
            let first_i = (0..ru0)
                .rev()
                .find(|&i| (0..mf0).any(|j| valid_if(j, i)))
                .ok_or_else(scan_err)?;
            let last = last_if(&|fc, fr| {
                let (k0, kf) = (fr * r, (sr - fr * r).min(r));
                let (m0, mf) = (fc * c, (sc - fc * c).min(c));
                if kf * mf > SCAN_LIMIT {
                    return None;
                }
                Some(
                    (0..kf)
                        .find(|&i| (0..mf).any(|j| valid_if(m0 + j, k0 + i)))
                        .map(|i| r - 1 - i),
                )
            })?;
            Ok((r - 1 - first_i, last))
        }
    }
}

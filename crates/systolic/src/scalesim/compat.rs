//! SCALE-Sim 3.0.0's numbers, reproduced exactly (`--scalesim-compat`): the compute
//! side in closed form, the memory side replayed row by row.
//!
//! Facts used (from running SCALE-Sim and reading its reports; see the spec):
//!
//! * Per fold, the demand streams are padded to the full array; a fold lasts
//!   `Lf = 2R + C + T − 2` rows (ws with T = M, is with T = N) or `R + C + T − 2`
//!   (os, T = K); folds follow each other; "Total Cycles" is the last row's index,
//!   `folds · Lf − 1`.
//! * Mapping efficiency per fold = used PEs / (R·C); compute utilization per fold =
//!   used PEs · T / (R·C·c) with c = `2R + 2C + T − 3` (ws, is) or `R + C + T − 2` (os);
//!   both averaged over folds. Overall util = M·N·K / (Total Cycles · R·C).
//! * SRAM reads are counted per fold on the padded operand slices; SRAM start/stop are
//!   the first/last demand rows holding a valid address (+1 hit latency for reads).
//! * CALC mode: an operand with fewer distinct words than 50 sets of
//!   ⌊SRAM bytes / 100⌋ (the active half) is prefetched before cycle 0 at 10
//!   words/cycle in whole sets (ending at cycle −1); a larger one is refetched epoch by
//!   epoch with no stall (`calc_refetch.rs`). OFMAP is written back at C
//!   words/cycle.
//! * USER mode: the IFMAP/FILTER prefetch matrices (operand slices padded to whole
//!   folds) are fetched before cycle 0 in lines of `IfmapSRAMBankBandwidth` /
//!   `FilterSRAMBankBandwidth` words, padding included, while they fit the active half;
//!   otherwise a sliding window of address sets is refetched on every miss and the
//!   array stalls, counted twice (`user_refetch.rs`). OFMAP is written back at
//!   `Bandwidth` words/cycle.
//! * The OFMAP double-buffered write buffer (`write_buffer.rs`) drains half its
//!   size at a time and stalls the array when it fills during a drain.
//! * Stalls: SCALE-Sim services demand row `i` at cycle `i + stalls so far`; a row's
//!   stall is the largest of its IFMAP, FILTER (beyond the 1-cycle hit) and OFMAP
//!   delays. Total Cycles is then the last row's service cycle, and every SRAM/DRAM
//!   start and stop cycle is the service cycle of its row.
//!
//! The memory side is replayed demand row by demand row (`demand.rs` gives the
//! addresses each row reads): O(rows + OFMAP drains) when both read operands fit, plus
//! O(reads of an operand) for each operand that does not. Checked against SCALE-Sim
//! 3.0.0 on the 35 golden cases in `tests/data/scalesim` (8×8 to 128×128; ws, os, is;
//! CALC and USER; refetching and stalling ones included) byte for byte.
//!
//! Still refused ([`layer_report`] returns [`SystolicError::NotReproduced`] with the
//! reason): configs SCALE-Sim 3.0.0 cannot read are refused before this, by
//! [`ScaleConfig::parse_compat`] (a missing section or key, a malformed number, with
//! Python's error); configs enabling what SCALE-Sim models and we do not (custom layouts with
//! bank conflicts, sparsity, Ramulator DRAM traces: [`ScaleConfig::unmodelled`]);
//! configurations SCALE-Sim 3.0.0 itself crashes or loops forever on (two
//! CALC refetch triggers in one cycle divide by zero; an SRAM under 100 bytes; a zero
//! bandwidth), and layers beyond the replay limits (more than 200 million demand rows,
//! 50 million folds, operands with more than 2²⁶ addresses or USER prefetch elements
//! that must be refetched, or an IFMAP so sparse that locating its last read scans
//! more than 2²² elements).

use super::calc_refetch::{self, CalcReadBuffer};
use super::config::{BandwidthMode, ScaleConfig};
use super::demand::{Mapping, Operand};
use super::report::{Access, LayerReport};
use super::topology::TopoLayer;
use super::user_refetch::UserReadBuffer;
use super::write_buffer::WriteBuffer;
use crate::error::{Result, SystolicError};
use crate::shape::{ceil_div, Dataflow};

fn unsupported(layer: &TopoLayer, why: String) -> SystolicError {
    SystolicError::NotReproduced {
        layer: layer.name.clone(),
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

/// Distinct input pixels along one axis touched by `out` windows of `f` at stride `s`
/// (clipped at the input edge).
pub(crate) fn touched(input: u64, f: u64, s: u64, out: u64) -> u64 {
    if out == 0 {
        return 0;
    }
    let last_start = (out - 1) * s;
    let last = f.min(input.saturating_sub(last_start));
    if s >= f {
        // disjoint windows: all full but the last
        (out - 1) * f + last
    } else {
        last_start + last
    }
}

/// Largest number of demand rows replayed through the OFMAP write buffer.
const MAX_REPLAY_ROWS: u64 = 200_000_000;

/// Largest element count the closed form scans for validity edges.
const SCAN_LIMIT: u64 = 1 << 22;

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

/// SCALE-Sim's report row for one layer: all three reports' columns, refetches and
/// stalls included (an error naming what is not reproduced outside the covered
/// regime, see the module doc).
pub fn layer_report(cfg: &ScaleConfig, l: &TopoLayer) -> Result<LayerReport> {
    report(cfg, l, true)
}

/// SCALE-Sim's compute-side columns for one layer in any mode, assuming no stalls:
/// Total Cycles, the three utilization columns and the SRAM columns. DRAM columns are
/// zero and "incl. prefetch" equals Total Cycles.
pub fn compute_report(cfg: &ScaleConfig, l: &TopoLayer) -> Result<LayerReport> {
    report(cfg, l, false)
}

fn report(cfg: &ScaleConfig, l: &TopoLayer, full: bool) -> Result<LayerReport> {
    if !cfg.unmodelled.is_empty() {
        return Err(unsupported(
            l,
            format!(
                "the config sets {}, which change SCALE-Sim's numbers and are not modelled",
                cfg.unmodelled.join(", ")
            ),
        ));
    }
    let g = l.scalesim_gemm()?;
    let (_, ow) = l.scalesim_ofmap();
    let (r, c) = (cfg.array.rows, cfg.array.cols);
    let (m, n, k) = (g.m, g.n, g.k);
    // (rows dim, cols dim, T) per dataflow
    let (sr, sc, t) = match cfg.dataflow {
        Dataflow::Ws => (k, n, m),
        Dataflow::Os => (m, n, k),
        Dataflow::Is => (k, m, n),
    };
    let (rf, cf) = (ceil_div(sr, r), ceil_div(sc, c));
    let folds = rf * cf;
    if folds > 50_000_000 {
        return Err(unsupported(l, format!("{folds} folds")));
    }
    let lf = match cfg.dataflow {
        Dataflow::Os => t + r + c - 2,
        _ => 2 * r + c + t - 2,
    };
    let cyc_fold = match cfg.dataflow {
        Dataflow::Os => t + r + c - 2,
        _ => 2 * r + 2 * c + t - 3,
    };
    let pes = r * c;
    let ovf = || crate::error::overflow("SCALE-Sim cycle count");
    let total = folds.checked_mul(lf).ok_or_else(ovf)? - 1;
    let macs100 = m
        .checked_mul(n)
        .and_then(|x| x.checked_mul(k))
        .and_then(|x| x.checked_mul(100))
        .ok_or_else(ovf)?;
    let denom = (total as u128 * pes as u128) as f64;
    let (mut map_sum, mut cu_sum) = (0.0f64, 0.0f64);
    for fc in 0..cf {
        let cu = (sc - fc * c).min(c);
        for fr in 0..rf {
            let ru = (sr - fr * r).min(r);
            map_sum += (ru * cu) as f64 / pes as f64;
            cu_sum += (ru as u128 * cu as u128 * t as u128) as f64
                / (pes as u128 * cyc_fold as u128) as f64;
        }
    }
    let mapping = map_sum / folds as f64 * 100.0;
    let compute_util = cu_sum / folds as f64 * 100.0;
    let overall = macs100 as f64 / denom;

    // first / last folds' used rows and columns
    let ru0 = sr.min(r);
    let ru_last = sr - (rf - 1) * r;
    let cu_last = sc - (cf - 1) * c;
    let last_off = (folds - 1) * lf;
    let valid_if = |mm: u64, kk: u64| ifmap_valid(l, ow, mm, kk);
    let scan_err = || unsupported(l, "operand too sparse to locate its last address".into());
    // SRAM (start row, stop row) per operand, before the +1 read latency
    // the last fold holding a valid IFMAP address (windows overhanging the input edge
    // read nothing), searched from the end
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
    let (if_rows, f_rows, o_rows) = match cfg.dataflow {
        Dataflow::Ws => {
            let last = last_if(&|_fc, fr| {
                let (k0, kf) = (fr * r, (sr - fr * r).min(r));
                diag_or_none(t, kf, |tt, j| valid_if(tt, k0 + j)).map(|o| o.map(|x| r + x))
            })?;
            (
                (r, last),
                (r - ru0, last_off + r - 1),
                (2 * r - 1, last_off + 2 * r - 1 + t - 1 + cu_last - 1),
            )
        }
        Dataflow::Os => {
            let last = last_if(&|_fc, fr| {
                let (m0, mf) = (fr * r, (sr - fr * r).min(r));
                diag_or_none(t, mf, |tt, j| valid_if(m0 + j, tt))
            })?;
            (
                (0, last),
                (0, last_off + t - 1 + cu_last - 1),
                (t - 1 + r - ru0, last_off + t - 1 + r - 1 + cu_last - 1),
            )
        }
        Dataflow::Is => {
            // stationary Aᵀ tile, flipped: tile row i (K index k0 + i) sits in row R−1−i
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
            (
                (r - 1 - first_i, last),
                (r, last_off + r + t - 1 + ru_last - 1),
                (2 * r - 1, last_off + 2 * r - 1 + t - 1 + cu_last - 1),
            )
        }
    };
    let (if_reads, f_reads, o_writes, _o_actual) = match cfg.dataflow {
        Dataflow::Ws => (t * k * cf, k * n, t * n * rf, t * n * rf),
        Dataflow::Os => (k * m * cf, k * n * rf, m * n + folds * (r + c), m * n),
        Dataflow::Is => (k * m, k * n * cf, m * n * rf, m * n * rf),
    };
    let sram = [
        Access {
            start: if_rows.0 as i64 + 1,
            stop: if_rows.1 as i64 + 1,
            count: if_reads,
        },
        Access {
            start: f_rows.0 as i64 + 1,
            stop: f_rows.1 as i64 + 1,
            count: f_reads,
        },
        Access {
            start: o_rows.0 as i64,
            stop: o_rows.1 as i64,
            count: o_writes,
        },
    ];
    if !full {
        return Ok(LayerReport {
            name: l.name.clone(),
            cycles_incl_prefetch: total as i64,
            total_cycles: total,
            stall_cycles: 0,
            overall_util: overall,
            mapping_efficiency: mapping,
            compute_util,
            sram,
            dram: [Access::default(); 3],
        });
    }
    // every replay below is bounded by the demand rows: check them first
    if total > MAX_REPLAY_ROWS {
        return Err(unsupported(
            l,
            format!("{total} demand rows to replay (limit {MAX_REPLAY_ROWS})"),
        ));
    }
    // DRAM reads: closed form while an operand fits the active half of its SRAM,
    // otherwise SCALE-Sim's refetching read buffer replayed (demand.rs, *_refetch.rs)
    let map = Mapping::new(l, cfg.dataflow, r, c)?;
    let (oh, _) = l.scalesim_ofmap();
    let u_if = touched(l.ifmap_h, l.filt_h, l.stride, oh)
        .saturating_mul(touched(l.ifmap_w, l.filt_w, l.stride, ow))
        .saturating_mul(l.channels);
    let u_f = k * n;
    let calc = |u: u64, kb: u64, op: Operand, what: &str| -> Result<ReadSim> {
        let ips = kb * 1024 / 100;
        if ips == 0 {
            return Err(unsupported(l, format!("{what} SRAM under 100 bytes")));
        }
        if u < 50 * ips {
            let sets = ceil_div(u, ips);
            let cycles = ceil_div(sets * ips, 10);
            return Ok(ReadSim::Closed(Access {
                start: -(cycles as i64),
                stop: -1,
                count: u,
            }));
        }
        // more than the active half: refetched epoch by epoch (no stall)
        let space = map.space(op);
        if space > calc_refetch::MAX_SPACE {
            return Err(unsupported(
                l,
                format!("{what} does not fit half its SRAM and its {space} addresses exceed the replay limit ({})", calc_refetch::MAX_SPACE),
            ));
        }
        Ok(ReadSim::Calc(CalcReadBuffer::new(ips, space)))
    };
    // USER mode: the whole prefetch matrix (padding included) is fetched in lines of
    // the interface width before cycle 0 while it fits the active half
    let user = |elems: u64, bw: u64, kb: u64, op: Operand, what: &str| -> Result<ReadSim> {
        if bw == 0 {
            return Err(unsupported(l, format!("{what} bandwidth 0")));
        }
        let lines = ceil_div(elems, bw);
        let active = (kb * 1024).div_ceil(2);
        if lines * bw <= active {
            return Ok(ReadSim::Closed(Access {
                start: -(lines as i64),
                stop: -1,
                count: lines * bw,
            }));
        }
        UserReadBuffer::new(&map, op, kb * 1024, bw)
            .map(ReadSim::User)
            .map_err(|why| unsupported(l, format!("{what}: {why}")))
    };
    let (mut s_if, mut s_f, obw) = match cfg.mode {
        BandwidthMode::Calc => (
            calc(u_if, cfg.ifmap_kb, Operand::Ifmap, "IFMAP")?,
            calc(u_f, cfg.filter_kb, Operand::Filter, "FILTER")?,
            c,
        ),
        BandwidthMode::User => {
            // prefetch matrices: operand slices padded to whole folds
            let (p_if, p_f) = match cfg.dataflow {
                Dataflow::Ws => (
                    t.saturating_mul(r * rf),
                    k.saturating_mul(c).saturating_mul(cf),
                ),
                Dataflow::Os => (
                    (r * rf).saturating_mul(k),
                    k.saturating_mul(c).saturating_mul(cf),
                ),
                Dataflow::Is => (
                    k.saturating_mul(c).saturating_mul(cf),
                    (r * rf).saturating_mul(n),
                ),
            };
            (
                user(
                    p_if,
                    cfg.ifmap_bank_bandwidth,
                    cfg.ifmap_kb,
                    Operand::Ifmap,
                    "IFMAP",
                )?,
                user(
                    p_f,
                    cfg.filter_bank_bandwidth,
                    cfg.filter_kb,
                    Operand::Filter,
                    "FILTER",
                )?,
                cfg.bandwidths.first().copied().unwrap_or(0),
            )
        }
    };
    if obw == 0 {
        return Err(unsupported(l, "OFMAP bandwidth 0".into()));
    }
    // OFMAP writes per demand row
    let pfx = match cfg.dataflow {
        Dataflow::Ws | Dataflow::Is => 2 * r - 1,
        Dataflow::Os => t - 1,
    };
    let n_valid = |row: u64| -> u64 {
        let fold = row / lf;
        let s_ = row % lf;
        let (fc, fr) = (fold / rf, fold % rf);
        let cu = (sc - fc * c).min(c);
        let ru = (sr - fr * r).min(r);
        let (lo, hi) = match cfg.dataflow {
            Dataflow::Os => (r - ru, r),
            _ => (0, t),
        };
        if s_ < pfx {
            return 0;
        }
        let s2 = s_ - pfx;
        // lanes j < cu with lo ≤ s2 − j < hi
        if s2 < lo {
            return 0;
        }
        let j_lo = (s2 + 1).saturating_sub(hi);
        let j_hi = (s2 - lo).min(cu - 1);
        if j_lo > j_hi {
            0
        } else {
            j_hi - j_lo + 1
        }
    };
    // SCALE-Sim's memory loop: every demand row at cycle row + stalls so far; reads
    // (1-cycle hit latency) and writes serviced, the row's stall is the largest
    let mut wb = WriteBuffer::new(cfg.ofmap_kb * 1024, obw);
    let rows = map.rows();
    let mut stalls = 0u64;
    let mut seen = [[0i64; 2]; 3];
    let mut last_out = 0u64;
    for row in 0..rows {
        let cycle = row + stalls;
        let mut outs = [0i64; 3];
        for (i, (sim, op, what)) in [
            (&mut s_if, Operand::Ifmap, "IFMAP"),
            (&mut s_f, Operand::Filter, "FILTER"),
        ]
        .into_iter()
        .enumerate()
        {
            let err = |why: String| unsupported(l, format!("{what} read buffer: {why}"));
            outs[i] = match sim {
                ReadSim::Closed(_) => cycle as i64 + 1,
                ReadSim::Calc(b) => {
                    map.for_row(op, row, |a| b.read(a, cycle)).map_err(err)?;
                    cycle as i64 + 1
                }
                ReadSim::User(b) => b.row(&map, op, row, cycle).map_err(err)?,
            };
        }
        let out_o = wb.row(cycle, n_valid(row));
        outs[2] = out_o as i64;
        for (i, rows_i) in [if_rows, f_rows, o_rows].iter().enumerate() {
            if row == rows_i.0 {
                seen[i][0] = outs[i];
            }
            if row == rows_i.1 {
                seen[i][1] = outs[i];
            }
        }
        let stall = (outs[0] - cycle as i64 - 1)
            .max(outs[1] - cycle as i64 - 1)
            .max(out_o as i64 - cycle as i64);
        stalls += stall.max(0) as u64;
        last_out = last_out.max(out_o);
    }
    let d_o = wb.finish(last_out);
    let finish = |s: ReadSim| match s {
        ReadSim::Closed(a) => a,
        ReadSim::Calc(b) => b.finish(),
        ReadSim::User(b) => b.finish(),
    };
    let (d_if, d_f) = (finish(s_if), finish(s_f));
    let mut sram = sram;
    for (i, a) in sram.iter_mut().enumerate() {
        a.start = seen[i][0];
        a.stop = seen[i][1];
    }
    let total = last_out;
    Ok(LayerReport {
        name: l.name.clone(),
        cycles_incl_prefetch: d_o.stop - d_if.start.min(d_f.start),
        total_cycles: total,
        stall_cycles: stalls,
        overall_util: macs100 as f64 / (total as u128 * pes as u128) as f64,
        mapping_efficiency: mapping,
        compute_util,
        sram,
        dram: [d_if, d_f, d_o],
    })
}

/// How one read operand's DRAM traffic is found.
enum ReadSim {
    /// Fits the active half: closed form.
    Closed(Access),
    /// CALC mode, refetched epoch by epoch.
    Calc(CalcReadBuffer),
    /// USER mode, refetched with stalls.
    User(UserReadBuffer),
}

/// SCALE-Sim's "Total Cycles" for a GEMM (its compute model, any bandwidth mode
/// without stalls): `folds · Lf − 1`.
pub fn total_cycles(df: Dataflow, r: u64, c: u64, g: crate::shape::Gemm) -> u64 {
    let (sr, sc, _, lf) = super::demand::fold_geometry(df, r, c, g);
    ceil_div(sr, r) * ceil_div(sc, c) * lf - 1
}

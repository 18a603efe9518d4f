//! SCALE-Sim 3.0.0's numbers, reproduced exactly (`--scalesim-compat`), in closed form.
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
//! * CALC mode: IFMAP and FILTER are prefetched before cycle 0 at 10 words/cycle in
//!   sets of ⌊SRAM bytes / 100⌋ words (ending at cycle −1); OFMAP is written back
//!   after the last cycle at C words/cycle.
//!
//! * USER mode: the IFMAP/FILTER prefetch matrices (operand slices padded to whole
//!   folds) are fetched before cycle 0 in lines of `IfmapSRAMBankBandwidth` /
//!   `FilterSRAMBankBandwidth` words, padding included; OFMAP is written back at
//!   `Bandwidth` words/cycle.
//! * The OFMAP write buffer is replayed row by row: once more than
//!   its drain half is held, held lines are written back one per cycle.
//!
//! Covered exactly: both modes while every read operand fits the active half of its
//! SRAM (CALC: under 50 of its 100 address sets; USER: the padded prefetch) and the
//! OFMAP buffer never fills during a write-back. Beyond that SCALE-Sim refetches in
//! address order and stalls the array; [`layer_report`] returns an error saying so
//! instead of a guess.

use super::config::{BandwidthMode, ScaleConfig};
use super::report::{Access, LayerReport};
use super::topology::TopoLayer;
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

/// SCALE-Sim's report row for one layer (operands within the active half of their
/// SRAMs; otherwise an error naming what is not reproduced).
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
    // DRAM, CALC mode
    let (oh, _) = l.scalesim_ofmap();
    let u_if = touched(l.ifmap_h, l.filt_h, l.stride, oh)
        .saturating_mul(touched(l.ifmap_w, l.filt_w, l.stride, ow))
        .saturating_mul(l.channels);
    let u_f = k * n;
    let prefetch = |u: u64, kb: u64, what: &str| -> Result<Access> {
        let ips = kb * 1024 / 100;
        if ips == 0 {
            return Err(unsupported(l, format!("{what} SRAM under 100 bytes")));
        }
        if u >= 50 * ips {
            return Err(unsupported(
                l,
                format!("{what} has {u} distinct words, more than half its SRAM ({} words) holds; SCALE-Sim then refetches in address order", 50 * ips),
            ));
        }
        let sets = ceil_div(u, ips);
        let cycles = ceil_div(sets * ips, 10);
        Ok(Access {
            start: -(cycles as i64),
            stop: -1,
            count: u,
        })
    };
    // USER mode: the whole prefetch matrix (padding included) is fetched in lines of
    // the interface width before cycle 0; reproduced while it fits the active half
    let user_fetch = |elems: u64, bw: u64, kb: u64, what: &str| -> Result<Access> {
        if bw == 0 {
            return Err(unsupported(l, format!("{what} bandwidth 0")));
        }
        let lines = ceil_div(elems, bw);
        let active = (kb * 1024).div_ceil(2);
        if lines * bw > active {
            return Err(unsupported(
                l,
                format!("{what} prefetch of {} words exceeds the {active}-word active half of its SRAM (SCALE-Sim then refetches and may stall)", lines * bw),
            ));
        }
        Ok(Access {
            start: -(lines as i64),
            stop: -1,
            count: lines * bw,
        })
    };
    let (d_if, d_f, obw) = match cfg.mode {
        BandwidthMode::Calc => (
            prefetch(u_if, cfg.ifmap_kb, "IFMAP")?,
            prefetch(u_f, cfg.filter_kb, "FILTER")?,
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
                user_fetch(p_if, cfg.ifmap_bank_bandwidth, cfg.ifmap_kb, "IFMAP")?,
                user_fetch(p_f, cfg.filter_bank_bandwidth, cfg.filter_kb, "FILTER")?,
                cfg.bandwidths.first().copied().unwrap_or(0),
            )
        }
    };
    if obw == 0 {
        return Err(unsupported(l, "OFMAP bandwidth 0".into()));
    }
    // OFMAP write-back: SCALE-Sim's double-buffered write buffer, replayed row by row
    let (pfx, b0, b1) = match cfg.dataflow {
        Dataflow::Ws | Dataflow::Is => (2 * r - 1, 0, t),
        Dataflow::Os => (t - 1, r - ru0, r),
    };
    let _ = b0;
    if total > MAX_REPLAY_ROWS {
        return Err(unsupported(
            l,
            format!(
                "{total} cycles to replay through the OFMAP write buffer (limit {MAX_REPLAY_ROWS})"
            ),
        ));
    }
    let mut wb = WriteBuffer::new(cfg.ofmap_kb * 1024, obw);
    let mut row = 0u64;
    for fc in 0..cf {
        let cu = (sc - fc * c).min(c);
        for fr in 0..rf {
            let ru = (sr - fr * r).min(r);
            let (lo, hi) = match cfg.dataflow {
                Dataflow::Os => (r - ru, b1),
                _ => (0, t),
            };
            for s_ in 0..lf {
                let n_valid = if s_ < pfx {
                    0
                } else {
                    let s2 = s_ - pfx;
                    // lanes j < cu with lo ≤ s2 − j < hi
                    let j_lo = (s2 + 1).saturating_sub(hi);
                    let j_hi = if s2 >= lo {
                        (s2 - lo).min(cu - 1)
                    } else {
                        u64::MAX
                    };
                    if j_hi == u64::MAX || j_lo > j_hi {
                        0
                    } else {
                        j_hi - j_lo + 1
                    }
                };
                if !wb.row(row, n_valid) {
                    return Err(unsupported(l, "the OFMAP write buffer fills during a write-back (SCALE-Sim then stalls the array)".into()));
                }
                row += 1;
            }
        }
    }
    let d_o = wb.finish(total);
    Ok(LayerReport {
        name: l.name.clone(),
        cycles_incl_prefetch: d_o.stop - d_if.start.min(d_f.start),
        total_cycles: total,
        stall_cycles: 0,
        overall_util: overall,
        mapping_efficiency: mapping,
        compute_util,
        sram,
        dram: [d_if, d_f, d_o],
    })
}

/// SCALE-Sim's "Total Cycles" for a GEMM (its compute model, any bandwidth mode
/// without stalls): `folds · Lf − 1`.
pub fn total_cycles(df: Dataflow, r: u64, c: u64, g: crate::shape::Gemm) -> u64 {
    let (sr, sc, t) = match df {
        Dataflow::Ws => (g.k, g.n, g.m),
        Dataflow::Os => (g.m, g.n, g.k),
        Dataflow::Is => (g.k, g.m, g.n),
    };
    let lf = match df {
        Dataflow::Os => t + r + c - 2,
        _ => 2 * r + c + t - 2,
    };
    ceil_div(sr, r) * ceil_div(sc, c) * lf - 1
}

/// SCALE-Sim's OFMAP write buffer (CALC mode): writes fill lines of C words; once more
/// than the drain half is held, the held lines are written back, one line per cycle.
struct WriteBuffer {
    total: u64,
    drain_half: u64,
    active: u64,
    width: u64,
    free: u64,
    /// valid words per line moved to the trace
    lines: Vec<u64>,
    cur: u64,
    drain_start_line: usize,
    drain_end: u64,
    first: Option<i64>,
    last: i64,
    count: u64,
}

impl WriteBuffer {
    fn new(total: u64, width: u64) -> Self {
        let active = total.div_ceil(2);
        WriteBuffer {
            total,
            drain_half: total - active,
            active,
            width,
            free: total,
            lines: Vec::new(),
            cur: 0,
            drain_start_line: 0,
            drain_end: 0,
            first: None,
            last: 0,
            count: 0,
        }
    }
    fn force(&mut self) {
        if self.cur > 0 {
            self.lines.push(self.cur);
            self.cur = 0;
        }
    }
    /// Write back up to a drain half's worth of lines from `start`; returns the last
    /// cycle used.
    fn drain(&mut self, start: u64) -> u64 {
        let per = self.drain_half.div_ceil(self.width) as usize;
        let end = (self.drain_start_line + per).min(self.lines.len());
        let n = end - self.drain_start_line;
        if n == 0 {
            return start;
        }
        let last_valid = self.lines[end - 1];
        let data = n as u64 * self.width - (self.width - last_valid);
        self.count += data;
        self.first.get_or_insert(start as i64);
        let stop = start + n as u64 - 1;
        self.last = self.last.max(stop as i64);
        self.free += data;
        self.drain_start_line = end;
        stop
    }
    /// One demand row at `cycle` with `n` valid writes; false when SCALE-Sim would stall.
    fn row(&mut self, cycle: u64, n: u64) -> bool {
        for _ in 0..n {
            self.cur += 1;
            self.free = self.free.wrapping_sub(1);
            if self.cur == self.width {
                self.lines.push(self.cur);
                self.cur = 0;
            }
            if cycle < self.drain_end {
                if self.free == 0 || self.free > self.total {
                    return false;
                }
            } else if self.free < self.active {
                self.force();
                self.drain_end = self.drain(cycle);
            }
        }
        true
    }
    fn finish(mut self, last_cycle: u64) -> Access {
        self.force();
        let mut cycle = last_cycle;
        while self.drain_start_line < self.lines.len() {
            self.drain_end = self.drain(cycle);
            cycle = self.drain_end + 1;
        }
        Access {
            start: self.first.unwrap_or(0),
            stop: self.last,
            count: self.count,
        }
    }
}

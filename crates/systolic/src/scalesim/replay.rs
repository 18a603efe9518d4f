//! SCALE-Sim 3.0.0's memory loop replayed demand row by demand row: every row is
//! serviced at `row + stalls so far`; its IFMAP and FILTER reads (1-cycle hit latency)
//! and OFMAP writes are serviced, and the row's stall is the largest delay (see
//! `compat.rs` for the facts and the buffers' own modules for each buffer).

use super::calc_refetch::{self, CalcReadBuffer};
use super::compat::unsupported;
use super::compute::ComputeSide;
use super::config::{BandwidthMode, ScaleConfig};
use super::demand::{Mapping, Operand};
use super::layout_buffer::{BankedSram, LayoutReadBuffer};
use super::layout_order::LayoutOrder;
use super::report::{Access, LayerReport, SparseReport};
use super::sparsity::Operands;
use super::topology::TopoLayer;
use super::user_refetch::UserReadBuffer;
use super::write_buffer::WriteBuffer;
use crate::error::Result;
use crate::shape::{ceil_div, Dataflow};

/// Largest number of demand rows replayed through the OFMAP write buffer.
const MAX_REPLAY_ROWS: u64 = 200_000_000;

/// The custom layouts USER mode reads the operands in (none in CALC mode).
#[derive(Debug, Clone, Default)]
pub(crate) struct Layouts {
    /// The IFMAP's, with `IfmapCustomLayout`.
    pub(crate) ifmap: Option<LayoutOrder>,
    /// The FILTER's, with `FilterCustomLayout`.
    pub(crate) filter: Option<LayoutOrder>,
}

/// How one read operand's DRAM traffic is found.
enum ReadSim {
    /// Fits the active half: closed form.
    Closed(Access),
    /// CALC mode, replayed (refetched epoch by epoch when it does not fit).
    Calc(CalcReadBuffer),
    /// USER mode, refetched with stalls.
    User(UserReadBuffer),
    /// USER mode with a custom layout: banked lines.
    Layout(LayoutReadBuffer),
}

impl ReadSim {
    /// The cycle the reads of `row`, arriving at `cycle`, are serviced at.
    fn row(
        &mut self,
        map: &Mapping,
        op: Operand,
        row: u64,
        cycle: u64,
    ) -> std::result::Result<i64, String> {
        match self {
            ReadSim::Closed(_) => Ok(cycle as i64 + 1),
            ReadSim::Calc(b) => {
                map.for_row(op, row, |a| b.read(a, cycle))?;
                Ok(cycle as i64 + 1)
            }
            ReadSim::User(b) => b.row(map, op, row, cycle),
            ReadSim::Layout(b) => b.row(map, op, row, cycle),
        }
    }

    fn finish(self) -> Access {
        match self {
            ReadSim::Closed(a) => a,
            ReadSim::Calc(b) => b.finish(),
            ReadSim::User(b) => b.finish(),
            ReadSim::Layout(b) => b.finish(),
        }
    }
}

/// CALC mode's buffer of `op`: closed form when a dense operand's `distinct` words fit
/// 50 sets, otherwise replayed.
fn calc_sim(
    l: &TopoLayer,
    map: &Mapping,
    kb: u64,
    op: Operand,
    distinct: Option<u64>,
) -> Result<ReadSim> {
    let ips = kb * 1024 / 100;
    if ips == 0 {
        return Err(unsupported(
            l,
            format!("{} SRAM under 100 bytes", op.name()),
        ));
    }
    if let Some(u) = distinct.filter(|u| *u < 50 * ips) {
        let sets = ceil_div(u, ips);
        let cycles = ceil_div(sets * ips, 10);
        return Ok(ReadSim::Closed(Access {
            start: -(cycles as i64),
            stop: -1,
            count: u,
        }));
    }
    let space = map.space(op);
    if space > calc_refetch::MAX_SPACE {
        return Err(unsupported(
            l,
            format!(
                "{} is replayed and its {space} addresses exceed the replay limit ({})",
                op.name(),
                calc_refetch::MAX_SPACE
            ),
        ));
    }
    Ok(ReadSim::Calc(CalcReadBuffer::new(ips, space)))
}

/// USER mode's buffer of `op`: the whole prefetch matrix (padding included) fetched
/// in lines of `bw` before cycle 0 while it fits the active half, else refetched.
fn user_sim(l: &TopoLayer, map: &Mapping, bw: u64, kb: u64, op: Operand) -> Result<ReadSim> {
    if bw == 0 {
        return Err(unsupported(l, format!("{} bandwidth 0", op.name())));
    }
    let lines = ceil_div(map.prefetch_elems(op), bw);
    let active = (kb * 1024).div_ceil(2);
    if lines.saturating_mul(bw) <= active {
        return Ok(ReadSim::Closed(Access {
            start: -(lines as i64),
            stop: -1,
            count: lines * bw,
        }));
    }
    UserReadBuffer::new(map, op, kb * 1024, bw)
        .map(ReadSim::User)
        .map_err(|why| unsupported(l, format!("{}: {why}", op.name())))
}

/// SCALE-Sim's check of each USER read buffer's banks (`read_buffer.set_params`).
fn check_banks(l: &TopoLayer, bw: u64, banks: u64) -> Result<()> {
    if banks == 0 {
        return Err(unsupported(l, "SCALE-Sim 3.0.0 fails: ZeroDivisionError: integer division or modulo by zero (0 SRAM banks)".into()));
    }
    if bw % banks != 0 {
        return Err(unsupported(
            l,
            format!(
                "SCALE-Sim 3.0.0 fails: AssertionError: overall bandwidth must be divisible by total number of banks, number of banks = {banks}, bandwidth of each as {}, total bandwidth = {bw}",
                bw / banks
            ),
        ));
    }
    Ok(())
}

/// The IFMAP and FILTER buffers and the OFMAP write width for `cfg`'s mode.
fn read_sims(
    cfg: &ScaleConfig,
    l: &TopoLayer,
    map: &Mapping,
    layouts: &Layouts,
) -> Result<(ReadSim, ReadSim, u64)> {
    if cfg.mode == BandwidthMode::Calc {
        let dense = map.ops == Operands::Dense;
        let (u_if, u_f) = dense_distinct_words(l, map);
        return Ok((
            calc_sim(l, map, cfg.ifmap_kb, Operand::Ifmap, dense.then_some(u_if))?,
            calc_sim(l, map, cfg.filter_kb, Operand::Filter, dense.then_some(u_f))?,
            map.c,
        ));
    }
    let lc = cfg.layout;
    check_banks(l, cfg.ifmap_bank_bandwidth, lc.ifmap_banks)?;
    check_banks(l, cfg.filter_bank_bandwidth, lc.filter_banks)?;
    let sim = |op: Operand,
               order: &Option<LayoutOrder>,
               bw: u64,
               kb: u64,
               sram: BankedSram|
     -> Result<ReadSim> {
        match order {
            Some(o) => LayoutReadBuffer::new(o, sram)
                .map(ReadSim::Layout)
                .map_err(|why| unsupported(l, format!("{} layout: {why}", op.name()))),
            None => user_sim(l, map, bw, kb, op),
        }
    };
    let ifmap = BankedSram {
        bytes: cfg.ifmap_kb * 1024,
        line_words: cfg.ifmap_bank_bandwidth,
        banks: lc.ifmap_banks,
        ports: lc.ifmap_ports,
        address_offset: 0,
    };
    let filter = BankedSram {
        bytes: cfg.filter_kb * 1024,
        line_words: cfg.filter_bank_bandwidth,
        banks: lc.filter_banks,
        ports: lc.filter_ports,
        address_offset: cfg.offsets.filter.max(0) as u64,
    };
    Ok((
        sim(
            Operand::Ifmap,
            &layouts.ifmap,
            cfg.ifmap_bank_bandwidth,
            cfg.ifmap_kb,
            ifmap,
        )?,
        sim(
            Operand::Filter,
            &layouts.filter,
            cfg.filter_bank_bandwidth,
            cfg.filter_kb,
            filter,
        )?,
        cfg.bandwidths.first().copied().unwrap_or(0),
    ))
}

/// Distinct IFMAP and FILTER words of a dense layer.
fn dense_distinct_words(l: &TopoLayer, map: &Mapping) -> (u64, u64) {
    let (oh, ow) = l.scalesim_ofmap();
    let u_if = super::compat::touched(l.ifmap_h, l.filt_h, l.stride, oh)
        .saturating_mul(super::compat::touched(l.ifmap_w, l.filt_w, l.stride, ow))
        .saturating_mul(l.channels);
    (u_if, map.space(Operand::Filter))
}

/// OFMAP words written on demand row `row`.
fn ofmap_writes(map: &Mapping, row: u64) -> u64 {
    let (r, c, t) = (map.r, map.c, map.t);
    let pfx = match map.df {
        Dataflow::Ws | Dataflow::Is => 2 * r - 1,
        Dataflow::Os => t - 1,
    };
    let fold = row / map.lf;
    let s = row % map.lf;
    let (fc, fr) = (fold / map.rf, fold % map.rf);
    let cu = (map.sc - fc * c).min(c);
    let ru = (map.sr - fr * r).min(r);
    let (lo, hi) = match map.df {
        Dataflow::Os => (r - ru, r),
        _ => (0, t),
    };
    if s < pfx || s - pfx < lo {
        return 0;
    }
    let s2 = s - pfx;
    // lanes j < cu with lo ≤ s2 − j < hi
    let j_lo = (s2 + 1).saturating_sub(hi);
    let j_hi = (s2 - lo).min(cu - 1);
    if j_lo > j_hi {
        0
    } else {
        j_hi - j_lo + 1
    }
}

/// The full report of `l`: the compute side `side` with every demand row replayed
/// through the buffers.
pub(crate) fn replay(
    cfg: &ScaleConfig,
    l: &TopoLayer,
    map: &Mapping,
    side: &ComputeSide,
    layouts: &Layouts,
    sparse: Option<SparseReport>,
) -> Result<LayerReport> {
    if side.total > MAX_REPLAY_ROWS {
        return Err(unsupported(
            l,
            format!(
                "{} demand rows to replay (limit {MAX_REPLAY_ROWS})",
                side.total
            ),
        ));
    }
    let (mut s_if, mut s_f, obw) = read_sims(cfg, l, map, layouts)?;
    if obw == 0 {
        return Err(unsupported(l, "OFMAP bandwidth 0".into()));
    }
    let mut wb = WriteBuffer::new(cfg.ofmap_kb * 1024, obw);
    let mut stalls = 0u64;
    let mut seen = [[0i64; 2]; 3];
    let mut last_out = 0u64;
    for row in 0..map.rows() {
        let cycle = row + stalls;
        let mut outs = [0i64; 3];
        for (i, (sim, op)) in [(&mut s_if, Operand::Ifmap), (&mut s_f, Operand::Filter)]
            .into_iter()
            .enumerate()
        {
            outs[i] = sim
                .row(map, op, row, cycle)
                .map_err(|why| unsupported(l, format!("{} read buffer: {why}", op.name())))?;
        }
        let out_o = wb.row(cycle, ofmap_writes(map, row));
        outs[2] = out_o as i64;
        for (i, rows_i) in side.rows.iter().enumerate() {
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
    let (d_if, d_f) = (s_if.finish(), s_f.finish());
    let mut sram = side.sram();
    for (i, a) in sram.iter_mut().enumerate() {
        a.start = seen[i][0];
        a.stop = seen[i][1];
    }
    let pes = map.r * map.c;
    Ok(LayerReport {
        name: l.name.clone(),
        cycles_incl_prefetch: d_o.stop - d_if.start.min(d_f.start),
        total_cycles: last_out,
        stall_cycles: stalls,
        overall_util: side.overall(last_out, pes),
        mapping_efficiency: side.mapping,
        compute_util: side.compute_util,
        sram,
        dram: [d_if, d_f, d_o],
        sparse,
    })
}

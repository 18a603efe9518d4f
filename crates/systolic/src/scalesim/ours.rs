//! Our own model in SCALE-Sim's report format (the default of `tpusim systolic run`):
//! the analytic model on the same GEMM SCALE-Sim derives from each layer.
//!
//! Columns: Total Cycles = our cycles (+ stalls in USER mode); Stall Cycles (USER
//! only) = max(0, slowest interface time − cycles), a bandwidth-bound estimate with
//! every distinct IFMAP/FILTER word read once (at `IfmapSRAMBankBandwidth` /
//! `FilterSRAMBankBandwidth` words/cycle) and every output word written once (at
//! `Bandwidth`) — where SCALE-Sim instead fetches operands before cycle 0 and reports
//! that time only in "incl. prefetch"; Total
//! Cycles (incl. prefetch) = Total Cycles (we do not model a pre-layer prefetch
//! phase); Compute Util = busy PE-cycles / (compute cycles · R·C). SRAM and DRAM
//! windows span the whole layer, [0, Total Cycles − 1].

use super::config::{BandwidthMode, ScaleConfig};
use super::report::{Access, LayerReport};
use super::topology::TopoLayer;
use crate::analytic::{analyze, RunOptions};
use crate::error::Result;
use crate::shape::Workload;

/// Our report row for one layer.
pub fn layer_report(cfg: &ScaleConfig, l: &TopoLayer, double_buffer: bool) -> Result<LayerReport> {
    let g = l.scalesim_gemm()?;
    let (oh, ow) = l.scalesim_ofmap();
    let u_if = super::compat::touched(l.ifmap_h, l.filt_h, l.stride, oh)
        .saturating_mul(super::compat::touched(l.ifmap_w, l.filt_w, l.stride, ow))
        .saturating_mul(l.channels);
    let wl = Workload {
        gemm: g,
        repeat: 1,
        unique_inputs: u_if.saturating_add(g.k * g.n),
        unique_outputs: g.m * g.n,
    };
    let s = analyze(
        cfg.array,
        &wl,
        RunOptions {
            dataflow: cfg.dataflow,
            double_buffer,
        },
    )?;
    let stall = match cfg.mode {
        BandwidthMode::Calc => 0,
        BandwidthMode::User => {
            // three independent interfaces, as in SCALE-Sim: IFMAP and FILTER at their
            // bank bandwidths, OFMAP at `Bandwidth`; the slowest one bounds the layer
            let t = |words: u64, bw: u64| words.div_ceil(bw.max(1));
            let o = cfg.bandwidths.first().copied().unwrap_or(1);
            let dram = t(u_if, cfg.ifmap_bank_bandwidth)
                .max(t(g.k * g.n, cfg.filter_bank_bandwidth))
                .max(t(g.m * g.n, o));
            dram.saturating_sub(s.cycles)
        }
    };
    let total = s.cycles + stall;
    let pes = cfg.array.pes() as f64;
    let (sr, st) = (s.sram_reads_stationary, s.sram_reads_streamed);
    // ifmap is A: stationary in is, streamed in ws; os streams both
    let (if_reads, f_reads) = match cfg.dataflow {
        crate::shape::Dataflow::Ws => (st, sr),
        crate::shape::Dataflow::Is => (sr, st),
        crate::shape::Dataflow::Os => {
            let a = g.m * g.k * g.n.div_ceil(cfg.array.cols);
            (a, st - a)
        }
    };
    let win = |count: u64| Access {
        start: 0,
        stop: total as i64 - 1,
        count,
    };
    Ok(LayerReport {
        name: l.name.clone(),
        cycles_incl_prefetch: total as i64,
        total_cycles: total,
        stall_cycles: stall,
        overall_util: s.macs as f64 * 100.0 / (total as f64 * pes),
        mapping_efficiency: s.mapping_efficiency * 100.0,
        compute_util: s.busy_pe_cycles as f64 * 100.0 / (s.compute_cycles as f64 * pes),
        sram: [win(if_reads), win(f_reads), win(s.sram_writes)],
        dram: [win(u_if), win(g.k * g.n), win(g.m * g.n)],
        sparse: None,
    })
}

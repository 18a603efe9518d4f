//! Our own model in SCALE-Sim's report format (the default of `tpusim systolic run`):
//! the analytic model on the same GEMM SCALE-Sim derives from each layer.
//!
//! Columns: Total Cycles = our cycles (+ stalls in USER mode); Stall Cycles (USER
//! only) = max(0, ⌈DRAM words / Bandwidth⌉ − cycles), a bandwidth-bound estimate with
//! every distinct operand word read once and every output word written once; Total
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
    let touched = |input: u64, f: u64, s: u64, out: u64| -> u64 {
        if s >= f {
            (0..out)
                .map(|o| (o * s + f).min(input).saturating_sub(o * s))
                .sum()
        } else {
            ((out - 1) * s + f).min(input)
        }
    };
    let u_if = touched(l.ifmap_h, l.filt_h, l.stride, oh)
        * touched(l.ifmap_w, l.filt_w, l.stride, ow)
        * l.channels;
    let wl = Workload {
        gemm: g,
        repeat: 1,
        unique_inputs: u_if + g.k * g.n,
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
    let words = wl.unique_inputs + wl.unique_outputs;
    let stall = match cfg.mode {
        BandwidthMode::Calc => 0,
        BandwidthMode::User => {
            let bw = cfg.bandwidths.first().copied().unwrap_or(1).max(1);
            words.div_ceil(bw).saturating_sub(s.cycles)
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
    })
}

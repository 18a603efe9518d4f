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
//! * Sparsity (`[sparsity] SparsitySupport: true`, `sparsity.rs`): the operand
//!   matrices shrink or lose words; the same folds, streams and buffers run on them
//!   (`compute.rs`, `demand.rs`), plus SPARSE_REPORT.csv.
//! * Custom layouts (`[layout] …CustomLayout: True` and a layout file, `layout.rs`):
//!   in USER mode the operand is fetched in the layout's order and read from banked
//!   SRAM lines, with bank-conflict stalls (`layout_buffer.rs`); CALC mode only checks
//!   the layout as SCALE-Sim asserts it. USER mode needs each `…SRAMBankBandwidth` to
//!   divide evenly among its `…SRAMBankNum` banks (SCALE-Sim asserts it, layout or not).
//!
//! The memory side is replayed demand row by demand row (`replay.rs`; `demand.rs`
//! gives the addresses each row reads): O(rows + OFMAP drains) when both read operands
//! fit, plus O(reads of an operand) for each operand that does not (or is sparse, or
//! has a custom layout). Checked against SCALE-Sim 3.0.0 on the golden cases in
//! `tests/data/scalesim` (8×8 to 128×128; ws, os, is; CALC and USER; refetching and
//! stalling ones; sparse and custom-layout ones) byte for byte.
//!
//! Still refused ([`layer_report`] returns [`SystolicError::NotReproduced`] with the
//! reason): configs SCALE-Sim 3.0.0 cannot read are refused before this, by
//! [`ScaleConfig::parse_compat`] (a missing section or key, a malformed number, with
//! Python's error); configs enabling what SCALE-Sim models and we do not (Ramulator
//! DRAM traces: [`ScaleConfig::unmodelled`]); configurations SCALE-Sim 3.0.0 itself
//! crashes or loops forever on (two CALC refetch triggers in one cycle divide by zero;
//! an SRAM under 100 bytes; a zero bandwidth; USER bank bandwidths that do not divide
//! among the banks; the sparse and layout cases `sparsity.rs` and `layout_order.rs`
//! name, with SCALE-Sim's error); sparsity with a FILTER offset ≤ 0 (see
//! `sparsity.rs`); and layers beyond the replay limits (more than 200 million demand
//! rows, 50 million folds, operands with more than 2²⁶ addresses or USER prefetch
//! elements that must be refetched, or an IFMAP so sparse that locating its last read
//! scans more than 2²² elements).

use super::compute::{compute_side, ComputeSide};
use super::config::{BandwidthMode, ScaleConfig};
use super::demand::Mapping;
use super::layout::Layout;
use super::layout_order::LayoutOrder;
use super::replay::{replay, Layouts};
use super::report::{Access, LayerReport, SparseReport};
use super::sparsity::{self, Operands};
use super::topology::TopoLayer;
use crate::error::{Result, SystolicError};
use crate::shape::{ceil_div, Dataflow};

pub(crate) fn unsupported(layer: &TopoLayer, why: String) -> SystolicError {
    SystolicError::NotReproduced {
        layer: layer.name.clone(),
        why,
    }
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

/// SCALE-Sim's report row for one layer: all three reports' columns, refetches and
/// stalls included (an error naming what is not reproduced outside the covered
/// regime, see the module doc). A config with a custom layout needs
/// [`layer_report_with_layout`].
pub fn layer_report(cfg: &ScaleConfig, l: &TopoLayer) -> Result<LayerReport> {
    report(cfg, None, l, true)
}

/// [`layer_report`] with SCALE-Sim's layout file (its `-l`), which the config's
/// `IfmapCustomLayout` / `FilterCustomLayout` use.
pub fn layer_report_with_layout(
    cfg: &ScaleConfig,
    layout: Option<&Layout>,
    l: &TopoLayer,
) -> Result<LayerReport> {
    report(cfg, layout, l, true)
}

/// SCALE-Sim's compute-side columns for one layer in any mode, assuming no stalls:
/// Total Cycles, the three utilization columns and the SRAM columns. DRAM columns are
/// zero and "incl. prefetch" equals Total Cycles.
pub fn compute_report(cfg: &ScaleConfig, l: &TopoLayer) -> Result<LayerReport> {
    report(cfg, None, l, false)
}

fn report(
    cfg: &ScaleConfig,
    layout: Option<&Layout>,
    l: &TopoLayer,
    full: bool,
) -> Result<LayerReport> {
    if !cfg.unmodelled.is_empty() {
        return Err(unsupported(
            l,
            format!(
                "the config sets {}, which change SCALE-Sim's numbers and are not modelled",
                cfg.unmodelled.join(", ")
            ),
        ));
    }
    let (r, c) = (cfg.array.rows, cfg.array.cols);
    let ops = sparsity::operands(cfg, l).map_err(|why| unsupported(l, why))?;
    let map = Mapping::with_operands(l, cfg.dataflow, r, c, ops)?;
    check_operands(&map).map_err(|why| unsupported(l, why))?;
    let side = compute_side(l, &map)?;
    let sparse = sparse_figures(cfg, &map, l, &side);
    if !full {
        return Ok(no_stall_report(l, &side, sparse, r * c));
    }
    let layouts = layout_orders(cfg, layout, l)?;
    replay(cfg, l, &map, &side, &layouts, sparse)
}

/// Where SCALE-Sim 3.0.0 fails on the operand matrices a sparse layer gets.
fn check_operands(map: &Mapping) -> std::result::Result<(), String> {
    if map.df != Dataflow::Ws && map.k_if != map.k_f {
        return Err(format!(
            "SCALE-Sim 3.0.0 fails: AssertionError: Dimension mismatch between operands (the IFMAP's {} columns, the compressed FILTER's {} rows)",
            map.k_if, map.k_f
        ));
    }
    if let Operands::RowWise { block, .. } = &map.ops {
        if map.df == Dataflow::Ws && map.r.saturating_mul(2) % block != 0 {
            return Err(format!(
                "SCALE-Sim 3.0.0 fails: ValueError: BlockSize {block} does not divide the two array tiles (2 x {} rows) skew_matrix_row_sparsity cuts into blocks (an inhomogeneous array)",
                map.r
            ));
        }
    }
    Ok(())
}

fn sparse_figures(
    cfg: &ScaleConfig,
    map: &Mapping,
    l: &TopoLayer,
    side: &ComputeSide,
) -> Option<SparseReport> {
    let sp = cfg.sparsity.as_ref()?;
    let g = l.scalesim_gemm().ok()?;
    let mut rep = sparsity::sparse_report(sp, &map.ops, l, g.k, map.k_f);
    rep.ifmap_sram_reads = side.ifmap_reads_float;
    Some(rep)
}

fn no_stall_report(
    l: &TopoLayer,
    side: &ComputeSide,
    sparse: Option<SparseReport>,
    pes: u64,
) -> LayerReport {
    LayerReport {
        name: l.name.clone(),
        cycles_incl_prefetch: side.total as i64,
        total_cycles: side.total,
        stall_cycles: 0,
        overall_util: side.overall(side.total, pes),
        mapping_efficiency: side.mapping,
        compute_util: side.compute_util,
        sram: side.sram(),
        dram: [Access::default(); 3],
        sparse,
    }
}

/// The custom layouts of `l`, checked as SCALE-Sim checks them (in CALC mode it then
/// ignores them).
fn layout_orders(cfg: &ScaleConfig, layout: Option<&Layout>, l: &TopoLayer) -> Result<Layouts> {
    let lc = cfg.layout;
    if !lc.ifmap_custom && !lc.filter_custom {
        return Ok(Layouts::default());
    }
    let Some(layout) = layout else {
        return Err(unsupported(
            l,
            "the config sets a custom layout (IfmapCustomLayout / FilterCustomLayout) but no layout file was given".into(),
        ));
    };
    let Some(row) = &layout.first else {
        return Err(SystolicError::Layout {
            file: layout.file.clone(),
            line: 1,
            msg: "no layer row after the header (SCALE-Sim 3.0.0 fails: IndexError: list index out of range)".into(),
        });
    };
    let bad = |msg: String| SystolicError::Layout {
        file: layout.file.clone(),
        line: row.line,
        msg: format!("layer '{}': {msg}", l.name),
    };
    let mut out = Layouts::default();
    if lc.ifmap_custom {
        out.ifmap = Some(LayoutOrder::ifmap(row, l, cfg.ifmap_bank_bandwidth).map_err(bad)?);
    }
    if lc.filter_custom {
        out.filter = Some(LayoutOrder::filter(row, l, cfg.filter_bank_bandwidth).map_err(bad)?);
    }
    if cfg.mode == BandwidthMode::Calc {
        return Ok(Layouts::default());
    }
    if out.ifmap.is_some() && cfg.offsets.ifmap != 0 {
        return Err(unsupported(
            l,
            format!("IfmapCustomLayout with IfmapOffset {}: the layout numbers IFMAP words from 0, so SCALE-Sim 3.0.0 never finds them and loops forever", cfg.offsets.ifmap),
        ));
    }
    if out.filter.is_some() && cfg.offsets.filter < 0 {
        return Err(unsupported(
            l,
            format!(
                "FilterCustomLayout with a negative FilterOffset {}",
                cfg.offsets.filter
            ),
        ));
    }
    Ok(out)
}

/// SCALE-Sim's "Total Cycles" for a GEMM (its compute model, any bandwidth mode
/// without stalls): `folds · Lf − 1`.
pub fn total_cycles(df: Dataflow, r: u64, c: u64, g: crate::shape::Gemm) -> u64 {
    let (sr, sc, _, lf) = super::demand::fold_geometry(df, r, c, g);
    ceil_div(sr, r) * ceil_div(sc, c) * lf - 1
}

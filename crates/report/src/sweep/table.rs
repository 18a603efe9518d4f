//! A sweep's rows as typed columns: what the CSV and the Parquet writers both write, so
//! the two files hold the same table.

use super::{Figures, SweepRow};

/// The values of one column, one per row (`None`: empty).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Text.
    Text(Vec<Option<String>>),
    /// Floating point.
    F64(Vec<Option<f64>>),
    /// Unsigned integers.
    U64(Vec<Option<u64>>),
    /// Booleans.
    Bool(Vec<Option<bool>>),
}

/// One named column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Its header.
    pub name: &'static str,
    /// Its values.
    pub values: Values,
}

/// The rows as columns: the point (`model`, `chip`, `batch`, `dtype`: the one the run
/// used, else the one asked; a transformer's `phase`, `seq` and `context`, empty when
/// not set), then the figures, `error` last.
pub fn table(rows: &[SweepRow]) -> Vec<Column> {
    let text = |f: &dyn Fn(&SweepRow) -> Option<String>| Values::Text(rows.iter().map(f).collect());
    let real =
        |f: fn(&Figures) -> Option<f64>| Values::F64(rows.iter().map(|r| f(&r.figures)).collect());
    let count =
        |f: fn(&Figures) -> Option<u64>| Values::U64(rows.iter().map(|r| f(&r.figures)).collect());
    let col = |name, values| Column { name, values };
    vec![
        col("model", text(&|r| Some(r.point.model.clone()))),
        col("chip", text(&|r| Some(r.point.chip.clone()))),
        col("chip_kind", text(&|r| r.figures.chip_kind.clone())),
        col(
            "batch",
            Values::U64(rows.iter().map(|r| Some(r.point.batch)).collect()),
        ),
        col(
            "dtype",
            text(&|r| r.figures.dtype.clone().or_else(|| r.point.dtype.clone())),
        ),
        col("phase", text(&|r| r.point.phase.clone())),
        col(
            "seq",
            Values::U64(rows.iter().map(|r| r.point.seq).collect()),
        ),
        col(
            "context",
            Values::U64(rows.iter().map(|r| r.point.context).collect()),
        ),
        col("total_time_s", real(|f| f.total_time_s)),
        col("roofline_lower_bound_s", real(|f| f.roofline_lower_bound_s)),
        col("plan_over_bound", real(|f| f.plan_over_bound)),
        col("compute_s", real(|f| f.compute_s)),
        col("exposed_dma_s", real(|f| f.exposed_dma_s)),
        col("flops", count(|f| f.flops)),
        col("bytes_logical", count(|f| f.bytes_logical)),
        col("bytes_moved", count(|f| f.bytes_moved)),
        col("achieved_flops_per_s", real(|f| f.achieved_flops_per_s)),
        col("peak_flops_per_s", real(|f| f.peak_flops_per_s)),
        col("layers", count(|f| f.layers)),
        col("groups", count(|f| f.groups)),
        col("global_ops", count(|f| f.global_ops)),
        col(
            "fits_hbm",
            Values::Bool(rows.iter().map(|r| r.figures.fits_hbm).collect()),
        ),
        col("hbm_bytes_needed", count(|f| f.hbm_bytes_needed)),
        col("error", text(&|r| r.figures.error.clone())),
    ]
}

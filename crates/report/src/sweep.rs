//! Batches of runs: a TOML grid (models × chips × batch sizes × dtypes) expanded into
//! points, run in parallel with rayon, one CSV row per run (ready for a dataframe).
//!
//! ```toml
//! models  = ["resnet18", "resnet50"]   # built-in names or model files
//! chips   = ["v5e", "bm1684x"]         # TPUs from the chip database, NPU presets
//! batches = [1, 8]                     # optional, default [1]
//! dtypes  = ["bf16", "int8"]           # optional, default: each chip's default dtype
//! ```
//!
//! A run that fails (say, a dtype the chip has no rate for) still gets its row, with the
//! message in the `error` column and the numbers empty; the sweep goes on.

use crate::error::{ReportError, Result};
use crate::model::Report;
use rayon::prelude::*;
use serde::Deserialize;
use std::fmt::Write;

/// Largest grid a sweep file may describe.
pub const MAX_RUNS: u64 = 100_000;

/// A sweep file as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// Model names (built-in) or model file paths.
    pub models: Vec<String>,
    /// Chip names.
    pub chips: Vec<String>,
    /// Batch sizes; default `[1]`.
    #[serde(default = "default_batches")]
    pub batches: Vec<u64>,
    /// Element types; empty = each chip's default dtype.
    #[serde(default)]
    pub dtypes: Vec<String>,
}

fn default_batches() -> Vec<u64> {
    vec![1]
}

/// One run of the grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepPoint {
    /// Model name or file.
    pub model: String,
    /// Chip name.
    pub chip: String,
    /// Batch size.
    pub batch: u64,
    /// Element type, or `None` for the chip's default.
    pub dtype: Option<String>,
}

/// The outcome of one run: the point and its report or error message.
#[derive(Debug, Clone)]
pub struct SweepRow {
    /// What was run.
    pub point: SweepPoint,
    /// The report, or the error's message.
    pub outcome: std::result::Result<Report, String>,
}

impl SweepSpec {
    /// Parse a sweep file's text and check that its grid has 1..=[`MAX_RUNS`] runs.
    pub fn parse(text: &str) -> Result<SweepSpec> {
        let spec: SweepSpec = toml::from_str(text)
            .map_err(|e| ReportError::BadSweep(e.to_string().trim().replace('\n', " ")))?;
        for (key, empty) in [
            ("models", spec.models.is_empty()),
            ("chips", spec.chips.is_empty()),
            ("batches", spec.batches.is_empty()),
        ] {
            if empty {
                return Err(ReportError::BadSweep(format!(
                    "'{key}' must list at least one value"
                )));
            }
        }
        if let Some(b) = spec.batches.iter().find(|b| **b == 0) {
            return Err(ReportError::BadBatch {
                given: *b,
                why: "batch sizes must be at least 1".into(),
            });
        }
        let n = spec.runs();
        if n == 0 || n > MAX_RUNS {
            return Err(ReportError::SweepSize {
                given: n,
                limit: MAX_RUNS,
            });
        }
        Ok(spec)
    }

    /// Number of runs of the grid (saturating).
    pub fn runs(&self) -> u64 {
        [
            self.models.len(),
            self.chips.len(),
            self.batches.len(),
            self.dtypes.len().max(1),
        ]
        .iter()
        .fold(1u64, |a, b| a.saturating_mul(*b as u64))
    }

    /// The grid's points, models outermost, then chips, batches, dtypes.
    pub fn points(&self) -> Vec<SweepPoint> {
        let dtypes: Vec<Option<String>> = if self.dtypes.is_empty() {
            vec![None]
        } else {
            self.dtypes.iter().cloned().map(Some).collect()
        };
        let mut v = Vec::new();
        for m in &self.models {
            for c in &self.chips {
                for b in &self.batches {
                    for d in &dtypes {
                        v.push(SweepPoint {
                            model: m.clone(),
                            chip: c.clone(),
                            batch: *b,
                            dtype: d.clone(),
                        });
                    }
                }
            }
        }
        v
    }
}

/// Run every point with `run` in parallel (rayon's global pool: all cores), calling
/// `progress` once after each run finishes (from any thread). Rows come back in grid
/// order.
pub fn run_points<F, P>(points: &[SweepPoint], run: F, progress: P) -> Vec<SweepRow>
where
    F: Fn(&SweepPoint) -> Result<Report> + Sync,
    P: Fn() + Sync,
{
    points
        .par_iter()
        .map(|p| {
            let outcome = run(p).map_err(|e| e.to_string());
            progress();
            SweepRow {
                point: p.clone(),
                outcome,
            }
        })
        .collect()
}

/// CSV header of [`csv`], in column order.
pub const CSV_COLUMNS: [&str; 19] = [
    "model",
    "chip",
    "chip_kind",
    "batch",
    "dtype",
    "total_time_s",
    "roofline_lower_bound_s",
    "plan_over_bound",
    "flops",
    "bytes_logical",
    "bytes_moved",
    "achieved_flops_per_s",
    "peak_flops_per_s",
    "layers",
    "groups",
    "global_ops",
    "fits_hbm",
    "hbm_bytes_needed",
    "error",
];

/// Quote a CSV field when it holds a comma, quote or line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The rows as CSV text: a header line, then one line per run.
pub fn csv(rows: &[SweepRow]) -> String {
    let mut o = CSV_COLUMNS.join(",");
    o.push('\n');
    for row in rows {
        let p = &row.point;
        let cells: Vec<String> = match &row.outcome {
            Ok(r) => vec![
                field(&p.model),
                field(&p.chip),
                field(&r.chip_kind),
                p.batch.to_string(),
                field(&r.dtype),
                format!("{:e}", r.total_time_s),
                format!("{:e}", r.roofline_lower_bound_s),
                if r.roofline_lower_bound_s > 0.0 {
                    format!("{:.6}", r.total_time_s / r.roofline_lower_bound_s)
                } else {
                    String::new()
                },
                r.flops.to_string(),
                r.bytes_logical.to_string(),
                r.bytes_moved.to_string(),
                format!("{:e}", r.achieved_flops_per_s),
                format!("{:e}", r.peak_flops_per_s),
                r.layers.len().to_string(),
                r.groups.len().to_string(),
                r.groups.iter().filter(|g| g.global).count().to_string(),
                r.fits_hbm.map_or_else(String::new, |f| f.to_string()),
                r.hbm_bytes_needed.to_string(),
                String::new(),
            ],
            Err(e) => {
                let mut v = vec![
                    field(&p.model),
                    field(&p.chip),
                    String::new(),
                    p.batch.to_string(),
                    field(p.dtype.as_deref().unwrap_or("")),
                ];
                v.extend(std::iter::repeat(String::new()).take(CSV_COLUMNS.len() - 6));
                v.push(field(e));
                v
            }
        };
        let _ = writeln!(o, "{}", cells.join(","));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_expands_in_order() {
        let s = SweepSpec::parse(
            "models = [\"a\", \"b\"]\nchips = [\"x\"]\nbatches = [1, 4]\ndtypes = [\"bf16\", \"int8\"]\n",
        )
        .unwrap();
        assert_eq!(s.runs(), 8);
        let p = s.points();
        assert_eq!(p.len(), 8);
        assert_eq!(
            p[0],
            SweepPoint {
                model: "a".into(),
                chip: "x".into(),
                batch: 1,
                dtype: Some("bf16".into())
            }
        );
        assert_eq!(p[1].dtype.as_deref(), Some("int8"));
        assert_eq!(p[2].batch, 4);
        assert_eq!(p[4].model, "b");
    }

    #[test]
    fn defaults_and_errors() {
        let s = SweepSpec::parse("models = [\"a\"]\nchips = [\"x\"]\n").unwrap();
        assert_eq!(
            s.points(),
            vec![SweepPoint {
                model: "a".into(),
                chip: "x".into(),
                batch: 1,
                dtype: None
            }]
        );
        assert!(matches!(
            SweepSpec::parse("models = []\nchips = [\"x\"]"),
            Err(ReportError::BadSweep(_))
        ));
        assert!(matches!(
            SweepSpec::parse("models = [\"a\"]\nchips = [\"x\"]\nbatches=[0]"),
            Err(ReportError::BadBatch { .. })
        ));
        let e = SweepSpec::parse("models = [\"a\"]\nchip = [\"x\"]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("chip"), "{e}");
        let big = format!(
            "models = [{}]\nchips = [{}]\nbatches = [{}]\n",
            (0..100)
                .map(|i| format!("\"m{i}\""))
                .collect::<Vec<_>>()
                .join(","),
            (0..100)
                .map(|i| format!("\"c{i}\""))
                .collect::<Vec<_>>()
                .join(","),
            (1..=11)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        assert!(matches!(
            SweepSpec::parse(&big),
            Err(ReportError::SweepSize { given: 110000, .. })
        ));
    }

    #[test]
    fn csv_quotes_and_error_rows() {
        let rows = vec![SweepRow {
            point: SweepPoint {
                model: "a,b".into(),
                chip: "x".into(),
                batch: 2,
                dtype: None,
            },
            outcome: Err("bad \"dtype\"".into()),
        }];
        let text = csv(&rows);
        let mut lines = text.lines();
        assert_eq!(lines.next().unwrap().split(',').count(), CSV_COLUMNS.len());
        let line = lines.next().unwrap();
        assert!(line.starts_with("\"a,b\",x,,2,,"), "{line}");
        assert!(line.ends_with("\"bad \"\"dtype\"\"\""), "{line}");
        // every column: the quoted fields hold one comma between them
        assert_eq!(line.matches(',').count(), CSV_COLUMNS.len() - 1 + 1);
    }
}

//! Batches of runs, the one engine of `tpusim report --sweep` and `tpusim.sweep`: a grid
//! (models × chips × batch sizes × dtypes, from a TOML file or a Python space) expanded
//! into points, run in parallel with rayon, one row of [`Figures`] per run, written as
//! CSV or Parquet ([`table`]: the same columns for both, ready for a dataframe).
//!
//! ```toml
//! models  = ["resnet18", "resnet50"]   # built-in names or model files
//! chips   = ["v5e", "bm1684x"]         # TPUs from the chip database, NPU presets
//! batches = [1, 8]                     # optional, default [1]
//! dtypes  = ["bf16", "int8"]           # optional, default: each chip's default dtype
//! phases   = ["prefill", "decode"]     # optional, transformers only (default prefill)
//! seqs     = [2048]                    # optional, transformers: prompt tokens (default 2048)
//! contexts = [2048, 8192]              # optional, transformers: KV length in decode (default 2048)
//! ```
//!
//! A model that is a built-in LLM or a Hugging Face `config.json` is a transformer
//! ([`Network::Transformer`]): its point runs as `tpusim report MODEL --phase …` does,
//! with the dtype as weight and KV precision.
//!
//! A run that fails (say, a dtype the chip has no rate for) still gets its row, with the
//! message in the `error` column and the numbers empty; the sweep goes on.

mod csv;
mod figures;
mod parquet;
mod run;
mod table;

pub use csv::csv;
pub use figures::Figures;
pub use parquet::parquet;
pub use run::{run, Network, Shared};
pub use table::{table, Column, Values};

use crate::error::{ReportError, Result};
use rayon::prelude::*;
use serde::Deserialize;

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
    /// Transformer phases (`prefill`, `decode`); empty = not set.
    #[serde(default)]
    pub phases: Vec<String>,
    /// Transformer prompt lengths; empty = not set.
    #[serde(default)]
    pub seqs: Vec<u64>,
    /// Transformer KV-cache lengths; empty = not set.
    #[serde(default)]
    pub contexts: Vec<u64>,
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
    /// Transformers: prefill or decode (`None`: prefill).
    pub phase: Option<String>,
    /// Transformers: prompt tokens per sequence (`None`: 2048).
    pub seq: Option<u64>,
    /// Transformers: KV-cache length per sequence (`None`: 2048).
    pub context: Option<u64>,
}

/// The outcome of one run: the point and its figures (or error message).
#[derive(Debug, Clone)]
pub struct SweepRow {
    /// What was run.
    pub point: SweepPoint,
    /// What it gave.
    pub figures: Figures,
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
            self.phases.len().max(1),
            self.seqs.len().max(1),
            self.contexts.len().max(1),
        ]
        .iter()
        .fold(1u64, |a, b| a.saturating_mul(*b as u64))
    }

    /// The grid's points, models outermost, then chips, batches, dtypes, phases, seqs
    /// and contexts.
    pub fn points(&self) -> Vec<SweepPoint> {
        fn or_none<T: Clone>(v: &[T]) -> Vec<Option<T>> {
            if v.is_empty() {
                vec![None]
            } else {
                v.iter().cloned().map(Some).collect()
            }
        }
        let (dtypes, phases) = (or_none(&self.dtypes), or_none(&self.phases));
        let (seqs, contexts) = (or_none(&self.seqs), or_none(&self.contexts));
        let mut v = Vec::new();
        for m in &self.models {
            for c in &self.chips {
                for b in &self.batches {
                    for d in &dtypes {
                        for ph in &phases {
                            for s in &seqs {
                                for cx in &contexts {
                                    v.push(SweepPoint {
                                        model: m.clone(),
                                        chip: c.clone(),
                                        batch: *b,
                                        dtype: d.clone(),
                                        phase: ph.clone(),
                                        seq: *s,
                                        context: *cx,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        v
    }
}

/// Run every item with `run` in parallel (rayon's global pool: all cores), calling
/// `progress` once after each run finishes (from any thread). Figures come back in the
/// items' order; a run that fails keeps its message in [`Figures::error`].
pub fn run_each<T, F, P>(items: &[T], run: F, progress: P) -> Vec<Figures>
where
    T: Sync,
    F: Fn(&T) -> Figures + Sync,
    P: Fn() + Sync,
{
    items
        .par_iter()
        .map(|item| {
            let figures = run(item);
            progress();
            figures
        })
        .collect()
}

/// [`run_each`] over a grid's points, each row keeping its point.
pub fn run_points<F, P>(points: &[SweepPoint], run: F, progress: P) -> Vec<SweepRow>
where
    F: Fn(&SweepPoint) -> Figures + Sync,
    P: Fn() + Sync,
{
    run_each(points, run, progress)
        .into_iter()
        .zip(points)
        .map(|(figures, p)| SweepRow {
            point: p.clone(),
            figures,
        })
        .collect()
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
                dtype: Some("bf16".into()),
                phase: None,
                seq: None,
                context: None,
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
                dtype: None,
                phase: None,
                seq: None,
                context: None,
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
                phase: None,
                seq: None,
                context: None,
            },
            figures: Figures::of(Err("bad \"dtype\"".into())),
        }];
        let text = csv(&rows);
        let mut lines = text.lines();
        let columns = table(&rows).len();
        assert_eq!(lines.next().unwrap().split(',').count(), columns);
        let line = lines.next().unwrap();
        assert!(line.starts_with("\"a,b\",x,,2,,"), "{line}");
        assert!(line.ends_with("\"bad \"\"dtype\"\"\""), "{line}");
        // every column: the quoted fields hold one comma between them
        assert_eq!(line.matches(',').count(), columns - 1 + 1);
    }
}

//! `tpusim layout hlo FILE`: the padding report of an HLO text dump
//! ([`tpusim_layout::hlo::padding`]), the N most wasteful arrays with totals.

use crate::util::print_json;
use anyhow::Result;
use serde::Serialize;
use std::path::Path;
use tpusim_layout::hlo::HloArray;

#[derive(Serialize)]
struct Report {
    file: String,
    array_count: usize,
    total_logical_bytes: u64,
    total_array_size_bytes: u64,
    total_waste_bytes: u64,
    expansion: f64,
    skipped: Vec<String>,
    arrays: Vec<HloArray>,
}

/// Run the report.
pub fn run(file: &Path, top: usize, json: bool) -> Result<()> {
    let text = crate::input::read_input(file, crate::input::InputKind::Hlo)?;
    let Some(padding) = tpusim_layout::hlo::padding(&text) else {
        anyhow::bail!(
            "'{}' has no instruction with a laid-out array shape (is it an HLO text dump, e.g. *.after_optimizations.txt?)",
            file.display()
        );
    };
    let total_logical_bytes = padding.total_logical_bytes();
    let total_array_size_bytes = padding.total_array_size_bytes();
    let array_count = padding.arrays.len();
    let mut arrays = padding.arrays;
    arrays.truncate(top);
    let report = Report {
        file: file.display().to_string(),
        array_count,
        total_logical_bytes,
        total_array_size_bytes,
        total_waste_bytes: total_array_size_bytes.saturating_sub(total_logical_bytes),
        expansion: if total_logical_bytes == 0 {
            1.0
        } else {
            total_array_size_bytes as f64 / total_logical_bytes as f64
        },
        skipped: padding.skipped,
        arrays,
    };
    if json {
        return print_json(&report);
    }
    println!(
        "{:>14} {:>14} {:>9}  {:<24} shape",
        "allocated B", "logical B", "expansion", "name"
    );
    for r in &report.arrays {
        println!(
            "{:>14} {:>14} {:>8.2}x  {:<24} {}",
            r.array_size_bytes,
            r.logical_bytes,
            r.expansion,
            crate::util::shown(&r.name),
            r.shape
        );
    }
    println!(
        "total: {} arrays, {} B allocated for {} B of data ({:.2}x, {} B padding)",
        report.array_count,
        report.total_array_size_bytes,
        report.total_logical_bytes,
        report.expansion,
        report.total_waste_bytes
    );
    for s in &report.skipped {
        eprintln!("note: skipped {}", crate::util::shown(s));
    }
    Ok(())
}

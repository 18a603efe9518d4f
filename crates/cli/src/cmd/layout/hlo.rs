//! `tpusim layout hlo FILE`: every array with a layout in an HLO text dump, by wasted
//! bytes (allocated − logical), with totals.
//!
//! Each instruction line `name = SHAPE op(...)` contributes its result shape (tuple
//! leaves as `name{i}`). Instructions inside computations that a `fusion` calls
//! (`calls=`) or that reductions apply (`to_apply=`) are skipped: their values live in
//! registers/VMEM, not in separate buffers.

use crate::util::print_json;
use anyhow::Result;
use serde::Serialize;
use std::path::Path;
use tpusim_layout::{parse_shape_prefix, sizes, validate, Shape};

#[derive(Serialize)]
struct Row {
    name: String,
    computation: String,
    line: usize,
    shape: String,
    logical_bytes: u64,
    array_size_bytes: u64,
    waste_bytes: u64,
    expansion: f64,
}

#[derive(Serialize)]
struct Report {
    file: String,
    array_count: usize,
    total_logical_bytes: u64,
    total_array_size_bytes: u64,
    total_waste_bytes: u64,
    expansion: f64,
    skipped: Vec<String>,
    arrays: Vec<Row>,
}

fn leaves(shape: &Shape, name: &str, out: &mut Vec<(String, Shape)>) {
    match shape {
        Shape::Array(_) => out.push((name.to_string(), shape.clone())),
        Shape::Tuple(v) => {
            for (i, s) in v.iter().enumerate() {
                leaves(s, &format!("{name}{{{i}}}"), out);
            }
        }
        _ => {}
    }
}

/// Run the report.
pub fn run(file: &Path, top: usize, json: bool) -> Result<()> {
    let text = crate::input::read_input(file, crate::input::InputKind::Hlo)?;
    let mut inner = std::collections::HashSet::new();
    for line in text.lines() {
        for key in ["calls=", "to_apply="] {
            let mut rest = line;
            while let Some(i) = rest.find(key) {
                rest = &rest[i + key.len()..];
                let name: String = rest
                    .trim_start_matches('%')
                    .chars()
                    .take_while(|c| !matches!(c, ',' | ' ' | '}' | ')'))
                    .collect();
                inner.insert(name);
            }
        }
    }
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let mut computation = String::new();
    let mut in_fusion = false;
    for (ln, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.ends_with('{') && !t.contains(" = ") {
            computation = t
                .trim_start_matches("ENTRY ")
                .split([' ', '('])
                .next()
                .unwrap_or("")
                .trim_start_matches('%')
                .to_string();
            in_fusion = inner.contains(&computation);
            continue;
        }
        let Some(eq) = t.find(" = ") else { continue };
        if in_fusion || t.starts_with("HloModule") {
            continue;
        }
        let name = t[..eq]
            .trim()
            .trim_start_matches("ROOT ")
            .trim()
            .trim_start_matches('%');
        let rest = &t[eq + 3..];
        let Ok((shape, _)) = parse_shape_prefix(rest) else {
            continue;
        };
        let mut ls = Vec::new();
        leaves(&shape, name, &mut ls);
        for (n, s) in ls {
            let Shape::Array(a) = &s else { continue };
            if a.layout.is_none() {
                continue;
            }
            let sz = match validate(&s)
                .map_err(anyhow::Error::from)
                .and_then(|_| Ok(sizes(a)?))
            {
                Ok(sz) => sz,
                Err(e) => {
                    skipped.push(format!("line {}: {n}: {e}", ln + 1));
                    continue;
                }
            };
            rows.push(Row {
                name: n,
                computation: computation.clone(),
                line: ln + 1,
                shape: a.to_string(),
                logical_bytes: sz.logical_bytes,
                array_size_bytes: sz.array_size_bytes,
                waste_bytes: sz.array_size_bytes.saturating_sub(sz.logical_bytes),
                expansion: sz.expansion,
            });
        }
    }
    if rows.is_empty() && skipped.is_empty() {
        anyhow::bail!(
            "'{}' has no instruction with a laid-out array shape (is it an HLO text dump, e.g. *.after_optimizations.txt?)",
            file.display()
        );
    }
    rows.sort_by(|a, b| {
        b.waste_bytes
            .cmp(&a.waste_bytes)
            .then(b.array_size_bytes.cmp(&a.array_size_bytes))
            .then(a.line.cmp(&b.line))
    });
    let sum = |f: fn(&Row) -> u64| rows.iter().fold(0u64, |s, r| s.saturating_add(f(r)));
    let total_logical_bytes = sum(|r| r.logical_bytes);
    let total_array_size_bytes = sum(|r| r.array_size_bytes);
    let array_count = rows.len();
    rows.truncate(top);
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
        skipped,
        arrays: rows,
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

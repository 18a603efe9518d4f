//! Padding in an HLO text dump: every array with a layout, by wasted bytes (allocated −
//! logical), with totals.
//!
//! Each instruction line `name = SHAPE op(...)` contributes its result shape (tuple
//! leaves as `name{i}`). Instructions inside computations that a `fusion` calls
//! (`calls=`) or that reductions apply (`to_apply=`) are skipped: their values live in
//! registers/VMEM, not in separate buffers. Lines that are not instructions, and
//! shapes that do not parse, are passed over: a dump holds much else.

use crate::{parse_shape_prefix, sizes, validate, Shape};
use serde::Serialize;
use std::collections::HashSet;

/// One laid-out array of the dump.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HloArray {
    /// Instruction name (tuple leaves as `name{i}`).
    pub name: String,
    /// The computation it belongs to.
    pub computation: String,
    /// Line number in the dump (from 1).
    pub line: usize,
    /// Canonical shape text.
    pub shape: String,
    /// Bytes of data.
    pub logical_bytes: u64,
    /// Bytes XLA allocates (ArraySize).
    pub array_size_bytes: u64,
    /// Allocated − logical.
    pub waste_bytes: u64,
    /// Allocated ÷ logical.
    pub expansion: f64,
}

/// What a dump holds: its arrays, largest waste first, and what could not be sized.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HloPadding {
    /// Every laid-out array, by waste, then size, then line.
    pub arrays: Vec<HloArray>,
    /// `line N: name: why` for shapes that parse but are not valid or not sizable.
    pub skipped: Vec<String>,
}

impl HloPadding {
    /// Σ logical bytes (saturating).
    pub fn total_logical_bytes(&self) -> u64 {
        self.arrays
            .iter()
            .fold(0u64, |s, r| s.saturating_add(r.logical_bytes))
    }

    /// Σ allocated bytes (saturating).
    pub fn total_array_size_bytes(&self) -> u64 {
        self.arrays
            .iter()
            .fold(0u64, |s, r| s.saturating_add(r.array_size_bytes))
    }
}

/// Names of the computations that fusions call or reductions apply.
fn inner_computations(text: &str) -> HashSet<String> {
    let mut inner = HashSet::new();
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
    inner
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

/// Scan an HLO text dump. `None` when it holds no instruction with a laid-out array
/// shape (it is probably not an HLO dump).
pub fn padding(text: &str) -> Option<HloPadding> {
    let inner = inner_computations(text);
    let mut arrays = Vec::new();
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
        let Ok((shape, _)) = parse_shape_prefix(&t[eq + 3..]) else {
            continue;
        };
        let mut ls = Vec::new();
        leaves(&shape, name, &mut ls);
        for (n, s) in ls {
            let Shape::Array(a) = &s else { continue };
            if a.layout.is_none() {
                continue;
            }
            let sz = match validate(&s).and_then(|_| sizes(a)) {
                Ok(sz) => sz,
                Err(e) => {
                    skipped.push(format!("line {}: {n}: {e}", ln + 1));
                    continue;
                }
            };
            arrays.push(HloArray {
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
    if arrays.is_empty() && skipped.is_empty() {
        return None;
    }
    arrays.sort_by(|a, b| {
        b.waste_bytes
            .cmp(&a.waste_bytes)
            .then(b.array_size_bytes.cmp(&a.array_size_bytes))
            .then(a.line.cmp(&b.line))
    });
    Some(HloPadding { arrays, skipped })
}

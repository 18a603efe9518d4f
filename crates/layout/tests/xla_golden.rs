//! Golden data from XLA's own parser/printer and ArraySize (jaxlib 0.12.0.1), made by
//! `tests/data/gen_xla_golden.py` from `tests/data/xla_text_inputs.txt`, and from
//! `xla_sc_inputs.txt` (split configs) and `xla_grammar_inputs.txt` (grammar edges), and
//! the text rows of `xla_unseen_golden.jsonl` (random tiled layouts drawn by
//! `bench/layout_unseen.py generate --seed 4604 --n 1500`, never used to build the rules).

use tpusim_layout::{parse_shape, parse_valid, sizes, Shape};

struct Row {
    input: String,
    xla: Option<String>,
    array_size: Option<i64>,
}

const GOLDENS: [&str; 4] = [
    include_str!("data/xla_text_golden.jsonl"),
    include_str!("data/xla_sc_golden.jsonl"),
    include_str!("data/xla_grammar_golden.jsonl"),
    include_str!("data/xla_unseen_golden.jsonl"),
];

fn rows() -> Vec<Row> {
    GOLDENS
        .iter()
        .flat_map(|g| g.lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        // The unseen set's TPU default rows are read by `tpu_defaults.rs`.
        .filter(|v| v["kind"] != "default")
        .map(|v| Row {
            input: v["input"].as_str().unwrap().to_string(),
            xla: v["xla"].as_str().map(str::to_string),
            array_size: v["array_size"].as_i64(),
        })
        .collect()
}

/// XLA rejects upper-case type names (`F32[…]`); the spec asks us to accept them.
fn upper_case_type(input: &str) -> bool {
    let t = input.trim_start();
    let name: String = t.chars().take_while(char::is_ascii_alphanumeric).collect();
    name.starts_with(|c: char| c.is_ascii_uppercase()) && t[name.len()..].starts_with('[')
}

/// Every row's disagreement with XLA, one line each (empty when none).
fn disagreements(check: impl Fn(&Row) -> Option<String>) -> Vec<String> {
    rows().iter().filter_map(check).collect()
}

fn assert_none(what: &str, found: Vec<String>) {
    assert!(found.is_empty(), "{what}:\n{}", found.join("\n"));
}

#[test]
fn printing_matches_xla_printer() {
    assert!(rows().len() > 300);
    let found = disagreements(|r| {
        let xla = r.xla.as_ref()?;
        if xla.contains("invalid") {
            // XLA prints a non-integer index type as `#(invalid)`; we refuse it.
            return parse_valid(&r.input)
                .is_ok()
                .then(|| format!("accepted {}", r.input));
        }
        if refused_on_purpose(&r.input) {
            return parse_valid(&r.input)
                .is_ok()
                .then(|| format!("accepted {}", r.input));
        }
        let ours = match parse_shape(&r.input) {
            Ok(s) => s.to_string(),
            Err(e) => return Some(format!("refused {}: {e}", r.input)),
        };
        if &ours != xla {
            return Some(format!("printed {} as {ours}, XLA {xla}", r.input));
        }
        // Printing is a fixed point: our output parses back to the same shape.
        match parse_shape(xla) {
            Ok(s) if &s.to_string() == xla => None,
            _ => Some(format!("{xla} does not print back")),
        }
    });
    assert_none("printing differs from XLA", found);
}

#[test]
fn inputs_xla_rejects_are_rejected() {
    let found = disagreements(|r| {
        if r.xla.is_some() {
            return None;
        }
        if upper_case_type(&r.input) && !r.input.starts_with("F33") {
            let Ok(s) = parse_valid(&r.input) else {
                return Some(format!("refused upper-case {}", r.input));
            };
            let lower = s.to_string().to_lowercase().replace("t(", "T(");
            return (s.to_string() != lower).then(|| format!("{s} is not lower case"));
        }
        parse_valid(&r.input)
            .is_ok()
            .then(|| format!("we accept what XLA rejects: {}", r.input))
    });
    assert_none("accepted what XLA refuses", found);
}

#[test]
fn array_size_matches_xla() {
    let found = disagreements(|r| {
        let (Some(xla_bytes), Some(text)) = (r.array_size, &r.xla) else {
            return None;
        };
        let Ok(Shape::Array(a)) = parse_valid(text) else {
            return None;
        };
        let Ok(s) = sizes(&a) else {
            return (!unsized_on_purpose(text, xla_bytes))
                .then(|| format!("{text}: we give no size"));
        };
        let dynamic = a
            .dims
            .iter()
            .any(|d| !matches!(d, tpusim_layout::Dim::Static(_)));
        // XLA's byte size of a dynamic array adds 4 bytes of size metadata per dim.
        let ours = s.array_size_bytes + if dynamic { 4 * a.rank() as u64 } else { 0 };
        (ours != xla_bytes as u64).then(|| format!("{text}: ours {ours}, XLA {xla_bytes}"))
    });
    assert_none("ArraySize differs from XLA", found);
}

/// What XLA's text parser takes and we refuse on purpose: negative numbers anywhere in a
/// layout (XLA's validator or its process refuses them later, or it prints them back as
/// `d` and `*`), a tile size past int64 (XLA wraps it to `*`).
fn refused_on_purpose(input: &str) -> bool {
    input.contains('-') || input.contains("T(9223372036854775808)")
}

/// What we refuse to size on purpose: a `d` tile dimension followed by a second tile
/// (XLA rounds the whole dimension to the second tile by a rule its open source does
/// not show), an unbounded dimension `?`, and a size past 2^64 (XLA's wraps negative).
fn unsized_on_purpose(text: &str, xla_bytes: i64) -> bool {
    text.contains("T(d") || text.contains(",d") || text.contains('?') || xla_bytes < 0
}

//! Golden data from XLA's own parser/printer and ArraySize (jaxlib 0.12.0.1), made by
//! `tests/data/gen_xla_golden.py` from `tests/data/xla_text_inputs.txt`.

use tpusim_layout::{parse_shape, parse_valid, sizes, Shape};

struct Row {
    input: String,
    xla: Option<String>,
    array_size: Option<i64>,
}

fn rows() -> Vec<Row> {
    include_str!("data/xla_text_golden.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Row {
                input: v["input"].as_str().unwrap().to_string(),
                xla: v["xla"].as_str().map(str::to_string),
                array_size: v["array_size"].as_i64(),
            }
        })
        .collect()
}

/// XLA rejects upper-case type names (`F32`); the spec asks us to accept them.
fn upper_case_type(input: &str) -> bool {
    input
        .trim_start()
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase())
}

#[test]
fn printing_matches_xla_printer() {
    let rows = rows();
    assert!(rows.len() > 100);
    let mut checked = 0;
    for r in &rows {
        let Some(xla) = &r.xla else { continue };
        if xla.contains("invalid") {
            // XLA prints a non-integer index type as `#(invalid)`; we refuse it.
            assert!(parse_valid(&r.input).is_err(), "{}", r.input);
            continue;
        }
        let ours = parse_shape(&r.input).unwrap_or_else(|e| panic!("{}: {e}", r.input));
        assert_eq!(&ours.to_string(), xla, "printing {}", r.input);
        // Printing is a fixed point: our output parses back to the same shape.
        assert_eq!(&parse_shape(xla).unwrap().to_string(), xla);
        checked += 1;
    }
    assert!(checked >= 75, "{checked}");
}

#[test]
fn inputs_xla_rejects_are_rejected() {
    for r in rows().iter().filter(|r| r.xla.is_none()) {
        if upper_case_type(&r.input) && !r.input.starts_with("F33") {
            let s = parse_valid(&r.input).unwrap_or_else(|e| panic!("{}: {e}", r.input));
            assert_eq!(
                s.to_string(),
                s.to_string().to_lowercase().replace("t(", "T(")
            );
            continue;
        }
        assert!(
            parse_valid(&r.input).is_err(),
            "we accept what XLA rejects: {}",
            r.input
        );
    }
}

#[test]
fn array_size_matches_xla() {
    let mut checked = 0;
    for r in rows() {
        let (Some(xla_bytes), Some(text)) = (r.array_size, &r.xla) else {
            continue;
        };
        let Ok(Shape::Array(a)) = parse_valid(text) else {
            continue;
        };
        let Ok(s) = sizes(&a) else { continue };
        let dynamic = a
            .dims
            .iter()
            .any(|d| !matches!(d, tpusim_layout::Dim::Static(_)));
        if dynamic {
            // XLA's byte size of a dynamic array adds 4 bytes of size metadata per dim.
            assert_eq!(
                xla_bytes as u64,
                s.array_size_bytes + 4 * a.rank() as u64,
                "{text}"
            );
        } else {
            assert_eq!(xla_bytes as u64, s.array_size_bytes, "{text}");
        }
        checked += 1;
    }
    assert!(checked >= 75, "{checked}");
}

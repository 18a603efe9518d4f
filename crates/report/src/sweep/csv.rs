//! A sweep's [`table`] as CSV text (RFC 4180 quoting; an empty cell is an empty value).

use super::{table, SweepRow, Values};

/// Quote a CSV field when it holds a comma, quote or line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Row `i` of a column as a CSV cell.
fn cell(values: &Values, i: usize) -> String {
    match values {
        Values::Text(v) => v[i].as_deref().map(field),
        Values::F64(v) => v[i].map(|x| format!("{x:e}")),
        Values::U64(v) => v[i].map(|x| x.to_string()),
        Values::Bool(v) => v[i].map(|x| x.to_string()),
    }
    .unwrap_or_default()
}

/// The rows as CSV text: a header line, then one line per run.
pub fn csv(rows: &[SweepRow]) -> String {
    let columns = table(rows);
    let mut o = columns.iter().map(|c| c.name).collect::<Vec<_>>().join(",");
    o.push('\n');
    for i in 0..rows.len() {
        let cells: Vec<String> = columns.iter().map(|c| cell(&c.values, i)).collect();
        o.push_str(&cells.join(","));
        o.push('\n');
    }
    o
}

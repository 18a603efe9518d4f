//! SCALE-Sim 3's layout file (`-l`): how the IFMAP and FILTER are laid out in SRAM
//! lines when the config sets `[layout] IfmapCustomLayout` / `FilterCustomLayout`.
//!
//! Read as SCALE-Sim 3.0.0's `layout_utils.load_layout_conv` reads it: the first line
//! is a header; every later non-empty line is a row whose last cell is dropped (rows
//! end with a comma); a row is a name and integers (Python `int()`), and a row whose
//! name contains `DP` stands for as many rows as its 5th value (channel factor set to
//! 1). SCALE-Sim uses only the first row, for every layer (its getters are called with
//! the default layer 0). The 20 values, by column:
//!
//! | values | meaning |
//! |---|---|
//! | 1, 2, 5 | IFMAP height, width, channel intraline factors |
//! | 6, 5, 3, 4 | FILTER count, channel, height, width intraline factors |
//! | 7–9 / 10–12 | IFMAP intraline / interline axis order |
//! | 13–16 / 17–20 | FILTER intraline / interline axis order |
//!
//! See `layout_order` for what the values do.

use super::readable::{python_int, python_int_value};
use crate::error::{Result, SystolicError};

/// One row of a layout file: the layer name and its integer values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutRow {
    /// Layer name (SCALE-Sim matches no names: the first row serves every layer).
    pub name: String,
    /// The values after the name, in file order.
    pub values: Vec<i64>,
    /// 1-based line in the file.
    pub line: usize,
}

/// A parsed layout file: the row SCALE-Sim uses, if the file has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// File name, for errors.
    pub file: String,
    /// The first row (after `DP` rows are expanded); `None` for a header-only file.
    pub first: Option<LayoutRow>,
}

fn lerr(file: &str, line: usize, msg: String) -> SystolicError {
    SystolicError::Layout {
        file: file.to_string(),
        line,
        msg,
    }
}

/// One line's cells as SCALE-Sim keeps them (the cell after the last comma dropped).
fn row_of(file: &str, line: usize, text: &str) -> Result<LayoutRow> {
    let mut cells: Vec<&str> = text.split(',').collect();
    cells.pop();
    let Some((name, rest)) = cells.split_first() else {
        return Err(lerr(
            file,
            line,
            format!("'{text}' has no cells ending with a comma"),
        ));
    };
    let mut values = Vec::with_capacity(rest.len());
    for (i, cell) in rest.iter().enumerate() {
        if !python_int(cell) {
            return Err(lerr(
                file,
                line,
                format!("value {} '{}' is not an integer", i + 1, cell.trim()),
            ));
        }
        let v = python_int_value(cell);
        let v = i64::try_from(v).map_err(|_| {
            lerr(
                file,
                line,
                format!("value {} '{}' is too large", i + 1, cell.trim()),
            )
        })?;
        values.push(v);
    }
    Ok(LayoutRow {
        name: name.trim().to_string(),
        values,
        line,
    })
}

/// How many rows a row stands for: a `DP` row one per channel (its 5th value).
fn copies(file: &str, row: &LayoutRow) -> Result<i64> {
    if !row.name.contains("DP") {
        return Ok(1);
    }
    row.values.get(4).copied().ok_or_else(|| {
        lerr(
            file,
            row.line,
            format!("depthwise row '{}' has no channel value (5th)", row.name),
        )
    })
}

/// Parse a layout file's text; `file` names it in errors. Every row must hold integers
/// (SCALE-Sim reads them all), whether or not a custom layout uses them.
pub fn parse_layout(text: &str, file: &str) -> Result<Layout> {
    let mut first = None;
    for (no, raw) in text.lines().enumerate().skip(1) {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let mut row = row_of(file, no + 1, line)?;
        let n = copies(file, &row)?;
        if first.is_none() && n >= 1 {
            if row.name.contains("DP") {
                row.values[4] = 1;
                row.name += "Channel_0";
            }
            first = Some(row);
        }
    }
    Ok(Layout {
        file: file.to_string(),
        first,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_row_after_the_header_is_used() {
        let text = "Layer name, a, b,\nInc5b_3x3, 2, 2, 1, 1, 16, 4,     0, 1, 2,     4, 5, 3,     3, 2, 1, 0,     4, 5, 6, 7,\n\nL1, 1,\n";
        let l = parse_layout(text, "l.csv").unwrap();
        let row = l.first.unwrap();
        assert_eq!(row.name, "Inc5b_3x3");
        assert_eq!(row.values.len(), 20);
        assert_eq!(row.values[..6], [2, 2, 1, 1, 16, 4]);
        assert_eq!(row.line, 2);
        assert!(parse_layout("header only\n", "l.csv")
            .unwrap()
            .first
            .is_none());
    }

    #[test]
    fn depthwise_rows_expand_and_bad_cells_are_named() {
        let dp0 = "h\nDP1, 1, 1, 1, 1, 0, 1,\nL2, 3, 3, 1, 1, 5, 1,\n";
        assert_eq!(parse_layout(dp0, "l").unwrap().first.unwrap().name, "L2");
        let dp = "h\nDP1, 1, 1, 1, 1, 3, 1,\n";
        let row = parse_layout(dp, "l").unwrap().first.unwrap();
        assert_eq!((row.name.as_str(), row.values[4]), ("DP1Channel_0", 1));
        let e = parse_layout("h\nL0, 2, x, 3,\n", "l.csv")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("l.csv") && e.contains("line 2") && e.contains("'x'"),
            "{e}"
        );
        let e = parse_layout("h\nnocomma\n", "l.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no cells"), "{e}");
    }
}

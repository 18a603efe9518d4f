//! A sweep's [`table`] as one Parquet file (one row group, Snappy-compressed), the same
//! columns as the CSV: text as UTF-8 strings, counts as unsigned 64-bit integers,
//! figures as doubles, `fits_hbm` as booleans, an empty cell as a null.

use super::{table, Column, SweepRow, Values};
use crate::error::{ReportError, Result};
use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::parser::parse_message_type;
use std::sync::Arc;

/// The Parquet type of a column in the schema's text form.
fn schema_field(c: &Column) -> String {
    let ty = match c.values {
        Values::Text(_) => "BYTE_ARRAY",
        Values::F64(_) => "DOUBLE",
        Values::U64(_) => "INT64",
        Values::Bool(_) => "BOOLEAN",
    };
    let annotation = match c.values {
        Values::Text(_) => " (UTF8)",
        Values::U64(_) => " (INTEGER(64,false))",
        _ => "",
    };
    format!("OPTIONAL {ty} {}{annotation};", c.name)
}

/// Definition levels of a column (1: a value, 0: null) and its present values.
fn present<T: Clone>(v: &[Option<T>]) -> (Vec<i16>, Vec<T>) {
    let defs = v.iter().map(|x| i16::from(x.is_some())).collect();
    (defs, v.iter().flatten().cloned().collect())
}

fn write_column(
    w: &mut SerializedColumnWriter<'_>,
    values: &Values,
) -> parquet::errors::Result<()> {
    match values {
        Values::Text(v) => {
            let (defs, vals) = present(v);
            let vals: Vec<ByteArray> = vals
                .into_iter()
                .map(|s| ByteArray::from(s.into_bytes()))
                .collect();
            w.typed::<ByteArrayType>()
                .write_batch(&vals, Some(&defs), None)?;
        }
        Values::F64(v) => {
            let (defs, vals) = present(v);
            w.typed::<DoubleType>()
                .write_batch(&vals, Some(&defs), None)?;
        }
        Values::U64(v) => {
            // unsigned 64-bit integers are stored in INT64 as their bits
            let (defs, vals) = present(v);
            let vals: Vec<i64> = vals.into_iter().map(|x| x as i64).collect();
            w.typed::<Int64Type>()
                .write_batch(&vals, Some(&defs), None)?;
        }
        Values::Bool(v) => {
            let (defs, vals) = present(v);
            w.typed::<BoolType>()
                .write_batch(&vals, Some(&defs), None)?;
        }
    }
    Ok(())
}

fn write(rows: &[SweepRow]) -> parquet::errors::Result<Vec<u8>> {
    let columns = table(rows);
    let fields: Vec<String> = columns.iter().map(schema_field).collect();
    let schema = Arc::new(parse_message_type(&format!(
        "message tpusim_sweep {{ {} }}",
        fields.join(" ")
    ))?);
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("tpusim {}", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    let mut buf = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut buf, schema, props)?;
    let mut group = writer.next_row_group()?;
    for c in &columns {
        let Some(mut w) = group.next_column()? else {
            return Err(parquet::errors::ParquetError::General(format!(
                "no column for '{}'",
                c.name
            )));
        };
        write_column(&mut w, &c.values)?;
        w.close()?;
    }
    group.close()?;
    writer.close()?;
    Ok(buf)
}

/// The rows as the bytes of a Parquet file.
pub fn parquet(rows: &[SweepRow]) -> Result<Vec<u8>> {
    write(rows).map_err(|e| ReportError::Parquet(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::{Figures, SweepPoint};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    fn point(model: &str, batch: u64) -> SweepPoint {
        SweepPoint {
            model: model.into(),
            chip: "v5e".into(),
            batch,
            dtype: None,
            phase: None,
            seq: None,
            context: None,
        }
    }

    /// Row `i` of a column as the reader's field.
    fn expected(values: &Values, i: usize) -> Field {
        match values {
            Values::Text(v) => v[i].clone().map_or(Field::Null, Field::Str),
            Values::F64(v) => v[i].map_or(Field::Null, Field::Double),
            Values::U64(v) => v[i].map_or(Field::Null, Field::ULong),
            Values::Bool(v) => v[i].map_or(Field::Null, Field::Bool),
        }
    }

    #[test]
    fn the_file_reads_back_as_the_table() {
        let report = |batch| {
            crate::report(&crate::Request {
                model: crate::ModelSource::Builtin("resnet18".into()),
                chip: "v5e".into(),
                batch,
                dtype: None,
                resolution: Some((64, 64)),
                vmem_bytes: None,
                input_dtype: None,
                fuse: true,
                chip_file: None,
            })
            .map_err(|e| e.to_string())
        };
        let rows = vec![
            SweepRow {
                point: point("resnet18", 2),
                figures: Figures::of(report(2)),
            },
            SweepRow {
                point: point("bad,\"name\"", 1),
                figures: Figures::of(Err("no such model".into())),
            },
        ];
        let bytes = parquet(&rows).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sweep.parquet");
        std::fs::write(&path, &bytes).unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let columns = table(&rows);
        let mut read = 0;
        for (i, row) in reader.get_row_iter(None).unwrap().enumerate() {
            let row = row.unwrap();
            let fields: Vec<(&String, &Field)> = row.get_column_iter().collect();
            assert_eq!(fields.len(), columns.len());
            for ((name, field), c) in fields.into_iter().zip(&columns) {
                assert_eq!(name.as_str(), c.name);
                assert_eq!(field, &expected(&c.values, i), "row {i} column {name}");
            }
            read += 1;
        }
        assert_eq!(read, rows.len());
        // the first row ran, the second kept its error
        assert!(rows[0].figures.total_time_s.is_some_and(|t| t > 0.0));
        assert_eq!(rows[1].figures.error.as_deref(), Some("no such model"));
    }
}

//! One numeric column of a CSV file.
//!
//! The file has a header row naming its columns (leading and trailing spaces of names and
//! fields are ignored; a UTF-8 byte-order mark is skipped). Every record must have as many
//! fields as the header. Blank lines are skipped. The file may be gzip-compressed.
//!
//! **Missing values**: an empty field, `NA` or `NaN` (any case) is missing.
//!
//! **Types**: when every present field of the column is an integer, the column is read exactly
//! as `i64` (as `u64` when a value exceeds `i64::MAX` and none is negative); otherwise it is
//! read as `f64` (`inf`, `-inf` and `infinity` are accepted). A column of integers that has
//! missing values is read as `f64` with NaN for the missing values, so that a NaN policy
//! applies to them; such integers are exact up to 2^53 in magnitude and rounded to the nearest
//! `f64` above.
//!
//! **Rows** are numbered as in [`Error::Csv`]: the header is row 0 and the first data row is
//! row 1. Blank lines are not counted, so row `r` is line `r + 1` of a file without blank lines
//! or line breaks inside quoted fields.

use std::path::Path;

use crate::error::{Error, Result};
use crate::io::{open, Column};

/// The values of one CSV column.
///
/// ```
/// use kselect::io::{read_csv_column, Column};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.csv");
/// std::fs::write(&path, "id,delay\n1,5\n2,\n3,-7\n")?;
/// let col = read_csv_column(&path, Some("delay"))?;
/// assert_eq!((col.name.as_str(), col.index, col.missing), ("delay", 1, 1));
/// assert!(matches!(col.values, Column::F64(ref v) if v[0] == 5.0 && v[1].is_nan()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CsvColumn {
    /// The column's name, as the header gives it.
    pub name: String,
    /// The column's 0-based position in the header.
    pub index: usize,
    /// The values, one per data row (NaN for missing values).
    pub values: Column,
    /// How many values were missing.
    pub missing: usize,
}

/// Reads the column named `column` of a CSV file with a header row (see the [module
/// documentation](self) for the rules). With `column = None` the file must have exactly one
/// column. The file may be gzip-compressed.
///
/// Errors: [`Error::MissingColumn`] (with the names the header has) for an unknown column,
/// [`Error::Csv`] (with the row and the column) for a field that is neither a number nor a
/// missing value, [`Error::Format`] for a record with the wrong number of fields (with its
/// row), an empty file, or several columns and no name; [`Error::Io`] for a file that cannot
/// be read.
///
/// ```
/// use kselect::io::{read_csv_column, Column};
/// use kselect::Error;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.csv");
/// std::fs::write(&path, "name,count\nx,3\ny,18446744073709551615\n")?;
/// let col = read_csv_column(&path, Some("count"))?;
/// assert_eq!(col.values, Column::U64(vec![3, u64::MAX])); // integers stay exact
///
/// match read_csv_column(&path, Some("name")) {
///     Err(Error::Csv { row, column, .. }) => assert_eq!((row, column.as_str()), (1, "name")),
///     other => panic!("{other:?}"),
/// }
/// assert!(matches!(read_csv_column(&path, Some("size")), Err(Error::MissingColumn { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_csv_column(path: impl AsRef<Path>, column: Option<&str>) -> Result<CsvColumn> {
    let path = path.as_ref();
    let reader = open(path)?;
    let mut csv = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .trim(::csv::Trim::All)
        .from_reader(reader);
    let names: Vec<String> = csv
        .byte_headers()
        .map_err(|e| csv_error(path, e))?
        .iter()
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect();
    if names.is_empty() || (names.len() == 1 && names[0].is_empty()) {
        return Err(Error::format(
            path,
            "the file is empty: a CSV file needs a header row naming its columns",
        ));
    }
    let index = match column {
        Some(wanted) => {
            let wanted = wanted.trim();
            names
                .iter()
                .position(|n| n == wanted)
                .ok_or_else(|| Error::MissingColumn {
                    path: path.to_path_buf(),
                    column: wanted.to_string(),
                    available: names.join(", "),
                })?
        }
        None if names.len() == 1 => 0,
        None => {
            return Err(Error::format(
                path,
                format!(
                    "the file has {} columns ({}): name the one to read \
                     (the CLI's --column NAME)",
                    names.len(),
                    names.join(", ")
                ),
            ))
        }
    };
    let name = names[index].clone();

    let mut values = Values::I64(Vec::new());
    let mut missing = Vec::new();
    let mut record = ::csv::ByteRecord::new();
    let mut row: u64 = 0;
    while csv
        .read_byte_record(&mut record)
        .map_err(|e| csv_error(path, e))?
    {
        row += 1;
        let field = record.get(index).unwrap_or_default();
        if is_missing(field) {
            missing.push(values.len());
            values.push_missing();
            continue;
        }
        let text = std::str::from_utf8(field).ok();
        let parsed = text.is_some_and(|t| values.push(t));
        if !parsed {
            return Err(Error::Csv {
                path: path.to_path_buf(),
                row,
                column: name,
                message: format!(
                    "`{}` is not a number (missing values are written as an empty field, \
                     NA or NaN)",
                    shorten(&String::from_utf8_lossy(field))
                ),
            });
        }
    }
    Ok(CsvColumn {
        name,
        index,
        missing: missing.len(),
        values: values.finish(&missing),
    })
}

/// Whether a (trimmed) field is a missing value: empty, `NA` or `NaN` in any case.
fn is_missing(field: &[u8]) -> bool {
    field.is_empty() || field.eq_ignore_ascii_case(b"na") || field.eq_ignore_ascii_case(b"nan")
}

/// A field for an error message, cut when long.
fn shorten(field: &str) -> String {
    if field.chars().count() > 40 {
        format!("{}...", field.chars().take(40).collect::<String>())
    } else {
        field.to_string()
    }
}

/// The crate error of a CSV reader error.
fn csv_error(path: &Path, error: ::csv::Error) -> Error {
    let position = error.position().cloned();
    if let ::csv::ErrorKind::UnequalLengths {
        pos,
        expected_len,
        len,
    } = error.kind()
    {
        let row = pos.as_ref().or(position.as_ref()).map_or(0, |p| p.record());
        return Error::format(
            path,
            format!(
                "malformed CSV: row {row} has {len} field(s), \
                 but the header has {expected_len}"
            ),
        );
    }
    let message = error.to_string();
    if let ::csv::ErrorKind::Io(e) = error.into_kind() {
        return Error::io(path, e);
    }
    let at = position
        .map(|p| format!(" at row {}", p.record()))
        .unwrap_or_default();
    Error::format(path, format!("malformed CSV{at}: {message}"))
}

/// The values read so far, in the narrowest type that holds them all exactly.
enum Values {
    I64(Vec<i64>),
    U64(Vec<u64>),
    F64(Vec<f64>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::I64(v) => v.len(),
            Values::U64(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }

    /// A placeholder for a missing value (NaN once the column is converted to floats).
    fn push_missing(&mut self) {
        match self {
            Values::I64(v) => v.push(0),
            Values::U64(v) => v.push(0),
            Values::F64(v) => v.push(f64::NAN),
        }
    }

    /// Parses and appends a present field; false when it is not a number.
    fn push(&mut self, field: &str) -> bool {
        match self {
            Values::I64(v) => {
                if let Ok(x) = field.parse::<i64>() {
                    v.push(x);
                    return true;
                }
                if let Ok(x) = field.parse::<u64>() {
                    // Above i64::MAX: u64 holds the column exactly unless it has negatives.
                    if v.iter().all(|&y| y >= 0) {
                        let mut w: Vec<u64> = v.iter().map(|&y| y as u64).collect();
                        w.push(x);
                        *self = Values::U64(w);
                    } else {
                        self.promote_to_floats();
                        self.push_float(x as f64);
                    }
                    return true;
                }
            }
            Values::U64(v) => {
                if let Ok(x) = field.parse::<u64>() {
                    v.push(x);
                    return true;
                }
            }
            Values::F64(v) => {
                return match field.parse::<f64>() {
                    Ok(x) => {
                        v.push(x);
                        true
                    }
                    Err(_) => false,
                };
            }
        }
        // An integer column meets a value that is not an integer of its type.
        match field.parse::<f64>() {
            Ok(x) => {
                self.promote_to_floats();
                self.push_float(x);
                true
            }
            Err(_) => false,
        }
    }

    fn push_float(&mut self, x: f64) {
        if let Values::F64(v) = self {
            v.push(x);
        }
    }

    /// Converts the values read so far to `f64` (missing values keep their placeholders,
    /// replaced by NaN in `finish`).
    fn promote_to_floats(&mut self) {
        let floats = match self {
            Values::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Values::U64(v) => v.iter().map(|&x| x as f64).collect(),
            Values::F64(_) => return,
        };
        *self = Values::F64(floats);
    }

    /// The column, with NaN at the `missing` positions.
    fn finish(mut self, missing: &[usize]) -> Column {
        if !missing.is_empty() {
            self.promote_to_floats();
        }
        match self {
            Values::I64(v) => Column::I64(v),
            Values::U64(v) => Column::U64(v),
            Values::F64(mut v) => {
                for &i in missing {
                    v[i] = f64::NAN;
                }
                Column::F64(v)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn file(content: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, content).unwrap();
        (dir, path)
    }

    fn read(content: &str, column: Option<&str>) -> Result<CsvColumn> {
        let (_dir, path) = file(content);
        read_csv_column(&path, column)
    }

    fn values(content: &str, column: Option<&str>) -> Column {
        read(content, column).unwrap().values
    }

    fn floats(column: Column) -> Vec<f64> {
        match column {
            Column::F64(v) => v,
            other => panic!("expected f64, got {other:?}"),
        }
    }

    #[test]
    fn integers_are_exact() {
        assert_eq!(
            values("x\n1\n-2\n+3\n007\n", None),
            Column::I64(vec![1, -2, 3, 7])
        );
        let text = format!("x\n{}\n{}\n", i64::MIN, i64::MAX);
        assert_eq!(values(&text, None), Column::I64(vec![i64::MIN, i64::MAX]));
        let text = format!("x\n1\n{}\n9007199254740993\n", u64::MAX);
        assert_eq!(
            values(&text, None),
            Column::U64(vec![1, u64::MAX, 9007199254740993])
        );
        assert_eq!(values("x\n", None), Column::I64(vec![]));
    }

    #[test]
    fn floats_and_promotion() {
        assert_eq!(floats(values("x\n1\n2.5\n", None)), vec![1.0, 2.5]);
        assert_eq!(floats(values("x\n1.5\n2\n", None)), vec![1.5, 2.0]);
        assert_eq!(
            floats(values("x\n1e3\n-inf\n", None)),
            vec![1000.0, f64::NEG_INFINITY]
        );
        // u64 then a negative: floats
        let text = format!("x\n{}\n-1\n", u64::MAX);
        assert_eq!(floats(values(&text, None)), vec![u64::MAX as f64, -1.0]);
        // negative then above i64::MAX: floats
        let text = format!("x\n-1\n{}\n", u64::MAX);
        assert_eq!(floats(values(&text, None)), vec![-1.0, u64::MAX as f64]);
        // u64 then a float
        let text = format!("x\n{}\n0.5\n", u64::MAX);
        assert_eq!(floats(values(&text, None)), vec![u64::MAX as f64, 0.5]);
    }

    #[test]
    fn missing_values_become_nan() {
        let col = read("a,b\n1,x\n,y\nNA,z\nnan,w\n5, \nNaN,v\n", Some("a")).unwrap();
        assert_eq!(col.missing, 4);
        let v = floats(col.values);
        assert_eq!(v[0], 1.0);
        assert_eq!(v[4], 5.0);
        assert!(v[1].is_nan() && v[2].is_nan() && v[3].is_nan() && v[5].is_nan());
        // missing before the column turns out to be floats
        let v = floats(values("a\nNA\n1\n2.5\n", None));
        assert!(v[0].is_nan());
        assert_eq!(&v[1..], &[1.0, 2.5]);
        // u64 column with missing values
        let text = format!("a\n{}\n\"\"\n", u64::MAX);
        let v = floats(values(&text, None));
        assert_eq!(v[0], u64::MAX as f64);
        assert!(v[1].is_nan());
    }

    #[test]
    fn named_column_quotes_spaces_and_bom() {
        let text = "\u{feff}name, value ,other\n\"a,b\", 3 ,x\nc,\"4\",y\n";
        assert_eq!(values(text, Some("value")), Column::I64(vec![3, 4]));
        assert_eq!(values(text, Some(" value")), Column::I64(vec![3, 4]));
        let col = read(text, Some("name"));
        assert!(matches!(col, Err(Error::Csv { row: 1, .. })), "{col:?}");
        // The BOM is not part of the first name.
        assert!(read(text, Some("name"))
            .unwrap_err()
            .to_string()
            .contains("column name"));
        // blank lines and CRLF
        assert_eq!(values("x\r\n1\r\n\r\n2\r\n", None), Column::I64(vec![1, 2]));
        let err = read("x\r\n1\r\n\r\ny\r\n", None).unwrap_err();
        assert!(matches!(err, Error::Csv { row: 2, .. }), "{err:?}");
        let err = read("a,b\r\n1,2\r\n3\r\n", Some("a"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("row 2 has 1 field"), "{err}");
    }

    #[test]
    fn errors_name_row_and_column() {
        let err = read("a,b\n1,2\n3,oops\n", Some("b")).unwrap_err();
        match &err {
            Error::Csv {
                row,
                column,
                message,
                ..
            } => {
                assert_eq!(*row, 2);
                assert_eq!(column, "b");
                assert!(message.contains("`oops`"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains("row 2, column b"), "{err}");
        // a float column meets text
        let err = read("a\n1.5\nx\n", None).unwrap_err();
        assert!(matches!(err, Error::Csv { row: 2, .. }), "{err:?}");
        // a u64 column meets text
        let err = read(&format!("a\n{}\nx\n", u64::MAX), None).unwrap_err();
        assert!(matches!(err, Error::Csv { row: 2, .. }), "{err:?}");

        let err = read("a,b\n1,2\n3\n", Some("a")).unwrap_err().to_string();
        assert!(err.contains("row 2") && err.contains("1 field"), "{err}");
        let err = read("a,b\n1,2,3\n", Some("a")).unwrap_err().to_string();
        assert!(err.contains("row 1") && err.contains("3 field"), "{err}");

        let err = read("year,delay\n1,2\n", Some("dep_delay")).unwrap_err();
        match &err {
            Error::MissingColumn {
                column, available, ..
            } => {
                assert_eq!(column, "dep_delay");
                assert_eq!(available, "year, delay");
            }
            other => panic!("{other:?}"),
        }
        let err = read("year,delay\n1,2\n", None).unwrap_err().to_string();
        assert!(
            err.contains("2 columns (year, delay)") && err.contains("--column"),
            "{err}"
        );
        let err = read("", None).unwrap_err().to_string();
        assert!(err.contains("empty"), "{err}");
        let err = read("\n\n", None).unwrap_err().to_string();
        assert!(err.contains("empty"), "{err}");
        let long = "z".repeat(100);
        let err = read(&format!("a\n{long}\n"), None).unwrap_err().to_string();
        assert!(err.contains("zzz...") && err.len() < 300, "{err}");
    }

    #[test]
    fn invalid_utf8_field_is_not_a_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, b"a\n1\n\xff\xfe\n").unwrap();
        let err = read_csv_column(&path, None).unwrap_err();
        assert!(matches!(err, Error::Csv { row: 2, .. }), "{err:?}");
    }

    #[test]
    fn gzip_csv() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv.gz");
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        enc.write_all(b"a,b\n1,2\n3,4\n").unwrap();
        enc.finish().unwrap();
        let col = read_csv_column(&path, Some("b")).unwrap();
        assert_eq!(col.values, Column::I64(vec![2, 4]));
        assert_eq!(col.index, 1);
    }
}

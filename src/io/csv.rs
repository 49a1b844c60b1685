//! Numeric columns of a CSV file: one ([`read_csv_column`]), or every column in one pass
//! ([`read_csv_table`]).
//!
//! The file has a header row naming its columns (leading and trailing spaces of names and
//! fields are ignored; a UTF-8 byte-order mark is skipped). Every record must have as many
//! fields as the header. Blank lines are skipped. The file may be gzip-compressed, and may be
//! read from any reader ([`read_csv_column_from`], [`read_csv_table_from`]).
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
//! **Negative zero**: a field `-0` (or `-00`, ...) is read as `-0.0`, as `numpy.loadtxt` and
//! `numpy.genfromtxt` read it: an integer cannot carry the sign, so a column of integers with
//! such a field is read as `f64`, every value as numpy reads it. The sign matters: `-0.0`
//! orders just below `+0.0`, so selections and quantiles return it where numpy does.
//!
//! **Rows** are numbered as in [`Error::Csv`]: the header is row 0 and the first data row is
//! row 1. Blank lines are not counted, so row `r` is line `r + 1` of a file without blank lines
//! or line breaks inside quoted fields.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::io::{Column, FileError, Source};

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
    Source::open(path)?.read_csv_column(column)
}

/// Reads the column named `column` of CSV data from `reader`, as [`read_csv_column`] reads a
/// file (gzip-compressed data included); `name` is what error messages name (e.g. `<stdin>`).
///
/// ```
/// use kselect::io::{read_csv_column_from, Column};
///
/// let col = read_csv_column_from(&b"a,b\n1,2\n3,4\n"[..], "<stdin>", Some("b"))?;
/// assert_eq!(col.values, Column::I64(vec![2, 4]));
/// let err = read_csv_column_from(&b"a\n1\n"[..], "<stdin>", Some("z")).unwrap_err();
/// assert!(err.to_string().starts_with("<stdin>: no column named `z`"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_csv_column_from(
    reader: impl Read,
    name: impl Into<PathBuf>,
    column: Option<&str>,
) -> Result<CsvColumn> {
    Source::from_reader(reader, name)?.read_csv_column(column)
}

/// The column `column` of the CSV data of `reader` (already decompressed); `path` names it.
pub(crate) fn column_of(reader: impl Read, path: &Path, column: Option<&str>) -> Result<CsvColumn> {
    let (mut csv, names) = records(reader, path)?;
    let index = match column {
        Some(wanted) => position(path, &names, wanted)?,
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
    let mut parser = ColumnParser::default();
    each_record(&mut csv, path, |row, record| {
        parser.push(row, record.get(index).unwrap_or_default())
    })?;
    parser
        .finish(name.clone(), index)
        .map_err(|text| text.error(path, &name))
}

/// Every column of a CSV file, read in one pass by [`read_csv_table`]: the columns of numbers
/// (read as [`read_csv_column`] reads them) and, for the others, where their first field that
/// is not a number is; and the fields of the columns asked for as text, read by
/// [`Source::read_csv_table_with_text`].
///
/// ```
/// use kselect::io::csv::read_csv_table;
/// use kselect::io::Column;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.csv");
/// std::fs::write(&path, "species,body,brain\ncow,465,423\nmouse,0.023,0.4\n")?;
/// let table = read_csv_table(&path)?;
/// assert_eq!(table.names(), ["species", "body", "brain"]);
/// assert_eq!(table.rows(), 2);
/// let numeric: Vec<&str> = table.numeric().map(|c| c.name.as_str()).collect();
/// assert_eq!(numeric, ["body", "brain"]);
/// assert!(matches!(table.column("brain")?.values, Column::F64(ref v) if v[1] == 0.4));
/// assert!(table.column("species").is_err()); // text: row 1 is not a number
/// assert!(table.column("tail").is_err()); // no such column
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CsvTable {
    path: PathBuf,
    names: Vec<String>,
    rows: usize,
    columns: Vec<std::result::Result<CsvColumn, Text>>,
    /// The fields of the columns whose text was kept (see
    /// [`Source::read_csv_table_with_text`]), by position; `None` for the others.
    texts: Vec<Option<Vec<String>>>,
}

impl CsvTable {
    /// The column names, as the header gives them, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The number of data rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The column named `name` (the first of that name), or the error [`read_csv_column`]
    /// gives for it: [`Error::MissingColumn`] when the header has no such name,
    /// [`Error::Csv`] (with the row and the field) when the column holds text.
    pub fn column(&self, name: &str) -> Result<&CsvColumn> {
        let index = position(&self.path, &self.names, name)?;
        self.columns[index]
            .as_ref()
            .map_err(|text| text.error(&self.path, &self.names[index]))
    }

    /// The columns of numbers (missing values allowed), in header order.
    pub fn numeric(&self) -> impl Iterator<Item = &CsvColumn> {
        self.columns.iter().filter_map(|c| c.as_ref().ok())
    }

    /// The fields of the column `name` as text, one per data row (trimmed, as every field is
    /// read), whether they are numbers or not: for a table read by
    /// [`Source::read_csv_table_with_text`] naming the column. [`Error::MissingColumn`] when
    /// the header has no such name, [`Error::File`] ([`FileError::TextNotKept`]) when its text was not kept.
    ///
    /// ```
    /// use kselect::io::Source;
    ///
    /// let csv = "x,species\n1,setosa\n2, virginica\n";
    /// let table = Source::from_reader(csv.as_bytes(), "<stdin>")?
    ///     .read_csv_table_with_text(&["species"])?;
    /// assert_eq!(table.text("species")?, ["setosa", "virginica"]);
    /// assert!(table.text("x").is_err()); // not kept
    /// assert!(table.text("y").is_err()); // no such column
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn text(&self, name: &str) -> Result<&[String]> {
        let index = position(&self.path, &self.names, name)?;
        self.texts[index].as_deref().ok_or_else(|| {
            FileError::TextNotKept {
                path: self.path.clone(),
                column: self.names[index].clone(),
            }
            .into()
        })
    }
}

/// Reads every column of a CSV file with a header row in one pass (see the [module
/// documentation](self) for the rules each column is read by, and [`CsvTable`]). A column
/// with a field that is neither a number nor a missing value is text: the table keeps where,
/// for [`CsvTable::column`] to report. The file may be gzip-compressed.
///
/// Errors: [`Error::Format`] for a record with the wrong number of fields (with its row) or an
/// empty file; [`Error::Io`] for a file that cannot be read.
///
/// ```
/// use kselect::io::csv::read_csv_table;
/// use kselect::io::Column;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.csv");
/// std::fs::write(&path, "x,y\n1,2.5\n2,NA\n")?;
/// let table = read_csv_table(&path)?;
/// assert_eq!(table.column("x")?.values, Column::I64(vec![1, 2]));
/// assert_eq!(table.column("y")?.missing, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_csv_table(path: impl AsRef<Path>) -> Result<CsvTable> {
    Source::open(path)?.read_csv_table()
}

/// Reads every column of CSV data from `reader` in one pass, as [`read_csv_table`] reads a
/// file (gzip-compressed data included); `name` is what error messages name (e.g. `<stdin>`).
///
/// ```
/// use kselect::io::{read_csv_table_from, Column};
///
/// let table = read_csv_table_from(&b"x,y\n1,a\n2,b\n"[..], "<stdin>")?;
/// assert_eq!(table.column("x")?.values, Column::I64(vec![1, 2]));
/// assert!(table.column("y").unwrap_err().to_string().starts_with("<stdin>: row 1"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_csv_table_from(reader: impl Read, name: impl Into<PathBuf>) -> Result<CsvTable> {
    Source::from_reader(reader, name)?.read_csv_table()
}

/// Every column of the CSV data of `reader` (already decompressed), keeping the fields of the
/// columns named in `keep_text` as text too; `path` names the data.
pub(crate) fn table_of(reader: impl Read, path: &Path, keep_text: &[&str]) -> Result<CsvTable> {
    let (mut csv, names) = records(reader, path)?;
    let mut parsers: Vec<ColumnParser> = names.iter().map(|_| ColumnParser::default()).collect();
    let mut texts: Vec<Option<Vec<String>>> = names
        .iter()
        .map(|name| keep_text.iter().any(|k| k.trim() == name).then(Vec::new))
        .collect();
    let rows = each_record(&mut csv, path, |row, record| {
        for ((parser, text), field) in parsers.iter_mut().zip(&mut texts).zip(record.iter()) {
            parser.push(row, field);
            if let Some(text) = text {
                text.push(String::from_utf8_lossy(field).into_owned());
            }
        }
        true
    })?;
    let columns = parsers
        .into_iter()
        .zip(&names)
        .enumerate()
        .map(|(index, (parser, name))| parser.finish(name.clone(), index))
        .collect();
    Ok(CsvTable {
        path: path.to_path_buf(),
        names,
        rows: rows as usize,
        columns,
        texts,
    })
}

/// Reads the records of `csv` into `each(row, record)`, rows counted from 1, until `each`
/// returns `false` or the data ends; the number of records read. `path` names the input in
/// errors.
fn each_record<R: Read>(
    csv: &mut ::csv::Reader<R>,
    path: &Path,
    mut each: impl FnMut(u64, &::csv::ByteRecord) -> bool,
) -> Result<u64> {
    let mut record = ::csv::ByteRecord::new();
    let mut row: u64 = 0;
    while csv
        .read_byte_record(&mut record)
        .map_err(|e| csv_error(path, e))?
    {
        row += 1;
        if !each(row, &record) {
            break;
        }
    }
    Ok(row)
}

/// A CSV reader of `reader` past its header row, and the column names the header gives;
/// `path` names the input in errors.
fn records<R: Read>(reader: R, path: &Path) -> Result<(::csv::Reader<R>, Vec<String>)> {
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
    Ok((csv, names))
}

/// The position of the column `wanted` (trimmed) among `names`, or [`Error::MissingColumn`].
fn position(path: &Path, names: &[String], wanted: &str) -> Result<usize> {
    let wanted = wanted.trim();
    names
        .iter()
        .position(|n| n == wanted)
        .ok_or_else(|| Error::MissingColumn {
            path: path.to_path_buf(),
            column: wanted.to_string(),
            available: names.join(", "),
        })
}

/// The first field of a column that is not a number, and its row.
#[derive(Clone, Debug, PartialEq)]
struct Text {
    row: u64,
    field: String,
}

impl Text {
    /// The [`Error::Csv`] that reports it.
    fn error(&self, path: &Path, column: &str) -> Error {
        Error::Csv {
            path: path.to_path_buf(),
            row: self.row,
            column: column.to_string(),
            message: format!(
                "`{}` is not a number (missing values are written as an empty field, \
                 NA or NaN)",
                shorten(&self.field)
            ),
        }
    }
}

/// The values of one column, parsed field by field.
#[derive(Default)]
struct ColumnParser {
    values: Values,
    /// The positions of the missing values.
    missing: Vec<usize>,
    /// The first field that is not a number: parsing stops there.
    text: Option<Text>,
}

impl ColumnParser {
    /// Parses the (trimmed) field of data row `row` and appends its value; false, remembering
    /// the row and the field, when it is not a number (and for every field after that).
    fn push(&mut self, row: u64, field: &[u8]) -> bool {
        if self.text.is_some() {
            return false;
        }
        if is_missing(field) {
            self.missing.push(self.values.len());
            self.values.push_missing();
            return true;
        }
        let parsed = std::str::from_utf8(field)
            .ok()
            .is_some_and(|t| self.values.push(t));
        if !parsed {
            self.text = Some(Text {
                row,
                field: String::from_utf8_lossy(field).into_owned(),
            });
            self.values = Values::default();
            self.missing = Vec::new();
        }
        parsed
    }

    /// The column `name` at position `index`, or where its text is.
    fn finish(self, name: String, index: usize) -> std::result::Result<CsvColumn, Text> {
        match self.text {
            Some(text) => Err(text),
            None => Ok(CsvColumn {
                name,
                index,
                missing: self.missing.len(),
                values: self.values.finish(&self.missing),
            }),
        }
    }
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

impl Default for Values {
    /// No values yet: integers until a field says otherwise.
    fn default() -> Self {
        Values::I64(Vec::new())
    }
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
                    if x == 0 && field.starts_with('-') {
                        // `-0`: numpy reads -0.0, which no integer holds.
                        self.promote_to_floats();
                        self.push_float(-0.0);
                    } else {
                        v.push(x);
                    }
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

    /// The bits of a column of floats, for comparisons that tell -0.0 from +0.0.
    fn float_bits(column: Column) -> Vec<u64> {
        floats(column).iter().map(|x| x.to_bits()).collect()
    }

    fn bits(values: &[f64]) -> Vec<u64> {
        values.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn csv_negative_zero_is_read_as_negative_zero() {
        // As numpy.loadtxt reads them: -0 is -0.0, and the column is read as floats.
        assert_eq!(
            float_bits(values("x\n3\n-0\n0\n-2\n", None)),
            bits(&[3.0, -0.0, 0.0, -2.0])
        );
        assert_eq!(float_bits(values("x\n-0\n1\n", None)), bits(&[-0.0, 1.0]));
        assert_eq!(
            float_bits(values("x\n-000\n+0\n", None)),
            bits(&[-0.0, 0.0])
        );
        let text = format!("x\n{}\n-0\n", u64::MAX);
        assert_eq!(
            float_bits(values(&text, None)),
            bits(&[u64::MAX as f64, -0.0])
        );
        assert_eq!(
            float_bits(values("x\n1.5\n-0\n-0.0\n", None)),
            bits(&[1.5, -0.0, -0.0])
        );
        assert_eq!(
            float_bits(values("x\n-0\nNA\n", None))[0],
            (-0.0f64).to_bits()
        );
        // Zeros without a minus sign keep the column exact integers.
        assert_eq!(values("x\n0\n+0\n00\n", None), Column::I64(vec![0, 0, 0]));
        let (_dir, path) = file("a,b\n-0,1\n2,3\n");
        let table = read_csv_table(&path).unwrap();
        assert_eq!(
            float_bits(table.column("a").unwrap().values.clone()),
            bits(&[-0.0, 2.0])
        );
        assert_eq!(table.column("b").unwrap().values, Column::I64(vec![1, 3]));
    }

    #[test]
    fn columns_read_from_any_reader() {
        let text = "a,b\n1,2\n3,x\n";
        let col = read_csv_column_from(text.as_bytes(), "<stdin>", Some("a")).unwrap();
        assert_eq!(col.values, Column::I64(vec![1, 3]));
        let err = read_csv_column_from(text.as_bytes(), "<stdin>", Some("b")).unwrap_err();
        assert!(matches!(&err, Error::Csv { row: 2, path, .. } if path.as_os_str() == "<stdin>"));
        let table = read_csv_table_from(text.as_bytes(), "<stdin>").unwrap();
        assert_eq!(table.rows(), 2);
        assert!(read_csv_table_from(&b""[..], "<stdin>")
            .unwrap_err()
            .to_string()
            .starts_with("<stdin>: "));
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
    fn table_reads_every_column_in_one_pass() {
        let text = "name,a,b,c\nx,1,2.5,\ny,2,NA,3\nz,3,4,oops\n";
        let (_dir, path) = file(text);
        let table = read_csv_table(&path).unwrap();
        assert_eq!(table.names(), ["name", "a", "b", "c"]);
        assert_eq!(table.rows(), 3);
        let numeric: Vec<&str> = table.numeric().map(|c| c.name.as_str()).collect();
        assert_eq!(numeric, ["a", "b"]);
        for name in ["a", "b"] {
            // Compared as text: NaN is not equal to itself.
            assert_eq!(
                format!("{:?}", table.column(name).unwrap()),
                format!("{:?}", read_csv_column(&path, Some(name)).unwrap())
            );
        }
        // Text columns report the same error as reading them alone.
        for name in ["name", "c"] {
            let alone = read_csv_column(&path, Some(name)).unwrap_err().to_string();
            assert_eq!(table.column(name).unwrap_err().to_string(), alone);
        }
        assert!(matches!(table.column("c"), Err(Error::Csv { row: 3, .. })));
        assert!(matches!(
            table.column("d"),
            Err(Error::MissingColumn { .. })
        ));
        let err = read_csv_table(file("a,b\n1,2\n3\n").1).unwrap_err();
        assert!(err.to_string().contains("row 2 has 1 field"), "{err}");
        assert!(read_csv_table(file("").1).is_err());
        let empty = read_csv_table(file("a,b\n").1).unwrap();
        assert_eq!((empty.rows(), empty.numeric().count()), (0, 2));
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

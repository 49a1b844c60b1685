//! The columns of a data file by name, as `f64`: every column of a CSV file, or of a 2-D
//! `.npy` array (named by their 0-based index).

use std::path::{Path, PathBuf};

use kselect::io::csv::CsvTable;
use kselect::io::{ColumnVisitor, FileFormat, Source};
use kselect::{Element, Error, Result};

/// The most columns an array of no rows may have. Its values cannot back its column count
/// (there are none), so a larger count is refused rather than taken at the header's word, which
/// could claim more columns than memory holds; a fit needs more rows than coefficients, so no
/// fit of such an array could succeed anyway. Arrays with rows have as many columns as their
/// values back.
const MAX_COLUMNS_WITHOUT_ROWS: usize = 1 << 16;

/// The columns of a data file.
pub struct Table {
    path: PathBuf,
    format: FileFormat,
    content: Content,
}

/// Where the columns come from.
enum Content {
    /// Every column of a CSV file, numbers or text.
    Csv(CsvTable),
    /// The columns of a `.npy` array, each as `f64`.
    Npy(Vec<Vec<f64>>),
}

/// A column's values as `f64`, whatever type they were read as.
pub struct ToF64;

impl ColumnVisitor for ToF64 {
    type Output = Vec<f64>;

    fn visit<T: Element>(self, data: &[T]) -> Vec<f64> {
        data.iter().map(|v| v.to_f64()).collect()
    }
}

/// The columns of a row-major `rows x cols` array's values.
struct Columns {
    rows: usize,
    cols: usize,
}

impl ColumnVisitor for Columns {
    type Output = Vec<Vec<f64>>;

    fn visit<T: Element>(self, data: &[T]) -> Vec<Vec<f64>> {
        (0..self.cols)
            .map(|j| {
                (0..self.rows)
                    .map(|i| data[i * self.cols + j].to_f64())
                    .collect()
            })
            .collect()
    }
}

impl Table {
    /// Reads `source`: a `.npy` array (1-D: one column; 2-D: rows x columns) or a CSV file
    /// with a header row (see [`Source::format`] for how the format is told).
    pub fn read(source: Source<'_>) -> Result<Table> {
        Table::read_with_text(source, &[])
    }

    /// Reads `source` as [`Table::read`] does, keeping the fields of the CSV columns named in
    /// `text` as text too, for [`Table::text`].
    pub fn read_with_text(source: Source<'_>, text: &[&str]) -> Result<Table> {
        let path = source.name().to_path_buf();
        let format = source.format();
        let content = match format {
            FileFormat::Csv => Content::Csv(source.read_csv_table_with_text(text)?),
            FileFormat::Npy => {
                let array = source.read_npy_array()?;
                // The reader returns 1-D and 2-D arrays only; a 1-D one is one column.
                let (rows, cols) = match array.shape[..] {
                    [rows, cols] => (rows, cols),
                    _ => (array.values.len(), 1),
                };
                if rows == 0 && cols > MAX_COLUMNS_WITHOUT_ROWS {
                    return Err(Error::Format {
                        path,
                        message: format!(
                            "a 0 x {cols} array has no rows, and no values back its {cols} \
                             columns (an array without rows is read with at most \
                             {MAX_COLUMNS_WITHOUT_ROWS})"
                        ),
                    });
                }
                Content::Npy(array.values.visit(Columns { rows, cols }))
            }
        };
        Ok(Table {
            path,
            format,
            content,
        })
    }

    /// The file's name (`<stdin>` for standard input).
    pub fn name(&self) -> &Path {
        &self.path
    }

    /// The file's format.
    pub fn format(&self) -> FileFormat {
        self.format
    }

    /// The names of every column, in order: of numbers or of text.
    pub fn names(&self) -> Vec<String> {
        match &self.content {
            Content::Csv(table) => table.names().to_vec(),
            Content::Npy(columns) => (0..columns.len()).map(|j| j.to_string()).collect(),
        }
    }

    /// The names of the columns of numbers, in order.
    pub fn numeric_names(&self) -> Vec<String> {
        match &self.content {
            Content::Csv(table) => table.numeric().map(|c| c.name.clone()).collect(),
            Content::Npy(columns) => (0..columns.len()).map(|j| j.to_string()).collect(),
        }
    }

    /// The fields of the CSV column `name` as text, when the table was read keeping them (see
    /// [`Table::read_with_text`]); an error for a `.npy` array, which holds numbers only.
    pub fn text(&self, name: &str) -> Result<&[String]> {
        match &self.content {
            Content::Csv(table) => table.text(name),
            Content::Npy(_) => Err(Error::InvalidArgument(format!(
                "{}: a .npy array holds numbers only, no text",
                self.path.display()
            ))),
        }
    }

    /// The values of the column `name`, or a clear error: no such column (naming those there
    /// are), or a column of text (naming the row and the field).
    pub fn column(&self, name: &str) -> Result<Vec<f64>> {
        match &self.content {
            Content::Csv(table) => Ok(table.column(name)?.values.visit(ToF64)),
            Content::Npy(columns) => name
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|j| columns.get(j))
                .cloned()
                .ok_or_else(|| Error::MissingColumn {
                    path: self.path.clone(),
                    column: name.to_string(),
                    available: match columns.len() {
                        0 => "no columns at all".to_string(),
                        n => format!(
                            "0 to {} (the columns of a .npy array are named by their index)",
                            n - 1
                        ),
                    },
                }),
        }
    }
}

/// The values of `columns` (of equal lengths) row-major: row `i`'s values at `i * columns.len()`
/// onwards, in the columns' order.
pub fn row_major(columns: &[Vec<f64>]) -> Vec<f64> {
    let rows = columns.first().map_or(0, Vec::len);
    (0..rows)
        .flat_map(|i| columns.iter().map(move |c| c[i]))
        .collect()
}

//! The columns of a data file by name, as `f64`: every column of a CSV file, or of a 2-D
//! `.npy` array (named by their 0-based index).

use std::path::{Path, PathBuf};

use kselect::io::csv::{read_csv_table, CsvTable};
use kselect::io::npy::read_npy_array;
use kselect::io::{file_format, ColumnVisitor, FileFormat};
use kselect::{Element, Error, Result};

/// The columns of a data file.
pub struct Table {
    path: PathBuf,
    format: FileFormat,
    source: Source,
}

/// Where the columns come from.
enum Source {
    /// Every column of a CSV file, numbers or text.
    Csv(CsvTable),
    /// The columns of a `.npy` array, each as `f64`.
    Npy(Vec<Vec<f64>>),
}

/// A column's values as `f64`, whatever type they were read as.
struct ToF64;

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
    /// Reads `path`: a `.npy` array (1-D: one column; 2-D: rows x columns) or a CSV file with
    /// a header row (see [`kselect::io::file_format`] for how the format is told).
    pub fn read(path: &Path) -> Result<Table> {
        let format = file_format(path)?;
        let source = match format {
            FileFormat::Csv => Source::Csv(read_csv_table(path)?),
            FileFormat::Npy => {
                let array = read_npy_array(path)?;
                // The reader returns 1-D and 2-D arrays only; a 1-D one is one column.
                let (rows, cols) = match array.shape[..] {
                    [rows, cols] => (rows, cols),
                    _ => (array.values.len(), 1),
                };
                Source::Npy(array.values.visit(Columns { rows, cols }))
            }
        };
        Ok(Table {
            path: path.to_path_buf(),
            format,
            source,
        })
    }

    /// The file's format.
    pub fn format(&self) -> FileFormat {
        self.format
    }

    /// The names of the columns of numbers, in order.
    pub fn numeric_names(&self) -> Vec<String> {
        match &self.source {
            Source::Csv(table) => table.numeric().map(|c| c.name.clone()).collect(),
            Source::Npy(columns) => (0..columns.len()).map(|j| j.to_string()).collect(),
        }
    }

    /// The values of the column `name`, or a clear error: no such column (naming those there
    /// are), or a column of text (naming the row and the field).
    pub fn column(&self, name: &str) -> Result<Vec<f64>> {
        match &self.source {
            Source::Csv(table) => Ok(table.column(name)?.values.visit(ToF64)),
            Source::Npy(columns) => name
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|j| columns.get(j))
                .cloned()
                .ok_or_else(|| Error::MissingColumn {
                    path: self.path.clone(),
                    column: name.to_string(),
                    available: format!(
                        "0 to {} (the columns of a .npy array are named by their index)",
                        columns.len().saturating_sub(1)
                    ),
                }),
        }
    }
}

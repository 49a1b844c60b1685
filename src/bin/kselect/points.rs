//! The points of a data file for `kselect neighbors`: the rows of a 2-D `.npy` array, or of
//! every column of a CSV file, as `f32` when the file holds `f32` and as `f64` otherwise.

use std::path::{Path, PathBuf};

use kselect::io::{Column, FileFormat};
use kselect::{Error, Result};

use crate::open;
use crate::regression::first_repeat;
use crate::table::{row_major, Table, ToF64};

/// The coordinates of a file's points, row-major, in the type they are searched in.
pub enum Coordinates {
    /// A `.npy` array of `f4`.
    F32(Vec<f32>),
    /// A `.npy` array of any other dtype (integers converted), or a CSV file.
    F64(Vec<f64>),
}

impl Coordinates {
    /// The coordinates as `f64` (exactly: every `f32` is an `f64`).
    pub fn into_f64(self) -> Vec<f64> {
        match self {
            Coordinates::F32(values) => values.into_iter().map(f64::from).collect(),
            Coordinates::F64(values) => values,
        }
    }
}

/// The points of a file.
pub struct PointsFile {
    /// The file, or `<stdin>`.
    pub name: PathBuf,
    /// The number of points.
    pub rows: usize,
    /// The coordinates of each point.
    pub dim: usize,
    /// The coordinates, row-major.
    pub coordinates: Coordinates,
}

impl PointsFile {
    /// Reads `file` (`-`: standard input): a 2-D `.npy` array (points x coordinates, any
    /// numeric dtype) or a CSV file whose columns are all numbers (missing values read as NaN,
    /// which the search refuses, naming the point).
    pub fn read(file: &Path) -> Result<PointsFile> {
        let source = open::open(file)?;
        let (name, format) = (source.name().to_path_buf(), source.format());
        let (rows, dim, coordinates) = match format {
            FileFormat::Npy => {
                let array = source.read_npy_array()?;
                let [rows, dim] = array.shape[..] else {
                    return Err(Error::Format {
                        path: name,
                        message: format!(
                            "a 1-D array of {} values: points are the rows of a 2-D array \
                             (points x coordinates; numpy's reshape(-1, 1) makes points of one \
                             coordinate)",
                            array.values.len()
                        ),
                    });
                };
                let coordinates = match array.values {
                    Column::F32(values) => Coordinates::F32(values),
                    Column::F64(values) => Coordinates::F64(values),
                    other => Coordinates::F64(other.visit(ToF64)),
                };
                (rows, dim, coordinates)
            }
            FileFormat::Csv => {
                let table = Table::read(source)?;
                let names = table.names();
                if let Some(twice) = first_repeat(&names) {
                    return Err(Error::Format {
                        path: name,
                        message: format!(
                            "the header names the column `{}` twice: every column is a \
                             coordinate, so each needs a name of its own",
                            twice
                        ),
                    });
                }
                let columns: Vec<Vec<f64>> = names
                    .iter()
                    .map(|column| table.column(column))
                    .collect::<Result<_>>()?;
                let rows = columns.first().map_or(0, Vec::len);
                (rows, columns.len(), Coordinates::F64(row_major(&columns)))
            }
        };
        Ok(PointsFile {
            name,
            rows,
            dim,
            coordinates,
        })
    }
}

//! Reading and writing data files: `.npy` arrays and CSV columns.
//!
//! - [`read_npy`] / [`write_npy`]: 1-D NumPy arrays of `f4`, `f8`, `i4`, `i8`, `u4`, `u8`
//!   (either byte order), format versions 1.0, 2.0 and 3.0.
//! - [`read_csv_column`]: one numeric column of a CSV file with a header row; missing values
//!   (empty, `NA`, `NaN`) become NaN.
//! - [`read_csv_table`]: every column of a CSV file in one pass, the numeric ones as by
//!   [`read_csv_column`].
//! - [`read_column`]: either of the two, chosen by the file's extension or content.
//!
//! Each reader of a path has a twin that reads any [`Read`] — standard input,
//! a pipe, bytes in memory — named for error messages: [`read_npy_from`],
//! [`npy::read_npy_array_from`], [`read_csv_column_from`], [`read_csv_table_from`],
//! [`read_column_from`]. Both open the input once as a [`Source`], which tells the format and
//! the compression from the first bytes and keeps them in the stream: every input is read
//! once, so a pipe or a FIFO reads like a file with the same bytes.
//!
//! Inputs whose name ends in `.gz`, or that start with the gzip magic bytes, are decompressed
//! on the fly, for both formats, and read to the end of the gzip stream, so that its checksum
//! is checked. Every error names the file (or the name given for a reader, e.g. `<stdin>`).
//!
//! A [`Column`] holds the values with the element type of the file; [`Column::visit`] hands
//! them to code that is generic over [`Element`]:
//!
//! ```
//! use kselect::io::{Column, ColumnVisitor};
//! use kselect::Element;
//!
//! struct Minimum;
//! impl ColumnVisitor for Minimum {
//!     type Output = kselect::Result<String>;
//!     fn visit<T: Element>(self, data: &[T]) -> Self::Output {
//!         Ok(kselect::select(data, 0)?.to_string())
//!     }
//! }
//!
//! let column = Column::from(vec![3u64, 1, 2]);
//! assert_eq!(column.visit(Minimum).unwrap(), "1");
//! ```

pub mod csv;
mod error;
pub mod npy;
mod source;

pub use self::csv::{
    read_csv_column, read_csv_column_from, read_csv_table, read_csv_table_from, CsvColumn, CsvTable,
};
pub use self::error::FileError;
pub use self::npy::{read_npy, read_npy_from, write_npy};
pub use self::source::{open_file, Source};

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::element::{DType, Element};
use crate::error::Result;

/// The values of one column or array, with the element type they were stored with.
///
/// ```
/// use kselect::io::Column;
/// use kselect::DType;
///
/// let column = Column::from(vec![1.5f32, -2.0]);
/// assert_eq!(column.len(), 2);
/// assert_eq!(column.dtype(), DType::F32);
/// assert!(matches!(column, Column::F32(ref v) if v[1] == -2.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// 32-bit floats (`<f4`).
    F32(Vec<f32>),
    /// 64-bit floats (`<f8`; CSV columns that are not all integers).
    F64(Vec<f64>),
    /// 32-bit signed integers (`<i4`).
    I32(Vec<i32>),
    /// 64-bit signed integers (`<i8`; CSV columns of integers).
    I64(Vec<i64>),
    /// 32-bit unsigned integers (`<u4`).
    U32(Vec<u32>),
    /// 64-bit unsigned integers (`<u8`; CSV integer columns with a value above `i64::MAX`).
    U64(Vec<u64>),
}

/// Code that is generic over the element type, run by [`Column::visit`] on a column's values.
///
/// ```
/// use kselect::io::{Column, ColumnVisitor};
/// use kselect::Element;
///
/// struct Sum;
/// impl ColumnVisitor for Sum {
///     type Output = f64;
///     fn visit<T: Element>(self, data: &[T]) -> f64 {
///         data.iter().map(|x| x.to_f64()).sum()
///     }
/// }
/// assert_eq!(Column::from(vec![1i32, 2, 3]).visit(Sum), 6.0);
/// ```
pub trait ColumnVisitor {
    /// What the visitor returns.
    type Output;
    /// Runs on the values of the column, whatever their type.
    fn visit<T: Element>(self, data: &[T]) -> Self::Output;
}

impl Column {
    /// The number of values.
    ///
    /// ```
    /// assert_eq!(kselect::io::Column::from(vec![1u32, 2, 3]).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        match self {
            Column::F32(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::I32(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::U64(v) => v.len(),
        }
    }

    /// Whether the column holds no value.
    ///
    /// ```
    /// assert!(kselect::io::Column::from(Vec::<f64>::new()).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type of the values.
    ///
    /// ```
    /// use kselect::{io::Column, DType};
    /// assert_eq!(Column::from(vec![1i64]).dtype(), DType::I64);
    /// ```
    pub fn dtype(&self) -> DType {
        match self {
            Column::F32(_) => DType::F32,
            Column::F64(_) => DType::F64,
            Column::I32(_) => DType::I32,
            Column::I64(_) => DType::I64,
            Column::U32(_) => DType::U32,
            Column::U64(_) => DType::U64,
        }
    }

    /// Runs `visitor` on the values, with their own element type.
    ///
    /// ```
    /// use kselect::io::{Column, ColumnVisitor};
    /// use kselect::Element;
    ///
    /// struct Median;
    /// impl ColumnVisitor for Median {
    ///     type Output = kselect::Result<f64>;
    ///     fn visit<T: Element>(self, data: &[T]) -> Self::Output {
    ///         Ok(kselect::median(data)?.to_f64())
    ///     }
    /// }
    /// assert_eq!(Column::from(vec![5u32, 1, 3]).visit(Median).unwrap(), 3.0);
    /// ```
    pub fn visit<V: ColumnVisitor>(&self, visitor: V) -> V::Output {
        match self {
            Column::F32(v) => visitor.visit(v),
            Column::F64(v) => visitor.visit(v),
            Column::I32(v) => visitor.visit(v),
            Column::I64(v) => visitor.visit(v),
            Column::U32(v) => visitor.visit(v),
            Column::U64(v) => visitor.visit(v),
        }
    }
}

macro_rules! column_from {
    ($t:ty, $variant:ident) => {
        impl From<Vec<$t>> for Column {
            fn from(values: Vec<$t>) -> Column {
                Column::$variant(values)
            }
        }
    };
}

column_from!(f32, F32);
column_from!(f64, F64);
column_from!(i32, I32);
column_from!(i64, I64);
column_from!(u32, U32);
column_from!(u64, U64);

/// The two file formats kselect reads.
///
/// ```
/// use kselect::io::FileFormat;
/// assert_eq!(FileFormat::Npy.name(), "npy");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileFormat {
    /// A NumPy `.npy` array.
    Npy,
    /// A CSV file with a header row.
    Csv,
}

impl FileFormat {
    /// `"npy"` or `"csv"`.
    ///
    /// ```
    /// assert_eq!(kselect::io::FileFormat::Csv.name(), "csv");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Npy => "npy",
            FileFormat::Csv => "csv",
        }
    }
}

/// The format of a file: `.npy` when its name ends in `.npy` or `.npy.gz` or when its
/// (decompressed) content starts with the NumPy magic string, CSV otherwise (see
/// [`Source::format`]). The file is opened and its first bytes are read; to read its values
/// too, open it once as a [`Source`] instead, which tells the format the same way.
///
/// ```
/// use kselect::io::{file_format, write_npy, FileFormat};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("values.dat"); // the extension says nothing: the content does
/// write_npy(&path, &[1.0f64, 2.0])?;
/// assert_eq!(file_format(&path)?, FileFormat::Npy);
/// std::fs::write(dir.path().join("t.csv"), "x\n1\n")?;
/// assert_eq!(file_format(dir.path().join("t.csv"))?, FileFormat::Csv);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn file_format(path: impl AsRef<Path>) -> Result<FileFormat> {
    Ok(Source::open(path)?.format())
}

/// Reads the values of a data file: a `.npy` array, or one column of a CSV file (see
/// [`file_format`] for how the format is told, [`read_npy`] and [`read_csv_column`] for the
/// formats). `column` names the CSV column; it may be `None` for a CSV file of one column, and
/// must be `None` for a `.npy` file. The file is opened once and read once.
///
/// ```
/// use kselect::io::{read_column, Column};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.csv");
/// std::fs::write(&path, "a,b\n1,2.5\n3,NA\n")?;
/// assert_eq!(read_column(&path, Some("a"))?, Column::I64(vec![1, 3]));
/// let b = read_column(&path, Some("b"))?;
/// assert!(matches!(b, Column::F64(ref v) if v[0] == 2.5 && v[1].is_nan()));
/// assert!(read_column(&path, None).is_err()); // two columns: name one
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_column(path: impl AsRef<Path>, column: Option<&str>) -> Result<Column> {
    Source::open(path)?.read_column(column)
}

/// Reads the values of a data file from `reader` (standard input, a pipe, bytes in memory):
/// as [`read_column`] reads a file, format and gzip compression told from `name` and the
/// content. `name` is what error messages name (e.g. `<stdin>`).
///
/// ```
/// use kselect::io::{read_column_from, Column};
///
/// let values = read_column_from(&b"t,v\n1,0.5\n2,-1\n"[..], "<stdin>", Some("v"))?;
/// assert_eq!(values, Column::F64(vec![0.5, -1.0]));
/// let err = read_column_from(&b"t,v\n1,x\n"[..], "<stdin>", Some("v")).unwrap_err();
/// assert!(err.to_string().starts_with("<stdin>: row 1, column v"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_column_from(
    reader: impl Read,
    name: impl Into<PathBuf>,
    column: Option<&str>,
) -> Result<Column> {
    Source::from_reader(reader, name)?.read_column(column)
}

/// Reads until `buf` is full or the input ends; returns how many bytes were read.
pub(crate) fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::io::Write;

    #[test]
    fn format_by_extension_and_magic() {
        let dir = tempfile::tempdir().unwrap();
        let npy = dir.path().join("a.bin");
        write_npy(&npy, &[1u32, 2]).unwrap();
        assert_eq!(file_format(&npy).unwrap(), FileFormat::Npy);
        let gz = dir.path().join("a.npy.gz");
        write_npy(&gz, &[1u32, 2]).unwrap();
        assert_eq!(file_format(&gz).unwrap(), FileFormat::Npy);
        assert_eq!(read_column(&gz, None).unwrap(), Column::U32(vec![1, 2]));
        // gzip detected by content too, whatever the name
        let hidden = dir.path().join("a.data");
        std::fs::copy(&gz, &hidden).unwrap();
        assert_eq!(file_format(&hidden).unwrap(), FileFormat::Npy);
        assert_eq!(read_column(&hidden, None).unwrap(), Column::U32(vec![1, 2]));
        let csv = dir.path().join("x.csv.gz");
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&csv).unwrap(),
            flate2::Compression::default(),
        );
        enc.write_all(b"v\n-1\n2\n").unwrap();
        enc.finish().unwrap();
        assert_eq!(file_format(&csv).unwrap(), FileFormat::Csv);
        assert_eq!(read_column(&csv, None).unwrap(), Column::I64(vec![-1, 2]));
    }

    #[test]
    fn npy_with_column_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let npy = dir.path().join("a.npy");
        write_npy(&npy, &[1.0f32]).unwrap();
        let err = read_column(&npy, Some("x")).unwrap_err().to_string();
        assert!(err.contains("column `x`"), "{err}");
    }

    #[test]
    fn missing_file_and_directory() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.csv");
        let err = read_column(&missing, None).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err:?}");
        assert!(err.to_string().contains("nope.csv"));
        assert!(read_column(dir.path(), None).is_err());
    }

    #[test]
    fn corrupt_gzip_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.csv.gz");
        std::fs::write(&path, [0x1f, 0x8b, 8, 0, 1, 2, 3]).unwrap();
        let err = read_column(&path, None).unwrap_err().to_string();
        assert!(err.contains("bad.csv.gz"), "{err}");
        let empty = dir.path().join("empty.csv.gz");
        std::fs::write(&empty, []).unwrap();
        assert!(read_column(&empty, None).is_err());
    }
}

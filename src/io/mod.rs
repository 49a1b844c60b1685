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
//! Files whose name ends in `.gz`, or that start with the gzip magic bytes, are decompressed
//! on the fly, for both formats. Every error names the file.
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
pub mod npy;

pub use self::csv::{read_csv_column, read_csv_table, CsvColumn, CsvTable};
pub use self::npy::{read_npy, write_npy};

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::element::{DType, Element};
use crate::error::{Error, Result};

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
/// (decompressed) content starts with the NumPy magic string, CSV otherwise.
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
    let path = path.as_ref();
    if has_npy_extension(path) {
        return Ok(FileFormat::Npy);
    }
    let mut reader = open(path)?;
    let mut prefix = [0u8; 6];
    let got = read_up_to(&mut reader, &mut prefix).map_err(|e| Error::io(path, e))?;
    if &prefix[..got] == npy::MAGIC {
        Ok(FileFormat::Npy)
    } else {
        Ok(FileFormat::Csv)
    }
}

/// Reads the values of a data file: a `.npy` array, or one column of a CSV file (see
/// [`file_format`] for how the format is told, [`read_npy`] and [`read_csv_column`] for the
/// formats). `column` names the CSV column; it may be `None` for a CSV file of one column, and
/// must be `None` for a `.npy` file.
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
    let path = path.as_ref();
    match file_format(path)? {
        FileFormat::Npy => {
            if let Some(name) = column {
                return Err(Error::InvalidArgument(format!(
                    "{}: a .npy file holds one array without column names, \
                     so no column `{name}` can be chosen in it",
                    path.display()
                )));
            }
            read_npy(path)
        }
        FileFormat::Csv => Ok(read_csv_column(path, column)?.values),
    }
}

/// Whether the file name ends in `.npy` or `.npy.gz` (any case).
fn has_npy_extension(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name.ends_with(".npy") || name.ends_with(".npy.gz")
}

/// Opens `path` for buffered reading, decompressing it when it is gzip-compressed (its name
/// ends in `.gz`, or it starts with the gzip magic bytes `1f 8b`).
pub(crate) fn open(path: &Path) -> Result<Box<dyn BufRead>> {
    Ok(open_sized(path)?.0)
}

/// [`open`], with the size of the (uncompressed) content when it is known: `None` for
/// gzip-compressed files.
pub(crate) fn open_sized(path: &Path) -> Result<(Box<dyn BufRead>, Option<u64>)> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let metadata = file.metadata().map_err(|e| Error::io(path, e))?;
    if metadata.is_dir() {
        return Err(Error::format(path, "is a directory, not a data file"));
    }
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let head = reader.fill_buf().map_err(|e| Error::io(path, e))?;
    let gz_name = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    if gz_name || head.starts_with(&[0x1f, 0x8b]) {
        if head.is_empty() {
            return Err(Error::format(
                path,
                "the file is empty: it is not a gzip-compressed file",
            ));
        }
        let decoder = flate2::bufread::MultiGzDecoder::new(reader);
        Ok((Box::new(BufReader::with_capacity(1 << 16, decoder)), None))
    } else {
        Ok((Box::new(reader), Some(metadata.len())))
    }
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

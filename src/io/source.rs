//! [`Source`]: an input opened once for reading — a file, standard input, a pipe, bytes in
//! memory — decompressed on the fly when it is gzip-compressed, its format told from its name
//! and its first bytes, which stay in the stream.
//!
//! Every input is read once, from its first byte to where its values end: nothing is opened a
//! second time, so a pipe or a FIFO gives the same values as a file with the same bytes.

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::io::csv::{self, CsvColumn, CsvTable};
use crate::io::npy::{self, NpyArray};
use crate::io::{read_up_to, Column, FileError, FileFormat};

/// The buffer of the raw bytes and of the decompressed ones.
const BUFFER: usize = 1 << 16;

/// The two bytes every gzip stream starts with.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// An input opened for reading, gzip-decompressed when compressed, with its [`FileFormat`]
/// told before any value is read. The `read_*` methods read it once and consume it.
///
/// `name` (a file's path, or a name such as `<stdin>`) is what every error message names.
///
/// ```
/// use kselect::io::{Column, FileFormat, Source};
///
/// // Bytes from any reader: standard input, a socket, memory.
/// let csv = "x,y\n1,2.5\n3,-1\n";
/// let source = Source::from_reader(csv.as_bytes(), "<stdin>")?;
/// assert_eq!(source.format(), FileFormat::Csv);
/// assert_eq!(source.read_column(Some("x"))?, Column::I64(vec![1, 3]));
///
/// // A file, whose length (when it is a regular file) lets a .npy array be checked against
/// // its header before any value is read.
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("x.npy.gz");
/// kselect::io::write_npy(&path, &[0.5f32, 2.0])?;
/// let source = Source::open(&path)?;
/// assert_eq!((source.format(), source.is_compressed()), (FileFormat::Npy, true));
/// assert_eq!(source.read_npy()?, Column::F32(vec![0.5, 2.0]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Source<'a> {
    /// The content, decompressed, from its first byte.
    reader: Box<dyn BufRead + 'a>,
    name: PathBuf,
    format: FileFormat,
    compressed: bool,
    /// The number of bytes of the raw input, when known for sure.
    length: Option<u64>,
}

impl std::fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("compressed", &self.compressed)
            .field("length", &self.length)
            .finish_non_exhaustive()
    }
}

/// Opens the file at `path` for reading: the file, and the length of its content when it is a
/// regular file (`None` for a pipe, a FIFO or a device, whose reported length of 0 says
/// nothing). A directory is an [`Error::Format`], a file that cannot be opened an
/// [`Error::Io`]; both name the path.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.csv");
/// std::fs::write(&path, "x\n1\n")?;
/// let (_file, length) = kselect::io::open_file(&path)?;
/// assert_eq!(length, Some(4));
/// assert!(kselect::io::open_file(dir.path()).is_err()); // a directory
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_file(path: impl AsRef<Path>) -> Result<(File, Option<u64>)> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let metadata = file.metadata().map_err(|e| Error::io(path, e))?;
    if metadata.is_dir() {
        return Err(Error::format(path, "is a directory, not a data file"));
    }
    Ok((file, metadata.is_file().then_some(metadata.len())))
}

impl Source<'static> {
    /// Opens the file at `path` (see [`open_file`]) as a source.
    ///
    /// ```
    /// use kselect::io::{FileFormat, Source};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("values.dat"); // the content tells the format
    /// kselect::io::write_npy(&path, &[1u32, 2])?;
    /// assert_eq!(Source::open(&path)?.format(), FileFormat::Npy);
    /// assert!(Source::open(dir.path().join("missing.csv")).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Source<'static>> {
        let path = path.as_ref();
        let (file, length) = open_file(path)?;
        let source = Source::from_reader(file, path)?;
        Ok(match length {
            Some(bytes) => source.with_length(bytes),
            None => source,
        })
    }
}

impl<'a> Source<'a> {
    /// A source of the bytes of `reader`, named `name` in error messages. Its first bytes are
    /// read now, and kept, to tell whether it is gzip-compressed (a name ending in `.gz`, or
    /// the gzip magic bytes) and its format (see [`format`](Source::format)).
    ///
    /// ```
    /// use std::io::Write;
    /// use kselect::io::{Column, Source};
    ///
    /// // gzip-compressed bytes are recognised by their content, whatever the name.
    /// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    /// gz.write_all(b"v\n-1\n2\n")?;
    /// let bytes = gz.finish()?;
    /// let source = Source::from_reader(&bytes[..], "<stdin>")?;
    /// assert!(source.is_compressed());
    /// assert_eq!(source.read_column(None)?, Column::I64(vec![-1, 2]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_reader(reader: impl Read + 'a, name: impl Into<PathBuf>) -> Result<Source<'a>> {
        let name = name.into();
        let raw = BufReader::with_capacity(BUFFER, reader);
        let (head, raw) = peek(raw, GZIP_MAGIC.len()).map_err(|e| Error::io(&name, e))?;
        let compressed = has_extension(&name, ".gz") || head.starts_with(&GZIP_MAGIC);
        if compressed && head.is_empty() {
            return Err(Error::format(
                &name,
                "the file is empty: it is not a gzip-compressed file",
            ));
        }
        let content: Box<dyn BufRead + 'a> = if compressed {
            let decoder = GzipErrors(flate2::bufread::MultiGzDecoder::new(raw));
            Box::new(BufReader::with_capacity(BUFFER, decoder))
        } else {
            Box::new(raw)
        };
        let (head, content) = peek(content, npy::MAGIC.len()).map_err(|e| Error::io(&name, e))?;
        let format = if has_npy_extension(&name) || head == npy::MAGIC {
            FileFormat::Npy
        } else {
            FileFormat::Csv
        };
        Ok(Source {
            reader: Box::new(content),
            name,
            format,
            compressed,
            length: None,
        })
    }

    /// The source, with the number of bytes its reader gives in all: a regular file's length.
    /// A `.npy` array is then checked against its header before any value is read, and its
    /// values are allocated at once rather than as they arrive. The length must be exact (too
    /// small, and the array reads as truncated); it is not used for a gzip-compressed input,
    /// whose content is longer.
    ///
    /// ```
    /// use kselect::io::{Column, Source};
    ///
    /// let mut bytes = Vec::new();
    /// kselect::io::npy::write_npy_to(&mut bytes, &[1i64, 2])?;
    /// let length = bytes.len() as u64;
    /// let source = Source::from_reader(&bytes[..], "x.npy")?.with_length(length);
    /// assert_eq!(source.read_npy()?, Column::I64(vec![1, 2]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_length(mut self, bytes: u64) -> Source<'a> {
        self.length = Some(bytes);
        self
    }

    /// The name error messages give: the path, or the name given to
    /// [`from_reader`](Source::from_reader).
    ///
    /// ```
    /// let source = kselect::io::Source::from_reader(&b"x\n1\n"[..], "<stdin>")?;
    /// assert_eq!(source.name(), std::path::Path::new("<stdin>"));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn name(&self) -> &Path {
        &self.name
    }

    /// The format: `.npy` when the name ends in `.npy` or `.npy.gz` (any case) or the
    /// (decompressed) content starts with the NumPy magic string `\x93NUMPY`; CSV otherwise.
    ///
    /// ```
    /// use kselect::io::{FileFormat, Source};
    ///
    /// let mut npy = Vec::new();
    /// kselect::io::npy::write_npy_to(&mut npy, &[1.0f64])?;
    /// assert_eq!(Source::from_reader(&npy[..], "<stdin>")?.format(), FileFormat::Npy);
    /// assert_eq!(Source::from_reader(&b"a\n1\n"[..], "t")?.format(), FileFormat::Csv);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn format(&self) -> FileFormat {
        self.format
    }

    /// Whether the input is gzip-compressed (and decompressed as it is read).
    ///
    /// ```
    /// let source = kselect::io::Source::from_reader(&b"x\n1\n"[..], "t.csv")?;
    /// assert!(!source.is_compressed());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn is_compressed(&self) -> bool {
        self.compressed
    }

    /// The values: a `.npy` array, or one column of a CSV file, by [`format`](Source::format)
    /// (as [`read_column`](crate::io::read_column) reads a file). `column` names the CSV
    /// column; it may be `None` for a CSV file of one column, and must be `None` for `.npy`.
    ///
    /// ```
    /// use kselect::io::{Column, Source};
    ///
    /// let source = Source::from_reader(&b"a,b\n1,2.5\n"[..], "<stdin>")?;
    /// assert_eq!(source.read_column(Some("b"))?, Column::F64(vec![2.5]));
    /// let source = Source::from_reader(&b"a,b\n1,2.5\n"[..], "<stdin>")?;
    /// let err = source.read_column(None).unwrap_err().to_string();
    /// assert!(err.starts_with("<stdin>: ")); // two columns: name one
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_column(self, column: Option<&str>) -> Result<Column> {
        match self.format {
            FileFormat::Npy => {
                if let Some(wanted) = column {
                    return Err(FileError::NpyColumn {
                        path: self.name.clone(),
                        column: wanted.to_string(),
                    }
                    .into());
                }
                self.read_npy()
            }
            FileFormat::Csv => Ok(self.read_csv_column(column)?.values),
        }
    }

    /// Reads a 1-D `.npy` array (see [`read_npy`](crate::io::read_npy)).
    ///
    /// ```
    /// use kselect::io::{Column, Source};
    ///
    /// let mut bytes = Vec::new();
    /// kselect::io::npy::write_npy_to(&mut bytes, &[7u32, 8])?;
    /// assert_eq!(Source::from_reader(&bytes[..], "<stdin>")?.read_npy()?, Column::U32(vec![7, 8]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_npy(mut self) -> Result<Column> {
        let length = self.content_length();
        let values = npy::read_vector(&mut self.reader, &self.name, length)?;
        self.check_compressed_stream()?;
        Ok(values)
    }

    /// Reads a 1-D or 2-D `.npy` array with its shape (see
    /// [`read_npy_array`](crate::io::npy::read_npy_array)).
    ///
    /// ```
    /// use kselect::io::Source;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("m.npy");
    /// kselect::io::npy::write_npy_matrix(&path, &[1.0f64, 2.0, 3.0, 4.0], 2, 2)?;
    /// assert_eq!(Source::open(&path)?.read_npy_array()?.shape, vec![2, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_npy_array(mut self) -> Result<NpyArray> {
        let length = self.content_length();
        let array = npy::read_matrix(&mut self.reader, &self.name, length)?;
        self.check_compressed_stream()?;
        Ok(array)
    }

    /// Reads a `.npy` array with its shape, as [`read_npy_array`](Source::read_npy_array) does,
    /// but of any number of dimensions (at least one; a stack of matrices, say), stored in C or
    /// in Fortran (column-major) order: the values are returned in C order (row after row; the
    /// last index varying fastest).
    ///
    /// ```
    /// use kselect::io::{Column, Source};
    ///
    /// // numpy.asfortranarray([[1, 2, 3], [4, 5, 6]]) saved: the values stored by columns.
    /// let mut header = "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }".to_string();
    /// header.push_str(&" ".repeat(117 - header.len())); // 10 + 118 bytes: aligned to 64
    /// header.push('\n');
    /// let mut bytes = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
    /// bytes.extend_from_slice(header.as_bytes());
    /// for v in [1i32, 4, 2, 5, 3, 6] {
    ///     bytes.extend_from_slice(&v.to_le_bytes());
    /// }
    /// let array = Source::from_reader(&bytes[..], "a.npy")?.read_npy_array_any_order()?;
    /// assert_eq!(array.shape, vec![2, 3]);
    /// assert_eq!(array.values, Column::I32(vec![1, 2, 3, 4, 5, 6]));
    /// assert!(Source::from_reader(&bytes[..], "a.npy")?.read_npy_array().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_npy_array_any_order(mut self) -> Result<NpyArray> {
        let length = self.content_length();
        let array = npy::read_matrix_any_order(&mut self.reader, &self.name, length)?;
        self.check_compressed_stream()?;
        Ok(array)
    }

    /// Reads one column of a CSV file (see [`read_csv_column`](crate::io::read_csv_column)).
    ///
    /// ```
    /// use kselect::io::{Column, Source};
    ///
    /// let source = Source::from_reader(&b"id,delay\n1,5\n2,-7\n"[..], "<stdin>")?;
    /// let column = source.read_csv_column(Some("delay"))?;
    /// assert_eq!((column.index, column.values), (1, Column::I64(vec![5, -7])));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_csv_column(self, column: Option<&str>) -> Result<CsvColumn> {
        csv::column_of(self.reader, &self.name, column)
    }

    /// Reads every column of a CSV file in one pass (see
    /// [`read_csv_table`](crate::io::read_csv_table)).
    ///
    /// ```
    /// use kselect::io::Source;
    ///
    /// let source = Source::from_reader(&b"name,x\na,1\nb,2\n"[..], "<stdin>")?;
    /// let table = source.read_csv_table()?;
    /// assert_eq!((table.names().len(), table.rows()), (2, 2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_csv_table(self) -> Result<CsvTable> {
        csv::table_of(self.reader, &self.name, &[])
    }

    /// Reads every column of a CSV file in one pass, as
    /// [`read_csv_table`](Source::read_csv_table) does, and keeps the fields of the columns
    /// named in `text` as text too, for [`CsvTable::text`] (a column of labels, whether they
    /// are words or numbers). Names the header lacks are passed over.
    ///
    /// ```
    /// use kselect::io::Source;
    ///
    /// let source = Source::from_reader(&b"label,x\nb,1\na,2\n"[..], "<stdin>")?;
    /// let table = source.read_csv_table_with_text(&["label"])?;
    /// assert_eq!(table.text("label")?, ["b", "a"]);
    /// assert!(table.column("label").is_err()); // not a column of numbers
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_csv_table_with_text(self, text: &[&str]) -> Result<CsvTable> {
        csv::table_of(self.reader, &self.name, text)
    }

    /// The length of the content, when known: never for a compressed input.
    fn content_length(&self) -> Option<u64> {
        self.length.filter(|_| !self.compressed)
    }

    /// Reads a compressed input to the end of its gzip stream, so that its checksum and length
    /// are checked even when the values end before it (bytes after a `.npy` array's values are
    /// allowed, but the compressed stream must be whole and valid).
    fn check_compressed_stream(&mut self) -> Result<()> {
        if self.compressed {
            std::io::copy(&mut self.reader, &mut std::io::sink())
                .map_err(|e| Error::io(&self.name, e))?;
        }
        Ok(())
    }
}

/// The first `n` bytes of `reader` (fewer if it ends before), and a reader that gives them
/// again, then the rest: nothing read is lost, however the bytes arrive.
fn peek<R: BufRead>(mut reader: R, n: usize) -> std::io::Result<(Vec<u8>, impl BufRead)> {
    let mut head = vec![0u8; n];
    let got = read_up_to(&mut reader, &mut head)?;
    head.truncate(got);
    Ok((head.clone(), Cursor::new(head).chain(reader)))
}

/// Whether the file name ends in `suffix` (lowercase), in any case.
fn has_extension(path: &Path, suffix: &str) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(suffix))
}

/// Whether the file name ends in `.npy` or `.npy.gz` (any case).
fn has_npy_extension(path: &Path) -> bool {
    has_extension(path, ".npy") || has_extension(path, ".npy.gz")
}

/// A gzip decoder whose errors say that the compressed data are at fault.
struct GzipErrors<R>(R);

impl<R: Read> Read for GzipErrors<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::Interrupted => e,
            kind => std::io::Error::new(
                kind,
                format!("corrupt or truncated gzip-compressed data ({e})"),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that gives one byte a call, as a slow pipe may.
    struct Trickle<'b>(&'b [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match (self.0.split_first(), buf.is_empty()) {
                (Some((&b, rest)), false) => {
                    buf[0] = b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    #[test]
    fn the_first_bytes_stay_in_the_stream() {
        let csv = "a\n0\n1\n2\n";
        let source = Source::from_reader(Trickle(csv.as_bytes()), "<stdin>").unwrap();
        assert_eq!(source.format(), FileFormat::Csv);
        assert_eq!(
            source.read_column(None).unwrap(),
            Column::I64(vec![0, 1, 2])
        );
        let mut npy = Vec::new();
        npy::write_npy_to(&mut npy, &[1.5f64, -2.0]).unwrap();
        let source = Source::from_reader(Trickle(&npy), "<stdin>").unwrap();
        assert_eq!(source.format(), FileFormat::Npy);
        assert_eq!(source.read_npy().unwrap(), Column::F64(vec![1.5, -2.0]));
    }

    #[test]
    fn gzip_is_recognised_on_any_reader() {
        use std::io::Write;
        let mut npy = Vec::new();
        npy::write_npy_to(&mut npy, &[3i32, 4]).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&npy).unwrap();
        let bytes = gz.finish().unwrap();
        let source = Source::from_reader(Trickle(&bytes), "<stdin>").unwrap();
        assert!(source.is_compressed());
        assert_eq!(source.format(), FileFormat::Npy);
        assert_eq!(source.read_npy().unwrap(), Column::I32(vec![3, 4]));
    }

    #[test]
    fn short_inputs_are_not_empty() {
        let source = Source::from_reader(&b"x\n7\n"[..], "<stdin>").unwrap();
        assert_eq!(source.read_column(None).unwrap(), Column::I64(vec![7]));
        let err = Source::from_reader(&b""[..], "<stdin>")
            .unwrap()
            .read_column(None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("<stdin>: ") && err.contains("empty"),
            "{err}"
        );
        let err = Source::from_reader(&b""[..], "x.csv.gz").unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
    }
}

//! NumPy `.npy` files: a reader for 1-D arrays of the six element types, and a writer.
//!
//! The reader accepts:
//! - format versions 1.0, 2.0 and 3.0 (the header length in 2 or 4 bytes; a UTF-8 header in
//!   3.0);
//! - the dtypes `f4`, `f8`, `i4`, `i8`, `u4`, `u8` in either byte order: `<` (little endian),
//!   `>` (big endian, swapped on reading), and `=`, `|` or no byte-order character (native,
//!   as `numpy.dtype` reads them);
//! - shape `(n,)` ([`read_npy`]; `fortran_order` may be either value, which is the same for
//!   1-D), or also `(rows, cols)` in C order ([`read_npy_array`]), or arrays of any number of
//!   dimensions (at least one) in either order ([`Source::read_npy_array_any_order`]);
//! - gzip-compressed files (a name ending in `.gz`, or the gzip magic bytes), read to the end
//!   of the gzip stream so that its checksum is checked;
//! - any reader, standard input or a pipe included ([`read_npy_from`],
//!   [`read_npy_array_from`]), read once.
//!
//! Bytes after the `n` values are ignored (as `numpy.load` does: several arrays may be saved
//! one after another into one file). Anything else (another dtype, another shape, a structured
//! dtype, a header that gives a key twice, a truncated file, a corrupt gzip stream) is an
//! error that names the file and what is wrong.
//!
//! Nothing is allocated on a header's word alone: the values are allocated at once only when
//! the file's length shows that they are there, and otherwise as they arrive.
//!
//! The writers write format 1.0, little endian, shape `(n,)` ([`write_npy`]) or `(rows, cols)`
//! in C order ([`write_npy_matrix`]): files that `numpy.load` reads.

use std::any::Any;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::io::{read_up_to, Column, FileError, Source};

/// The magic string every `.npy` file starts with.
pub(crate) const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Headers longer than this are refused (numpy's own headers are 128 bytes or so).
const MAX_HEADER_LEN: usize = 1 << 20;

/// The dtypes the reader accepts, for error messages.
const SUPPORTED: &str = "f4 (f32), f8 (f64), i4 (i32), i8 (i64), u4 (u32), u8 (u64), \
     with byte order '<' (little endian), '>' (big endian) or '|'/'=' (native)";

/// Reads a 1-D `.npy` array (optionally gzip-compressed) into a [`Column`] of its dtype.
///
/// ```
/// use kselect::io::{read_npy, write_npy, Column};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("x.npy");
/// write_npy(&path, &[3i64, -1, 2])?;
/// assert_eq!(read_npy(&path)?, Column::I64(vec![3, -1, 2]));
///
/// // A file that is not a .npy array is a clear error naming the file.
/// std::fs::write(dir.path().join("bad.npy"), b"hello")?;
/// let err = read_npy(dir.path().join("bad.npy")).unwrap_err();
/// assert!(err.to_string().contains("bad.npy"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_npy(path: impl AsRef<Path>) -> Result<Column> {
    Source::open(path)?.read_npy()
}

/// Reads a 1-D `.npy` array (optionally gzip-compressed) from `reader`, as [`read_npy`]
/// reads a file; `name` is what error messages name (e.g. `<stdin>`).
///
/// ```
/// use kselect::io::npy::write_npy_to;
/// use kselect::io::{read_npy_from, Column};
///
/// let mut bytes = Vec::new();
/// write_npy_to(&mut bytes, &[2.5f64, -1.0])?;
/// assert_eq!(read_npy_from(&bytes[..], "<stdin>")?, Column::F64(vec![2.5, -1.0]));
/// let err = read_npy_from(&bytes[..20], "<stdin>").unwrap_err().to_string();
/// assert!(err.starts_with("<stdin>: truncated"), "{err}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_npy_from(reader: impl Read, name: impl Into<PathBuf>) -> Result<Column> {
    Source::from_reader(reader, name)?.read_npy()
}

/// One of several contiguous parts of a 1-D `.npy` array: its values, where they start in the
/// whole array, and the whole array's length.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyPart {
    /// The part's values.
    pub values: Column,
    /// The index in the whole array of the part's first value.
    pub offset: usize,
    /// The number of values of the whole array.
    pub total: usize,
}

/// Part `part` of `parts` of a 1-D `.npy` file: the values at indices `n * part / parts` up to
/// `n * (part + 1) / parts` (parts differ in length by at most one value), read from their
/// offset without reading the rest: each rank of a distributed job reads its own part of one
/// file. The file must be uncompressed (a gzip stream cannot be entered in the middle).
///
/// ```
/// use kselect::io::npy::{read_npy_part, write_npy};
/// use kselect::io::Column;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("x.npy");
/// write_npy(&path, &[1.0f32, 2.0, 3.0, 4.0, 5.0])?;
/// let p = read_npy_part(&path, 1, 2)?;
/// assert_eq!((p.values, p.offset, p.total), (Column::F32(vec![3.0, 4.0, 5.0]), 2, 5));
/// assert!(read_npy_part(&path, 2, 2).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_npy_part(path: impl AsRef<Path>, part: usize, parts: usize) -> Result<NpyPart> {
    use std::io::{BufReader, Seek, SeekFrom};
    let path = path.as_ref();
    if part >= parts {
        return Err(FileError::NoSuchPart { part, parts }.into());
    }
    let (file, size) = crate::io::open_file(path)?;
    let mut reader = BufReader::new(file);
    let mut magic = [0u8; 2];
    let got = read_up_to(&mut reader, &mut magic).map_err(|e| Error::io(path, e))?;
    if magic[..got] == [0x1f, 0x8b] {
        return Err(Error::format(
            path,
            "is gzip-compressed: a compressed file cannot be read from an offset, so the ranks              cannot each read their own part (decompress it, or give each rank its own file)",
        ));
    }
    reader.rewind().map_err(|e| Error::io(path, e))?;
    let header = read_header(&mut reader, path, size)?;
    if header.shape.len() != 1 {
        return Err(Error::format(
            path,
            format!(
                "unsupported shape {}: only 1-D arrays can be split into parts",
                shape_text(&header.shape)
            ),
        ));
    }
    let width = header.dtype.size_bytes() as u64;
    let n = header.len;
    if let Some(data) = header.data_bytes {
        if data < n as u64 * width {
            return Err(Error::format(
                path,
                format!(
                    "truncated data: the header announces {n} values of dtype '{}' ({} bytes),                      but the file holds {data} bytes of data",
                    header.descr,
                    n as u64 * width
                ),
            ));
        }
    }
    let (start, end) = (n * part / parts, n * (part + 1) / parts);
    let skip = start as u64 * width;
    reader
        .seek(SeekFrom::Start(header.header_bytes + skip))
        .map_err(|e| Error::io(path, e))?;
    let piece = Header {
        len: end - start,
        data_bytes: header.data_bytes.map(|d| d - skip),
        ..header
    };
    Ok(NpyPart {
        values: read_body(&mut reader, path, &piece)?,
        offset: start,
        total: n,
    })
}

/// The values of a 1-D or 2-D `.npy` array in C (row-major) order, and its shape.
///
/// ```
/// use kselect::io::npy::{read_npy_array, write_npy_matrix};
/// use kselect::io::Column;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("m.npy");
/// write_npy_matrix(&path, &[1u32, 2, 3, 4, 5, 6], 2, 3)?;
/// let array = read_npy_array(&path)?;
/// assert_eq!(array.shape, vec![2, 3]);
/// assert_eq!(array.values, Column::U32(vec![1, 2, 3, 4, 5, 6]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    /// The values, row after row for a 2-D array.
    pub values: Column,
    /// `[n]` or `[rows, cols]`.
    pub shape: Vec<usize>,
}

/// Reads a 1-D or 2-D `.npy` array (optionally gzip-compressed) with its shape. A 2-D array
/// must be stored in C order (`fortran_order: False`; numpy's default), unless it has a single
/// row or column, where both orders store the same bytes; other shapes are an
/// [`Error::Format`].
///
/// ```
/// use kselect::io::npy::read_npy_array;
/// use kselect::io::{write_npy, Column};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("v.npy");
/// write_npy(&path, &[2.5f64, -1.0])?;
/// let array = read_npy_array(&path)?;
/// assert_eq!((array.shape, array.values), (vec![2], Column::F64(vec![2.5, -1.0])));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_npy_array(path: impl AsRef<Path>) -> Result<NpyArray> {
    Source::open(path)?.read_npy_array()
}

/// Reads a 1-D or 2-D `.npy` array (optionally gzip-compressed) with its shape from `reader`,
/// as [`read_npy_array`] reads a file; `name` is what error messages name (e.g. `<stdin>`).
///
/// ```
/// use kselect::io::npy::{read_npy_array_from, write_npy_to};
///
/// let mut bytes = Vec::new();
/// write_npy_to(&mut bytes, &[1u64, 2, 3])?;
/// assert_eq!(read_npy_array_from(&bytes[..], "<stdin>")?.shape, vec![3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_npy_array_from(reader: impl Read, name: impl Into<PathBuf>) -> Result<NpyArray> {
    Source::from_reader(reader, name)?.read_npy_array()
}

/// Writes `data` as a 2-D little-endian `.npy` array of `rows` rows and `cols` columns in C
/// order (format 1.0), gzip-compressed when the path ends in `.gz`. `data` holds `rows * cols`
/// values, row after row.
///
/// ```
/// use kselect::io::npy::{read_npy_array, write_npy_matrix};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("m.npy");
/// write_npy_matrix(&path, &[0.5f32, 1.5], 1, 2)?;
/// assert_eq!(read_npy_array(&path)?.shape, vec![1, 2]);
/// assert!(write_npy_matrix(&path, &[0.5f32, 1.5], 3, 2).is_err()); // 2 values, not 6
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_npy_matrix<T: Element>(
    path: impl AsRef<Path>,
    data: &[T],
    rows: usize,
    cols: usize,
) -> Result<()> {
    let path = path.as_ref();
    if rows.checked_mul(cols) != Some(data.len()) {
        return Err(FileError::ShapeMismatch {
            len: data.len(),
            rows,
            cols,
        }
        .into());
    }
    write_file(path, |w| {
        write_shaped(w, data, &format!("({rows}, {cols})"))
    })
}

/// Writes `data` as a 1-D little-endian `.npy` array (format 1.0), gzip-compressed when the
/// path ends in `.gz`. Values are written bit for bit (NaN payloads included).
///
/// ```
/// use kselect::io::{read_npy, write_npy, Column};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("x.npy.gz");
/// write_npy(&path, &[0.5f32, f32::INFINITY])?;
/// assert_eq!(read_npy(&path)?, Column::F32(vec![0.5, f32::INFINITY]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_npy<T: Element>(path: impl AsRef<Path>, data: &[T]) -> Result<()> {
    write_file(path.as_ref(), |w| {
        write_shaped(w, data, &format!("({},)", data.len()))
    })
}

/// Creates `path` and writes it with `write`, through gzip when the name ends in `.gz`.
fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let file = File::create(path).map_err(|e| Error::io(path, e))?;
    let gz = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    let result = if gz {
        let mut encoder =
            flate2::write::GzEncoder::new(BufWriter::new(file), flate2::Compression::default());
        write(&mut encoder)
            .and_then(|()| encoder.finish())
            .and_then(|mut w| w.flush())
    } else {
        let mut writer = BufWriter::new(file);
        write(&mut writer).and_then(|()| writer.flush())
    };
    result.map_err(|e| Error::io(path, e))
}

/// Writes `data` as a 1-D little-endian `.npy` array (format 1.0) to any writer.
///
/// ```
/// let mut bytes = Vec::new();
/// kselect::io::npy::write_npy_to(&mut bytes, &[1u32, 2])?;
/// assert!(bytes.starts_with(b"\x93NUMPY\x01\x00"));
/// assert_eq!(bytes.len() % 64, 8); // a 64-byte aligned header, then 2 values of 4 bytes
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_npy_to<T: Element>(writer: &mut impl Write, data: &[T]) -> std::io::Result<()> {
    write_shaped(writer, data, &format!("({},)", data.len()))
}

/// Writes `data` as a little-endian `.npy` array of the shape `shape` (a Python tuple).
fn write_shaped<T: Element>(
    writer: &mut (impl Write + ?Sized),
    data: &[T],
    shape: &str,
) -> std::io::Result<()> {
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        descr_of(T::DTYPE),
    );
    // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64,
    // ending in a newline.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let header_len = u16::try_from(header.len()).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "npy header too long")
    })?;
    writer.write_all(MAGIC)?;
    writer.write_all(&[1, 0])?;
    writer.write_all(&header_len.to_le_bytes())?;
    writer.write_all(header.as_bytes())?;
    let mut buf = Vec::with_capacity(1 << 16);
    for chunk in data.chunks(1 << 13) {
        buf.clear();
        for x in chunk {
            push_le_bytes(x, &mut buf)?;
        }
        writer.write_all(&buf)?;
    }
    Ok(())
}

/// The little-endian descr of an element type.
fn descr_of(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
    }
}

/// Appends the little-endian bytes of `x` (one of the six element types).
fn push_le_bytes<T: Element>(x: &T, out: &mut Vec<u8>) -> std::io::Result<()> {
    let any = x as &dyn Any;
    macro_rules! try_type {
        ($($t:ty),*) => {
            $(if let Some(v) = any.downcast_ref::<$t>() {
                out.extend_from_slice(&v.to_le_bytes());
                return Ok(());
            })*
        };
    }
    try_type!(f32, f64, i32, i64, u32, u64);
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("cannot write element type {} to .npy", T::DTYPE),
    ))
}

/// Byte order of the stored values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ByteOrder {
    Little,
    Big,
}

impl ByteOrder {
    fn native() -> ByteOrder {
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }
}

/// The parsed header of a `.npy` file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Header {
    dtype: DType,
    order: ByteOrder,
    descr: String,
    /// The dimensions.
    shape: Vec<usize>,
    /// Whether the values are stored in Fortran (column-major) order.
    fortran_order: bool,
    /// The number of values: the product of the dimensions.
    len: usize,
    /// Bytes before the data: magic, version, header length and header.
    header_bytes: u64,
    /// Bytes after the header, when the file's size is known.
    data_bytes: Option<u64>,
}

/// Reads a 1-D `.npy` array from `reader`; `path` is for error messages, `size` the number of
/// bytes of the whole file when known.
pub(crate) fn read_vector(
    reader: &mut impl Read,
    path: &Path,
    size: Option<u64>,
) -> Result<Column> {
    let header = read_header(reader, path, size)?;
    if header.shape.len() != 1 {
        return Err(Error::format(
            path,
            format!(
                "unsupported shape {}: only 1-D arrays, of shape (n,), can be read \
                 (flatten the array first, e.g. with numpy's ravel)",
                shape_text(&header.shape)
            ),
        ));
    }
    read_body(reader, path, &header)
}

/// Reads a 1-D or 2-D `.npy` array (2-D in C order) from `reader`, with its shape.
pub(crate) fn read_matrix(
    reader: &mut impl Read,
    path: &Path,
    size: Option<u64>,
) -> Result<NpyArray> {
    read_shaped(reader, path, size, false)
}

/// Reads a `.npy` array of one or more dimensions from `reader`, with its shape, in C or in
/// Fortran order (its values then rearranged into C order).
pub(crate) fn read_matrix_any_order(
    reader: &mut impl Read,
    path: &Path,
    size: Option<u64>,
) -> Result<NpyArray> {
    read_shaped(reader, path, size, true)
}

/// Reads a 1-D or 2-D `.npy` array; a 2-D array stored in Fortran order is refused unless
/// `fortran` allows it, and then returned in C order, as are arrays of more dimensions.
fn read_shaped(
    reader: &mut impl Read,
    path: &Path,
    size: Option<u64>,
    fortran: bool,
) -> Result<NpyArray> {
    let header = read_header(reader, path, size)?;
    match header.shape[..] {
        [_] => {}
        [_, _, _, ..] if fortran => {}
        [rows, cols] if header.fortran_order && rows > 1 && cols > 1 && !fortran => {
            return Err(Error::format(
                path,
                format!(
                    "a {rows} x {cols} array stored in Fortran (column-major) order: only C \
                     order (row-major) can be read (save numpy.ascontiguousarray(a) instead)"
                ),
            ))
        }
        [_, _] => {}
        _ => {
            return Err(Error::format(
                path,
                format!(
                    "unsupported shape {}: only 1-D arrays (n,) and 2-D arrays (rows, cols) \
                     can be read",
                    shape_text(&header.shape)
                ),
            ))
        }
    }
    let mut values = read_body(reader, path, &header)?;
    if header.fortran_order && header.shape.len() > 1 {
        values = to_c_order(values, &header.shape);
    }
    Ok(NpyArray {
        values,
        shape: header.shape,
    })
}

/// The values of an array of `shape` stored in Fortran order (the first index varying
/// fastest), in C order (the last index fastest).
fn to_c_order(column: Column, shape: &[usize]) -> Column {
    fn rearranged<T: Copy>(v: &[T], shape: &[usize]) -> Vec<T> {
        // The Fortran-order strides of the dimensions.
        let strides: Vec<usize> = shape
            .iter()
            .scan(1, |stride, &d| {
                let own = *stride;
                *stride *= d;
                Some(own)
            })
            .collect();
        let mut index = vec![0; shape.len()];
        let mut out = Vec::with_capacity(v.len());
        for _ in 0..v.len() {
            out.push(
                v[index
                    .iter()
                    .zip(&strides)
                    .map(|(i, s)| i * s)
                    .sum::<usize>()],
            );
            // The next index in C order: the last dimension first.
            for (i, &d) in index.iter_mut().zip(shape).rev() {
                *i += 1;
                if *i < d {
                    break;
                }
                *i = 0;
            }
        }
        out
    }
    match column {
        Column::F32(v) => Column::F32(rearranged(&v, shape)),
        Column::F64(v) => Column::F64(rearranged(&v, shape)),
        Column::I32(v) => Column::I32(rearranged(&v, shape)),
        Column::I64(v) => Column::I64(rearranged(&v, shape)),
        Column::U32(v) => Column::U32(rearranged(&v, shape)),
        Column::U64(v) => Column::U64(rearranged(&v, shape)),
    }
}

/// A shape as Python writes it: `(3,)`, `(2, 3)`, `()`.
fn shape_text(shape: &[usize]) -> String {
    Literal::Tuple(shape.iter().map(|&d| Literal::Int(d as i128)).collect()).to_string()
}

/// Reads the values that follow the header, into a [`Column`] of the header's dtype.
fn read_body(reader: &mut impl Read, path: &Path, header: &Header) -> Result<Column> {
    let (n, order) = (header.len, header.order);
    let column = match header.dtype {
        DType::F32 => Column::F32(read_values(reader, path, header, |b| {
            f32::from_bits(u32_of(b, order))
        })?),
        DType::F64 => Column::F64(read_values(reader, path, header, |b| {
            f64::from_bits(u64_of(b, order))
        })?),
        DType::I32 => Column::I32(read_values(reader, path, header, |b| {
            u32_of(b, order) as i32
        })?),
        DType::I64 => Column::I64(read_values(reader, path, header, |b| {
            u64_of(b, order) as i64
        })?),
        DType::U32 => Column::U32(read_values(reader, path, header, |b| u32_of(b, order))?),
        DType::U64 => Column::U64(read_values(reader, path, header, |b| u64_of(b, order))?),
    };
    debug_assert_eq!(column.len(), n);
    Ok(column)
}

fn u32_of(b: &[u8], order: ByteOrder) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    match order {
        ByteOrder::Little => u32::from_le_bytes(a),
        ByteOrder::Big => u32::from_be_bytes(a),
    }
}

fn u64_of(b: &[u8], order: ByteOrder) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    match order {
        ByteOrder::Little => u64::from_le_bytes(a),
        ByteOrder::Big => u64::from_be_bytes(a),
    }
}

/// Reads the `header.len` values that follow the header.
fn read_values<T>(
    reader: &mut impl Read,
    path: &Path,
    header: &Header,
    convert: impl Fn(&[u8]) -> T,
) -> Result<Vec<T>> {
    let size = header.dtype.size_bytes();
    let total = header.len.checked_mul(size).ok_or_else(|| {
        Error::format(
            path,
            format!("the header announces {} values: too many", header.len),
        )
    })?;
    let truncated = |done: u64| {
        Error::format(
            path,
            format!(
                "truncated data: the header announces {} values of dtype '{}' ({} bytes), \
                 but the file ends after {} bytes of data ({} whole values)",
                header.len,
                header.descr,
                total,
                done,
                done / size as u64
            ),
        )
    };
    let mut buf = vec![0u8; 1 << 16];
    let capacity = match header.data_bytes {
        // The file's size is known: check it, then allocate once.
        Some(available) if available < total as u64 => return Err(truncated(available)),
        Some(_) => header.len,
        // Unknown (compressed, a pipe): one buffer's worth, then grow as the values arrive,
        // rather than allocate what the header claims before the data show it.
        None => header.len.min(buf.len() / size),
    };
    let mut out = Vec::new();
    out.try_reserve_exact(capacity).map_err(|_| {
        Error::format(
            path,
            format!(
                "not enough memory for the {} values of the array",
                header.len
            ),
        )
    })?;
    let mut done = 0usize;
    while done < total {
        let want = buf.len().min(total - done);
        let got = read_up_to(reader, &mut buf[..want]).map_err(|e| Error::io(path, e))?;
        out.extend(buf[..got - got % size].chunks_exact(size).map(&convert));
        done += got;
        if got < want {
            return Err(truncated(done as u64));
        }
    }
    Ok(out)
}

/// Reads and checks the magic string, the version and the header dictionary; `size` is the
/// whole file's when known.
fn read_header(reader: &mut impl Read, path: &Path, size: Option<u64>) -> Result<Header> {
    let mut prefix = [0u8; 8];
    let got = read_up_to(reader, &mut prefix).map_err(|e| Error::io(path, e))?;
    if got == 0 {
        return Err(Error::format(
            path,
            "the file is empty: it is not a .npy file",
        ));
    }
    if !prefix[..got].starts_with(MAGIC) {
        let hint = if prefix[..got].starts_with(b"PK\x03\x04") {
            " (it is a zip archive, perhaps a .npz file: extract the array as a .npy file)"
        } else {
            ""
        };
        return Err(Error::format(
            path,
            format!("not a .npy file: it does not start with the magic string \\x93NUMPY{hint}"),
        ));
    }
    if got < 8 {
        return Err(Error::format(path, "truncated .npy header"));
    }
    let (major, minor) = (prefix[6], prefix[7]);
    let len_bytes = match major {
        1 => 2,
        2 | 3 => 4,
        _ => {
            return Err(Error::format(
                path,
                format!(
                    "unsupported .npy format version {major}.{minor} (supported: 1.0, 2.0, 3.0)"
                ),
            ))
        }
    };
    let mut len_buf = [0u8; 4];
    if read_up_to(reader, &mut len_buf[..len_bytes]).map_err(|e| Error::io(path, e))? < len_bytes {
        return Err(Error::format(path, "truncated .npy header"));
    }
    let header_len = u32::from_le_bytes(len_buf) as usize;
    if header_len > MAX_HEADER_LEN {
        return Err(Error::format(
            path,
            format!("the .npy header is {header_len} bytes long: not a plausible header"),
        ));
    }
    // Read before it is kept, not allocated at the length the file claims.
    let mut raw = Vec::new();
    reader
        .take(header_len as u64)
        .read_to_end(&mut raw)
        .map_err(|e| Error::io(path, e))?;
    if raw.len() < header_len {
        return Err(Error::format(
            path,
            format!("truncated .npy header (it announces {header_len} bytes)"),
        ));
    }
    let text: String = if major >= 3 {
        String::from_utf8(raw)
            .map_err(|_| Error::format(path, "the .npy header is not valid UTF-8"))?
    } else {
        // Versions 1 and 2 are latin-1.
        raw.iter().map(|&b| b as char).collect()
    };
    let mut header = parse_header(&text).map_err(|message| Error::format(path, message))?;
    header.header_bytes = (MAGIC.len() + 2 + len_bytes + header_len) as u64;
    header.data_bytes = size.map(|s| s.saturating_sub(header.header_bytes));
    Ok(header)
}

/// Parses the header dictionary, e.g. `{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }`.
fn parse_header(text: &str) -> std::result::Result<Header, String> {
    let mut parser = Parser::new(text);
    let dict = match parser.value() {
        Ok(Literal::Dict(entries)) => entries,
        Ok(_) => {
            return Err(format!(
                "the .npy header is not a dictionary: {}",
                text.trim()
            ))
        }
        Err(e) => return Err(format!("unreadable .npy header ({e}): {}", text.trim())),
    };
    if !parser.at_end() {
        return Err(format!(
            "unreadable .npy header (text after the dictionary): {}",
            text.trim()
        ));
    }
    // numpy's header parser builds a Python dict, which keeps the last of repeated keys; a
    // header that gives a key twice is refused rather than read either way.
    if let Some((key, _)) = dict
        .iter()
        .enumerate()
        .find_map(|(i, (key, _))| dict[..i].iter().find(|(k, _)| k == key))
    {
        return Err(format!(
            "the .npy header gives the key {key} more than once: {}",
            text.trim()
        ));
    }
    let get = |key: &str| {
        dict.iter()
            .find(|(k, _)| matches!(k, Literal::Str(s) if s == key))
            .map(|(_, v)| v)
            .ok_or_else(|| format!("the .npy header has no '{key}' entry: {}", text.trim()))
    };
    let descr = match get("descr")? {
        Literal::Str(s) => s.clone(),
        Literal::List(_) => {
            return Err(format!(
                "unsupported dtype: a structured (record) dtype; supported: {SUPPORTED}"
            ))
        }
        other => return Err(format!("unreadable dtype {other} in the .npy header")),
    };
    let (dtype, order) = parse_descr(&descr)?;
    let fortran_order = match get("fortran_order")? {
        Literal::Bool(b) => *b,
        other => {
            return Err(format!(
                "unreadable fortran_order {other} in the .npy header"
            ))
        }
    };
    let shape_literal = get("shape")?;
    let shape = match shape_literal {
        Literal::Tuple(items) | Literal::List(items) => items
            .iter()
            .map(|d| match d {
                Literal::Int(n) => usize::try_from(*n).ok(),
                _ => None,
            })
            .collect::<Option<Vec<usize>>>(),
        _ => None,
    }
    .ok_or_else(|| format!("unreadable shape {shape_literal} in the .npy header"))?;
    let len = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| {
            format!(
                "the header announces {} values: too many",
                shape_text(&shape)
            )
        })?;
    Ok(Header {
        dtype,
        order,
        descr,
        shape,
        fortran_order,
        len,
        header_bytes: 0,
        data_bytes: None,
    })
}

/// Parses a dtype string such as `<f8` into the element type and byte order.
fn parse_descr(descr: &str) -> std::result::Result<(DType, ByteOrder), String> {
    let (order, code) = match descr.chars().next() {
        Some('<') => (ByteOrder::Little, &descr[1..]),
        Some('>') => (ByteOrder::Big, &descr[1..]),
        Some('|') | Some('=') => (ByteOrder::native(), &descr[1..]),
        _ => (ByteOrder::native(), descr),
    };
    let dtype = match code {
        "f4" => DType::F32,
        "f8" => DType::F64,
        "i4" => DType::I32,
        "i8" => DType::I64,
        "u4" => DType::U32,
        "u8" => DType::U64,
        _ => {
            return Err(format!(
                "unsupported dtype '{descr}'{}; supported: {SUPPORTED}",
                describe_code(code)
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            ))
        }
    };
    Ok((dtype, order))
}

/// What an unsupported numpy type code is, when it is a common one.
fn describe_code(code: &str) -> Option<&'static str> {
    Some(match code {
        "f2" => "16-bit float",
        "f12" | "f16" => "extended-precision float",
        "c8" => "64-bit complex",
        "c16" => "128-bit complex",
        "c32" => "256-bit complex",
        "b1" => "bool",
        "i1" => "8-bit signed integer",
        "i2" => "16-bit signed integer",
        "u1" => "8-bit unsigned integer",
        "u2" => "16-bit unsigned integer",
        "O" | "O8" => "Python objects",
        _ if code.starts_with('S') || code.starts_with('a') => "byte strings",
        _ if code.starts_with('U') => "unicode strings",
        _ if code.starts_with('V') => "raw bytes",
        _ if code.starts_with("M8") => "datetime",
        _ if code.starts_with("m8") => "timedelta",
        _ => return None,
    })
}

/// The Python literals a `.npy` header uses.
#[derive(Clone, Debug, PartialEq)]
enum Literal {
    Str(String),
    Int(i128),
    Bool(bool),
    None,
    Tuple(Vec<Literal>),
    List(Vec<Literal>),
    Dict(Vec<(Literal, Literal)>),
}

impl std::fmt::Display for Literal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn items(f: &mut std::fmt::Formatter<'_>, list: &[Literal]) -> std::fmt::Result {
            for (i, item) in list.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{item}")?;
            }
            Ok(())
        }
        match self {
            Literal::Str(s) => write!(f, "'{s}'"),
            Literal::Int(n) => write!(f, "{n}"),
            Literal::Bool(true) => f.write_str("True"),
            Literal::Bool(false) => f.write_str("False"),
            Literal::None => f.write_str("None"),
            Literal::Tuple(list) => {
                f.write_str("(")?;
                items(f, list)?;
                if list.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            Literal::List(list) => {
                f.write_str("[")?;
                items(f, list)?;
                f.write_str("]")
            }
            Literal::Dict(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// A recursive-descent parser for the Python literal subset of `.npy` headers.
struct Parser<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            chars: text.chars().peekable(),
            depth: 0,
        }
    }

    fn skip_space(&mut self) {
        while self.chars.peek().is_some_and(|c| c.is_whitespace()) {
            self.chars.next();
        }
    }

    fn at_end(&mut self) -> bool {
        self.skip_space();
        self.chars.peek().is_none()
    }

    fn value(&mut self) -> std::result::Result<Literal, String> {
        self.skip_space();
        if self.depth > 32 {
            return Err("nested too deeply".into());
        }
        match self.chars.peek().copied() {
            None => Err("unexpected end".into()),
            Some('{') => {
                self.chars.next();
                self.depth += 1;
                let mut entries = Vec::new();
                loop {
                    self.skip_space();
                    if self.chars.peek() == Some(&'}') {
                        self.chars.next();
                        break;
                    }
                    let key = self.value()?;
                    self.skip_space();
                    if self.chars.next() != Some(':') {
                        return Err("expected ':'".into());
                    }
                    let value = self.value()?;
                    entries.push((key, value));
                    if !self.separator('}')? {
                        break;
                    }
                }
                self.depth -= 1;
                Ok(Literal::Dict(entries))
            }
            Some(open @ ('(' | '[')) => {
                self.chars.next();
                self.depth += 1;
                let close = if open == '(' { ')' } else { ']' };
                let mut list = Vec::new();
                loop {
                    self.skip_space();
                    if self.chars.peek() == Some(&close) {
                        self.chars.next();
                        break;
                    }
                    list.push(self.value()?);
                    if !self.separator(close)? {
                        break;
                    }
                }
                self.depth -= 1;
                Ok(if open == '(' {
                    Literal::Tuple(list)
                } else {
                    Literal::List(list)
                })
            }
            Some(quote @ ('\'' | '"')) => {
                self.chars.next();
                let mut s = String::new();
                loop {
                    match self.chars.next() {
                        None => return Err("unterminated string".into()),
                        Some(c) if c == quote => break,
                        Some('\\') => match self.chars.next() {
                            Some(c) => s.push(c),
                            None => return Err("unterminated string".into()),
                        },
                        Some(c) => s.push(c),
                    }
                }
                Ok(Literal::Str(s))
            }
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' => {
                let mut s = String::new();
                while let Some(&c) = self.chars.peek() {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '+' || c == '_' {
                        s.push(c);
                        self.chars.next();
                    } else {
                        break;
                    }
                }
                // Python 2 wrote long integers with an `L` suffix.
                let digits = s.strip_suffix('L').unwrap_or(&s).replace('_', "");
                digits
                    .parse::<i128>()
                    .map(Literal::Int)
                    .map_err(|_| format!("bad integer `{s}`"))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let mut s = String::new();
                while let Some(&c) = self.chars.peek() {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        s.push(c);
                        self.chars.next();
                    } else {
                        break;
                    }
                }
                match s.as_str() {
                    "True" => Ok(Literal::Bool(true)),
                    "False" => Ok(Literal::Bool(false)),
                    "None" => Ok(Literal::None),
                    _ => Err(format!("unexpected name `{s}`")),
                }
            }
            Some(c) => Err(format!("unexpected character `{c}`")),
        }
    }

    /// After an item: a comma (true: more may follow) or the closing bracket (false).
    fn separator(&mut self, close: char) -> std::result::Result<bool, String> {
        self.skip_space();
        match self.chars.next() {
            Some(',') => Ok(true),
            Some(c) if c == close => Ok(false),
            Some(c) => Err(format!("expected ',' or '{close}', found `{c}`")),
            None => Err(format!("expected ',' or '{close}'")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn parts_put_together_are_the_whole_array() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..12usize {
            let path = dir.path().join(format!("v{n}.npy"));
            let values: Vec<i64> = (0..n as i64).map(|i| i * 3 - 7).collect();
            write_npy(&path, &values).unwrap();
            for parts in 1..=5 {
                let mut joined = Vec::new();
                for part in 0..parts {
                    let p = read_npy_part(&path, part, parts).unwrap();
                    assert_eq!((p.offset, p.total), (joined.len(), n));
                    let Column::I64(v) = p.values else { panic!() };
                    joined.extend(v);
                }
                assert_eq!(joined, values, "n={n} parts={parts}");
            }
        }
        // Big-endian values, and a file shorter than its header says.
        let big = dir.path().join("big.npy");
        let data: Vec<u8> = [1.5f64, -2.0, 4.0]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        std::fs::write(
            &big,
            npy_bytes(
                1,
                "{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }",
                &data,
            ),
        )
        .unwrap();
        assert_eq!(
            read_npy_part(&big, 1, 2).unwrap().values,
            Column::F64(vec![-2.0, 4.0])
        );
        let short = dir.path().join("short.npy");
        std::fs::write(
            &short,
            npy_bytes(
                1,
                "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }",
                &data,
            ),
        )
        .unwrap();
        let err = read_npy_part(&short, 0, 2).unwrap_err().to_string();
        assert!(err.contains("truncated"), "{err}");
        let gz = dir.path().join("x.npy.gz");
        write_npy(&gz, &[1u32]).unwrap();
        assert!(read_npy_part(&gz, 0, 1)
            .unwrap_err()
            .to_string()
            .contains("gzip"));
    }

    /// A `.npy` file with `header` (padded) and `data` as is.
    fn npy_bytes(major: u8, header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_string();
        let len_bytes = if major == 1 { 2 } else { 4 };
        let unpadded = 6 + 2 + len_bytes + h.len() + 1;
        h.push_str(&" ".repeat((64 - unpadded % 64) % 64));
        h.push('\n');
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[major, 0]);
        if major == 1 {
            out.extend_from_slice(&(h.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(h.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn parse(bytes: &[u8]) -> Result<Column> {
        let path = PathBuf::from("mem.npy");
        let unsized_result = read_vector(&mut &bytes[..], &path, None);
        let sized_result = read_vector(&mut &bytes[..], &path, Some(bytes.len() as u64));
        assert_eq!(
            format!("{unsized_result:?}"),
            format!("{sized_result:?}"),
            "the same with and without the file size"
        );
        sized_result
    }

    fn err(bytes: &[u8]) -> String {
        match parse(bytes) {
            Err(e) => e.to_string(),
            Ok(c) => panic!("expected an error, got {c:?}"),
        }
    }

    fn roundtrip<T: Element>(values: &[T]) -> Column {
        let mut bytes = Vec::new();
        write_npy_to(&mut bytes, values).unwrap();
        assert_eq!((bytes.len() - values.len() * T::DTYPE.size_bytes()) % 64, 0);
        parse(&bytes).unwrap()
    }

    #[test]
    fn roundtrip_every_dtype() {
        let f32s = [1.5f32, -0.0, f32::NEG_INFINITY, f32::MIN_POSITIVE, 1e-45];
        assert_eq!(roundtrip(&f32s), Column::F32(f32s.to_vec()));
        let f64s = [1e300, -5e-324, f64::INFINITY, 0.1];
        assert_eq!(roundtrip(&f64s), Column::F64(f64s.to_vec()));
        assert_eq!(
            roundtrip(&[i32::MIN, 0, i32::MAX]),
            Column::I32(vec![i32::MIN, 0, i32::MAX])
        );
        assert_eq!(
            roundtrip(&[i64::MIN, -1, i64::MAX]),
            Column::I64(vec![i64::MIN, -1, i64::MAX])
        );
        assert_eq!(roundtrip(&[0u32, u32::MAX]), Column::U32(vec![0, u32::MAX]));
        let big = [(1u64 << 53) + 1, u64::MAX];
        assert_eq!(roundtrip(&big), Column::U64(big.to_vec()));
        assert_eq!(roundtrip::<f64>(&[]), Column::F64(vec![]));
    }

    #[test]
    fn nan_bits_are_kept() {
        let nan = f64::from_bits(0xFFF8_0000_0000_1234);
        match roundtrip(&[nan]) {
            Column::F64(v) => assert_eq!(v[0].to_bits(), nan.to_bits()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn numpy_header_is_reproduced() {
        let mut bytes = Vec::new();
        write_npy_to(&mut bytes, &[1.5f64, 2.0]).unwrap();
        let header = String::from_utf8_lossy(&bytes[10..bytes.len() - 16]).to_string();
        assert_eq!(
            header.trim_end(),
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"
        );
        assert!(header.ends_with('\n'));
    }

    #[test]
    fn big_endian_and_native_orders() {
        let data: Vec<u8> = [1i32, -2].iter().flat_map(|x| x.to_be_bytes()).collect();
        let bytes = npy_bytes(
            1,
            "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
            &data,
        );
        assert_eq!(parse(&bytes).unwrap(), Column::I32(vec![1, -2]));
        let data: Vec<u8> = [2.5f64, -1e300]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        let bytes = npy_bytes(
            1,
            "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }",
            &data,
        );
        assert_eq!(parse(&bytes).unwrap(), Column::F64(vec![2.5, -1e300]));
        let data: Vec<u8> = [7u64, u64::MAX - 1]
            .iter()
            .flat_map(|x| x.to_ne_bytes())
            .collect();
        for descr in ["=u8", "|u8", "u8"] {
            let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (2,), }}");
            let bytes = npy_bytes(1, &header, &data);
            assert_eq!(parse(&bytes).unwrap(), Column::U64(vec![7, u64::MAX - 1]));
        }
        let data: Vec<u8> = [3.25f32].iter().flat_map(|x| x.to_be_bytes()).collect();
        let bytes = npy_bytes(
            1,
            "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
            &data,
        );
        assert_eq!(parse(&bytes).unwrap(), Column::F32(vec![3.25]));
        let data: Vec<u8> = [9u32].iter().flat_map(|x| x.to_be_bytes()).collect();
        let bytes = npy_bytes(
            1,
            "{'descr': '>u4', 'fortran_order': False, 'shape': (1,), }",
            &data,
        );
        assert_eq!(parse(&bytes).unwrap(), Column::U32(vec![9]));
        let data: Vec<u8> = [-9i64].iter().flat_map(|x| x.to_be_bytes()).collect();
        let bytes = npy_bytes(
            1,
            "{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }",
            &data,
        );
        assert_eq!(parse(&bytes).unwrap(), Column::I64(vec![-9]));
    }

    #[test]
    fn versions_2_and_3_and_header_variants() {
        let data: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        for major in [2, 3] {
            let bytes = npy_bytes(
                major,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                &data,
            );
            assert_eq!(parse(&bytes).unwrap(), Column::F32(vec![1.0, 2.0]));
        }
        // Any key order, double quotes, fortran order (the same for 1-D), no trailing comma,
        // Python 2's long suffix.
        let bytes = npy_bytes(
            1,
            r#"{"shape": (2L,), "fortran_order": True, "descr": "<f4"}"#,
            &data,
        );
        assert_eq!(parse(&bytes).unwrap(), Column::F32(vec![1.0, 2.0]));
        // Trailing bytes after the data are ignored, as numpy.load does.
        let mut more = data.clone();
        more.extend_from_slice(b"junk");
        let bytes = npy_bytes(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
            &more,
        );
        assert_eq!(parse(&bytes).unwrap(), Column::F32(vec![1.0, 2.0]));
    }

    #[test]
    fn errors_are_clear() {
        assert!(err(b"").contains("empty"));
        assert!(err(b"\x93NUMPY\x01").contains("truncated"));
        assert!(err(b"hello world").contains("magic"));
        assert!(err(b"PK\x03\x04rest").contains("zip"));
        assert!(err(b"\x93NUMPY\x04\x00\x10\x00").contains("version 4.0"));
        assert!(err(b"\x93NUMPY\x01\x00\x50\x00{'descr'").contains("truncated .npy header"));

        let header = |descr: &str, shape: &str| {
            format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}")
        };
        let e = err(&npy_bytes(1, &header("'<f2'", "(3,)"), &[0; 6]));
        assert!(
            e.contains("'<f2'") && e.contains("16-bit float") && e.contains("f8 (f64)"),
            "{e}"
        );
        let e = err(&npy_bytes(1, &header("'<c8'", "(1,)"), &[0; 8]));
        assert!(e.contains("'<c8'") && e.contains("complex"), "{e}");
        let e = err(&npy_bytes(1, &header("'|b1'", "(1,)"), &[0; 1]));
        assert!(e.contains("bool"), "{e}");
        let e = err(&npy_bytes(
            1,
            &header("[('a', '<f4'), ('b', '<i8')]", "(1,)"),
            &[0; 12],
        ));
        assert!(e.contains("structured"), "{e}");
        let e = err(&npy_bytes(1, &header("'<f4'", "(2, 3)"), &[0; 24]));
        assert!(e.contains("shape (2, 3)") && e.contains("1-D"), "{e}");
        let e = err(&npy_bytes(1, &header("'<f4'", "()"), &[0; 4]));
        assert!(e.contains("shape ()"), "{e}");
        let e = err(&npy_bytes(1, &header("'<f4'", "(3, 1)"), &[0; 12]));
        assert!(e.contains("shape (3, 1)"), "{e}");
        let e = err(&npy_bytes(1, &header("'<f8'", "(3,)"), &[0; 20]));
        assert!(
            e.contains("truncated data") && e.contains("3 values") && e.contains("20 bytes"),
            "{e}"
        );
        let e = err(&npy_bytes(1, &header("'<f8'", "(-1,)"), &[]));
        assert!(e.contains("shape"), "{e}");
        let e = err(&npy_bytes(1, "{'descr': '<f8', 'shape': (1,)}", &[0; 8]));
        assert!(e.contains("fortran_order"), "{e}");
        let e = err(&npy_bytes(1, "['not', 'a', 'dict']", &[]));
        assert!(e.contains("not a dictionary"), "{e}");
        let e = err(&npy_bytes(
            1,
            "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1,)}",
            &[0; 8],
        ));
        assert!(e.contains("unreadable"), "{e}");
        let e = err(&npy_bytes(
            1,
            &header("'<f8'", &format!("({},)", u64::MAX)),
            &[],
        ));
        assert!(e.contains("too many") || e.contains("truncated"), "{e}");
        assert!(err(b"\x93NUMPY\x02\x00\xff\xff\xff\xff").contains("plausible"));
        let mut bad_utf8 = npy_bytes(3, &header("'<f8'", "(0,)"), &[]);
        bad_utf8[14] = 0xff;
        assert!(err(&bad_utf8).contains("UTF-8"));
    }

    fn parse_array(bytes: &[u8]) -> Result<NpyArray> {
        let path = PathBuf::from("mem.npy");
        let unsized_result = read_matrix(&mut &bytes[..], &path, None);
        let sized_result = read_matrix(&mut &bytes[..], &path, Some(bytes.len() as u64));
        assert_eq!(format!("{unsized_result:?}"), format!("{sized_result:?}"));
        sized_result
    }

    #[test]
    fn two_dimensional_arrays_in_c_order() {
        let data: Vec<u8> = (0..6i32).flat_map(|x| x.to_le_bytes()).collect();
        let header = |shape: &str, fortran: &str| {
            format!("{{'descr': '<i4', 'fortran_order': {fortran}, 'shape': {shape}, }}")
        };
        let array = parse_array(&npy_bytes(1, &header("(2, 3)", "False"), &data)).unwrap();
        assert_eq!(array.shape, vec![2, 3]);
        assert_eq!(array.values, Column::I32(vec![0, 1, 2, 3, 4, 5]));
        // One row or one column: both orders store the same bytes.
        for shape in ["(6, 1)", "(1, 6)"] {
            let array = parse_array(&npy_bytes(1, &header(shape, "True"), &data)).unwrap();
            assert_eq!(array.values, Column::I32(vec![0, 1, 2, 3, 4, 5]));
        }
        let array = parse_array(&npy_bytes(1, &header("(0, 4)", "False"), &[])).unwrap();
        assert_eq!(
            (array.shape, array.values),
            (vec![0, 4], Column::I32(vec![]))
        );
        let array = parse_array(&npy_bytes(1, &header("(6,)", "False"), &data)).unwrap();
        assert_eq!(array.shape, vec![6]);

        let e = parse_array(&npy_bytes(1, &header("(2, 3)", "True"), &data))
            .unwrap_err()
            .to_string();
        assert!(e.contains("Fortran") && e.contains("2 x 3"), "{e}");
        let e = parse_array(&npy_bytes(1, &header("(1, 2, 3)", "False"), &data))
            .unwrap_err()
            .to_string();
        assert!(e.contains("shape (1, 2, 3)") && e.contains("2-D"), "{e}");
        let e = parse_array(&npy_bytes(1, &header("()", "False"), &data[..4]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("shape ()"), "{e}");
        let e = parse_array(&npy_bytes(1, &header("(3, 3)", "False"), &data))
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated") && e.contains("9 values"), "{e}");
        let huge = format!("({}, {})", u64::MAX / 2, 4);
        let e = parse_array(&npy_bytes(1, &header(&huge, "False"), &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("too many"), "{e}");
        // The 1-D reader still refuses 2-D arrays.
        assert!(err(&npy_bytes(1, &header("(2, 3)", "False"), &data)).contains("1-D"));
    }

    #[test]
    fn two_dimensional_arrays_in_fortran_order_when_allowed() {
        let data: Vec<u8> = (0..6i32).flat_map(|x| x.to_le_bytes()).collect();
        let bytes = npy_bytes(
            1,
            "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
            &data,
        );
        let path = PathBuf::from("mem.npy");
        let sized = read_matrix_any_order(&mut &bytes[..], &path, Some(bytes.len() as u64));
        let unsized_ = read_matrix_any_order(&mut &bytes[..], &path, None);
        assert_eq!(format!("{sized:?}"), format!("{unsized_:?}"));
        // Column-major [[0, 2, 4], [1, 3, 5]], returned row after row.
        let array = sized.unwrap();
        assert_eq!(array.shape, vec![2, 3]);
        assert_eq!(array.values, Column::I32(vec![0, 2, 4, 1, 3, 5]));
        // C order is read as it is, and the plain reader still refuses Fortran order.
        let c = npy_bytes(
            1,
            "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
            &data,
        );
        let array = read_matrix_any_order(&mut &c[..], &path, None).unwrap();
        assert_eq!(array.values, Column::I32(vec![0, 1, 2, 3, 4, 5]));
        assert!(read_matrix(&mut &bytes[..], &path, None).is_err());
    }

    #[test]
    fn arrays_of_more_dimensions_in_either_order_when_allowed() {
        let data: Vec<u8> = (0..24i32).flat_map(|x| x.to_le_bytes()).collect();
        let path = PathBuf::from("mem.npy");
        let header = |order: &str| {
            format!("{{'descr': '<i4', 'fortran_order': {order}, 'shape': (2, 3, 4), }}")
        };
        // C order: as stored.
        let c = npy_bytes(1, &header("False"), &data);
        let array = read_matrix_any_order(&mut &c[..], &path, None).unwrap();
        assert_eq!(array.shape, vec![2, 3, 4]);
        assert_eq!(array.values, Column::I32((0..24).collect()));
        // Fortran order: entry (p, i, j) stored at p + 2 i + 6 j, returned at 12 p + 4 i + j.
        let f = npy_bytes(1, &header("True"), &data);
        let array = read_matrix_any_order(&mut &f[..], &path, None).unwrap();
        let want: Vec<i32> = (0..2)
            .flat_map(|p| (0..3).flat_map(move |i| (0..4).map(move |j| p + 2 * i + 6 * j)))
            .collect();
        assert_eq!(array.values, Column::I32(want));
        // The C-order reader of matrices refuses them.
        let err = read_matrix(&mut &c[..], &path, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unsupported shape (2, 3, 4)"), "{err}");
    }

    #[test]
    fn matrices_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.npy.gz");
        write_npy_matrix(&path, &[1.5f64, -0.0, f64::INFINITY, 7.0], 2, 2).unwrap();
        let array = read_npy_array(&path).unwrap();
        assert_eq!(array.shape, vec![2, 2]);
        match array.values {
            Column::F64(v) => assert_eq!(
                v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                [1.5f64, -0.0, f64::INFINITY, 7.0]
                    .map(f64::to_bits)
                    .to_vec()
            ),
            other => panic!("{other:?}"),
        }
        let path = dir.path().join("m.npy");
        write_npy_matrix(&path, &[u64::MAX, 0, 1], 3, 1).unwrap();
        let array = read_npy_array(&path).unwrap();
        assert_eq!(array.values, Column::U64(vec![u64::MAX, 0, 1]));
        assert_eq!(array.shape, vec![3, 1]);
        write_npy_matrix::<i64>(&path, &[], 0, 5).unwrap();
        assert_eq!(read_npy_array(&path).unwrap().shape, vec![0, 5]);
        assert!(write_npy_matrix(&path, &[1i32, 2, 3], 2, 2).is_err());
        let mut bytes = Vec::new();
        write_shaped(&mut bytes, &[1i32, 2, 3, 4, 5, 6], "(3, 2)").unwrap();
        let header = String::from_utf8_lossy(&bytes[10..bytes.len() - 24]).to_string();
        assert_eq!(
            header.trim_end(),
            "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 2), }"
        );
    }

    #[test]
    fn npy_header_with_duplicate_keys_is_an_error() {
        let data: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        // numpy reads the last 'shape', (2,); the first would give one value.
        let e = err(&npy_bytes(
            1,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'shape': (2,), }",
            &data,
        ));
        assert!(e.contains("'shape' more than once"), "{e}");
        let e = err(&npy_bytes(
            1,
            "{'descr': '<f8', 'fortran_order': False, 'descr': '<i8', 'shape': (2,)}",
            &data,
        ));
        assert!(e.contains("'descr' more than once"), "{e}");
    }

    /// `npy` compressed by gzip at `level`.
    fn gzipped(npy: &[u8], level: flate2::Compression) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), level);
        gz.write_all(npy).unwrap();
        gz.finish().unwrap()
    }

    fn read_gz(bytes: &[u8]) -> Result<Column> {
        read_npy_from(bytes, "mem.npy.gz")
    }

    #[test]
    fn npy_gz_with_a_bad_checksum_is_an_error() {
        let mut npy = Vec::new();
        write_npy_to(&mut npy, &[1.0f64, 2.0, 3.0]).unwrap();
        // Stored (uncompressed) deflate blocks: a changed value byte still decodes, to another
        // value; only the checksum tells.
        let good = gzipped(&npy, flate2::Compression::none());
        assert_eq!(read_gz(&good).unwrap(), Column::F64(vec![1.0, 2.0, 3.0]));
        let mut bad = good.clone();
        let last_value_byte = bad.len() - 8 - 1;
        bad[last_value_byte] ^= 0x40;
        let e = read_gz(&bad).unwrap_err().to_string();
        assert!(
            e.starts_with("mem.npy.gz: ") && e.contains("corrupt") && e.contains("checksum"),
            "{e}"
        );
        // The checksum itself altered.
        let mut bad = gzipped(&npy, flate2::Compression::default());
        let crc = bad.len() - 8;
        bad[crc] ^= 1;
        assert!(read_gz(&bad).unwrap_err().to_string().contains("checksum"));
        // The trailer cut off, and the stream cut inside the values.
        let e = read_gz(&good[..good.len() - 4]).unwrap_err().to_string();
        assert!(e.contains("gzip"), "{e}");
        assert!(read_gz(&good[..good.len() - 12]).is_err());
        // Bytes after the values inside a whole gzip stream are still allowed.
        let mut more = npy.clone();
        more.extend_from_slice(b"another array");
        let extra = gzipped(&more, flate2::Compression::fast());
        assert_eq!(read_gz(&extra).unwrap(), Column::F64(vec![1.0, 2.0, 3.0]));
        let array = read_npy_array_from(&extra[..], "mem.npy.gz").unwrap();
        assert_eq!(array.shape, vec![3]);
    }

    #[test]
    fn values_a_header_claims_are_allocated_as_they_arrive() {
        // 10^15 values announced, 16 bytes there: truncated, with no allocation of 8 PB,
        // whether the length is known or not.
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000000,), }";
        let e = err(&npy_bytes(1, header, &[0; 16]));
        assert!(
            e.contains("truncated data") && e.contains("16 bytes"),
            "{e}"
        );
        let bytes = npy_bytes(1, header, &[0; 16]);
        let e = read_npy_from(&bytes[..], "<stdin>")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("<stdin>: truncated data"), "{e}");
        let header = "{'descr': '<i4', 'fortran_order': False, 'shape': (0, 1000000000000000), }";
        let array = parse_array(&npy_bytes(1, header, &[])).unwrap();
        assert_eq!(array.shape, vec![0, 1_000_000_000_000_000]);
        assert!(array.values.is_empty());
    }

    #[test]
    fn literal_display_is_python_like() {
        let mut p = Parser::new("{'a': (1,), 'b': [True, None], 'c': ()}");
        let v = p.value().unwrap();
        assert_eq!(v.to_string(), "{'a': (1,), 'b': [True, None], 'c': ()}");
    }
}

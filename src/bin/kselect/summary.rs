//! What the output of every command begins with: the file and its values, the device, and the
//! algorithm that ran and its time.

use std::fmt::Write as _;
use std::path::Path;

use kselect::io::FileFormat;
use kselect::{DType, Device, Element, NanPolicy};
use serde::Serialize;

/// What the output says about the input and the device, the same for every command.
pub struct Input {
    /// The file as given on the command line.
    pub file: String,
    /// The file's format, `npy` or `csv`.
    pub format: &'static str,
    /// The CSV column read (none for a `.npy` file).
    pub column: Option<String>,
    /// The name of the NaN policy.
    pub nan_policy: &'static str,
    /// `cpu` or `cuda`.
    pub backend: &'static str,
    /// The device's description.
    pub device: String,
}

impl Input {
    /// How the output describes `file` (a `format` file, its `column` for CSV) read under
    /// `nan_policy`, and `device`.
    pub fn new(
        file: &Path,
        format: FileFormat,
        column: Option<String>,
        nan_policy: NanPolicy,
        device: &Device,
    ) -> Input {
        Input {
            file: file.display().to_string(),
            format: format.name(),
            column,
            nan_policy: nan_policy.name(),
            backend: device.backend_name(),
            device: device.description(),
        }
    }
}

/// What the file holds: the element type, the number of values and of NaNs.
pub struct Contents {
    /// The element type of the file.
    pub dtype: DType,
    /// Values in the file (NaNs included).
    pub n: usize,
    /// NaN values in the file.
    pub nan_count: usize,
}

impl Contents {
    /// What `data` holds; integer data holds no NaNs.
    pub fn of<T: Element>(data: &[T]) -> Contents {
        let nan_count = if T::DTYPE.is_float() {
            data.iter().filter(|x| x.is_nan()).count()
        } else {
            0
        };
        Contents {
            dtype: T::DTYPE,
            n: data.len(),
            nan_count,
        }
    }
}

/// What every command measures: what the file holds, and the algorithm of the selection and
/// its time.
pub struct Measured {
    /// What the file holds.
    pub contents: Contents,
    /// The algorithm that ran.
    pub algorithm: String,
    /// Wall time of the selection alone.
    pub seconds: f64,
}

/// The summary lines: the file, its values and NaNs, the backend, the algorithm and its time.
pub fn summary(input: &Input, measured: &Measured) -> String {
    let contents = &measured.contents;
    let mut s = String::new();
    let column = input
        .column
        .as_ref()
        .map(|c| format!(", column {c}"))
        .unwrap_or_default();
    let nans = match (contents.nan_count, input.nan_policy) {
        (0, _) => String::new(),
        (count, "omit") => format!(", {count} NaN (omitted)"),
        (count, _) => format!(", {count} NaN (ordered last)"),
    };
    let _ = writeln!(s, "file:      {} ({}{column})", input.file, input.format);
    let _ = writeln!(
        s,
        "values:    {} of type {}{nans}",
        contents.n, contents.dtype
    );
    let _ = writeln!(s, "backend:   {} ({})", input.backend, input.device);
    let _ = writeln!(
        s,
        "algorithm: {}, {:.6} s for the selection",
        measured.algorithm, measured.seconds
    );
    s
}

/// The fields every command's JSON object begins with: file, format, column (CSV only), dtype,
/// n, nan_count and nan_policy.
#[derive(Serialize)]
pub struct InputFields<'a> {
    file: &'a str,
    format: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<&'a str>,
    dtype: &'static str,
    n: usize,
    nan_count: usize,
    nan_policy: &'a str,
}

impl<'a> InputFields<'a> {
    /// The fields of `input`, whose values `measured` describes.
    pub fn new(input: &'a Input, measured: &Measured) -> InputFields<'a> {
        let contents = &measured.contents;
        InputFields {
            file: &input.file,
            format: input.format,
            column: input.column.as_deref(),
            dtype: contents.dtype.name(),
            n: contents.n,
            nan_count: contents.nan_count,
            nan_policy: input.nan_policy,
        }
    }
}

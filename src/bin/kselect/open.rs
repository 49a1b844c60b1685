//! The input of every command: `FILE`, or standard input when `FILE` is `-`, opened once and
//! read once, with progress on standard error for long reads (see [`crate::progress`]).

use std::path::Path;

use kselect::io::{open_file, Source};
use kselect::{Error, Result};

use crate::progress;

/// The name standard input goes by in the output and in error messages.
pub const STDIN_NAME: &str = "<stdin>";

/// Opens `file` (`-`: standard input) as a source of data. A regular file's length lets a
/// `.npy` array be checked against its header before its values are read.
pub fn open(file: &Path) -> Result<Source<'static>> {
    if file == Path::new("-") {
        let stdin = progress::reading(std::io::stdin().lock(), None, STDIN_NAME);
        return Source::from_reader(stdin, STDIN_NAME);
    }
    let (opened, length) = open_file(file)?;
    let name = file.display().to_string();
    let source = Source::from_reader(progress::reading(opened, length, &name), file)?;
    Ok(match length {
        Some(bytes) => source.with_length(bytes),
        None => source,
    })
}

/// `e`, an error about the contents of `file` (its points, a matrix's entries), as a format
/// error with the file's name; other errors as they are.
pub fn naming(e: Error, file: &Path) -> Error {
    match e {
        Error::InvalidArgument(message) => Error::Format {
            path: file.to_path_buf(),
            message,
        },
        Error::Recovery(e) => Error::Format {
            path: file.to_path_buf(),
            message: e.to_string(),
        },
        Error::Knn(e) => Error::Format {
            path: file.to_path_buf(),
            message: e.to_string(),
        },
        other => other,
    }
}

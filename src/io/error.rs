//! [`FileError`]: a request to the data-file readers and writers that the file or the data
//! cannot meet.

use std::path::PathBuf;

/// A request to the readers and writers of data files that the file or the data cannot meet:
/// a part beyond the parts, a shape that is not the data's, a column a file cannot give
/// (`kselect::Error::File`). The messages name the numbers and files involved.
///
/// ```
/// use kselect::io::{npy::write_npy_matrix, FileError};
/// use kselect::Error;
/// let path = std::env::temp_dir().join("kselect-file-error-doc.npy");
/// let err = write_npy_matrix(&path, &[0.5f32, 1.5], 3, 2).unwrap_err();
/// assert!(matches!(err, Error::File(FileError::ShapeMismatch { len: 2, rows: 3, cols: 2 })));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// A part number not below the number of parts.
    #[error("part {part} of {parts} does not exist (parts are numbered from 0)")]
    NoSuchPart {
        /// The part asked for.
        part: usize,
        /// The parts.
        parts: usize,
    },
    /// Data whose length is not `rows × cols`.
    #[error("{len} values cannot be written as {rows} rows of {cols} columns")]
    ShapeMismatch {
        /// The values given.
        len: usize,
        /// The rows asked for.
        rows: usize,
        /// The columns asked for.
        cols: usize,
    },
    /// A column chosen by name in a `.npy` file, which has none.
    #[error(
        "{}: a .npy file holds one array without column names, so no column `{column}` can be \
         chosen in it",
        .path.display()
    )]
    NpyColumn {
        /// The file.
        path: PathBuf,
        /// The column asked for.
        column: String,
    },
    /// The text of a CSV column that the table was read without.
    #[error(
        "the text of column `{column}` of {} was not kept: read the table with \
         Source::read_csv_table_with_text naming it",
        .path.display()
    )]
    TextNotKept {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::npy::{read_npy_part, write_npy, write_npy_matrix};
    use crate::io::Source;
    use crate::Error;

    #[test]
    fn requests_the_data_cannot_meet_name_their_numbers() {
        let table = Source::from_reader("x,species\n1,a\n".as_bytes(), "t.csv")
            .unwrap()
            .read_csv_table_with_text(&[])
            .unwrap();
        let e = table.text("species").unwrap_err();
        assert!(
            matches!(&e, Error::File(FileError::TextNotKept { path, column })
                if path.as_os_str() == "t.csv" && column == "species"),
            "{e:?}"
        );
        assert!(e
            .to_string()
            .starts_with("invalid argument: the text of column `species` of t.csv was not kept"));
        // Both checked before any file is touched.
        assert!(matches!(
            read_npy_part("no-such-file.npy", 3, 3),
            Err(Error::File(FileError::NoSuchPart { part: 3, parts: 3 }))
        ));
        assert!(matches!(
            write_npy_matrix("no-such-dir/m.npy", &[1.0f64; 5], 2, 2),
            Err(Error::File(FileError::ShapeMismatch {
                len: 5,
                rows: 2,
                cols: 2
            }))
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.npy");
        write_npy(&path, &[1.0f32, 2.0]).unwrap();
        match Source::open(&path).unwrap().read_column(Some("delay")) {
            Err(Error::File(FileError::NpyColumn { path: p, column })) => {
                assert_eq!((p, column.as_str()), (path, "delay"))
            }
            other => panic!("{other:?}"),
        }
    }
}

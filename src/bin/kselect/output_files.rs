//! The files the commands write (`threshold --out`, `quantiles --plot` and `--cdf-plot`,
//! `neighbors --out-indices` and `--out-distances`, `knn --out`, `recover --out`,
//! `phase-transition --plot` and `--json`):
//! refused before any work when one is the input file or two are the same file, and written
//! through a temporary file in the same directory that is renamed over the target only once it
//! is complete, so that a failed run never leaves a truncated file or destroys an existing one.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use kselect::{Error, Result};

/// Why the outputs cannot be written as given: an output that is the input file, or two
/// outputs that are the same file. `outputs` are (option, path) pairs. The input `-` is
/// standard input: the file it is redirected from, when it is a regular file (`< x.npy`).
pub fn clash(input: &Path, outputs: &[(&str, &Path)]) -> Option<String> {
    let from_stdin = input == Path::new("-");
    let input_identity = if from_stdin {
        FileIdentity::of_standard_input()
    } else {
        FileIdentity::of(input)
    };
    for (i, &(option, path)) in outputs.iter().enumerate() {
        let identity = FileIdentity::of(path);
        if identity.is_some() && identity == input_identity {
            let input = if from_stdin {
                "read from standard input".to_string()
            } else {
                input.display().to_string()
            };
            return Some(format!(
                "{option} {} is the input file {input}: writing it would destroy the data; \
                 choose another file",
                path.display(),
            ));
        }
        if let Some(problem) = same_as_earlier(outputs, i) {
            return Some(problem);
        }
    }
    None
}

/// Why the outputs cannot be written as given: two of them are the same file (for a command
/// that reads no file).
pub fn duplicate(outputs: &[(&str, &Path)]) -> Option<String> {
    (0..outputs.len()).find_map(|i| same_as_earlier(outputs, i))
}

/// Why output `i` cannot be written: it is the same file as an earlier output.
fn same_as_earlier(outputs: &[(&str, &Path)], i: usize) -> Option<String> {
    let (option, path) = outputs[i];
    let identity = FileIdentity::of(path)?;
    let &(earlier, earlier_path) = outputs[..i]
        .iter()
        .find(|(_, other)| FileIdentity::of(other).as_ref() == Some(&identity))?;
    Some(format!(
        "{earlier} {} and {option} {} are the same file: choose a file for each",
        earlier_path.display(),
        path.display()
    ))
}

/// What makes two paths the same file.
#[derive(Debug, PartialEq, Eq)]
enum FileIdentity {
    /// An existing file: its device and inode.
    #[cfg(unix)]
    Inode { device: u64, inode: u64 },
    /// The canonical path: of an existing file (where there are no inodes), or of the
    /// directory of a file still to be written, with its name.
    Path(PathBuf),
}

impl FileIdentity {
    /// The identity of `path`, or `None` when it names no file and its directory does not
    /// exist either.
    fn of(path: &Path) -> Option<FileIdentity> {
        #[cfg(unix)]
        if let Ok(metadata) = std::fs::metadata(path) {
            use std::os::unix::fs::MetadataExt;
            return Some(FileIdentity::Inode {
                device: metadata.dev(),
                inode: metadata.ino(),
            });
        }
        if let Ok(canonical) = path.canonicalize() {
            return Some(FileIdentity::Path(canonical));
        }
        let name = path.file_name()?;
        let directory = directory_of(path).canonicalize().ok()?;
        Some(FileIdentity::Path(directory.join(name)))
    }

    /// The identity of the regular file standard input is redirected from, if it is one (a
    /// pipe or a terminal is no file an output could be).
    fn of_standard_input() -> Option<FileIdentity> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            use std::os::unix::fs::MetadataExt;
            let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
            let metadata = File::from(fd).metadata().ok()?;
            metadata.is_file().then(|| FileIdentity::Inode {
                device: metadata.dev(),
                inode: metadata.ino(),
            })
        }
        #[cfg(not(unix))]
        None
    }
}

/// The directory `path` is in (`.` for a bare file name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// What an output file holds, for the messages of errors in writing it.
#[derive(Clone, Copy, Debug)]
pub enum FileKind {
    /// A `.npy` array.
    Array,
    /// A PNG or SVG plot.
    Plot,
    /// A CSV table.
    Table,
    /// A JSON document.
    Json,
}

impl FileKind {
    /// The error of `source` in writing `path`.
    fn error(self, path: &Path, source: std::io::Error) -> Error {
        match self {
            FileKind::Array | FileKind::Table | FileKind::Json => Error::Io {
                path: path.to_path_buf(),
                source,
            },
            FileKind::Plot => Error::Plot {
                path: path.to_path_buf(),
                message: source.to_string(),
            },
        }
    }
}

/// Writes `target` by `write`, which is given the path of a new temporary file in the same
/// directory, whose name ends in `target`'s name (so that its extensions, `.png` or `.npy.gz`,
/// choose the format as `target`'s would). The temporary file replaces `target` (taking its
/// permissions, where it exists) once `write` succeeded, and is removed otherwise; errors name
/// `target`. An existing `target` must be writable, as if it were overwritten in place, and a
/// symbolic link is followed: the file it points to is replaced.
pub fn write_replacing(
    target: &Path,
    kind: FileKind,
    write: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let error = |e| kind.error(target, e);
    let destination = existing_destination(target).map_err(error)?;
    let destination = destination.as_deref().unwrap_or(target);
    let temporary = TemporaryFile::beside(destination).map_err(error)?;
    write(&temporary.path).map_err(|e| naming(e, &temporary.path, target))?;
    if let Ok(metadata) = std::fs::metadata(destination) {
        // Best effort: the new file keeps the old one's permissions.
        let _ = std::fs::set_permissions(&temporary.path, metadata.permissions());
    }
    temporary.rename_to(destination).map_err(error)
}

/// The file an existing `target` is (itself, or where its symbolic links lead), checked to be
/// writable; `None` when there is none.
fn existing_destination(target: &Path) -> std::io::Result<Option<PathBuf>> {
    if std::fs::metadata(target).is_err() {
        return Ok(None);
    }
    // Opened for writing but neither created nor truncated: only the permission is checked.
    OpenOptions::new().write(true).open(target)?;
    let is_link = std::fs::symlink_metadata(target)?.file_type().is_symlink();
    Ok(Some(if is_link {
        target.canonicalize()?
    } else {
        target.to_path_buf()
    }))
}

/// `e` with `target` instead of `temporary` as the file it names.
fn naming(e: Error, temporary: &Path, target: &Path) -> Error {
    match e {
        Error::Io { path, source } if path == temporary => Error::Io {
            path: target.to_path_buf(),
            source,
        },
        Error::Format { path, message } if path == temporary => Error::Format {
            path: target.to_path_buf(),
            message,
        },
        Error::Plot { path, message } if path == temporary => Error::Plot {
            path: target.to_path_buf(),
            message,
        },
        other => other,
    }
}

/// A new, empty file that is removed when dropped unless renamed.
struct TemporaryFile {
    path: PathBuf,
    renamed: bool,
}

impl TemporaryFile {
    /// A new file in `target`'s directory named `.kselect-PID-N-NAME`, NAME being `target`'s.
    fn beside(target: &Path) -> std::io::Result<TemporaryFile> {
        let name = target.file_name().ok_or_else(|| {
            std::io::Error::new(ErrorKind::InvalidInput, "the path names no file")
        })?;
        let directory = directory_of(target);
        let mut attempt = 0u32;
        loop {
            let mut temporary_name =
                OsString::from(format!(".kselect-{}-{attempt}-", std::process::id()));
            temporary_name.push(name);
            let path = directory.join(temporary_name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    drop::<File>(file);
                    return Ok(TemporaryFile {
                        path,
                        renamed: false,
                    });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Renames the file to `target`, replacing it.
    fn rename_to(mut self, target: &Path) -> std::io::Result<()> {
        std::fs::rename(&self.path, target)?;
        self.renamed = true;
        Ok(())
    }
}

impl Drop for TemporaryFile {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_input_has_no_file_to_clash_with() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("-");
        std::fs::write(&out, "").unwrap();
        assert_eq!(clash(Path::new("-"), &[("--out", Path::new("-"))]), None);
        assert_eq!(clash(Path::new("-"), &[("--out", &out)]), None);
    }

    #[test]
    fn outputs_still_to_be_written_clash_by_their_directory_and_name() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("x.csv");
        std::fs::write(&input, "x\n1\n").unwrap();
        let a = dir.path().join("a.png");
        let also_a = dir.path().join(".").join("a.png");
        let b = dir.path().join("b.png");
        assert_eq!(clash(&input, &[("--plot", &a), ("--cdf-plot", &b)]), None);
        let problem = clash(&input, &[("--plot", &a), ("--cdf-plot", &also_a)]).unwrap();
        assert!(problem.contains("are the same file"), "{problem}");
        assert_eq!(
            duplicate(&[("--plot", &a), ("--json", &also_a)]),
            Some(format!(
                "--plot {} and --json {} are the same file: choose a file for each",
                a.display(),
                also_a.display()
            ))
        );
        assert_eq!(duplicate(&[("--plot", &a), ("--json", &b)]), None);
        // A missing directory is no clash: writing there fails later, with its own message.
        let missing = dir.path().join("missing/a.png");
        assert_eq!(clash(&input, &[("--plot", &missing)]), None);
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_and_read_only_files_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.npy");
        let link = dir.path().join("link.npy");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let write_new = |path: &Path| {
            std::fs::write(path, "new").map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })
        };
        write_replacing(&link, FileKind::Array, write_new).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o444)).unwrap();
        if OpenOptions::new().write(true).open(&real).is_ok() {
            return; // run as root: every file is writable
        }
        let refused = write_replacing(&real, FileKind::Plot, |_| unreachable!());
        let message = refused.unwrap_err().to_string();
        assert!(message.starts_with("cannot write the plot "), "{message}");
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn a_failed_write_removes_its_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.npy");
        std::fs::write(&target, "old").unwrap();
        let failed = write_replacing(&target, FileKind::Array, |path| {
            std::fs::write(path, "partial").unwrap();
            Err(Error::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other("disk full"),
            })
        });
        match failed {
            Err(Error::Io { path, .. }) => assert_eq!(path, target),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_replacing(&target, FileKind::Array, |path| {
            std::fs::write(path, "new").map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}

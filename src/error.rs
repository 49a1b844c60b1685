//! The one error type of the crate.
//!
//! Every fallible function returns [`Result<T>`]. Variants carry what a user needs to fix the
//! input: which file, row and column, which rank and length, what the GPU reported.

use std::path::PathBuf;

/// `std::result::Result` with the crate's [`Error`].
///
/// ```
/// fn first_rank(data: &[f64]) -> kselect::Result<f64> {
///     kselect::select(data, 0)
/// }
/// assert!(first_rank(&[]).is_err());
/// ```
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in kselect.
///
/// ```
/// use kselect::Error;
/// match kselect::select(&[1.0f32, 2.0], 5) {
///     Err(Error::RankOutOfRange { k, n }) => assert_eq!((k, n), (5, 2)),
///     other => panic!("unexpected {other:?}"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input holds no values (after NaNs were omitted, where the policy omits them).
    #[error("the input is empty: there is no element to select")]
    EmptyInput,

    /// A rank is not below the number of values.
    #[error("rank k = {k} is out of range for {n} values (ranks are 0-based: 0 <= k < {n})")]
    RankOutOfRange {
        /// The rank asked for.
        k: usize,
        /// The number of values it was asked of.
        n: usize,
    },

    /// A NaN was found under [`NanPolicy::Error`](crate::NanPolicy::Error).
    #[error(
        "the input holds {count} NaN value(s) (the first at index {first_index}); \
         choose a NaN policy: omit them or order them last"
    )]
    NanInInput {
        /// How many NaNs the input holds.
        count: usize,
        /// The index of the first one.
        first_index: usize,
    },

    /// A quantile probability outside `[0, 1]` or NaN.
    #[error("quantile probability {q} is not in [0, 1]")]
    InvalidProbability {
        /// The probability given.
        q: f64,
    },

    /// An argument that is not valid for the operation.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// Two inputs that must be as long as each other are not.
    ///
    /// ```
    /// let err = kselect::Error::LengthMismatch {
    ///     operation: "sort_pairs_device",
    ///     first: "keys",
    ///     first_len: 3,
    ///     second: "values",
    ///     second_len: 2,
    /// };
    /// assert_eq!(err.to_string(), "invalid argument: sort_pairs_device: 3 keys but 2 values");
    /// ```
    #[error("invalid argument: {operation}: {first_len} {first} but {second_len} {second}")]
    LengthMismatch {
        /// The operation, e.g. `"sort_pairs_device"`.
        operation: &'static str,
        /// What the first input holds, e.g. `"keys"`.
        first: &'static str,
        /// Its length.
        first_len: usize,
        /// What the second input holds.
        second: &'static str,
        /// Its length.
        second_len: usize,
    },

    /// Device memory asked of the CPU.
    ///
    /// ```
    /// let made = kselect::DeviceBuffer::from_host(&kselect::Device::Cpu, &[1u32]);
    /// assert!(matches!(made, Err(kselect::Error::NotOnCpu { what: "a DeviceBuffer" })));
    /// ```
    #[error("invalid argument: {what} lives on a CUDA device, not on the CPU")]
    NotOnCpu {
        /// What lives on the device.
        what: &'static str,
    },

    /// A name that names nothing of its kind (an algorithm, a quantile method, a NaN policy, a
    /// metric, ...), with the names that do.
    #[error("invalid argument: unknown {kind} `{given}` (known: {})", .known.join(", "))]
    UnknownName {
        /// What the name was to name, e.g. `"algorithm"`.
        kind: &'static str,
        /// The name given.
        given: String,
        /// The names of that kind.
        known: Vec<&'static str>,
    },

    /// A batch (rows or segments, the ranks or `k` asked of them, the buffer they read) that
    /// does not fit: which check failed, with its numbers.
    #[error("invalid argument: {0}")]
    Batch(#[from] crate::select::batch::BatchError),

    /// An LTS or LMS fit's data or settings that do not fit: which check failed, with its
    /// numbers.
    #[error("invalid argument: {0}")]
    Regression(#[from] crate::regression::RegressionError),

    /// A cutting-plane selection that cannot go on: which step failed, with its numbers.
    #[error("invalid argument: {0}")]
    CuttingPlane(#[from] crate::select::cutting_plane::CuttingPlaneError),
    /// A recovery problem (its operator, measurements, signal, options, or a phase-transition
    /// experiment) that does not fit: which check failed, with its numbers.
    #[error("invalid argument: {0}")]
    Recovery(#[from] crate::recovery::RecoveryError),

    /// A kNN search or estimator given points, a `k`, responses or settings that do not fit:
    /// which check failed, with its numbers.
    #[error("invalid argument: {0}")]
    Knn(#[from] crate::knn::KnnError),

    /// A distribution estimated, smoothed or plotted from order statistics, a bandwidth or
    /// histogram and plot settings that do not fit: which check failed, with its numbers.
    #[error("invalid argument: {0}")]
    Density(#[from] crate::density::DensityError),

    /// A request to the data-file readers and writers that the file or the data cannot meet
    /// (a part beyond the parts, a shape that is not the data's, a column a file cannot give).
    #[cfg(feature = "io")]
    #[error("invalid argument: {0}")]
    File(#[from] crate::io::FileError),

    /// A group of ranks that cannot be formed as asked (a rank beyond the group, a GPU given
    /// twice, more ranks on a host than GPUs).
    #[error("invalid argument: {0}")]
    Distributed(#[from] crate::distributed::DistributedError),

    /// The transport between the ranks of a distributed job failed.
    #[error("communication between the ranks failed: {0}")]
    Communication(String),

    /// Another rank of a distributed job failed; every rank returns this error (the failing
    /// rank returns its own).
    #[error("rank {rank} of the distributed job failed: {message}")]
    RankFailed {
        /// The lowest-numbered rank that failed.
        rank: usize,
        /// What went wrong there.
        message: String,
    },

    /// The algorithm is not implemented on the chosen backend.
    #[error(
        "algorithm `{algorithm}` is not available on the {backend} backend: it runs on \
         {runs_on} (available on {backend}: {available})"
    )]
    UnsupportedAlgorithm {
        /// The algorithm asked for.
        algorithm: String,
        /// The backend it was asked on.
        backend: String,
        /// The backend that has it.
        runs_on: String,
        /// The algorithms the backend asked has.
        available: String,
    },

    /// No CUDA driver library or no CUDA device is present.
    #[error("no CUDA device is available: {0}")]
    CudaUnavailable(String),

    /// An error reported by the CUDA driver.
    #[error("CUDA driver error during {context}: {message}")]
    Cuda {
        /// What kselect was doing.
        context: String,
        /// The driver's message.
        message: String,
    },

    /// The GPU ran out of memory.
    #[error("the GPU ran out of memory allocating {bytes} bytes ({what}); free: {free} of {total} bytes")]
    OutOfDeviceMemory {
        /// The allocation that failed.
        bytes: usize,
        /// What it was for.
        what: String,
        /// Free device memory when it failed.
        free: usize,
        /// Total device memory.
        total: usize,
    },

    /// NVRTC failed to compile a kernel source; `log` is its compile log.
    #[error("NVRTC failed to compile {source_name} for {arch}: {message}\n{log}")]
    KernelCompile {
        /// The kernel source file.
        source_name: String,
        /// The target architecture.
        arch: String,
        /// NVRTC's status.
        message: String,
        /// NVRTC's compile log.
        log: String,
    },

    /// An I/O error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// A file whose content cannot be read as data.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },

    /// A CSV field that is not a number, or a malformed CSV record.
    #[error("{path}: row {row}, column {column}: {message}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// 1-based data row (the header is row 0).
        row: u64,
        /// The column name (or 1-based index when there is no name).
        column: String,
        /// What is wrong.
        message: String,
    },

    /// A plot that could not be drawn or written.
    #[error("cannot write the plot {path}: {message}")]
    Plot {
        /// The image file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },

    /// A CSV column that is not in the header.
    #[error("{path}: no column named `{column}` (the header has: {available})")]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column asked for.
        column: String,
        /// The columns that are there.
        available: String,
    },
}

// The constructors of the file errors, for the readers of data files.
#[cfg(feature = "io")]
impl Error {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A malformed file at `path`.
    pub(crate) fn format(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Error::Format {
            path: path.into(),
            message: message.into(),
        }
    }
}

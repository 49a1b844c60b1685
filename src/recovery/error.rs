//! [`RecoveryError`]: why a recovery problem — its operator, measurements, signal, options or
//! phase-transition experiment — cannot be set up or solved.

use std::fmt;

/// The kind of an operator, as a stack of operators on a GPU tells them apart: a stack holds
/// operators of one kind (and sparse ones of one number of nonzeros a column).
///
/// ```
/// use kselect::recovery::OperatorKind;
/// assert_eq!(OperatorKind::Sparse { d: 8 }.to_string(), "a sparse matrix of d = 8");
/// assert_eq!(OperatorKind::Dct.to_string(), "a subsampled DCT");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperatorKind {
    /// A dense matrix.
    Dense,
    /// A subsampled DCT.
    Dct,
    /// A sparse binary matrix of `d` nonzeros a column.
    Sparse {
        /// The nonzeros a column.
        d: usize,
    },
}

impl fmt::Display for OperatorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OperatorKind::Dense => f.write_str("a dense matrix"),
            OperatorKind::Dct => f.write_str("a subsampled DCT"),
            OperatorKind::Sparse { d } => write!(f, "a sparse matrix of d = {d}"),
        }
    }
}

/// Why a recovery cannot run on what it was given (`kselect::Error::Recovery`). The messages
/// name the numbers involved.
///
/// ```
/// use kselect::recovery::{sparse_signal, SignalKind};
/// use kselect::{Error, RecoveryError};
/// let err = sparse_signal::<f64>(4, 5, SignalKind::Sign, 42).unwrap_err();
/// assert!(matches!(err, Error::Recovery(RecoveryError::Sparsity { k: 5, n: 4 })));
/// assert_eq!(
///     err.to_string(),
///     "invalid argument: k = 5 nonzeros asked for in signals of n = 4 entries: choose k <= 4"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RecoveryError {
    /// An operator of no measurement (row) or no signal entry (column).
    #[error("{what} needs at least one measurement and one signal entry (got m = {m}, n = {n})")]
    EmptyOperator {
        /// The operator, e.g. `"a measurement matrix"`.
        what: &'static str,
        /// Its measurements (rows).
        m: usize,
        /// Its signal entries (columns).
        n: usize,
    },
    /// Nothing where at least one is needed: a signal entry, an operator, a trial, ...
    #[error("{what} needs at least one {item}")]
    Empty {
        /// What needs it, e.g. `"a signal"`.
        what: &'static str,
        /// What it needs one of, e.g. `"entry"`.
        item: &'static str,
    },
    /// More nonzeros asked for than a signal has entries.
    #[error("k = {k} nonzeros asked for in signals of n = {n} entries: choose k <= {n}")]
    Sparsity {
        /// The nonzeros asked for.
        k: usize,
        /// The signal's entries.
        n: usize,
    },
    /// A sparse operator's nonzeros a column not in `1..=m`.
    #[error("a sparse operator of {m} rows needs 1 <= d <= {m} nonzeros per column (got d = {d})")]
    NonzerosPerColumn {
        /// The nonzeros a column.
        d: usize,
        /// The rows.
        m: usize,
    },
    /// More measurements asked of a DCT than it has rows.
    #[error(
        "a DCT of length {n} has only {n} rows, so it cannot take m = {m} measurements: choose \
         m <= n"
    )]
    DctRows {
        /// The measurements asked for.
        m: usize,
        /// The DCT's length.
        n: usize,
    },
    /// A row index (of a DCT's rows, or of a sparse column's nonzeros) past the rows.
    #[error(
        "row {row}{} is out of range for {rows} rows (rows are 0-based: 0 <= row < {rows})",
        in_column(.column)
    )]
    RowOutOfRange {
        /// The sparse matrix's column that lists it; `None` for a DCT's rows.
        column: Option<usize>,
        /// The row.
        row: usize,
        /// The rows there are.
        rows: usize,
    },
    /// A row index given twice (a DCT's rows, or a sparse column's nonzeros).
    #[error("row {row} is given twice{}: the rows must be distinct", in_column(.column))]
    RepeatedRow {
        /// The sparse matrix's column that lists it; `None` for a DCT's rows.
        column: Option<usize>,
        /// The row.
        row: usize,
    },
    /// An operator too large to address or allocate.
    #[error("an {m} x {n} operator does not fit in memory: choose smaller m or n")]
    OperatorTooLarge {
        /// Its rows.
        m: usize,
        /// Its columns.
        n: usize,
    },
    /// A signal too large to allocate.
    #[error("a signal of {n} entries does not fit in memory: choose a smaller n")]
    SignalTooLarge {
        /// Its entries.
        n: usize,
    },
    /// A dense matrix's values, not `rows * cols` of them.
    #[error(
        "a {rows} x {cols} matrix needs {expected} values (row-major), but {given} were given"
    )]
    MatrixValues {
        /// The rows.
        rows: usize,
        /// The columns.
        cols: usize,
        /// The values needed, `rows * cols`.
        expected: usize,
        /// The values given.
        given: usize,
    },
    /// A sparse matrix's row indices, not `n * d` of them.
    #[error("{n} columns of {d} nonzeros need {expected} row indices, but {given} were given")]
    RowIndices {
        /// The columns.
        n: usize,
        /// The nonzeros a column.
        d: usize,
        /// The row indices needed, `n * d`.
        expected: usize,
        /// The row indices given.
        given: usize,
    },
    /// A matrix entry that is NaN or infinite.
    #[error(
        "the matrix entry in row {row} and column {column} is {value}; measurement matrices \
         need finite entries"
    )]
    NonFiniteEntry {
        /// Its row.
        row: usize,
        /// Its column.
        column: usize,
        /// The entry.
        value: f64,
    },
    /// A measurement that is NaN or infinite.
    #[error(
        "measurement {index}{} is {value}: measurements must be finite",
        match .problem { Some(p) => format!(" of problem {p}"), None => String::new() }
    )]
    NonFiniteMeasurement {
        /// Its index in its problem.
        index: usize,
        /// Its problem, where several were given.
        problem: Option<usize>,
        /// The measurement.
        value: f64,
    },
    /// Measurements of another length than the operator's rows.
    #[error("{given} measurements given for an operator of {m} rows")]
    Measurements {
        /// The measurements given.
        given: usize,
        /// The operator's rows.
        m: usize,
    },
    /// Measurements of several problems that do not make whole problems of `m` each.
    #[error("{len} measurements do not make whole problems of m = {m} each")]
    WholeProblems {
        /// The measurements given.
        len: usize,
        /// The measurements of a problem.
        m: usize,
    },
    /// Measurements given for no operators.
    #[error("{measurements} measurements given for no operators")]
    NoOperators {
        /// The measurements given.
        measurements: usize,
    },
    /// Not one problem (or vector) for each operator of a stack or list.
    #[error("{given} {what} given for {operators} operators: one for each")]
    OneEach {
        /// `"problems"` or `"vectors"`.
        what: &'static str,
        /// How many were given.
        given: usize,
        /// The operators.
        operators: usize,
    },
    /// Operators of a stack or list of different shapes.
    #[error(
        "operator {index} is {} x {}, operator 0 {} x {}: the operators have one shape",
        .shape.0, .shape.1, .first.0, .first.1
    )]
    ShapeMismatch {
        /// The first operator of another shape than operator 0.
        index: usize,
        /// Its shape, `(m, n)`.
        shape: (usize, usize),
        /// Operator 0's shape.
        first: (usize, usize),
    },
    /// Operators of a stack of different kinds.
    #[error("operator {index} is {kind}, operator 0 {first}: a stack holds operators of one kind")]
    KindMismatch {
        /// The first operator of another kind than operator 0.
        index: usize,
        /// Its kind.
        kind: OperatorKind,
        /// Operator 0's kind.
        first: OperatorKind,
    },
    /// A stack of operators used as one operator.
    #[error("a stack of {operators} operators takes one problem or vector for each: {instead}")]
    Stacked {
        /// The operators of the stack.
        operators: usize,
        /// The functions that take a stack.
        instead: &'static str,
    },
    /// Products of an operator on vectors of other lengths than its own.
    #[error(
        "products of the {m} x {n} operator take (whole) vectors of {len_in} values to vectors \
         of {len_out}: {input} values do not go to {output}"
    )]
    ProductLength {
        /// The operator's rows.
        m: usize,
        /// The operator's columns.
        n: usize,
        /// The length of a vector it takes.
        len_in: usize,
        /// The length of a vector it gives.
        len_out: usize,
        /// The values given.
        input: usize,
        /// The room given for the result.
        output: usize,
    },
    /// More problems at once than the CUDA kernels take.
    #[error("{count} problems at once: at most 2^31 - 1 on CUDA")]
    TooManyProblems {
        /// The problems.
        count: usize,
    },
    /// A DCT too long (or too many at once) for cuFFT.
    #[error("a DCT of length {n} ({batch} at once) is too long for cuFFT (at most 2^31 - 1)")]
    DctTooLong {
        /// The DCT's length.
        n: usize,
        /// How many at once.
        batch: usize,
    },
    /// The CPU given where a CUDA device is needed.
    #[error("{what} takes a CUDA device, not the CPU ({on_cpu})")]
    NotCuda {
        /// What needs the device, e.g. `"DeviceOperator::upload"`.
        what: &'static str,
        /// What does it on the CPU.
        on_cpu: &'static str,
    },
    /// A sparse ensemble's name whose count of nonzeros a column is not a positive integer.
    #[error(
        "`{given}`: the nonzeros per column of a sparse ensemble must be a positive integer, as \
         in sparse:{default}"
    )]
    SparseNonzeros {
        /// The name given, e.g. `"sparse:0"`.
        given: String,
        /// The default count.
        default: usize,
    },
    /// A setting out of its range.
    #[error("{setting} = {value} is out of range: it must be {range}")]
    OutOfRange {
        /// The setting, e.g. `"the tolerance"`.
        setting: &'static str,
        /// Its value.
        value: f64,
        /// Its range, e.g. `"positive and finite"`.
        range: &'static str,
    },
}

/// `" in column j"` for a sparse matrix's column, nothing for none.
fn in_column(column: &Option<usize>) -> String {
    match column {
        Some(j) => format!(" in column {j}"),
        None => String::new(),
    }
}

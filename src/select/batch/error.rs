//! [`BatchError`]: why a batch — its rows or segments, the ranks or the `k` asked of them, the
//! buffer it reads — does not fit.

use std::fmt;

/// Where in a batch a check failed: the whole input (one row), or one row or segment.
///
/// ```
/// use kselect::select::batch::Place;
/// assert_eq!(Place::Row(3).to_string(), "row 3");
/// assert_eq!(Place::Input.to_string(), "the input");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// The input, a batch of one row.
    Input,
    /// Row `s`.
    Row(usize),
    /// Segment `s`.
    Segment(usize),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Input => f.write_str("the input"),
            Place::Row(s) => write!(f, "row {s}"),
            Place::Segment(s) => write!(f, "segment {s}"),
        }
    }
}

/// Why a batched selection, top-k or hard thresholding cannot run on what it was given
/// (`kselect::Error::Batch`). The messages name the numbers involved.
///
/// ```
/// use kselect::select::batch::BatchError;
/// use kselect::{Error, Matrix, Selector};
/// let err = Selector::new().select_rows(Matrix::new(&[1, 2, 3], 2, 2).with_stride(1), 0).unwrap_err();
/// assert!(matches!(err, Error::Batch(BatchError::StrideBelowColumns { stride: 1, cols: 2 })));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// The row stride is shorter than a row.
    #[error("row stride {stride} is shorter than the {cols} columns")]
    StrideBelowColumns {
        /// The stride.
        stride: usize,
        /// The columns of a row.
        cols: usize,
    },
    /// The rows' extent does not fit in the address range.
    #[error("{rows} rows of stride {stride} overflow the address range")]
    RowsOverflow {
        /// The rows.
        rows: usize,
        /// The stride.
        stride: usize,
    },
    /// The rows reach past the data.
    #[error(
        "{rows} rows of {cols} columns with stride {stride} need {needed} values, the data hold \
         {len}"
    )]
    RowsPastData {
        /// The rows.
        rows: usize,
        /// The columns of a row.
        cols: usize,
        /// The stride.
        stride: usize,
        /// The values the rows need.
        needed: usize,
        /// The values the data hold.
        len: usize,
    },
    /// No segment offset was given (not even the start of the first segment).
    #[error("segment offsets need at least one entry (the start of the first segment)")]
    NoOffsets,
    /// The segment offsets decrease.
    #[error("segment offsets decrease at segment {segment}: {start} then {end}")]
    OffsetsDecrease {
        /// The segment whose end is before its start.
        segment: usize,
        /// Its start offset.
        start: usize,
        /// Its end offset.
        end: usize,
    },
    /// The last segment ends past the data.
    #[error("the last segment offset {last} is past the {len} values")]
    OffsetsPastData {
        /// The last offset.
        last: usize,
        /// The values the data hold.
        len: usize,
    },
    /// One rank a row or segment was asked for, with another number of ranks.
    #[error("{given} ranks were given for {spans} {kind}s: give one per {kind}")]
    RankCount {
        /// The ranks given.
        given: usize,
        /// The rows or segments.
        spans: usize,
        /// `"row"` or `"segment"`.
        kind: &'static str,
    },
    /// `k = 0` for top-k or thresholding.
    #[error("k = 0: top-k and thresholding take at least one value")]
    ZeroK,
    /// A row or segment holds fewer values than `k` (or fewer that are not NaN, when NaNs are
    /// omitted).
    #[error(
        "k = {k} values cannot be taken: {place} holds {have} value(s){} (k is 1 to the number \
         of values)",
        if *.not_nan { " that are not NaN" } else { "" }
    )]
    TooFewValues {
        /// The `k` asked for.
        k: usize,
        /// Where.
        place: Place,
        /// The values it holds.
        have: usize,
        /// Whether `have` counts the values that are not NaN only.
        not_nan: bool,
    },
    /// A row or segment too long for the CUDA batch kernels.
    #[error(
        "a span of {len} values: batched selection on CUDA takes spans of fewer than 2^32 values"
    )]
    SpanTooLong {
        /// Its length.
        len: usize,
    },
    /// CUDA top-k of `k` longer than the shortest row or segment.
    #[error("top-k of k = {k} needs 1 <= k <= every span's length (the shortest has {shortest})")]
    KBeyondShortestSpan {
        /// The `k` asked for.
        k: usize,
        /// The shortest span's length.
        shortest: usize,
    },
    /// Top-k of the largest magnitudes with `k` outside a row.
    #[error("top-k of k = {k} needs 1 <= k <= the row length {cols}")]
    KBeyondRow {
        /// The `k` asked for.
        k: usize,
        /// The row's length.
        cols: usize,
    },
    /// More results than CUDA top-k returns in one call.
    #[error("{spans} spans of k = {k} results: CUDA top-k returns fewer than 2^32 results")]
    TooManyResults {
        /// The rows or segments.
        spans: usize,
        /// The `k` asked of each.
        k: usize,
    },
    /// A device buffer given to a selector that runs on the CPU.
    #[error(
        "{what} of a DeviceBuffer runs on its CUDA device, and this selector runs on the CPU \
         (use a selector on the buffer's device, or copy the buffer to the host with to_host)"
    )]
    DeviceBufferOnCpu {
        /// The operation asked for.
        what: &'static str,
    },
    /// A device buffer on another GPU than the selector's.
    #[error("{what}: the buffer is on CUDA device {buffer}, the selector runs on CUDA device {selector}")]
    OtherDevice {
        /// The operation asked for.
        what: &'static str,
        /// The buffer's device.
        buffer: usize,
        /// The selector's device.
        selector: usize,
    },
}

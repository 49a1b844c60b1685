//! Where the rows or segments of a batch lie in the data, and the inputs a batch reads.

use std::ops::Range;

use crate::error::Result;
use crate::select::batch::error::BatchError;

/// The spans (rows or segments) of a batch, checked against the data's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spans<'a> {
    /// Row `r` is `data[r * stride .. r * stride + cols]`; `stride >= cols`.
    Rows {
        /// The number of rows.
        rows: usize,
        /// The values of each row.
        cols: usize,
        /// The distance between the starts of consecutive rows.
        stride: usize,
    },
    /// Segment `s` is `data[offsets[s] .. offsets[s + 1]]`; the offsets never decrease.
    Offsets(&'a [usize]),
}

impl Spans<'_> {
    /// How many spans there are.
    pub(crate) fn count(&self) -> usize {
        match *self {
            Spans::Rows { rows, .. } => rows,
            Spans::Offsets(offsets) => offsets.len().saturating_sub(1),
        }
    }

    /// The indices of span `i` in the data.
    pub(crate) fn span(&self, i: usize) -> Range<usize> {
        match *self {
            Spans::Rows { cols, stride, .. } => i * stride..i * stride + cols,
            Spans::Offsets(offsets) => offsets[i]..offsets[i + 1],
        }
    }

    /// The length of span `i`.
    pub(crate) fn len_of(&self, i: usize) -> usize {
        self.span(i).len()
    }

    /// The values of all spans together.
    pub(crate) fn total_len(&self) -> usize {
        match *self {
            Spans::Rows { rows, cols, .. } => rows * cols,
            Spans::Offsets(offsets) => match (offsets.first(), offsets.last()) {
                (Some(&first), Some(&last)) => last.saturating_sub(first),
                _ => 0,
            },
        }
    }

    /// The longest span's length (0 without spans).
    pub(crate) fn max_len(&self) -> usize {
        self.lengths().max().unwrap_or(0)
    }

    /// The shortest span's length (0 without spans).
    pub(crate) fn min_len(&self) -> usize {
        self.lengths().min().unwrap_or(0)
    }

    /// The spans' lengths, those of rows (all equal) as one: enough for the extremes.
    fn lengths(&self) -> impl Iterator<Item = usize> + '_ {
        let (rows_len, offsets) = match *self {
            Spans::Rows { rows, cols, .. } => ((rows > 0).then_some(cols), &[][..]),
            Spans::Offsets(offsets) => (None, offsets),
        };
        rows_len
            .into_iter()
            .chain(offsets.windows(2).map(|w| w[1] - w[0]))
    }

    /// Checks that every span lies inside data of `len` values.
    pub(crate) fn check(&self, len: usize) -> Result<()> {
        match *self {
            Spans::Rows { rows, cols, stride } => {
                if stride < cols {
                    return Err(BatchError::StrideBelowColumns { stride, cols }.into());
                }
                let needed = match rows {
                    0 => Some(0),
                    _ => (rows - 1)
                        .checked_mul(stride)
                        .and_then(|start| start.checked_add(cols)),
                }
                .ok_or(BatchError::RowsOverflow { rows, stride })?;
                if needed > len {
                    return Err(BatchError::RowsPastData {
                        rows,
                        cols,
                        stride,
                        needed,
                        len,
                    }
                    .into());
                }
                Ok(())
            }
            Spans::Offsets(offsets) => {
                if offsets.is_empty() {
                    return Err(BatchError::NoOffsets.into());
                }
                if let Some(s) = offsets.windows(2).position(|w| w[1] < w[0]) {
                    return Err(BatchError::OffsetsDecrease {
                        segment: s,
                        start: offsets[s],
                        end: offsets[s + 1],
                    }
                    .into());
                }
                let last = offsets[offsets.len() - 1];
                if last > len {
                    return Err(BatchError::OffsetsPastData { last, len }.into());
                }
                Ok(())
            }
        }
    }
}

/// The order in which top-k and hard thresholding rank values; ties always go to the lower
/// index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyOrder {
    /// The largest values first. With `nan_low`, NaN ranks below every number (NaNs are
    /// omitted: they are taken only when fewer numbers than k remain, which callers refuse);
    /// otherwise NaN ranks above `+inf`.
    Largest {
        /// NaN below every number.
        nan_low: bool,
    },
    /// The smallest values first; NaN ranks above `+inf`, so it is taken last.
    Smallest,
    /// The largest magnitudes first (`|x|`; `unsigned_abs` for signed integers). NaN as for
    /// `Largest`.
    LargestMagnitude {
        /// NaN below every number.
        nan_low: bool,
    },
}

/// The ranks a batched selection wants: one per span, or the same list in every span. Ranks
/// count in the full key order (NaN last) and are below their span's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpanRanks<'a> {
    /// `ranks[s]` of span `s` (as many ranks as spans).
    OnePerSpan(&'a [usize]),
    /// Every rank of the list, of every span.
    Same(&'a [usize]),
}

impl SpanRanks<'_> {
    /// How many values each span gives.
    pub(crate) fn per_span(&self) -> usize {
        match self {
            SpanRanks::OnePerSpan(_) => 1,
            SpanRanks::Same(ranks) => ranks.len(),
        }
    }
}

/// What a backend's batched selection returns.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SpanSelection<T> {
    /// Row-major: span `s`'s values at `s * per_span ..`, in the order of the ranks.
    pub values: Vec<T>,
    /// The NaNs of each span.
    pub nan_counts: Vec<usize>,
}

/// What a backend's batched top-k returns.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TopKSpans<T> {
    /// Row-major, `k` a span: sorted by the order (ties by index) or, unsorted, by index.
    pub values: Vec<T>,
    /// The values' indices inside their spans.
    pub indices: Vec<usize>,
    /// The NaNs of each span.
    pub nan_counts: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_offsets_describe_their_spans() {
        let rows = Spans::Rows {
            rows: 3,
            cols: 2,
            stride: 4,
        };
        assert_eq!(rows.count(), 3);
        assert_eq!(rows.span(2), 8..10);
        assert_eq!(rows.total_len(), 6);
        assert!(rows.check(10).is_ok());
        assert!(rows.check(9).is_err());
        let offsets = [0, 3, 3, 7];
        let segs = Spans::Offsets(&offsets);
        assert_eq!(segs.count(), 3);
        assert_eq!(segs.len_of(1), 0);
        assert_eq!((segs.min_len(), segs.max_len()), (0, 4));
        assert_eq!(segs.total_len(), 7);
        assert_eq!(Spans::Offsets(&[]).total_len(), 0);
        assert!(segs.check(7).is_ok());
        assert!(segs.check(6).is_err());
        assert!(Spans::Offsets(&[2, 1]).check(5).is_err());
        assert!(Spans::Offsets(&[]).check(5).is_err());
    }

    #[test]
    fn a_stride_shorter_than_a_row_is_refused() {
        let spans = Spans::Rows {
            rows: 2,
            cols: 3,
            stride: 2,
        };
        assert!(spans.check(100).is_err());
    }
}

//! How a batch is laid out in the data: rows of a row-major matrix, or segments of a flat array,
//! and the ranks asked of each.

use crate::error::{Error, Result};
use crate::select::batch::error::BatchError;
use crate::select::batch::spans::{SpanRanks, Spans};

/// The shape of a [`Matrix`](crate::Matrix)'s rows: row `r` is
/// `data[r * stride .. r * stride + cols]`.
///
/// The stride (the distance between the starts of consecutive rows, in elements) is `cols`
/// unless set with [`Rows::with_stride`]; it must be at least `cols`, and the data must hold
/// `(rows - 1) * stride + cols` values at least (more are ignored).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Rows {
    rows: usize,
    cols: usize,
    stride: usize,
}

impl Rows {
    /// `rows` rows of `cols` values each, stored one after another (stride `cols`).
    pub(crate) fn new(rows: usize, cols: usize) -> Rows {
        Rows {
            rows,
            cols,
            stride: cols,
        }
    }

    /// The same rows with their starts `stride` values apart (`stride >= cols`, checked when
    /// the batch runs).
    pub(crate) fn with_stride(self, stride: usize) -> Rows {
        Rows { stride, ..self }
    }

    /// The number of rows.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The number of values of each row.
    pub(crate) fn cols(&self) -> usize {
        self.cols
    }

    /// The distance between the starts of consecutive rows, in values.
    pub(crate) fn stride(&self) -> usize {
        self.stride
    }

    /// The rows as the spans the backends read.
    pub(crate) fn spans(&self) -> Spans<'static> {
        Spans::Rows {
            rows: self.rows,
            cols: self.cols,
            stride: self.stride,
        }
    }
}

/// Segments of a flat array given by their offsets: segment `s` is
/// `data[offsets[s] .. offsets[s + 1]]`.
///
/// `n + 1` offsets describe `n` segments (a single offset describes none; at least one is
/// needed). The offsets must not decrease and the last must not pass the end of the data
/// (checked when the batch runs); values before the first offset or after the last are ignored.
/// Segments may be empty.
///
/// ```
/// use kselect::{Segments, Selector};
/// let data = [5.0, 1.0, 3.0, 9.0, 7.0];
/// let segments = Segments::new(&[0, 3, 3, 5]); // [5, 1, 3], [], [9, 7]
/// assert_eq!(segments.count(), 3);
/// let firsts = Selector::new().select_segments(&data, segments, &[0, 0, 1][..]);
/// assert!(firsts.is_err()); // the empty segment has no rank 0
/// let v = Selector::new()
///     .select_segments(&data, Segments::new(&[0, 3, 5]), 0)
///     .unwrap();
/// assert_eq!(v, vec![1.0, 7.0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Segments<'a> {
    offsets: &'a [usize],
}

impl<'a> Segments<'a> {
    /// The segments between consecutive `offsets`.
    ///
    /// ```
    /// let s = kselect::Segments::new(&[0, 2, 7]);
    /// assert_eq!(s.count(), 2);
    /// ```
    pub fn new(offsets: &'a [usize]) -> Segments<'a> {
        Segments { offsets }
    }

    /// The number of segments: one less than the offsets (0 without offsets, which a batch
    /// refuses).
    ///
    /// ```
    /// assert_eq!(kselect::Segments::new(&[4]).count(), 0);
    /// ```
    pub fn count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The offsets.
    ///
    /// ```
    /// assert_eq!(kselect::Segments::new(&[0, 2]).offsets(), &[0, 2]);
    /// ```
    pub fn offsets(&self) -> &'a [usize] {
        self.offsets
    }

    /// The segments as the spans the backends read.
    pub(crate) fn spans(&self) -> Spans<'a> {
        Spans::Offsets(self.offsets)
    }
}

/// The rank asked of each row or segment of a batch: the same for all, or one each.
///
/// Ranks are 0-based in ascending order, as for [`Selector::select`](crate::Selector::select).
/// A `usize` converts to `Same`, a slice or a `Vec` reference to `Each`.
///
/// ```
/// use kselect::{BatchRank, Matrix, Selector};
/// let data = [3, 1, 2, 6, 5, 4];
/// let sel = Selector::new();
/// assert_eq!(sel.select_rows(Matrix::new(&data, 2, 3), BatchRank::Same(2)).unwrap(), vec![3, 6]);
/// assert_eq!(sel.select_rows(Matrix::new(&data, 2, 3), &[0, 2][..]).unwrap(), vec![1, 6]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BatchRank<'a> {
    /// The same rank in every row or segment.
    Same(usize),
    /// `ranks[s]` of row or segment `s` (as many ranks as rows or segments).
    Each(&'a [usize]),
}

impl From<usize> for BatchRank<'_> {
    fn from(k: usize) -> Self {
        BatchRank::Same(k)
    }
}

impl<'a> From<&'a [usize]> for BatchRank<'a> {
    fn from(ranks: &'a [usize]) -> Self {
        BatchRank::Each(ranks)
    }
}

impl<'a> From<&'a Vec<usize>> for BatchRank<'a> {
    fn from(ranks: &'a Vec<usize>) -> Self {
        BatchRank::Each(ranks)
    }
}

impl<'a, const N: usize> From<&'a [usize; N]> for BatchRank<'a> {
    fn from(ranks: &'a [usize; N]) -> Self {
        BatchRank::Each(ranks)
    }
}

impl BatchRank<'_> {
    /// Runs `f` with the ranks as the backends take them.
    pub(crate) fn with_span_ranks<R>(self, f: impl FnOnce(SpanRanks<'_>) -> R) -> R {
        match self {
            BatchRank::Same(k) => f(SpanRanks::Same(&[k])),
            BatchRank::Each(ranks) => f(SpanRanks::OnePerSpan(ranks)),
        }
    }
}

/// `"row"` or `"segment"`, for messages.
pub(crate) fn span_name(spans: &Spans<'_>) -> &'static str {
    match spans {
        Spans::Rows { .. } => "row",
        Spans::Offsets(_) => "segment",
    }
}

/// Checks the ranks against the spans' lengths: one rank per span for `OnePerSpan`, and every
/// rank below the length of the span it is asked of.
pub(crate) fn check_ranks(spans: &Spans<'_>, ranks: &SpanRanks<'_>) -> Result<()> {
    let count = spans.count();
    match *ranks {
        SpanRanks::OnePerSpan(ranks) => {
            if ranks.len() != count {
                return Err(BatchError::RankCount {
                    given: ranks.len(),
                    spans: count,
                    kind: span_name(spans),
                }
                .into());
            }
            for (s, &k) in ranks.iter().enumerate() {
                let n = spans.len_of(s);
                if k >= n {
                    return Err(Error::RankOutOfRange { k, n });
                }
            }
        }
        SpanRanks::Same(ranks) => {
            let Some(&max) = ranks.iter().max() else {
                return Ok(());
            };
            if count > 0 && max >= spans.min_len() {
                // The first span too short for a rank, and that rank.
                for s in 0..count {
                    let n = spans.len_of(s);
                    if let Some(&k) = ranks.iter().find(|&&k| k >= n) {
                        return Err(Error::RankOutOfRange { k, n });
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_segments_become_spans() {
        let rows = Rows::new(3, 2).with_stride(5);
        assert_eq!(
            rows.spans(),
            Spans::Rows {
                rows: 3,
                cols: 2,
                stride: 5
            }
        );
        let offsets = [1, 4, 4];
        assert_eq!(Segments::new(&offsets).spans(), Spans::Offsets(&offsets));
        assert_eq!(Segments::new(&[]).count(), 0);
    }

    #[test]
    fn ranks_are_checked_per_span() {
        let offsets = [0, 3, 3, 7];
        let spans = Spans::Offsets(&offsets);
        assert!(check_ranks(&spans, &SpanRanks::OnePerSpan(&[2, 0])).is_err());
        assert!(matches!(
            check_ranks(&spans, &SpanRanks::OnePerSpan(&[2, 0, 3])),
            Err(Error::RankOutOfRange { k: 0, n: 0 })
        ));
        let nonempty = [0, 3, 7];
        let spans = Spans::Offsets(&nonempty);
        assert!(check_ranks(&spans, &SpanRanks::OnePerSpan(&[2, 3])).is_ok());
        assert!(check_ranks(&spans, &SpanRanks::Same(&[0, 2, 1])).is_ok());
        assert!(matches!(
            check_ranks(&spans, &SpanRanks::Same(&[0, 3])),
            Err(Error::RankOutOfRange { k: 3, n: 3 })
        ));
        assert!(check_ranks(&spans, &SpanRanks::Same(&[])).is_ok());
        assert!(check_ranks(&Spans::Offsets(&[5]), &SpanRanks::Same(&[9])).is_ok());
    }

    #[test]
    fn batch_ranks_convert() {
        let v = vec![1, 2];
        assert_eq!(BatchRank::from(3), BatchRank::Same(3));
        assert_eq!(BatchRank::from(&v), BatchRank::Each(&[1, 2]));
        assert_eq!(BatchRank::from(&[4]), BatchRank::Each(&[4]));
        assert_eq!(BatchRank::Same(7).with_span_ranks(|r| r.per_span()), 1);
        let each = [1, 2, 3];
        BatchRank::Each(&each)
            .with_span_ranks(|r| assert_eq!(r, SpanRanks::OnePerSpan(&[1, 2, 3])));
        BatchRank::Same(7).with_span_ranks(|r| assert_eq!(r, SpanRanks::Same(&[7])));
    }
}

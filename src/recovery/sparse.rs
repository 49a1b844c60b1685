//! [`SparseBinary`]: a sparse `m x n` matrix with `d` equal nonzeros in each column.

use rayon::prelude::*;

use crate::error::Result;
use crate::recovery::operator::{assert_lengths, sort_rows};
use crate::recovery::{LinearOperator, Real, RecoveryError};

/// Output entries below which a product is not split further between threads.
const GRAIN: usize = 4096;

/// An `m x n` matrix with exactly `d` nonzeros in each column, all `1 / sqrt(d)` (so every
/// column has unit norm): the adjacency matrix of a left-`d`-regular bipartite graph, an
/// expander for suitable random choices of the rows.
///
/// Stored both by columns (column `j`'s rows at `j d .. (j + 1) d` of
/// [`rows_of_columns`](SparseBinary::rows_of_columns)) and by rows (each row's columns,
/// ascending), so that `A x` (a sum over each row's columns) and `A^T y` (a sum over each
/// column's rows) both run in parallel over their outputs, each in `O(n d)` work. Sums are
/// accumulated in `T` in a fixed order (a row's columns ascending; a column's rows as given),
/// then scaled by `1 / sqrt(d)`.
///
/// ```
/// use kselect::recovery::{LinearOperator, SparseBinary};
///
/// // 3 x 4, two nonzeros a column.
/// let a = SparseBinary::<f64>::new(3, 4, 2, vec![0, 1, 1, 2, 0, 2, 0, 1])?;
/// let mut y = [0.0; 3];
/// a.apply(&[1.0, 1.0, 1.0, 1.0], &mut y);
/// let s = 1.0 / 2f64.sqrt();
/// assert_eq!(y, [3.0 * s, 3.0 * s, 2.0 * s]);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SparseBinary<T> {
    rows: usize,
    cols: usize,
    per_column: usize,
    scale: T,
    rows_of_columns: Vec<usize>,
    /// Row `i`'s columns at `row_starts[i] .. row_starts[i + 1]` of `columns_of_rows`.
    row_starts: Vec<usize>,
    columns_of_rows: Vec<usize>,
}

impl<T: Real> SparseBinary<T> {
    /// The `m x n` matrix whose column `j` has its `d` nonzeros in the rows
    /// `rows_of_columns[j d .. (j + 1) d]`. An error when `n` or `d` is 0, `d > m`,
    /// `rows_of_columns` does not hold `n d` rows, or a column's rows are not distinct or not
    /// below `m` (naming the column).
    ///
    /// ```
    /// use kselect::recovery::SparseBinary;
    /// assert!(SparseBinary::<f32>::new(3, 2, 2, vec![0, 2, 1, 2]).is_ok());
    /// assert!(SparseBinary::<f32>::new(3, 2, 2, vec![0, 2, 1, 1]).is_err()); // repeated
    /// assert!(SparseBinary::<f32>::new(3, 2, 2, vec![0, 3, 1, 2]).is_err()); // row 3 of 3
    /// assert!(SparseBinary::<f32>::new(3, 2, 4, vec![0; 8]).is_err()); // d > m
    /// ```
    pub fn new(
        m: usize,
        n: usize,
        d: usize,
        rows_of_columns: Vec<usize>,
    ) -> Result<SparseBinary<T>> {
        if n == 0 {
            return Err(RecoveryError::EmptyOperator {
                what: "a sparse measurement matrix",
                m,
                n,
            }
            .into());
        }
        if d == 0 || d > m {
            return Err(RecoveryError::NonzerosPerColumn { d, m }.into());
        }
        let too_large = || RecoveryError::OperatorTooLarge { m, n };
        let expected = n.checked_mul(d).ok_or_else(too_large)?;
        if rows_of_columns.len() != expected {
            return Err(RecoveryError::RowIndices {
                n,
                d,
                expected,
                given: rows_of_columns.len(),
            }
            .into());
        }
        let mut counts = Vec::new();
        counts
            .try_reserve_exact(m.saturating_add(1))
            .map_err(|_| too_large())?;
        counts.resize(m, 0usize);
        let mut sorted = Vec::with_capacity(d);
        for (j, column) in rows_of_columns.chunks_exact(d).enumerate() {
            sorted.clear();
            sorted.extend_from_slice(column);
            sort_rows(&mut sorted, m, Some(j))?;
            column.iter().for_each(|&r| counts[r] += 1);
        }
        // The transpose by counting sort: each row's columns come out ascending.
        let mut row_starts = Vec::with_capacity(m + 1);
        let mut total = 0;
        row_starts.push(0);
        for c in &counts {
            total += c;
            row_starts.push(total);
        }
        let mut next = row_starts[..m].to_vec();
        let mut columns_of_rows = vec![0usize; expected];
        for (j, column) in rows_of_columns.chunks_exact(d).enumerate() {
            for &r in column {
                columns_of_rows[next[r]] = j;
                next[r] += 1;
            }
        }
        Ok(SparseBinary {
            rows: m,
            cols: n,
            per_column: d,
            scale: T::of(1.0 / (d as f64).sqrt()),
            rows_of_columns,
            row_starts,
            columns_of_rows,
        })
    }

    /// `d`, the number of nonzeros in each column.
    ///
    /// ```
    /// let a = kselect::recovery::SparseBinary::<f64>::new(4, 2, 3, vec![0, 1, 2, 1, 2, 3])?;
    /// assert_eq!(a.nonzeros_per_column(), 3);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn nonzeros_per_column(&self) -> usize {
        self.per_column
    }

    /// The rows of the nonzeros, column by column: column `j`'s `d` rows at
    /// `j d .. (j + 1) d`, in the order given.
    ///
    /// ```
    /// let a = kselect::recovery::SparseBinary::<f64>::new(4, 2, 3, vec![0, 1, 2, 3, 2, 1])?;
    /// assert_eq!(&a.rows_of_columns()[3..], &[3, 2, 1]); // column 1
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn rows_of_columns(&self) -> &[usize] {
        &self.rows_of_columns
    }
}

impl<T: Real> LinearOperator<T> for SparseBinary<T> {
    fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// # Panics
    ///
    /// When `x` does not hold `n` values or `y` `m`.
    fn apply(&self, x: &[T], y: &mut [T]) {
        let (m, n) = (self.rows, self.cols);
        assert_lengths((m, n), x.len(), y.len(), false);
        y.par_iter_mut()
            .enumerate()
            .with_min_len(GRAIN)
            .for_each(|(i, yi)| {
                let columns = &self.columns_of_rows[self.row_starts[i]..self.row_starts[i + 1]];
                let mut sum = T::zero();
                for &j in columns {
                    sum += x[j];
                }
                *yi = sum * self.scale;
            });
    }

    /// # Panics
    ///
    /// When `y` does not hold `m` values or `x` `n`.
    fn adjoint(&self, y: &[T], x: &mut [T]) {
        let (m, n) = (self.rows, self.cols);
        assert_lengths((m, n), y.len(), x.len(), true);
        x.par_iter_mut()
            .zip(self.rows_of_columns.par_chunks(self.per_column))
            .with_min_len(GRAIN)
            .for_each(|(xj, rows)| {
                let mut sum = T::zero();
                for &i in rows {
                    sum += y[i];
                }
                *xj = sum * self.scale;
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_lists_each_rows_columns_ascending() {
        let a = SparseBinary::<f64>::new(3, 4, 2, vec![2, 0, 1, 2, 0, 2, 0, 1]).unwrap();
        assert_eq!(a.row_starts, vec![0, 3, 5, 8]);
        assert_eq!(a.columns_of_rows, vec![0, 2, 3, 1, 3, 0, 1, 2]);
    }

    #[test]
    fn errors_name_the_column_and_the_numbers() {
        let err = |m, n, d, rows: Vec<usize>| match SparseBinary::<f64>::new(m, n, d, rows) {
            Err(crate::Error::Recovery(e)) => e,
            other => panic!("unexpected {other:?}"),
        };
        let e = err(3, 2, 2, vec![0, 1, 2, 2]);
        assert_eq!(
            e,
            RecoveryError::RepeatedRow {
                column: Some(1),
                row: 2
            }
        );
        assert!(
            e.to_string().contains("row 2 is given twice in column 1"),
            "{e}"
        );
        let e = err(3, 2, 2, vec![0, 5, 2, 1]);
        let want = RecoveryError::RowOutOfRange {
            column: Some(0),
            row: 5,
            rows: 3,
        };
        assert_eq!(e, want);
        assert!(
            e.to_string().contains("row 5 in column 0 is out of range"),
            "{e}"
        );
        let e = err(3, usize::MAX, 2, vec![]);
        assert_eq!(
            e,
            RecoveryError::OperatorTooLarge {
                m: 3,
                n: usize::MAX
            }
        );
        assert!(e.to_string().contains("memory"), "{e}");
        assert_eq!(
            err(3, 2, 4, vec![0; 8]),
            RecoveryError::NonzerosPerColumn { d: 4, m: 3 }
        );
        assert_eq!(
            err(3, 2, 0, vec![]),
            RecoveryError::NonzerosPerColumn { d: 0, m: 3 }
        );
        let e = err(3, 0, 1, vec![]);
        assert!(
            matches!(e, RecoveryError::EmptyOperator { m: 3, n: 0, .. }),
            "{e}"
        );
        let want = RecoveryError::RowIndices {
            n: 2,
            d: 2,
            expected: 4,
            given: 3,
        };
        assert_eq!(err(3, 2, 2, vec![0, 1, 2]), want);
    }
}

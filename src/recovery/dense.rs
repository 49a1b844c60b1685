//! [`DenseMatrix`]: an explicit `m x n` measurement matrix, row-major.

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::error::Result;
use crate::recovery::operator::assert_lengths;
use crate::recovery::{LinearOperator, Real, RecoveryError};

/// Multiply–adds below which a product is not split further between threads.
const GRAIN: usize = 1 << 14;

/// Columns from which `A^T y` is shared out between threads by blocks of columns (below, by
/// groups of rows).
const WIDE: usize = 2048;

/// The most groups of rows `A^T y` of a narrow matrix is split into.
const GROUPS: usize = 64;

/// An `m x n` matrix of finite values, stored row-major (entry `(i, j)` at `i * n + j`),
/// owned.
///
/// As a [`LinearOperator`], `A x` takes the dot product of each row with `x` (rows in
/// parallel), and `A^T y` sums `y_i` times row `i` over the rows, for one block of columns at
/// a time when there are 2048 columns or more (blocks in parallel), for one group of rows at a
/// time otherwise (groups in parallel, their sums then added in order). Both accumulate in
/// `T`, each output entry in an order fixed by the shape, so the results do not depend on the
/// number of threads.
///
/// ```
/// use kselect::recovery::{DenseMatrix, LinearOperator};
///
/// let a = DenseMatrix::new(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3)?;
/// let mut y = [0.0; 2];
/// a.apply(&[1.0, 0.0, -1.0], &mut y);
/// assert_eq!(y, [-2.0, -2.0]);
/// let mut x = [0.0; 3];
/// a.adjoint(&[1.0, 1.0], &mut x);
/// assert_eq!(x, [5.0, 7.0, 9.0]);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DenseMatrix<T> {
    data: Vec<T>,
    rows: usize,
    cols: usize,
}

impl<T: Real> DenseMatrix<T> {
    /// The `rows x cols` matrix whose entries are `data`, row-major. An error when `rows` or
    /// `cols` is 0, when `data` does not hold `rows * cols` values, or when an entry is NaN or
    /// infinite (naming its row and column).
    ///
    /// ```
    /// use kselect::recovery::DenseMatrix;
    /// let a = DenseMatrix::new(vec![1.0f32; 6], 3, 2)?;
    /// assert_eq!((a.rows(), a.cols()), (3, 2));
    /// assert!(DenseMatrix::new(vec![1.0f32; 5], 3, 2).is_err());
    /// assert!(DenseMatrix::new(vec![1.0f32, f32::NAN], 1, 2).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn new(data: Vec<T>, rows: usize, cols: usize) -> Result<DenseMatrix<T>> {
        if rows == 0 || cols == 0 {
            return Err(RecoveryError::EmptyOperator {
                what: "a measurement matrix",
                m: rows,
                n: cols,
            }
            .into());
        }
        let expected = rows
            .checked_mul(cols)
            .ok_or(RecoveryError::OperatorTooLarge { m: rows, n: cols })?;
        if data.len() != expected {
            return Err(RecoveryError::MatrixValues {
                rows,
                cols,
                expected,
                given: data.len(),
            }
            .into());
        }
        if let Some(at) = data.iter().position(|&v| !num_traits::Float::is_finite(v)) {
            return Err(RecoveryError::NonFiniteEntry {
                row: at / cols,
                column: at % cols,
                value: data[at].as_f64(),
            }
            .into());
        }
        Ok(DenseMatrix { data, rows, cols })
    }

    /// The matrix of an ndarray view of any layout (copied row-major), with the checks of
    /// [`DenseMatrix::new`].
    ///
    /// ```
    /// use kselect::recovery::DenseMatrix;
    /// use ndarray::array;
    /// let a = array![[1.0f64, 2.0], [3.0, 4.0]];
    /// let t = DenseMatrix::from_array(a.t())?;
    /// assert_eq!(t.as_slice(), &[1.0, 3.0, 2.0, 4.0]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn from_array(a: ArrayView2<'_, T>) -> Result<DenseMatrix<T>> {
        let (rows, cols) = a.dim();
        DenseMatrix::new(a.iter().copied().collect(), rows, cols)
    }

    /// The number of rows `m` (measurements).
    ///
    /// ```
    /// let a = kselect::recovery::DenseMatrix::new(vec![0.5f32; 8], 2, 4)?;
    /// assert_eq!(a.rows(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of columns `n` (the signal's length).
    ///
    /// ```
    /// let a = kselect::recovery::DenseMatrix::new(vec![0.5f32; 8], 2, 4)?;
    /// assert_eq!(a.cols(), 4);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Every entry, row-major.
    ///
    /// ```
    /// let a = kselect::recovery::DenseMatrix::new(vec![1.0f64, 2.0, 3.0, 4.0], 2, 2)?;
    /// assert_eq!(a.as_slice()[2], 3.0); // row 1, column 0
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }
}

impl<T: Real> LinearOperator<T> for DenseMatrix<T> {
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
            .zip(self.data.par_chunks(n))
            .with_min_len((GRAIN / n).max(1))
            .for_each(|(yi, row)| *yi = dot_in_lanes(row, x));
    }

    /// # Panics
    ///
    /// When `y` does not hold `m` values or an index is not below `n`.
    fn apply_columns(&self, entries: &[(usize, T)], y: &mut [T]) -> bool {
        let (m, n) = (self.rows, self.cols);
        assert_eq!(
            y.len(),
            m,
            "A w of an {m} x {n} matrix fills y of {m} values"
        );
        assert!(
            entries.iter().all(|&(j, _)| j < n),
            "A w of an {m} x {n} matrix takes indices below {n}"
        );
        // Each row's few entries, summed in the order given.
        y.par_iter_mut()
            .zip(self.data.par_chunks(n))
            .with_min_len((GRAIN / entries.len().max(1)).max(1))
            .for_each(|(yi, row)| {
                let mut sum = T::zero();
                for &(j, w) in entries {
                    sum += row[j] * w;
                }
                *yi = sum;
            });
        true
    }

    /// # Panics
    ///
    /// When `y` does not hold `m` values or `x` `n`.
    fn adjoint(&self, y: &[T], x: &mut [T]) {
        let (m, n) = (self.rows, self.cols);
        assert_lengths((m, n), y.len(), x.len(), true);
        if n >= WIDE {
            // Blocks of columns, a few per thread, each long enough to stream its part of a
            // row: every x_j sums over the rows in order.
            let per_thread = n.div_ceil(4 * rayon::current_num_threads());
            let block = per_thread.max((GRAIN / m).max(256)).min(n);
            x.par_chunks_mut(block).enumerate().for_each(|(b, xb)| {
                let columns = b * block..b * block + xb.len();
                xb.iter_mut().for_each(|v| *v = T::zero());
                for (row, &yi) in self.data.chunks_exact(n).zip(y) {
                    for (xj, &a) in xb.iter_mut().zip(&row[columns.clone()]) {
                        *xj += yi * a;
                    }
                }
            });
        } else {
            // Too few columns to share out: groups of rows (at most GROUPS of them, their
            // size fixed by the shape alone) each sum into a vector of their own, and the
            // groups' sums are added in order.
            let group = m.div_ceil(GROUPS).max(GRAIN.div_ceil(n));
            let partial_sums: Vec<Vec<T>> = self
                .data
                .par_chunks(group * n)
                .zip(y.par_chunks(group))
                .map(|(rows, ys)| {
                    let mut sum = vec![T::zero(); n];
                    for (row, &yi) in rows.chunks_exact(n).zip(ys) {
                        for (sj, &a) in sum.iter_mut().zip(row) {
                            *sj += yi * a;
                        }
                    }
                    sum
                })
                .collect();
            x.iter_mut().for_each(|v| *v = T::zero());
            for sum in &partial_sums {
                for (xj, &s) in x.iter_mut().zip(sum) {
                    *xj += s;
                }
            }
        }
    }
}

/// Accumulators of [`dot_in_lanes`]: enough for the compiler to keep several SIMD registers
/// of partial sums in flight.
const LANES: usize = 16;

/// `sum a_i b_i` in [`LANES`] interleaved partial sums (lane `l` takes every `i = l mod
/// LANES`), added pairwise at the end, then the tail: a fixed order, so the same on every
/// machine, that vectorises where a single running sum cannot.
fn dot_in_lanes<T: Real>(a: &[T], b: &[T]) -> T {
    let mut lanes = [T::zero(); LANES];
    let (a_body, b_body) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (a_tail, b_tail) = (a_body.remainder(), b_body.remainder());
    for (ca, cb) in a_body.zip(b_body) {
        for l in 0..LANES {
            lanes[l] += ca[l] * cb[l];
        }
    }
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        let (low, high) = lanes.split_at_mut(width);
        for (a, &b) in low.iter_mut().zip(high.iter()) {
            *a += b;
        }
    }
    let mut sum = lanes[0];
    for (&x, &y) in a_tail.iter().zip(b_tail) {
        sum += x * y;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_in_lanes_sums_every_product_once() {
        for len in [0usize, 1, 15, 16, 17, 33, 100] {
            let a: Vec<f64> = (0..len).map(|i| (i % 7) as f64 - 3.0).collect();
            let b: Vec<f64> = (0..len).map(|i| (i % 5) as f64).collect();
            let exact: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert_eq!(dot_in_lanes(&a, &b), exact, "{len}");
        }
    }

    #[test]
    fn errors_name_the_problem_and_its_numbers() {
        let err = |data: Vec<f64>, rows, cols| match DenseMatrix::new(data, rows, cols) {
            Err(crate::Error::Recovery(e)) => e,
            other => panic!("unexpected {other:?}"),
        };
        let e = err(vec![1.0, 2.0, f64::INFINITY, 4.0], 2, 2);
        let want = RecoveryError::NonFiniteEntry {
            row: 1,
            column: 0,
            value: f64::INFINITY,
        };
        assert_eq!(e, want);
        assert!(e.to_string().contains("row 1 and column 0 is inf"), "{e}");
        let e = err(vec![], 0, 3);
        assert!(
            matches!(e, RecoveryError::EmptyOperator { m: 0, n: 3, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("at least one measurement"), "{e}");
        let e = err(vec![], usize::MAX, 2);
        assert_eq!(
            e,
            RecoveryError::OperatorTooLarge {
                m: usize::MAX,
                n: 2
            }
        );
        assert!(e.to_string().contains("memory"), "{e}");
        let want = RecoveryError::MatrixValues {
            rows: 3,
            cols: 2,
            expected: 6,
            given: 5,
        };
        assert_eq!(err(vec![1.0; 5], 3, 2), want);
    }

    #[test]
    fn wide_and_tall_products() {
        for (m, n) in [
            (1, 1),
            (1, 3000),
            (3000, 1),
            (7, 513),
            (100_000, 3),
            (40, 2048),
        ] {
            let data: Vec<f64> = (0..m * n).map(|i| ((i * 37) % 11) as f64 - 5.0).collect();
            let a = DenseMatrix::new(data.clone(), m, n).unwrap();
            let x: Vec<f64> = (0..n).map(|j| (j % 5) as f64).collect();
            let y: Vec<f64> = (0..m).map(|i| (i % 3) as f64 - 1.0).collect();
            let mut ax = vec![0.0; m];
            let mut aty = vec![f64::NAN; n];
            a.apply(&x, &mut ax);
            a.adjoint(&y, &mut aty);
            for i in 0..m {
                let e: f64 = (0..n).map(|j| data[i * n + j] * x[j]).sum();
                assert_eq!(ax[i], e);
            }
            for j in 0..n {
                let e: f64 = (0..m).map(|i| data[i * n + j] * y[i]).sum();
                assert_eq!(aty[j], e);
            }
        }
    }
}

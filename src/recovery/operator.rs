//! [`LinearOperator`]: the measurement operator of a recovery problem.

use rayon::prelude::*;

use crate::recovery::{Real, RecoveryError};

/// A linear map `A` from signals of `n` values to measurements of `m` values, with its
/// adjoint `A^T`, on the CPU. The solvers only touch `A` through these two products, so any
/// operator with a fast product (a transform, a sparse matrix) can be brought as it is.
///
/// ```
/// use kselect::recovery::LinearOperator;
///
/// /// Keeps the first two of three entries.
/// struct FirstTwo;
/// impl LinearOperator<f64> for FirstTwo {
///     fn shape(&self) -> (usize, usize) {
///         (2, 3)
///     }
///     fn apply(&self, x: &[f64], y: &mut [f64]) {
///         y.copy_from_slice(&x[..2]);
///     }
///     fn adjoint(&self, y: &[f64], x: &mut [f64]) {
///         x[..2].copy_from_slice(y);
///         x[2] = 0.0;
///     }
/// }
/// let mut y = [0.0; 2];
/// FirstTwo.apply(&[1.0, 2.0, 3.0], &mut y);
/// assert_eq!(y, [1.0, 2.0]);
/// ```
pub trait LinearOperator<T: Real>: Send + Sync {
    /// `(m, n)`: the measurements and the signal's length.
    fn shape(&self) -> (usize, usize);

    /// `y = A x`: `x` holds `n` values, `y` `m` (overwritten).
    fn apply(&self, x: &[T], y: &mut [T]);

    /// `x = A^T y`: `y` holds `m` values, `x` `n` (overwritten).
    fn adjoint(&self, y: &[T], x: &mut [T]);

    /// [`apply`](LinearOperator::apply) to each of several signals, `n` values each, one
    /// after the other in `xs`, into `m` values each in `ys`; in parallel by default.
    ///
    /// ```
    /// # use kselect::recovery::LinearOperator;
    /// # struct Twice;
    /// # impl LinearOperator<f32> for Twice {
    /// #     fn shape(&self) -> (usize, usize) { (1, 1) }
    /// #     fn apply(&self, x: &[f32], y: &mut [f32]) { y[0] = 2.0 * x[0]; }
    /// #     fn adjoint(&self, y: &[f32], x: &mut [f32]) { x[0] = 2.0 * y[0]; }
    /// # }
    /// let mut ys = [0.0f32; 3];
    /// Twice.apply_many(&[1.0, 2.0, 3.0], &mut ys);
    /// assert_eq!(ys, [2.0, 4.0, 6.0]);
    /// ```
    fn apply_many(&self, xs: &[T], ys: &mut [T]) {
        let (m, n) = self.shape();
        each_product((xs, n), (ys, m), |x, y| self.apply(x, y));
    }

    /// `y = A w` for a `w` of a few nonzero entries (`(index, value)`, indices below `n`), when
    /// the operator has a direct way to it (a dense matrix reads just those columns): `true`
    /// then, `false` (and `y` untouched) when it has none, for the caller to apply `A` to the
    /// whole vector. By default `false`.
    ///
    /// ```
    /// use kselect::recovery::{DenseMatrix, LinearOperator};
    /// let a = DenseMatrix::new(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3)?;
    /// let mut y = [0.0; 2];
    /// assert!(a.apply_columns(&[(2, 1.0), (0, -1.0)], &mut y));
    /// assert_eq!(y, [2.0, 2.0]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    fn apply_columns(&self, entries: &[(usize, T)], y: &mut [T]) -> bool {
        let _ = (entries, y);
        false
    }

    /// [`adjoint`](LinearOperator::adjoint) of each of several measurement vectors, `m`
    /// values each in `ys`, into `n` values each in `xs`; in parallel by default.
    ///
    /// ```
    /// # use kselect::recovery::LinearOperator;
    /// # struct Twice;
    /// # impl LinearOperator<f32> for Twice {
    /// #     fn shape(&self) -> (usize, usize) { (1, 1) }
    /// #     fn apply(&self, x: &[f32], y: &mut [f32]) { y[0] = 2.0 * x[0]; }
    /// #     fn adjoint(&self, y: &[f32], x: &mut [f32]) { x[0] = 2.0 * y[0]; }
    /// # }
    /// let mut xs = [0.0f32; 2];
    /// Twice.adjoint_many(&[1.0, -1.0], &mut xs);
    /// assert_eq!(xs, [2.0, -2.0]);
    /// ```
    fn adjoint_many(&self, ys: &[T], xs: &mut [T]) {
        let (m, n) = self.shape();
        each_product((ys, m), (xs, n), |y, x| self.adjoint(y, x));
    }
}

/// `product(input, output)` of each input of `len_in` values in `inputs` into the output of
/// `len_out` values at the same place in `outputs`, in parallel: the products of many vectors.
/// Outputs of an empty operator (`len_in` or `len_out` 0) are zeros.
fn each_product<T: Real>(
    (inputs, len_in): (&[T], usize),
    (outputs, len_out): (&mut [T], usize),
    product: impl Fn(&[T], &mut [T]) + Sync,
) {
    if len_in == 0 || len_out == 0 {
        outputs.iter_mut().for_each(|v| *v = T::zero());
        return;
    }
    inputs
        .par_chunks(len_in)
        .zip(outputs.par_chunks_mut(len_out))
        .for_each(|(input, output)| product(input, output));
}

/// Panics unless `input` and `output` hold the values of `A x` (`adjoint`: of `A^T y`) for an
/// `m x n` operator: the check of every operator's products.
pub(crate) fn assert_lengths((m, n): (usize, usize), input: usize, output: usize, adjoint: bool) {
    let (product, from, to, (want_in, want_out)) = if adjoint {
        ("A^T y", "y", "x", (m, n))
    } else {
        ("A x", "x", "y", (n, m))
    };
    assert_eq!(
        input, want_in,
        "{product} of an {m} x {n} operator needs {from} of {want_in} values"
    );
    assert_eq!(
        output, want_out,
        "{product} of an {m} x {n} operator fills {to} of {want_out} values"
    );
}

/// Sorts `rows` ascending: an error where a row is not below `bound` or is given twice (naming
/// the sparse matrix's `column` they are the nonzeros of; `None` for a DCT's rows).
pub(crate) fn sort_rows(
    rows: &mut [usize],
    bound: usize,
    column: Option<usize>,
) -> Result<(), RecoveryError> {
    if let Some(&row) = rows.iter().find(|&&r| r >= bound) {
        return Err(RecoveryError::RowOutOfRange {
            column,
            row,
            rows: bound,
        });
    }
    rows.sort_unstable();
    match rows.windows(2).find(|w| w[0] == w[1]) {
        Some(pair) => Err(RecoveryError::RepeatedRow {
            column,
            row: pair[0],
        }),
        None => Ok(()),
    }
}

/// An error naming the first of `ops` of another shape than the first.
pub(crate) fn check_one_shape<T: Real, O: LinearOperator<T>>(
    ops: &[O],
) -> Result<(), RecoveryError> {
    let Some(first) = ops.first().map(O::shape) else {
        return Ok(());
    };
    match ops
        .iter()
        .map(O::shape)
        .enumerate()
        .find(|(_, s)| *s != first)
    {
        Some((index, shape)) => Err(RecoveryError::ShapeMismatch {
            index,
            shape,
            first,
        }),
        None => Ok(()),
    }
}

//! [`SubsampledDct`]: some rows of the orthonormal discrete cosine transform, applied in
//! `O(n log n)` through a complex FFT of length `n`.

use std::fmt;
use std::sync::Arc;

use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};

use crate::error::Result;
use crate::recovery::operator::{assert_lengths, sort_rows};
use crate::recovery::{LinearOperator, Real, RecoveryError};

/// The rows `rows` (sorted ascending, distinct) of the orthonormal DCT-II of length `n`,
/// `C[k][j] = s_k cos(pi (2j + 1) k / (2n))` with `s_0 = sqrt(1/n)` and `s_k = sqrt(2/n)` for
/// `k > 0`: an `m x n` operator, `m` the number of rows.
///
/// `A x` is `(C x)` at the rows, in ascending order; `A^T y` is `C^T z` (the orthonormal
/// DCT-III) of `z` holding `y` at the rows and zeros elsewhere. Both take one complex FFT of
/// length `n` (any `n >= 1`), planned once by [`SubsampledDct::new`]: the DCT-II as the FFT of
/// `v` (`v[j] = x[2j]`, `v[n - 1 - j] = x[2j + 1]`) turned by `s_k exp(-i pi k / (2n))`, the
/// DCT-III by the inverse steps. With every row, `A` is orthogonal: `A^T A = I`.
///
/// ```
/// use kselect::recovery::{LinearOperator, SubsampledDct};
///
/// let dct = SubsampledDct::<f64>::new(4, vec![0, 2])?;
/// let mut y = [0.0; 2];
/// dct.apply(&[1.0, 1.0, 1.0, 1.0], &mut y); // a constant: all in the first coefficient
/// assert!((y[0] - 2.0).abs() < 1e-15 && y[1].abs() < 1e-15);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone)]
pub struct SubsampledDct<T: Real> {
    len: usize,
    rows: Vec<usize>,
    forward: Arc<dyn Fft<T>>,
    inverse: Arc<dyn Fft<T>>,
    /// `s_k exp(-i pi k / (2n))`.
    turn: Vec<Complex<T>>,
    /// `exp(i pi k / (2n)) / sqrt(2n)` (index 0: `1 / sqrt(n)`).
    unturn: Vec<Complex<T>>,
}

impl<T: Real> SubsampledDct<T> {
    /// The rows `rows` (in any order; kept sorted ascending) of the DCT of length `n`. An
    /// error when `n` is 0, `rows` is empty, a row is not below `n`, or a row is repeated.
    ///
    /// ```
    /// use kselect::recovery::SubsampledDct;
    /// let dct = SubsampledDct::<f32>::new(8, vec![5, 1, 3])?;
    /// assert_eq!(dct.rows(), &[1, 3, 5]);
    /// assert!(SubsampledDct::<f32>::new(8, vec![1, 8]).is_err());
    /// assert!(SubsampledDct::<f32>::new(8, vec![1, 1]).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn new(n: usize, mut rows: Vec<usize>) -> Result<SubsampledDct<T>> {
        if n == 0 || rows.is_empty() {
            return Err(RecoveryError::EmptyOperator {
                what: "a subsampled DCT",
                m: rows.len(),
                n,
            }
            .into());
        }
        sort_rows(&mut rows, n, None)?;
        let mut planner = FftPlanner::new();
        let forward = planner.plan_fft_forward(n);
        let inverse = planner.plan_fft_inverse(n);
        let nf = n as f64;
        let quarter_turn = |k: usize| {
            let angle = std::f64::consts::PI * k as f64 / (2.0 * nf);
            (angle.cos(), angle.sin())
        };
        let turn = (0..n)
            .map(|k| {
                let s = if k == 0 {
                    (1.0 / nf).sqrt()
                } else {
                    (2.0 / nf).sqrt()
                };
                let (c, si) = quarter_turn(k);
                Complex::new(T::of(s * c), T::of(-s * si))
            })
            .collect();
        let unturn = (0..n)
            .map(|k| {
                if k == 0 {
                    Complex::new(T::of(1.0 / nf.sqrt()), T::zero())
                } else {
                    let s = 1.0 / (2.0 * nf).sqrt();
                    let (c, si) = quarter_turn(k);
                    Complex::new(T::of(s * c), T::of(s * si))
                }
            })
            .collect();
        Ok(SubsampledDct {
            len: n,
            rows,
            forward,
            inverse,
            turn,
            unturn,
        })
    }

    /// The length `n` of the transform (the signal's length).
    ///
    /// ```
    /// let dct = kselect::recovery::SubsampledDct::<f64>::new(100, vec![0, 7])?;
    /// assert_eq!(dct.len(), 100);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    #[allow(clippy::len_without_is_empty)] // never empty: n >= 1
    pub fn len(&self) -> usize {
        self.len
    }

    /// The rows kept, ascending: measurement `i` is coefficient `rows()[i]`.
    ///
    /// ```
    /// let dct = kselect::recovery::SubsampledDct::<f64>::new(100, vec![9, 0, 7])?;
    /// assert_eq!(dct.rows(), &[0, 7, 9]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn rows(&self) -> &[usize] {
        &self.rows
    }

    /// The factors of the forward transform (`s_k e^{-i pi k / 2n}`) and of the inverse one,
    /// each as `n` interleaved `(re, im)` pairs: what the CUDA form of the operator needs.
    pub(crate) fn twiddles(&self) -> (Vec<T>, Vec<T>) {
        let interleave = |v: &[Complex<T>]| v.iter().flat_map(|c| [c.re, c.im]).collect();
        (interleave(&self.turn), interleave(&self.unturn))
    }

    /// The full orthonormal DCT-II of `x` into `out` (both of `n` values).
    fn dct2(&self, x: &[T], out: &mut [T]) {
        let n = self.len;
        let mut buffer = vec![Complex::new(T::zero(), T::zero()); n];
        for (j, pair) in x.chunks(2).enumerate() {
            buffer[j].re = pair[0];
            if let Some(&odd) = pair.get(1) {
                buffer[n - 1 - j].re = odd;
            }
        }
        let mut scratch =
            vec![Complex::new(T::zero(), T::zero()); self.forward.get_inplace_scratch_len()];
        self.forward.process_with_scratch(&mut buffer, &mut scratch);
        for ((o, v), t) in out.iter_mut().zip(&buffer).zip(&self.turn) {
            *o = t.re * v.re - t.im * v.im;
        }
    }

    /// The full orthonormal DCT-III (the inverse of [`dct2`](Self::dct2)) of `z` into `out`
    /// (both of `n` values).
    fn dct3(&self, z: &[T], out: &mut [T]) {
        let n = self.len;
        let mut buffer: Vec<Complex<T>> = (0..n)
            .map(|k| {
                let u = self.unturn[k];
                if k == 0 {
                    Complex::new(u.re * z[0], T::zero())
                } else {
                    u * Complex::new(z[k], -z[n - k])
                }
            })
            .collect();
        let mut scratch =
            vec![Complex::new(T::zero(), T::zero()); self.inverse.get_inplace_scratch_len()];
        self.inverse.process_with_scratch(&mut buffer, &mut scratch);
        for (j, pair) in out.chunks_mut(2).enumerate() {
            pair[0] = buffer[j].re;
            if let Some(odd) = pair.get_mut(1) {
                *odd = buffer[n - 1 - j].re;
            }
        }
    }
}

impl<T: Real> fmt::Debug for SubsampledDct<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubsampledDct")
            .field("len", &self.len)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl<T: Real> PartialEq for SubsampledDct<T> {
    /// The same length and the same rows.
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.rows == other.rows
    }
}

impl<T: Real> LinearOperator<T> for SubsampledDct<T> {
    fn shape(&self) -> (usize, usize) {
        (self.rows.len(), self.len)
    }

    /// # Panics
    ///
    /// When `x` does not hold `n` values or `y` `m`.
    fn apply(&self, x: &[T], y: &mut [T]) {
        let (m, n) = self.shape();
        assert_lengths((m, n), x.len(), y.len(), false);
        let mut full = vec![T::zero(); n];
        self.dct2(x, &mut full);
        for (yi, &row) in y.iter_mut().zip(&self.rows) {
            *yi = full[row];
        }
    }

    /// # Panics
    ///
    /// When `y` does not hold `m` values or `x` `n`.
    fn adjoint(&self, y: &[T], x: &mut [T]) {
        let (m, n) = self.shape();
        assert_lengths((m, n), y.len(), x.len(), true);
        let mut z = vec![T::zero(); n];
        for (&yi, &row) in y.iter().zip(&self.rows) {
            z[row] = yi;
        }
        self.dct3(&z, x);
    }
}

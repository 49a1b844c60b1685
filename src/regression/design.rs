//! The design of a fit: the checked, standardized copy of `x` (with the intercept column) and
//! `y`.
//!
//! The estimators work on standardized predictors: with an intercept, column `j` becomes
//! `(x_j - mean_j) / sd_j`; without one, `x_j / rms_j`. This keeps the normal equations of the
//! C-steps well conditioned whatever the units of the columns; coefficients are mapped back to
//! the user's units at the end ([`Design::to_original`]). Residuals are the same in both.
//!
//! Checks, each a [`RegressionError`] naming its numbers: matching lengths, `n > p` (coefficients,
//! counting the intercept), finite values (the first non-finite value is named by row and
//! column), no constant column (robustbase refuses them too: with an intercept such a column
//! duplicates it, without one it should be replaced by the intercept), and no column that is
//! (numerically) a linear combination of the others.

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::element::first_non_finite;
use crate::error::Result;
use crate::regression::error::RegressionError;
use crate::regression::linalg::first_dependent_column;

/// Rows per chunk of the parallel passes (fixed, so that sums do not depend on the threads).
pub(crate) const CHUNK: usize = 16_384;

/// Row counts from which the passes over the rows use several threads.
pub(crate) const PARALLEL_ROWS: usize = 65_536;

/// The checked and standardized data of a fit.
#[derive(Clone, Debug)]
pub(crate) struct Design {
    /// `n x p` row-major, standardized; column 0 is the intercept (all ones) when there is one.
    pub x: Vec<f64>,
    /// The response.
    pub y: Vec<f64>,
    /// Rows.
    pub n: usize,
    /// Columns, counting the intercept.
    pub p: usize,
    /// Whether column 0 is the intercept.
    pub intercept: bool,
    /// Per predictor (not the intercept): the value subtracted.
    center: Vec<f64>,
    /// Per predictor: the divisor.
    scale: Vec<f64>,
}

/// A borrowed set of rows: `n x p` row-major `x` and `y`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rows<'a> {
    pub x: &'a [f64],
    pub y: &'a [f64],
    pub n: usize,
    pub p: usize,
}

impl<'a> Rows<'a> {
    /// Row `i` of `x`.
    #[inline]
    pub fn row(&self, i: usize) -> &'a [f64] {
        &self.x[i * self.p..(i + 1) * self.p]
    }
}

/// An owned copy of some rows of a design (a subsample).
#[derive(Clone, Debug)]
pub(crate) struct Sample {
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub n: usize,
    pub p: usize,
}

impl Sample {
    /// The rows `indices` of `rows`, in that order.
    pub fn gather(rows: Rows<'_>, indices: &[usize]) -> Sample {
        let mut x = Vec::with_capacity(indices.len() * rows.p);
        let mut y = Vec::with_capacity(indices.len());
        for &i in indices {
            x.extend_from_slice(rows.row(i));
            y.push(rows.y[i]);
        }
        Sample {
            x,
            y,
            n: indices.len(),
            p: rows.p,
        }
    }

    /// The rows as a view.
    pub fn rows(&self) -> Rows<'_> {
        Rows {
            x: &self.x,
            y: &self.y,
            n: self.n,
            p: self.p,
        }
    }
}

impl Design {
    /// Checks and standardizes `x` (`n x k` row-major, the predictors without the intercept)
    /// and `y`.
    pub fn new(x: &[f64], n: usize, k: usize, y: &[f64], intercept: bool) -> Result<Design> {
        let p = k + usize::from(intercept);
        if n == 0 {
            return Err(RegressionError::NoRows.into());
        }
        if p == 0 {
            return Err(RegressionError::NoCoefficients.into());
        }
        if n.checked_mul(k) != Some(x.len()) {
            return Err(RegressionError::XLength { len: x.len(), n, k }.into());
        }
        if y.len() != n {
            return Err(RegressionError::YLength { len: y.len(), n }.into());
        }
        if n <= p {
            return Err(RegressionError::TooFewRows { n, p, intercept }.into());
        }
        let stats = column_stats(x, k);
        if let Some(pos) = stats.first_non_finite {
            return Err(RegressionError::NonFinite {
                row: pos / k,
                column: Some(pos % k),
                value: x[pos],
            }
            .into());
        }
        if let Some(pos) = first_non_finite(y) {
            return Err(RegressionError::NonFinite {
                row: pos,
                column: None,
                value: y[pos],
            }
            .into());
        }

        // Column centers and scales: with an intercept the mean and the root mean square
        // deviation, without one the root mean square.
        let nf = n as f64;
        let (center, scale): (Vec<f64>, Vec<f64>) = if intercept {
            let scale = stats.m2.iter().map(|m2| (m2 / nf).sqrt()).collect();
            (stats.mean, scale)
        } else {
            let scale = (stats.m2.iter().zip(&stats.mean))
                .map(|(m2, mean)| ((m2 + nf * mean * mean) / nf).sqrt())
                .collect();
            (vec![0.0; k], scale)
        };
        for j in 0..k {
            if stats.constant[j] {
                return Err(RegressionError::ConstantColumn {
                    column: j,
                    value: x[j],
                    intercept,
                }
                .into());
            }
            if !scale[j].is_finite() || scale[j] <= 0.0 {
                return Err(RegressionError::Unscalable {
                    column: j,
                    spread: scale[j],
                }
                .into());
            }
        }

        let off = usize::from(intercept);
        // The standardized rows, and in the same pass (chunk by chunk, as `cross_product`
        // would sum them) the partial `X'X` of the rank check.
        let mut xs = vec![0.0; n * p];
        let partials: Vec<Vec<f64>> = xs
            .par_chunks_mut(p * CHUNK)
            .enumerate()
            .map(|(c, out)| {
                let start = c * CHUNK;
                for (r, row) in out.chunks_exact_mut(p).enumerate() {
                    let i = start + r;
                    if intercept {
                        row[0] = 1.0;
                    }
                    for j in 0..k {
                        row[off + j] = (x[i * k + j] - center[j]) / scale[j];
                    }
                }
                let rows = Rows {
                    x: out,
                    y: &[],
                    n: out.len() / p,
                    p,
                };
                chunk_cross_product(rows)
            })
            .collect();
        let mut ys = Vec::with_capacity(n);
        y.par_iter().copied().collect_into_vec(&mut ys);
        let design = Design {
            x: xs,
            y: ys,
            n,
            p,
            intercept,
            center,
            scale,
        };
        design.check_rank(add_partials(partials, p))?;
        Ok(design)
    }

    /// All rows.
    pub fn rows(&self) -> Rows<'_> {
        Rows {
            x: &self.x,
            y: &self.y,
            n: self.n,
            p: self.p,
        }
    }

    /// Err when a column is (numerically) a linear combination of the others: the Cholesky
    /// factorization of the standardized `X'X` (`xtx`, [`cross_product`]'s) fails.
    fn check_rank(&self, xtx: Vec<f64>) -> Result<()> {
        let p = self.p;
        match first_dependent_column(&xtx, p) {
            None => Ok(()),
            Some(col) => Err(RegressionError::Collinear {
                column: col.checked_sub(usize::from(self.intercept)),
                intercept: self.intercept,
            }
            .into()),
        }
    }

    /// Coefficients of the standardized columns mapped to the user's units (intercept first).
    pub fn to_original(&self, b: &[f64]) -> Vec<f64> {
        let off = usize::from(self.intercept);
        let mut out = b.to_vec();
        let mut shift = 0.0;
        for j in 0..self.center.len() {
            out[off + j] = b[off + j] / self.scale[j];
            shift += out[off + j] * self.center[j];
        }
        if self.intercept {
            out[0] = b[0] - shift;
        }
        out
    }

    /// Residuals `y - x b` of standardized coefficients `b`, for every row.
    pub fn residuals(&self, b: &[f64]) -> Vec<f64> {
        let rows = self.rows();
        let mut r = vec![0.0; self.n];
        r.par_chunks_mut(CHUNK).enumerate().for_each(|(c, out)| {
            let start = c * CHUNK;
            for (k, v) in out.iter_mut().enumerate() {
                let i = start + k;
                *v = rows.y[i] - dot(rows.row(i), b);
            }
        });
        r
    }
}

/// What one pass over the columns of `x` (`n x k` row-major) finds: the position of the first
/// non-finite value, and per column whether every value equals the first row's, the mean and
/// the sum of squared deviations from it.
struct ColumnStats {
    first_non_finite: Option<usize>,
    constant: Vec<bool>,
    mean: Vec<f64>,
    m2: Vec<f64>,
    rows: usize,
}

impl ColumnStats {
    /// The statistics of `rows` (whole rows of `x`, from row `start`), two passes over them
    /// while they are in cache; `first` is `x`'s first row.
    fn of_chunk(rows: &[f64], k: usize, start: usize, first: &[f64]) -> ColumnStats {
        let count = rows.len() / k;
        let first_non_finite = rows
            .iter()
            .position(|v| !v.is_finite())
            .map(|i| start * k + i);
        let mut constant = vec![true; k];
        let mut sum = vec![0.0; k];
        for row in rows.chunks_exact(k) {
            for (j, &v) in row.iter().enumerate() {
                constant[j] &= v == first[j];
                sum[j] += v;
            }
        }
        let mean: Vec<f64> = sum.iter().map(|s| s / count as f64).collect();
        let mut m2 = vec![0.0; k];
        for row in rows.chunks_exact(k) {
            for (j, &v) in row.iter().enumerate() {
                m2[j] += (v - mean[j]) * (v - mean[j]);
            }
        }
        ColumnStats {
            first_non_finite,
            constant,
            mean,
            m2,
            rows: count,
        }
    }

    /// The statistics of two consecutive parts of the rows (Chan, Golub and LeVeque's update
    /// of the deviations).
    fn merge(self, b: ColumnStats) -> ColumnStats {
        if self.rows == 0 {
            return b;
        }
        let rows = self.rows + b.rows;
        let (na, nb, n) = (self.rows as f64, b.rows as f64, rows as f64);
        let mean = (self.mean.iter().zip(&b.mean))
            .map(|(ma, mb)| ma + (mb - ma) * nb / n)
            .collect();
        let m2 = (self.m2.iter().zip(&b.m2))
            .zip(self.mean.iter().zip(&b.mean))
            .map(|((sa, sb), (ma, mb))| sa + sb + (mb - ma) * (mb - ma) * na * nb / n)
            .collect();
        ColumnStats {
            first_non_finite: self.first_non_finite.or(b.first_non_finite),
            constant: (self.constant.iter().zip(&b.constant))
                .map(|(a, b)| *a && *b)
                .collect(),
            mean,
            m2,
            rows,
        }
    }
}

/// [`ColumnStats`] of `x` (`n x k` row-major), chunk by chunk in parallel and merged in chunk
/// order: the same bits whatever the number of threads.
fn column_stats(x: &[f64], k: usize) -> ColumnStats {
    let empty = ColumnStats {
        first_non_finite: None,
        constant: vec![true; k],
        mean: vec![0.0; k],
        m2: vec![0.0; k],
        rows: 0,
    };
    if k == 0 {
        return empty;
    }
    let first = &x[..k];
    let parts: Vec<ColumnStats> = x
        .par_chunks(k * CHUNK)
        .enumerate()
        .map(|(c, rows)| ColumnStats::of_chunk(rows, k, c * CHUNK, first))
        .collect();
    parts.into_iter().fold(empty, ColumnStats::merge)
}

/// `X'X` (`p x p`, row-major) of `rows`, by a matrix product (matrixmultiply's blocked kernels:
/// several times faster than a loop over the rows, and the same bits for the same rows on a
/// given CPU).
fn chunk_cross_product(rows: Rows<'_>) -> Vec<f64> {
    let x = ArrayView2::from_shape((rows.n, rows.p), &rows.x[..rows.n * rows.p])
        .expect("rows of p values");
    x.t().dot(&x).into_iter().collect()
}

/// `X'X` (full `p x p`) of the rows, summed in fixed chunks.
#[cfg(test)]
pub(crate) fn cross_product(rows: Rows<'_>) -> Vec<f64> {
    let partial = |c: usize| {
        let (start, end) = (c * CHUNK, ((c + 1) * CHUNK).min(rows.n));
        chunk_cross_product(Rows {
            x: &rows.x[start * rows.p..end * rows.p],
            y: &[],
            n: end - start,
            p: rows.p,
        })
    };
    let chunks = rows.n.div_ceil(CHUNK);
    let partials: Vec<Vec<f64>> = if rows.n >= PARALLEL_ROWS {
        (0..chunks).into_par_iter().map(partial).collect()
    } else {
        (0..chunks).map(partial).collect()
    };
    add_partials(partials, rows.p)
}

/// The chunks' `X'X` added in chunk order, and mirrored from the upper triangle: the full
/// `X'X`.
fn add_partials(partials: Vec<Vec<f64>>, p: usize) -> Vec<f64> {
    let mut xtx = vec![0.0; p * p];
    for part in partials {
        for (t, v) in xtx.iter_mut().zip(part) {
            *t += v;
        }
    }
    for a in 0..p {
        for b in 0..a {
            xtx[a * p + b] = xtx[b * p + a];
        }
    }
    xtx
}

/// The dot product of two equal-length slices.
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standardizes_and_maps_back() {
        let x = [1.0, 10.0, 2.0, 30.0, 3.0, 20.0, 4.0, 50.0];
        let y = [1.0, 2.0, 3.0, 4.0];
        let d = Design::new(&x, 4, 2, &y, true).unwrap();
        assert_eq!(d.p, 3);
        // b in standardized units -> original: predictions agree.
        let b = [0.5, 2.0, -1.0];
        let orig = d.to_original(&b);
        for i in 0..4 {
            let std_pred = dot(&d.x[i * 3..i * 3 + 3], &b);
            let pred = orig[0] + orig[1] * x[i * 2] + orig[2] * x[i * 2 + 1];
            assert!((std_pred - pred).abs() < 1e-12);
        }
    }

    #[test]
    fn rank_check_sums_as_cross_product() {
        let n = 3 * CHUNK + 17;
        let x: Vec<f64> = (0..n * 2)
            .map(|i| ((i * 7919) % 1013) as f64 / 17.0 + (i % 3) as f64)
            .collect();
        let y = vec![0.0; n];
        let d = Design::new(&x, n, 2, &y, true).unwrap();
        let fused = {
            let partials =
                d.x.chunks(3 * CHUNK)
                    .map(|c| {
                        let rows = Rows {
                            x: c,
                            y: &[],
                            n: c.len() / 3,
                            p: 3,
                        };
                        chunk_cross_product(rows)
                    })
                    .collect();
            add_partials(partials, 3)
        };
        let direct = cross_product(d.rows());
        assert_eq!(
            fused.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            direct.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn bad_inputs() {
        use crate::error::Error;
        use RegressionError as E;
        let y = [1.0, 2.0, 3.0, 4.0];
        let err = |x: &[f64], n, k, y: &[f64], i| match Design::new(x, n, k, y, i).unwrap_err() {
            Error::Regression(e) => e,
            other => panic!("{other:?}"),
        };
        let cases = [
            (err(&[], 0, 1, &[], true), E::NoRows, "n = 0"),
            (
                err(&[1.0, 2.0], 2, 1, &y[..2], true),
                E::TooFewRows {
                    n: 2,
                    p: 2,
                    intercept: true,
                },
                "too few",
            ),
            (
                err(
                    &[1.0, 2.0, 3.0, 4.0],
                    4,
                    1,
                    &[1.0, 2.0, f64::INFINITY, 4.0],
                    true,
                ),
                E::NonFinite {
                    row: 2,
                    column: None,
                    value: f64::INFINITY,
                },
                "y[2]",
            ),
            (
                err(&[5.0; 4], 4, 1, &y, true),
                E::ConstantColumn {
                    column: 0,
                    value: 5.0,
                    intercept: true,
                },
                "constant",
            ),
            (
                err(
                    &[1.0, 2.0, 2.0, 4.0, 3.0, 6.0, 4.0, 8.0, 5.0, 10.0],
                    5,
                    2,
                    &[1.0, 2.0, 3.0, 4.0, 6.0],
                    true,
                ),
                E::Collinear {
                    column: Some(1),
                    intercept: true,
                },
                "singular: x column 1",
            ),
            (
                err(&[1.0; 3], 4, 1, &y, true),
                E::XLength { len: 3, n: 4, k: 1 },
                "x holds 3 values, but n x p = 4 x 1 needs 4",
            ),
            (
                err(&[], 4, 0, &y, false),
                E::NoCoefficients,
                "no coefficient",
            ),
        ];
        for (got, want, text) in cases {
            assert_eq!(got, want);
            assert!(got.to_string().contains(text), "{got}");
        }
        let e = err(&[1.0, 2.0, f64::NAN, 4.0], 4, 1, &y, true);
        assert!(
            matches!(e, E::NonFinite { row: 2, column: Some(0), value } if value.is_nan()),
            "{e:?}"
        );
        assert!(e.to_string().contains("row 2, column 0"), "{e}");
    }
}

//! The design of a fit: the caller's predictors `x` and responses `y`, checked, with the
//! centers and scales that standardize `x`'s columns (and the intercept column when there is
//! one).
//!
//! The estimators work on standardized predictors: with an intercept, column `j` becomes
//! `(x_j - mean_j) / sd_j`; without one, `x_j / rms_j`. This keeps the normal equations of the
//! C-steps well conditioned whatever the units of the columns; coefficients are mapped back to
//! the user's units at the end ([`Design::to_original`]). Residuals are the same in both.
//! The standardized rows are written where they are used: all of them once, on the host, when
//! a pass over every row on the CPU first asks for them ([`Design::rows`]); a few
//! ([`Design::gather`]); or piece by piece into a copy to a device
//! ([`Design::standardize_into`]), so that a fit on the GPU makes no host copy of its data.
//!
//! Checks, each a [`RegressionError`] naming its numbers: matching lengths, `n > p` (coefficients,
//! counting the intercept), finite values (the first non-finite value is named by row and
//! column), no constant column (robustbase refuses them too: with an intercept such a column
//! duplicates it, without one it should be replaced by the intercept) — all by
//! [`Design::new`] — and no column that is (numerically) a linear combination of the others,
//! from the standardized `X'X` summed where the rows are: [`Design::check_rank_on_host`], or by
//! the GPU engine on the device, both through [`Design::check_rank`].

use std::borrow::Cow;
use std::sync::OnceLock;

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

/// The checked data of a fit, and how its columns are standardized.
#[derive(Clone, Debug)]
pub(crate) struct Design<'a> {
    /// The caller's predictors: `n x k` row-major, without the intercept.
    predictors: Cow<'a, [f64]>,
    /// The standardized rows (`n x p` row-major; column 0 is the intercept, all ones, when
    /// there is one), written when [`Design::rows`] is first called.
    standardized: OnceLock<Vec<f64>>,
    /// The response.
    pub y: Cow<'a, [f64]>,
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

impl<'a> Design<'a> {
    /// Checks `x` (`n x k` row-major, the predictors without the intercept) and `y`, and finds
    /// the centers and scales of `x`'s columns; borrowed data stay borrowed. The rank is
    /// checked by the engine that gets the rows ([`Design::check_rank`]).
    pub fn new(
        x: impl Into<Cow<'a, [f64]>>,
        n: usize,
        k: usize,
        y: impl Into<Cow<'a, [f64]>>,
        intercept: bool,
    ) -> Result<Design<'a>> {
        let (x, y) = (x.into(), y.into());
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
        let stats = column_stats(&x, k);
        if let Some(pos) = stats.first_non_finite {
            return Err(RegressionError::NonFinite {
                row: pos / k,
                column: Some(pos % k),
                value: x[pos],
            }
            .into());
        }
        if let Some(pos) = first_non_finite(&y) {
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
        let design = Design {
            predictors: x,
            standardized: OnceLock::new(),
            y,
            n,
            p,
            intercept,
            center,
            scale,
        };
        Ok(design)
    }

    /// All rows, standardized (written on the first call: `n p` values).
    pub fn rows(&self) -> Rows<'_> {
        let x = self.standardized.get_or_init(|| {
            let mut x = vec![0.0; self.n * self.p];
            x.par_chunks_mut(self.p * CHUNK)
                .enumerate()
                .for_each(|(c, out)| self.standardize_into(c * CHUNK, out));
            x
        });
        Rows {
            x,
            y: &self.y,
            n: self.n,
            p: self.p,
        }
    }

    /// `out` (whole rows of `p` values) becomes the standardized rows from row `first`.
    pub fn standardize_into(&self, first: usize, out: &mut [f64]) {
        let (k, off) = (self.center.len(), usize::from(self.intercept));
        for (r, row) in out.chunks_exact_mut(self.p).enumerate() {
            let i = first + r;
            if self.intercept {
                row[0] = 1.0;
            }
            let from = &self.predictors[i * k..(i + 1) * k];
            for (j, (&v, (center, scale))) in from
                .iter()
                .zip(self.center.iter().zip(&self.scale))
                .enumerate()
            {
                row[off + j] = (v - center) / scale;
            }
        }
    }

    /// The rows `indices`, standardized, in that order.
    pub fn gather(&self, indices: &[usize]) -> Sample {
        let p = self.p;
        let mut x = vec![0.0; indices.len() * p];
        for (&i, row) in indices.iter().zip(x.chunks_exact_mut(p)) {
            self.standardize_into(i, row);
        }
        Sample {
            x,
            y: indices.iter().map(|&i| self.y[i]).collect(),
            n: indices.len(),
            p,
        }
    }

    /// [`Design::check_rank`] of the standardized `X'X` summed on the host: chunk by chunk
    /// ([`CHUNK`] rows) in parallel, added in chunk order.
    pub fn check_rank_on_host(&self) -> Result<()> {
        let (p, rows) = (self.p, self.rows());
        let partials: Vec<Vec<f64>> = rows
            .x
            .par_chunks(p * CHUNK)
            .map(|c| cross_product_of(c, c.len() / p, p))
            .collect();
        let mut xtx = vec![0.0; p * p];
        for part in partials {
            for (t, v) in xtx.iter_mut().zip(part) {
                *t += v;
            }
        }
        self.check_rank(xtx)
    }

    /// Err when a column is (numerically) a linear combination of the others: the Cholesky
    /// factorization of the standardized `X'X` (`xtx`, `p x p` row-major, its upper triangle
    /// read) fails.
    pub fn check_rank(&self, xtx: Vec<f64>) -> Result<()> {
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

/// `A'A` (`k x k`, row-major, symmetric) of the `m x k` row-major `a`, by a matrix product
/// (matrixmultiply's blocked kernels: several times faster than a loop over the rows, and the
/// same bits for the same rows on a given CPU), mirrored from its upper triangle.
fn cross_product_of(a: &[f64], m: usize, k: usize) -> Vec<f64> {
    let a = ArrayView2::from_shape((m, k), &a[..m * k]).expect("rows of k values");
    let mut ata: Vec<f64> = a.t().dot(&a).into_iter().collect();
    for i in 0..k {
        for j in 0..i {
            ata[i * k + j] = ata[j * k + i];
        }
    }
    ata
}

/// The sum of `parts` (one a chunk of rows) added in their order: the same bits on any number
/// of threads.
pub(crate) fn sum_in_order(parts: impl IndexedParallelIterator<Item = f64>) -> f64 {
    parts
        .collect::<Vec<f64>>()
        .into_iter()
        .fold(0.0, |total, part| total + part)
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
        let d = Design::new(&x[..], 4, 2, &y[..], true).unwrap();
        assert_eq!(d.p, 3);
        // b in standardized units -> original: predictions agree.
        let b = [0.5, 2.0, -1.0];
        let orig = d.to_original(&b);
        for i in 0..4 {
            let std_pred = dot(d.rows().row(i), &b);
            let pred = orig[0] + orig[1] * x[i * 2] + orig[2] * x[i * 2 + 1];
            assert!((std_pred - pred).abs() < 1e-12);
        }
    }

    /// Rows over several chunks, a column far from 0 and two nearly dependent ones.
    fn chunked(n: usize) -> Vec<f64> {
        (0..n)
            .flat_map(|i| {
                let a = ((i * 7919) % 1013) as f64 / 17.0 + (i % 3) as f64;
                let b = 1e6 + ((i * 104_729) % 4099) as f64 * 1e-3;
                [a, b, 2.0 * a - 1.0 + 1e-2 * (i % 7) as f64]
            })
            .collect()
    }

    #[test]
    fn rank_check_refuses_exact_combinations_only() {
        let n = 3 * CHUNK + 17;
        let x = chunked(n);
        let y = vec![0.0; n];
        for intercept in [true, false] {
            let d = Design::new(&x, n, 3, &y, intercept).unwrap();
            d.check_rank_on_host().unwrap();
        }
        // The third column made twice the first: refused with and without an intercept.
        let dependent: Vec<f64> = x.chunks(3).flat_map(|r| [r[0], r[1], 2.0 * r[0]]).collect();
        for intercept in [true, false] {
            let d = Design::new(&dependent, n, 3, &y, intercept).unwrap();
            let got = d.check_rank_on_host().unwrap_err();
            assert!(got.to_string().contains("column 2"), "{got}");
        }
    }

    #[test]
    fn rows_are_standardized_alike_however_they_are_asked_for() {
        let n = 2 * CHUNK + 5;
        let x = chunked(n);
        let y: Vec<f64> = (0..n).map(|i| i as f64).collect();
        for intercept in [true, false] {
            let d = Design::new(&x, n, 3, &y, intercept).unwrap();
            let picks = [n - 1, 0, CHUNK, 7, CHUNK - 1];
            let gathered = d.gather(&picks);
            let mut staged = vec![0.0; 9 * d.p];
            d.standardize_into(CHUNK - 4, &mut staged);
            let rows = d.rows();
            for (r, &i) in picks.iter().enumerate() {
                assert_eq!(&gathered.x[r * d.p..(r + 1) * d.p], rows.row(i));
                assert_eq!(gathered.y[r], y[i]);
            }
            assert_eq!(&staged[..], &rows.x[(CHUNK - 4) * d.p..(CHUNK + 5) * d.p]);
            let column = |j: usize| (0..n).map(move |i| rows.row(i)[j]);
            if intercept {
                assert!(column(0).all(|v| v == 1.0));
                let mean = column(1).sum::<f64>() / n as f64;
                let var = column(1).map(|v| v * v).sum::<f64>() / n as f64;
                assert!(
                    mean.abs() < 1e-12 && (var - 1.0).abs() < 1e-12,
                    "{mean} {var}"
                );
            } else {
                let ms = column(1).map(|v| v * v).sum::<f64>() / n as f64;
                assert!((ms - 1.0).abs() < 1e-12, "{ms}");
            }
        }
    }

    #[test]
    fn bad_inputs() {
        use crate::error::Error;
        use RegressionError as E;
        let y = [1.0, 2.0, 3.0, 4.0];
        let err = |x: &[f64], n, k, y: &[f64], i| {
            let checked = Design::new(x, n, k, y, i).and_then(|d| d.check_rank_on_host());
            match checked.unwrap_err() {
                Error::Regression(e) => e,
                other => panic!("{other:?}"),
            }
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

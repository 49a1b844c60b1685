//! The minimax (Chebyshev, L-infinity) fit of a set of rows: the `b` minimizing
//! `max_i |y_i - x_i b|`. It is the LMS analogue of the least-squares fit of a C-step: the
//! LMS objective of the minimax fit of the `h` rows with the smallest absolute residuals is
//! never above the current one.
//!
//! Solved as the linear program dual to `min t` subject to `|y_i - x_i b| <= t`:
//!
//! ```text
//! max  sum_i y_i (u_i - v_i)   subject to   sum_i x_i (u_i - v_i) = 0,   sum_i (u_i + v_i) = 1,
//!                                           u, v >= 0,
//! ```
//!
//! by the revised simplex method on a basis of `p + 1` columns `(s_k x_k, 1)` (row `k` with sign
//! `s_k`). The simplex multipliers are `(b, t)`: the fit that makes the basis rows' residuals
//! `s_k (y_k - x_k b)` all equal to `t`. The entering column is the row whose residual exceeds
//! `t` the most (Stiefel's exchange rule), or, after steps that do not raise `t`, the first such
//! row (Bland's rule, which cannot cycle). The starting basis is `p` independent rows with the
//! largest residuals of a given fit, plus the next largest, with the signs of the null vector
//! of their rows.

use rayon::prelude::*;

use crate::regression::design::{dot, Rows, CHUNK};
use crate::regression::linalg::{invert_square, solve_square};

/// Relative size below which a component of the Gram–Schmidt remainder counts as zero.
const INDEPENDENCE_TOL: f64 = 1e-8;

/// Up to this many rows the simplex prices every row at each step; above, the rows enter a
/// working set as their constraints are violated ([`minimax`]).
const DIRECT_MAX_ROWS: usize = 4096;

/// Rows of the first working set, and at most this many violated rows added a round.
const WORKING_ROWS: usize = 1024;

/// The most rounds of constraint generation (each adds violated rows; far fewer are needed).
const MAX_ROUNDS: usize = 100;

/// The minimax fit on the rows `idx` of `rows`, started from the largest residuals of `hint`.
/// `None` when the rows do not contain `p` independent ones (or fewer than `p + 1` rows).
///
/// Above [`DIRECT_MAX_ROWS`] rows, by constraint generation: the minimax fit of a working set
/// (first the rows of the largest residuals of `hint`), then one pass over all rows for those
/// whose residual exceeds the working set's maximum; the largest of them join the set, until
/// none does. The fit of the last set is then the minimax fit of all rows (its maximum is
/// reached by no row outside), at the cost of a pass over the rows a round.
pub(crate) fn minimax(rows: Rows<'_>, idx: &[usize], hint: &[f64]) -> Option<Vec<f64>> {
    if idx.len() <= DIRECT_MAX_ROWS {
        return minimax_direct(rows, idx, hint);
    }
    let resid = |b: &[f64], i: usize| rows.y[i] - dot(rows.row(i), b);
    let y_scale = idx.iter().map(|&i| rows.y[i].abs()).fold(0.0, f64::max);
    let tol = 1e-13 * y_scale.max(f64::MIN_POSITIVE);
    let mut set = largest_residuals(idx, WORKING_ROWS, |i| resid(hint, i).abs());
    let mut b = minimax_direct(rows, &set, hint)?;
    for _ in 0..MAX_ROUNDS {
        let t = set.iter().fold(0.0f64, |m, &i| m.max(resid(&b, i).abs()));
        let violated: Vec<usize> = idx
            .par_chunks(CHUNK)
            .flat_map_iter(|chunk| {
                chunk
                    .iter()
                    .copied()
                    .filter(|&i| resid(&b, i).abs() > t + tol)
                    .collect::<Vec<usize>>()
            })
            .collect();
        if violated.is_empty() {
            return Some(b);
        }
        let entering = largest_residuals(&violated, WORKING_ROWS, |i| resid(&b, i).abs());
        set.extend(entering);
        set.sort_unstable();
        set.dedup();
        b = minimax_direct(rows, &set, &b)?;
    }
    Some(b)
}

/// The `k` rows of `idx` with the largest `size`, in increasing order (ties by position).
fn largest_residuals(idx: &[usize], k: usize, size: impl Fn(usize) -> f64) -> Vec<usize> {
    let mut by_size: Vec<(f64, usize)> = idx.iter().map(|&i| (size(i), i)).collect();
    if by_size.len() > k {
        by_size.select_nth_unstable_by(k, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        by_size.truncate(k);
    }
    let mut rows: Vec<usize> = by_size.into_iter().map(|(_, i)| i).collect();
    rows.sort_unstable();
    rows
}

/// The minimax fit on the rows `idx`, by the simplex method pricing every row (module
/// documentation).
fn minimax_direct(rows: Rows<'_>, idx: &[usize], hint: &[f64]) -> Option<Vec<f64>> {
    let p = rows.p;
    let q = p + 1;
    let m = idx.len();
    if m < q {
        return None;
    }
    let resid = |b: &[f64], i: usize| rows.y[i] - dot(rows.row(i), b);

    // Starting reference: p independent rows by decreasing |residual of hint|, then one more.
    let mut order: Vec<usize> = idx.to_vec();
    let hint_abs: Vec<f64> = order.iter().map(|&i| resid(hint, i).abs()).collect();
    let mut by_size: Vec<usize> = (0..m).collect();
    by_size.sort_by(|&a, &b| hint_abs[b].total_cmp(&hint_abs[a]).then(a.cmp(&b)));
    order = by_size.iter().map(|&k| order[k]).collect();
    let mut basis_rows = Vec::with_capacity(q);
    let mut ortho: Vec<Vec<f64>> = Vec::with_capacity(p);
    let mut extra = None;
    for &i in &order {
        if basis_rows.len() == p {
            extra = Some(i);
            break;
        }
        let x = rows.row(i);
        let mut v = x.to_vec();
        for o in &ortho {
            let c = dot(o, &v);
            v.iter_mut().zip(o).for_each(|(a, b)| *a -= c * b);
        }
        let norm = dot(&v, &v).sqrt();
        if norm > INDEPENDENCE_TOL * dot(x, x).sqrt() {
            v.iter_mut().for_each(|a| *a /= norm);
            ortho.push(v);
            basis_rows.push(i);
        }
    }
    let extra = extra?;
    // Null vector: sum_k lambda_k x_k = x_extra with lambda_extra = -1.
    let mut a = vec![0.0; p * p];
    for (k, &i) in basis_rows.iter().enumerate() {
        for (j, v) in rows.row(i).iter().enumerate() {
            a[j * p + k] = *v; // A' with the rows x_k as columns
        }
    }
    let mut lambda = rows.row(extra).to_vec();
    if !solve_square(&mut a, &mut lambda, p) {
        return None;
    }
    lambda.push(-1.0);
    basis_rows.push(extra);
    let signs: Vec<f64> = lambda
        .iter()
        .map(|&l| if l < 0.0 { -1.0 } else { 1.0 })
        .collect();

    let y_scale = idx.iter().map(|&i| rows.y[i].abs()).fold(0.0, f64::max);
    let tol = 1e-13 * y_scale.max(f64::MIN_POSITIVE);
    let mut basis = Basis {
        rows: basis_rows,
        signs,
        inverse: Vec::new(),
        updates: 0,
    };
    let mut b = hint.to_vec();
    let mut rhs = vec![0.0; q];
    let mut multipliers = vec![0.0; q];
    let mut w = vec![0.0; q];
    let mut column = vec![0.0; q];
    let mut best_t = f64::NEG_INFINITY;
    let mut stalled = 0usize;
    let max_iter = 50 * q + 2 * m;
    for _ in 0..max_iter {
        let stale = basis.updates >= REFACTOR_EVERY || basis.inverse.is_empty();
        if stale && !basis.refactor(rows) {
            return Some(b);
        }
        // Multipliers: s_k (x_k b) + t = s_k y_k on the basis rows, i.e. B' (b, t) = rhs.
        for (k, &i) in basis.rows.iter().enumerate() {
            rhs[k] = basis.signs[k] * rows.y[i];
        }
        basis.solve_transposed(&rhs, &mut multipliers);
        if multipliers.iter().any(|v| !v.is_finite()) {
            return Some(b);
        }
        let t = multipliers[p];
        b.copy_from_slice(&multipliers[..p]);
        if t > best_t * (1.0 + 1e-15) + tol {
            best_t = t;
            stalled = 0;
        } else {
            stalled += 1;
        }
        // Entering row: the largest violation |r_i| - t (or the first violation under Bland).
        let bland = stalled > 2 * q;
        let mut enter = None;
        let mut worst = tol;
        for &i in idx {
            let r = resid(&b, i);
            let v = r.abs() - t;
            if v > worst {
                enter = Some((i, if r < 0.0 { -1.0 } else { 1.0 }));
                if bland {
                    break;
                }
                worst = v;
            }
        }
        let Some((j, sj)) = enter else {
            return Some(b);
        };
        // The current basic solution x_B = B^-1 e_q (the last column of the inverse) and the
        // direction w = B^-1 a_j of the entering column a_j = (s_j x_j, 1).
        for (c, v) in column.iter_mut().zip(rows.row(j)) {
            *c = sj * v;
        }
        column[p] = 1.0;
        basis.solve(&column, &mut w);
        let w_scale = w.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let mut leave = None;
        let mut ratio = f64::INFINITY;
        for (k, &wk) in w.iter().enumerate() {
            if wk > 1e-12 * w_scale {
                let xb = basis.inverse[k * q + p];
                let r = xb.max(0.0) / wk;
                if r < ratio {
                    ratio = r;
                    leave = Some(k);
                }
            }
        }
        let Some(k) = leave else {
            return Some(b);
        };
        basis.replace(k, j, sj, &w);
    }
    Some(b)
}

/// Pivots after which the basis inverse is computed afresh rather than updated (bounds the
/// growth of rounding errors in the updates).
const REFACTOR_EVERY: usize = 32;

/// The simplex basis: its rows `x_k` with signs `s_k`, the columns `(s_k x_k, 1)` of the
/// `q x q` matrix `B`, and `B^-1` (row-major), updated in `O(q^2)` a pivot.
struct Basis {
    rows: Vec<usize>,
    signs: Vec<f64>,
    inverse: Vec<f64>,
    /// Pivots since `inverse` was computed from `B`.
    updates: usize,
}

impl Basis {
    /// Computes `B^-1` from the basis rows; false when `B` is singular.
    fn refactor(&mut self, rows: Rows<'_>) -> bool {
        let q = self.rows.len();
        let p = q - 1;
        let mut mat = vec![0.0; q * q];
        for (k, &i) in self.rows.iter().enumerate() {
            for (r, v) in rows.row(i).iter().enumerate() {
                mat[r * q + k] = self.signs[k] * v;
            }
            mat[p * q + k] = 1.0;
        }
        match invert_square(&mut mat, q) {
            Some(inverse) => {
                self.inverse = inverse;
                self.updates = 0;
                true
            }
            None => false,
        }
    }

    /// `out = B^-1 v`.
    fn solve(&self, v: &[f64], out: &mut [f64]) {
        let q = v.len();
        for (k, o) in out.iter_mut().enumerate() {
            *o = dot(&self.inverse[k * q..(k + 1) * q], v);
        }
    }

    /// `out = B^-T v`.
    fn solve_transposed(&self, v: &[f64], out: &mut [f64]) {
        let q = v.len();
        out.fill(0.0);
        for (k, &vk) in v.iter().enumerate() {
            for (o, a) in out.iter_mut().zip(&self.inverse[k * q..(k + 1) * q]) {
                *o += a * vk;
            }
        }
    }

    /// Column `k` becomes row `j` with sign `sj`, whose direction is `w = B^-1 a_j`: the
    /// product-form update of the inverse (row `k` divided by `w_k`, eliminated from the
    /// others).
    fn replace(&mut self, k: usize, j: usize, sj: f64, w: &[f64]) {
        let q = w.len();
        let pivot = w[k];
        let (before, rest) = self.inverse.split_at_mut(k * q);
        let (row_k, after) = rest.split_at_mut(q);
        row_k.iter_mut().for_each(|v| *v /= pivot);
        for (i, row) in before
            .chunks_exact_mut(q)
            .chain(after.chunks_exact_mut(q))
            .enumerate()
        {
            let wi = w[if i < k { i } else { i + 1 }];
            if wi != 0.0 {
                row.iter_mut()
                    .zip(row_k.iter())
                    .for_each(|(v, r)| *v -= wi * r);
            }
        }
        self.rows[k] = j;
        self.signs[k] = sj;
        self.updates += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of `y` on `x` (`p` columns, row-major).
    fn rows_of<'a>(x: &'a [f64], y: &'a [f64], p: usize) -> Rows<'a> {
        Rows {
            x,
            y,
            n: y.len(),
            p,
        }
    }

    /// The largest absolute residual of `b` on every row.
    fn largest_residual(rows: Rows<'_>, b: &[f64]) -> f64 {
        (0..rows.n)
            .map(|i| (rows.y[i] - dot(rows.row(i), b)).abs())
            .fold(0.0, f64::max)
    }

    /// The minimax fit of every row of `rows`, from zero coefficients.
    fn minimax_of_every_row(rows: Rows<'_>) -> Vec<f64> {
        let idx: Vec<usize> = (0..rows.n).collect();
        minimax(rows, &idx, &vec![0.0; rows.p]).unwrap()
    }

    #[test]
    fn minimax_line() {
        // Points on y = x with alternating +-1 errors at the ends: the minimax line is y = x
        // with max error 1 when the middle point deviates less.
        let xs = [0.0, 1.0, 2.0, 3.0, 4.0];
        let ys = [1.0, 1.5, 1.0, 3.2, 5.0];
        let x: Vec<f64> = xs.iter().flat_map(|&v| [1.0, v]).collect();
        let rows = rows_of(&x, &ys, 2);
        let b = minimax_of_every_row(rows);
        let max = (0..5)
            .map(|i| (ys[i] - b[0] - b[1] * xs[i]).abs())
            .fold(0.0, f64::max);
        // Brute force over a fine grid of slopes (the intercept is then the mid-range).
        let mut best = f64::INFINITY;
        for k in 0..=40_000 {
            let slope = -1.0 + k as f64 * 1e-4;
            let r: Vec<f64> = (0..5).map(|i| ys[i] - slope * xs[i]).collect();
            let lo = r.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = r.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            best = best.min((hi - lo) / 2.0);
        }
        assert!(max <= best + 1e-9, "{max} vs {best}");
        assert!(max >= best - 1e-3);
    }

    /// `n` rows `(1, a, b)` of pseudo-random `a, b` in `[-0.5, 0.5)` (an LCG seeded by `seed`)
    /// and `y = 0.5 + a - 2 b + noise u`, `u` in `[-0.5, 0.5)` too.
    fn noisy_plane(n: usize, seed: u64, noise: f64) -> (Vec<f64>, Vec<f64>) {
        let mut s = seed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let (mut x, mut y) = (Vec::with_capacity(3 * n), Vec::with_capacity(n));
        for _ in 0..n {
            let (a, b) = (next(), next());
            x.extend_from_slice(&[1.0, a, b]);
            y.push(0.5 + a - 2.0 * b + noise * next());
        }
        (x, y)
    }

    #[test]
    fn minimax_plane_equioscillates() {
        // 3 coefficients, 12 rows with pseudo-random values.
        let n = 12;
        let (x, y) = noisy_plane(n, 7, 0.3);
        let rows = rows_of(&x, &y, 3);
        let b = minimax_of_every_row(rows);
        let r: Vec<f64> = (0..n).map(|i| y[i] - dot(rows.row(i), &b)).collect();
        let max = largest_residual(rows, &b);
        // At the optimum at least p + 1 = 4 residuals reach the maximum.
        let at_max = r.iter().filter(|v| (v.abs() - max).abs() < 1e-9).count();
        assert!(at_max >= 4, "{r:?}");
        // And small perturbations of b do not lower the maximum.
        for d in 0..3 {
            for sgn in [-1.0, 1.0] {
                let mut c = b.clone();
                c[d] += sgn * 1e-4;
                assert!(largest_residual(rows, &c) >= max - 1e-12);
            }
        }
    }

    #[test]
    fn constraint_generation_reaches_the_minimax_of_every_row() {
        // 6000 rows, more than DIRECT_MAX_ROWS: the working sets give the fit the simplex
        // gives on all rows at once.
        let n = 6000;
        let (x, y) = noisy_plane(n, 11, 1.0);
        let rows = rows_of(&x, &y, 3);
        let idx: Vec<usize> = (0..n).collect();
        let generated = minimax_of_every_row(rows);
        let direct = minimax_direct(rows, &idx, &[0.0; 3]).unwrap();
        let (g, d) = (
            largest_residual(rows, &generated),
            largest_residual(rows, &direct),
        );
        assert!((g - d).abs() <= 1e-12 * d, "{g} vs {d}");
    }
}

//! The small dense linear algebra of the fits: exact fits of `p x p` elemental systems,
//! normal equations by Cholesky, and least squares by Householder QR. Matrices are row-major
//! `f64` slices.
//!
//! Singularity is judged relative to the scale of the matrix, with the tolerances below; a
//! system that fails them has no (numerically meaningful) unique solution.

/// A pivot of Gaussian elimination below this fraction of the largest entry of its column
/// marks the elemental system singular.
const LU_TOL: f64 = 1e-10;

/// A Cholesky pivot below this fraction of its diagonal entry marks `X'X` (numerically)
/// singular: the column is, to about 6 digits, a combination of those before it.
const CHOLESKY_TOL: f64 = 1e-12;

/// An `|R_kk|` of the QR below this fraction of the norm of column `k` marks rank deficiency.
const QR_TOL: f64 = 1e-9;

/// Solves the `p x p` system `a x = b` by Gaussian elimination with partial pivoting, in place
/// (`b` becomes `x`, `a` is destroyed). False when the system is singular.
pub(crate) fn solve_square(a: &mut [f64], b: &mut [f64], p: usize) -> bool {
    solve_square_columns(a, b, p, 1)
}

/// The inverse of the `p x p` matrix `a` (row-major), by [`solve_square_columns`] with the
/// identity; `a` is destroyed. `None` when `a` is singular.
pub(crate) fn invert_square(a: &mut [f64], p: usize) -> Option<Vec<f64>> {
    let mut inv = vec![0.0; p * p];
    for i in 0..p {
        inv[i * p + i] = 1.0;
    }
    solve_square_columns(a, &mut inv, p, p).then_some(inv)
}

/// Solves `a x = b` for the `r` right-hand sides of `b` (`p x r`, row-major) by Gaussian
/// elimination with partial pivoting, in place (`b` becomes `x`, `a` is destroyed). False when
/// the system is singular.
fn solve_square_columns(a: &mut [f64], b: &mut [f64], p: usize, r: usize) -> bool {
    debug_assert_eq!(a.len(), p * p);
    debug_assert_eq!(b.len(), p * r);
    for col in 0..p {
        let mut col_scale = 0.0f64;
        let mut pivot_row = col;
        let mut pivot_abs = 0.0;
        for row in col..p {
            let v = a[row * p + col].abs();
            col_scale = col_scale.max(v);
            if v > pivot_abs {
                pivot_abs = v;
                pivot_row = row;
            }
        }
        for row in 0..col {
            col_scale = col_scale.max(a[row * p + col].abs());
        }
        if !pivot_abs.is_finite() || pivot_abs <= LU_TOL * col_scale {
            return false;
        }
        if pivot_row != col {
            for j in 0..p {
                a.swap(col * p + j, pivot_row * p + j);
            }
            for j in 0..r {
                b.swap(col * r + j, pivot_row * r + j);
            }
        }
        let pivot = a[col * p + col];
        for row in col + 1..p {
            let factor = a[row * p + col] / pivot;
            if factor != 0.0 {
                for j in col + 1..p {
                    a[row * p + j] -= factor * a[col * p + j];
                }
                for j in 0..r {
                    b[row * r + j] -= factor * b[col * r + j];
                }
            }
        }
    }
    for col in (0..p).rev() {
        for k in 0..r {
            let mut s = b[col * r + k];
            for j in col + 1..p {
                s -= a[col * p + j] * b[j * r + k];
            }
            b[col * r + k] = s / a[col * p + col];
        }
    }
    b.iter().all(|v| v.is_finite())
}

/// Solves the normal equations `xtx b = xty` (`xtx` symmetric `p x p`, only its upper triangle
/// read) by Cholesky. `work` holds `p * p` values. False when `xtx` is not (numerically)
/// positive definite.
pub(crate) fn cholesky_solve(
    xtx: &[f64],
    xty: &[f64],
    p: usize,
    out: &mut [f64],
    work: &mut [f64],
) -> bool {
    if cholesky_factor(xtx, p, work).is_some() {
        return false;
    }
    let l = work;
    // L L' b = xty: forward then back substitution (L is lower, stored row-major).
    for i in 0..p {
        let mut s = xty[i];
        for k in 0..i {
            s -= l[i * p + k] * out[k];
        }
        out[i] = s / l[i * p + i];
    }
    for i in (0..p).rev() {
        let mut s = out[i];
        for k in i + 1..p {
            s -= l[k * p + i] * out[k];
        }
        out[i] = s / l[i * p + i];
    }
    out.iter().all(|v| v.is_finite())
}

/// The Cholesky factor `L` (lower, row-major into `l`) of the symmetric `a` (upper triangle
/// read). `None` on success, or `Some(k)`: the first column `k` whose pivot fails
/// [`CHOLESKY_TOL`].
pub(crate) fn cholesky_factor(a: &[f64], p: usize, l: &mut [f64]) -> Option<usize> {
    for i in 0..p {
        for j in 0..=i {
            // a[j][i] with j <= i: the upper triangle.
            let mut s = a[j * p + i];
            for k in 0..j {
                s -= l[i * p + k] * l[j * p + k];
            }
            if i == j {
                let diag = a[i * p + i];
                if !s.is_finite() || s <= CHOLESKY_TOL * diag {
                    return Some(i);
                }
                l[i * p + i] = s.sqrt();
            } else {
                l[i * p + j] = s / l[j * p + j];
            }
        }
        for j in i + 1..p {
            l[i * p + j] = 0.0;
        }
    }
    None
}

/// Least squares `min |y - x b|` for the `m x p` row-major `x`, by Householder QR.
/// `None` when `x` has rank below `p` (or `m < p`).
pub(crate) fn least_squares(x: &[f64], y: &[f64], m: usize, p: usize) -> Option<Vec<f64>> {
    if m < p || p == 0 {
        return None;
    }
    // Column-major copy: a[j * m + i] = x[i][j].
    let mut a = vec![0.0; m * p];
    for i in 0..m {
        for j in 0..p {
            a[j * m + i] = x[i * p + j];
        }
    }
    let mut rhs = y[..m].to_vec();
    let norms: Vec<f64> = (0..p)
        .map(|j| {
            a[j * m..(j + 1) * m]
                .iter()
                .map(|v| v * v)
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    for k in 0..p {
        let (done, rest) = a.split_at_mut((k + 1) * m);
        let col = &mut done[k * m..];
        let norm = col[k..].iter().map(|v| v * v).sum::<f64>().sqrt();
        if !norm.is_finite() || norm <= QR_TOL * norms[k] {
            return None;
        }
        let alpha = if col[k] > 0.0 { -norm } else { norm };
        // v = col[k..] - alpha e_1, stored in place; H = I - 2 v v' / (v'v).
        col[k] -= alpha;
        let vtv = col[k..].iter().map(|v| v * v).sum::<f64>();
        // Apply H to the remaining columns and to rhs.
        for j in 0..(p - k - 1) {
            let other = &mut rest[j * m..(j + 1) * m];
            let dot: f64 = col[k..].iter().zip(&other[k..]).map(|(a, b)| a * b).sum();
            let f = 2.0 * dot / vtv;
            for (o, v) in other[k..].iter_mut().zip(&col[k..]) {
                *o -= f * v;
            }
        }
        let dot: f64 = col[k..].iter().zip(&rhs[k..]).map(|(a, b)| a * b).sum();
        let f = 2.0 * dot / vtv;
        for (o, v) in rhs[k..].iter_mut().zip(&col[k..]) {
            *o -= f * v;
        }
        // R_kk = alpha; the rest of column k below the diagonal is no longer needed.
        col[k] = alpha;
    }
    // Back substitution with R (R[i][j] = a[j * m + i] for j > i, R[k][k] = a[k * m + k]).
    let mut b = vec![0.0; p];
    for i in (0..p).rev() {
        let mut s = rhs[i];
        for j in i + 1..p {
            s -= a[j * m + i] * b[j];
        }
        b[i] = s / a[i * m + i];
    }
    b.iter().all(|v| v.is_finite()).then_some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_systems() {
        let mut a = vec![2.0, 1.0, 1.0, 3.0];
        let mut b = vec![3.0, 5.0];
        assert!(solve_square(&mut a, &mut b, 2));
        assert!((b[0] - 0.8).abs() < 1e-15 && (b[1] - 1.4).abs() < 1e-15);
        let mut a = vec![1.0, 2.0, 2.0, 4.0];
        let mut b = vec![1.0, 2.0];
        assert!(!solve_square(&mut a, &mut b, 2));
    }

    #[test]
    fn least_squares_and_normal_equations_agree() {
        // y = 1 + 2 x with a perturbation.
        let xs = [0.0, 1.0, 2.0, 3.0, 4.0];
        let ys = [1.1, 2.9, 5.2, 6.8, 9.1];
        let x: Vec<f64> = xs.iter().flat_map(|&v| [1.0, v]).collect();
        let b = least_squares(&x, &ys, 5, 2).unwrap();
        let mut xtx = [0.0; 4];
        let mut xty = [0.0; 2];
        for i in 0..5 {
            for j in 0..2 {
                xty[j] += x[i * 2 + j] * ys[i];
                for k in 0..2 {
                    xtx[j * 2 + k] += x[i * 2 + j] * x[i * 2 + k];
                }
            }
        }
        let mut c = [0.0; 2];
        let mut work = [0.0; 4];
        assert!(cholesky_solve(&xtx, &xty, 2, &mut c, &mut work));
        assert!((b[0] - c[0]).abs() < 1e-12 && (b[1] - c[1]).abs() < 1e-12);
        assert!((b[1] - 1.99).abs() < 1e-12);
        // A repeated column is rank deficient.
        let x: Vec<f64> = xs.iter().flat_map(|&v| [v, v]).collect();
        assert!(least_squares(&x, &ys, 5, 2).is_none());
        let mut xtx = [0.0; 4];
        for i in 0..5 {
            for j in 0..2 {
                for k in 0..2 {
                    xtx[j * 2 + k] += x[i * 2 + j] * x[i * 2 + k];
                }
            }
        }
        assert_eq!(cholesky_factor(&xtx, 2, &mut work), Some(1));
    }
}

//! Pairwise exchanges (Hawkins' feasible solution algorithm, 1994) for LTS on small data: the
//! swap of one row of the `h`-subset with one row outside it that lowers the sum of squared
//! residuals the most, repeated (with C-steps after each swap) until no swap lowers it.
//!
//! A subset that no swap improves is also a fixed point of the C-step, so this refines what the
//! C-steps converged to, and reaches optima that the C-steps alone miss. The change of the
//! residual sum of squares when row `i` of the subset is replaced by row `j` needs no refit:
//!
//! ```text
//! delta = (e_j^2 (1 - d_i) - e_i^2 (1 + d_j) + 2 e_i e_j d_ij) / ((1 - d_i)(1 + d_j) + d_ij^2)
//! ```
//!
//! with `e` the residuals of the subset's least-squares fit and `d_ij = x_i' (X_H'X_H)^-1 x_j`
//! (add `j`, then remove `i`, by the usual rank-one updates). A sweep costs
//! `O(h (n - h) p)`.

use crate::regression::csteps::{iterate, squared_residuals, subset_rows, trim, Candidate, Work};
use crate::regression::design::{dot, Rows};
use crate::regression::linalg::cholesky_solve;

/// The most swaps per candidate.
const MAX_SWAPS: usize = 500;
/// The most C-steps after a swap.
const MAX_STEPS: usize = 100;

/// Swaps and C-steps from `start` until no swap lowers the objective.
pub(crate) fn refine(rows: Rows<'_>, h: usize, start: Candidate, work: &mut Work) -> Candidate {
    let (n, p) = (rows.n, rows.p);
    let mut best = start;
    let mut idx = Vec::with_capacity(h);
    let mut in_h = vec![false; n];
    let mut z = vec![0.0; n * p];
    let mut d = vec![0.0; n];
    let mut e = vec![0.0; n];
    let mut unit = vec![0.0; p];
    let mut column = vec![0.0; p];
    let mut a_inv = vec![0.0; p * p];
    for _ in 0..MAX_SWAPS {
        squared_residuals(rows, &best.b, &mut work.r2);
        let Some(t) = trim(work, h) else { break };
        subset_rows(&work.r2, &t, h, &mut idx);
        in_h.iter_mut().for_each(|v| *v = false);
        idx.iter().for_each(|&i| in_h[i] = true);
        // The subset's least-squares fit and (X_H'X_H)^-1.
        let mut xtx = vec![0.0; p * p];
        let mut xty = vec![0.0; p];
        for &i in &idx {
            let x = rows.row(i);
            for a in 0..p {
                xty[a] += x[a] * rows.y[i];
                for b in a..p {
                    xtx[a * p + b] += x[a] * x[b];
                }
            }
        }
        let mut b = vec![0.0; p];
        if !cholesky_solve(&xtx, &xty, p, &mut b) {
            break;
        }
        for c in 0..p {
            unit.iter_mut().for_each(|v| *v = 0.0);
            unit[c] = 1.0;
            if !cholesky_solve(&xtx, &unit, p, &mut column) {
                return best;
            }
            for r in 0..p {
                a_inv[r * p + c] = column[r];
            }
        }
        let mut rss = 0.0;
        for i in 0..n {
            let x = rows.row(i);
            e[i] = rows.y[i] - dot(x, &b);
            let zi = &mut z[i * p..(i + 1) * p];
            for r in 0..p {
                zi[r] = dot(&a_inv[r * p..(r + 1) * p], x);
            }
            d[i] = dot(x, zi);
            if in_h[i] {
                rss += e[i] * e[i];
            }
        }
        // The best swap.
        let mut gain = -1e-12 * rss.max(f64::MIN_POSITIVE);
        let mut swap = None;
        for &i in &idx {
            let one_minus = 1.0 - d[i];
            if one_minus <= 1e-10 {
                continue; // removing i would leave the subset singular
            }
            let xi = rows.row(i);
            for j in (0..n).filter(|&j| !in_h[j]) {
                let dij = dot(xi, &z[j * p..(j + 1) * p]);
                let den = one_minus * (1.0 + d[j]) + dij * dij;
                let num =
                    e[j] * e[j] * one_minus - e[i] * e[i] * (1.0 + d[j]) + 2.0 * e[i] * e[j] * dij;
                let delta = num / den;
                if delta < gain {
                    gain = delta;
                    swap = Some((i, j));
                }
            }
        }
        let Some((out, into)) = swap else { break };
        // Refit on the swapped subset, then C-steps.
        let mut xtx2 = xtx.clone();
        let mut xty2 = xty.clone();
        let (xo, xi) = (rows.row(out), rows.row(into));
        for a in 0..p {
            xty2[a] += xi[a] * rows.y[into] - xo[a] * rows.y[out];
            for c in a..p {
                xtx2[a * p + c] += xi[a] * xi[c] - xo[a] * xo[c];
            }
        }
        let mut b2 = vec![0.0; p];
        if !cholesky_solve(&xtx2, &xty2, p, &mut b2) {
            break;
        }
        match iterate(rows, h, b2, MAX_STEPS, work) {
            Some(next) if next.objective < best.objective => best = next,
            _ => break,
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regression::csteps::gather;
    use crate::regression::linalg::least_squares;

    /// The swap formula against refits, on small pseudo-random data.
    #[test]
    fn swap_formula_matches_refits() {
        let mut s = 3u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let (n, p, h) = (12, 3, 8);
        let mut x = Vec::new();
        let mut y = Vec::new();
        for _ in 0..n {
            let (a, b) = (next(), next());
            x.extend_from_slice(&[1.0, a, b]);
            y.push(a - b + next());
        }
        let rows = Rows { x: &x, y: &y, n, p };
        let subset: Vec<usize> = (0..h).collect();
        let rss = |idx: &[usize]| {
            let (sx, sy) = gather(rows, idx);
            let b = least_squares(&sx, &sy, idx.len(), p).unwrap();
            idx.iter()
                .map(|&i| (y[i] - dot(rows.row(i), &b)).powi(2))
                .sum::<f64>()
        };
        let (sx, sy) = gather(rows, &subset);
        let b = least_squares(&sx, &sy, h, p).unwrap();
        let mut xtx = vec![0.0; p * p];
        for &i in &subset {
            for a in 0..p {
                for c in 0..p {
                    xtx[a * p + c] += rows.row(i)[a] * rows.row(i)[c];
                }
            }
        }
        let solve = |v: &[f64]| {
            let mut out = vec![0.0; p];
            assert!(cholesky_solve(&xtx, v, p, &mut out));
            out
        };
        let base = rss(&subset);
        for i in 0..h {
            for j in h..n {
                let (xi, xj) = (rows.row(i), rows.row(j));
                let (zi, zj) = (solve(xi), solve(xj));
                let (di, dj, dij) = (dot(xi, &zi), dot(xj, &zj), dot(xi, &zj));
                let (ei, ej) = (y[i] - dot(xi, &b), y[j] - dot(xj, &b));
                let delta = (ej * ej * (1.0 - di) - ei * ei * (1.0 + dj) + 2.0 * ei * ej * dij)
                    / ((1.0 - di) * (1.0 + dj) + dij * dij);
                let mut swapped: Vec<usize> = subset.iter().copied().filter(|&k| k != i).collect();
                swapped.push(j);
                assert!(
                    (base + delta - rss(&swapped)).abs() < 1e-12,
                    "swap {i} -> {j}"
                );
            }
        }
    }
}

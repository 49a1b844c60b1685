//! The thresholded gradient methods: IHT, NIHT and CGIHT.
//!
//! Each iteration costs one product with `A^T` (the gradient) and, while the support stays
//! the same, one with `A`: the new residual then follows from the old one by linearity
//! (`r' = r - mu A g_S`), and is recomputed from `x` only when the support changes, every
//! [`REFRESH`] iterations (against drift) and before convergence is declared.

use crate::error::Result;
use crate::recovery::solver::{Outcome, Problem};
use crate::recovery::stopping::{Monitor, StopReason};
use crate::recovery::threshold::{hard_threshold, largest};
use crate::recovery::vector::{add_scaled, axpy, difference, dot, dot_on, norm2, restrict};
use crate::recovery::Real;

/// Iterations between exact recomputations of the residual.
const REFRESH: usize = 32;
/// NIHT's `c`: a step is kept while it is at most `(1 - c)` times the largest safe one.
const SAFETY: f64 = 0.01;
/// NIHT's `kappa`: a step too long is divided by `kappa (1 - c)`.
const SHRINK: f64 = 2.0;
/// Power iterations that estimate `|A|^2` for IHT's default step.
const POWER_STEPS: usize = 30;

/// The residual `y - A x` and its state: exact, or updated by linearity since.
struct Residual<T> {
    r: Vec<T>,
    ax: Vec<T>,
    updates: usize,
}

impl<T: Real> Residual<T> {
    fn new(y: &[T]) -> Residual<T> {
        Residual {
            r: y.to_vec(),
            ax: vec![T::zero(); y.len()],
            updates: 0,
        }
    }

    /// `r = y - A x`, exactly.
    fn recompute(&mut self, p: &Problem<'_, T>, x: &[T]) {
        p.op.apply(x, &mut self.ax);
        difference(p.y, &self.ax, &mut self.r);
        self.updates = 0;
    }

    /// `r = r - s a` (`a = A d` for the step `d` just taken).
    fn update(&mut self, s: f64, a: &[T]) {
        axpy(-s, a, &mut self.r);
        self.updates += 1;
    }

    /// The residual's norm for the monitor: recomputed from `x` first when it was updated
    /// [`REFRESH`] times, or when it seems to have converged.
    fn norm(&mut self, p: &Problem<'_, T>, x: &[T], norm_y: f64) -> f64 {
        let mut norm = norm2(&self.r).sqrt();
        if self.updates > 0 && (self.updates >= REFRESH || norm <= 2.0 * p.tol * norm_y) {
            self.recompute(p, x);
            norm = norm2(&self.r).sqrt();
        }
        norm
    }
}

/// IHT: `x = H_k(x + mu A^T (y - A x))`, `mu` given or `1 / |A|^2`.
pub(crate) fn iht<T: Real>(
    p: &Problem<'_, T>,
    step: Option<f64>,
    monitor: &mut Monitor,
) -> Result<Outcome<T>> {
    let (_, n) = p.op.shape();
    let mu = step.unwrap_or_else(|| 1.0 / squared_norm(p));
    let norm_y = norm2(p.y).sqrt();
    let mut x = vec![T::zero(); n];
    let mut res = Residual::new(p.y);
    let mut support = Vec::new();
    let (mut g, mut v) = (vec![T::zero(); n], vec![T::zero(); n]);
    if let Some(stop) = monitor.record(norm_y, &support) {
        return Ok((x, support, stop));
    }
    loop {
        p.op.adjoint(&res.r, &mut g);
        add_scaled(&x, mu, &g, &mut v);
        if !finite(&v) {
            return Ok((x, support, diverged(monitor)));
        }
        support = hard_threshold(&p.selector, &v, p.k, &mut x)?;
        res.recompute(p, &x);
        if let Some(stop) = monitor.record(norm2(&res.r).sqrt(), &support) {
            return Ok((x, support, stop));
        }
    }
}

/// NIHT (Blumensath & Davies, with the step's safeguard when the support changes).
pub(crate) fn niht<T: Real>(p: &Problem<'_, T>, monitor: &mut Monitor) -> Result<Outcome<T>> {
    let (m, n) = p.op.shape();
    let norm_y = norm2(p.y).sqrt();
    let mut x = vec![T::zero(); n];
    let mut res = Residual::new(p.y);
    let mut g = vec![T::zero(); n];
    let (mut gs, mut v, mut next, mut d) = (
        vec![T::zero(); n],
        vec![T::zero(); n],
        vec![T::zero(); n],
        vec![T::zero(); n],
    );
    let (mut ag, mut ad) = (vec![T::zero(); m], vec![T::zero(); m]);
    p.op.adjoint(&res.r, &mut g);
    // The first step's support: the k largest of A^T y.
    let mut support = largest(&p.selector, &g, p.k)?;
    if let Some(stop) = monitor.record(norm_y, &[]) {
        return Ok((x, Vec::new(), stop));
    }
    loop {
        restrict(&g, &support, &mut gs);
        p.op.apply(&gs, &mut ag);
        let (gg, agg) = (dot_on(&support, &g, &g), norm2(&ag));
        let mut mu = if agg > 0.0 { gg / agg } else { 1.0 };
        let mut moved = false;
        let new_support = loop {
            add_scaled(&x, mu, &g, &mut v);
            if !finite(&v) {
                return Ok((x, support, diverged(monitor)));
            }
            let taken = hard_threshold(&p.selector, &v, p.k, &mut next)?;
            if taken == support {
                break taken;
            }
            difference(&next, &x, &mut d);
            p.op.apply(&d, &mut ad);
            let (dd, add) = (norm2(&d), norm2(&ad));
            let omega = if add > 0.0 {
                (1.0 - SAFETY) * dd / add
            } else {
                f64::INFINITY
            };
            if mu <= omega {
                moved = true;
                break taken;
            }
            mu /= SHRINK * (1.0 - SAFETY);
        };
        if moved {
            // next - x = d, and A d is at hand.
            res.update(1.0, &ad);
        } else {
            // The support held: next = x + mu g_S.
            res.update(mu, &ag);
        }
        std::mem::swap(&mut x, &mut next);
        support = new_support;
        let norm = res.norm(p, &x, norm_y);
        if let Some(stop) = monitor.record(norm, &support) {
            return Ok((x, support, stop));
        }
        p.op.adjoint(&res.r, &mut g);
    }
}

/// CGIHT, restarted whenever the support changes (Blanchard, Tanner & Wei): the direction is
/// the gradient plus `beta` times the last direction, `beta` making the two conjugate on the
/// support (`<A d_S, A d'_S> = 0`), the step the minimiser along the direction on the support.
pub(crate) fn cgiht<T: Real>(p: &Problem<'_, T>, monitor: &mut Monitor) -> Result<Outcome<T>> {
    let (m, n) = p.op.shape();
    let norm_y = norm2(p.y).sqrt();
    let mut x = vec![T::zero(); n];
    let mut res = Residual::new(p.y);
    let mut g = vec![T::zero(); n];
    let (mut gs, mut dir, mut ds, mut v, mut next) = (
        vec![T::zero(); n],
        vec![T::zero(); n],
        vec![T::zero(); n],
        vec![T::zero(); n],
        vec![T::zero(); n],
    );
    let (mut ag, mut ad) = (vec![T::zero(); m], vec![T::zero(); m]);
    p.op.adjoint(&res.r, &mut g);
    let mut support = largest(&p.selector, &g, p.k)?;
    // Whether the last direction (and A of it on the support) may be built on.
    let mut conjugate = false;
    if let Some(stop) = monitor.record(norm_y, &[]) {
        return Ok((x, Vec::new(), stop));
    }
    loop {
        restrict(&g, &support, &mut gs);
        p.op.apply(&gs, &mut ag);
        let add = norm2(&ad);
        let beta = if conjugate && add > 0.0 {
            -dot(&ag, &ad) / add
        } else {
            0.0
        };
        // dir = g + beta dir; A dir_S = A g_S + beta A dir_S (the support is the same).
        for (d, &gi) in dir.iter_mut().zip(&g) {
            *d = gi + T::of(beta) * *d;
        }
        for (a, &b) in ad.iter_mut().zip(&ag) {
            *a = b + T::of(beta) * *a;
        }
        if beta == 0.0 {
            ad.copy_from_slice(&ag);
        }
        restrict(&dir, &support, &mut ds);
        let add = norm2(&ad);
        let alpha = if add > 0.0 {
            dot_on(&support, &g, &ds) / add
        } else {
            1.0
        };
        add_scaled(&x, alpha, &dir, &mut v);
        if !finite(&v) {
            return Ok((x, support, diverged(monitor)));
        }
        let taken = hard_threshold(&p.selector, &v, p.k, &mut next)?;
        std::mem::swap(&mut x, &mut next);
        if taken == support {
            // x' = x + alpha dir_S.
            res.update(alpha, &ad);
            conjugate = true;
        } else {
            res.recompute(p, &x);
            conjugate = false;
        }
        support = taken;
        let norm = res.norm(p, &x, norm_y);
        if let Some(stop) = monitor.record(norm, &support) {
            return Ok((x, support, stop));
        }
        p.op.adjoint(&res.r, &mut g);
    }
}

/// `|A|^2` (the largest eigenvalue of `A^T A`) by power iteration from a fixed start, raised
/// by 1% against the estimate's shortfall.
fn squared_norm<T: Real>(p: &Problem<'_, T>) -> f64 {
    let (m, n) = p.op.shape();
    let mut x: Vec<T> = (0..n).map(|i| T::of(1.0 + (i % 7) as f64 / 7.0)).collect();
    let (mut ax, mut back) = (vec![T::zero(); m], vec![T::zero(); n]);
    let mut lambda = 0.0;
    for _ in 0..POWER_STEPS {
        let norm = norm2(&x).sqrt();
        if norm == 0.0 || !norm.is_finite() {
            break;
        }
        x.iter_mut().for_each(|v| *v = T::of(v.as_f64() / norm));
        p.op.apply(&x, &mut ax);
        p.op.adjoint(&ax, &mut back);
        lambda = norm2(&back).sqrt();
        std::mem::swap(&mut x, &mut back);
    }
    if lambda > 0.0 && lambda.is_finite() {
        1.01 * lambda
    } else {
        1.0
    }
}

fn finite<T: Real>(v: &[T]) -> bool {
    v.iter().all(|x| x.as_f64().is_finite())
}

/// Records a non-finite step as divergence.
fn diverged(monitor: &mut Monitor) -> StopReason {
    monitor.record(f64::INFINITY, &[]);
    StopReason::Diverged
}

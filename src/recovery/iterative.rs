//! The thresholded gradient methods: IHT, NIHT and CGIHT.
//!
//! Each iteration costs one product with `A^T` (the gradient) and, while the support stays
//! the same, one with `A`: the new residual then follows from the old one by linearity
//! (`r' = r - mu A g_S`), and is recomputed from `x` only when the support changes, every
//! [`REFRESH`] iterations (against drift) and before convergence is declared.

use std::ops::ControlFlow;

use crate::error::Result;
use crate::recovery::backend::{measured, zeros_each, Backend};
use crate::recovery::solver::{Outcome, Problem};
use crate::recovery::stopping::{Monitor, StopReason};
use crate::recovery::Real;

/// Iterations between exact recomputations of the residual.
pub(crate) const REFRESH: usize = 32;
/// NIHT's `c`: a step is kept while it is at most `(1 - c)` times the largest safe one.
pub(crate) const SAFETY: f64 = 0.01;
/// NIHT's `kappa`: a step too long is divided by `kappa (1 - c)`.
pub(crate) const SHRINK: f64 = 2.0;
/// Power iterations that estimate `|A|^2` for IHT's default step.
pub(crate) const POWER_STEPS: usize = 30;

/// The residual `y - A x`, exact or updated by linearity since it last was.
struct Residual<V> {
    r: V,
    ax: V,
    updates: usize,
}

impl<V> Residual<V> {
    /// `r = y` (for `x = 0`).
    fn new<T: Real, B: Backend<T, Vector = V>>(b: &B) -> Result<Residual<V>> {
        Ok(Residual {
            r: measured(b)?,
            ax: b.zeros(b.shape().0)?,
            updates: 0,
        })
    }

    /// `r = y - A x`, exactly.
    fn recompute<T: Real, B: Backend<T, Vector = V>>(&mut self, b: &B, x: &V) -> Result<()> {
        b.apply(x, &mut self.ax)?;
        b.difference(b.measurements(), &self.ax, &mut self.r)?;
        self.updates = 0;
        Ok(())
    }

    /// `r = r - s a` (`a = A d` for the step `d` just taken).
    fn update<T: Real, B: Backend<T, Vector = V>>(&mut self, b: &B, s: f64, a: &V) -> Result<()> {
        b.axpy(-s, a, &mut self.r)?;
        self.updates += 1;
        Ok(())
    }

    /// The residual's norm for the monitor: recomputed from `x` first when it was updated
    /// [`REFRESH`] times, or when it seems to have converged.
    fn norm<T: Real, B: Backend<T, Vector = V>>(
        &mut self,
        b: &B,
        p: &Problem,
        x: &V,
    ) -> Result<f64> {
        let mut norm = b.norm2(&self.r)?.sqrt();
        if self.updates > 0 && (self.updates >= REFRESH || norm <= 2.0 * p.tol * p.norm_y) {
            self.recompute(b, x)?;
            norm = b.norm2(&self.r)?.sqrt();
        }
        Ok(norm)
    }
}

/// Records `x`'s residual and support (whose fingerprint is `print`); `Some` outcome when the
/// monitor says stop.
pub(crate) fn record<T: Real, B: Backend<T>>(
    b: &B,
    monitor: &mut Monitor,
    (residual, print): (f64, u64),
    x: &B::Vector,
    support: &B::Support,
) -> Result<Option<Outcome<T>>> {
    let stop = monitor.record(residual, print);
    stop.map(|stop| finish(b, x, support, stop)).transpose()
}

/// The outcome of a solve that stopped at `x`.
pub(crate) fn finish<T: Real, B: Backend<T>>(
    b: &B,
    x: &B::Vector,
    support: &B::Support,
    stop: StopReason,
) -> Result<Outcome<T>> {
    Ok((b.to_host(x)?, b.indices(support)?, stop))
}

/// A step that is not finite (its size overflowed): recorded as divergence.
fn diverged<T: Real, B: Backend<T>>(
    b: &B,
    monitor: &mut Monitor,
    x: &B::Vector,
    support: &B::Support,
) -> Result<Outcome<T>> {
    monitor.record(f64::INFINITY, 0);
    finish(b, x, support, StopReason::Diverged)
}

/// NIHT's step on `support`: `|g_S|^2 / |A g_S|^2` (1 when the latter is 0), with `g_S` left
/// in `gs` and `A g_S` in `ag`.
pub(crate) fn normalised_step<T: Real, B: Backend<T>>(
    b: &B,
    g: &B::Vector,
    support: &B::Support,
    gs: &mut B::Vector,
    ag: &mut B::Vector,
) -> Result<f64> {
    b.restrict(g, support, gs)?;
    b.apply(gs, ag)?;
    let (gg, agg) = b.norms2(gs, ag)?;
    Ok(if agg > 0.0 { gg / agg } else { 1.0 })
}

/// What NIHT and CGIHT start from at `x = 0`: `x`, the residual `r = y`, five vectors of `n`
/// values (the first `g = A^T y`, the others zeros) and two of `m` zeros, the first support
/// (the `k` largest of `g`) and its fingerprint.
type Start<V, S> = (V, Residual<V>, [V; 5], [V; 2], S, u64);

/// The [`Start`] of the gradient methods, after the first record (`|y|`, the empty support);
/// the outcome instead when that record already stops.
#[allow(clippy::type_complexity)]
fn start<T: Real, B: Backend<T>>(
    b: &B,
    p: &Problem,
    monitor: &mut Monitor,
) -> Result<ControlFlow<Outcome<T>, Start<B::Vector, B::Support>>> {
    let (m, n) = b.shape();
    let x = b.zeros(n)?;
    let res = Residual::new(b)?;
    let [mut g, gs, v1, v2, v3] = zeros_each(b, n)?;
    let ms = zeros_each(b, m)?;
    b.adjoint(&res.r, &mut g)?;
    let support = b.largest(&g, p.k)?;
    let print = b.fingerprint(&support)?;
    let empty = b.empty()?;
    Ok(match record(b, monitor, (p.norm_y, 0), &x, &empty)? {
        Some(done) => ControlFlow::Break(done),
        None => ControlFlow::Continue((x, res, [g, gs, v1, v2, v3], ms, support, print)),
    })
}

/// IHT: `x = H_k(x + mu A^T (y - A x))`, `mu` given or `1 / |A|^2`.
pub(crate) fn iht<T: Real, B: Backend<T>>(
    b: &B,
    p: &Problem,
    step: Option<f64>,
    monitor: &mut Monitor,
) -> Result<Outcome<T>> {
    let (_, n) = b.shape();
    let mu = match step {
        Some(mu) => mu,
        None => 1.0 / squared_norm(b)?,
    };
    let mut x = b.zeros(n)?;
    let mut res = Residual::new(b)?;
    let mut support = b.empty()?;
    let [mut g, mut v] = zeros_each(b, n)?;
    if let Some(done) = record(b, monitor, (p.norm_y, 0), &x, &support)? {
        return Ok(done);
    }
    if !mu.is_finite() {
        return diverged(b, monitor, &x, &support);
    }
    loop {
        // x and g are finite (the residual was), so is v: a NaN never reaches the threshold.
        b.adjoint(&res.r, &mut g)?;
        b.add_scaled(&x, mu, &g, &mut v)?;
        support = b.largest(&v, p.k)?;
        b.restrict(&v, &support, &mut x)?;
        res.recompute(b, &x)?;
        let norm = b.norm2(&res.r)?.sqrt();
        let print = b.fingerprint(&support)?;
        if let Some(done) = record(b, monitor, (norm, print), &x, &support)? {
            return Ok(done);
        }
    }
}

/// NIHT (Blumensath & Davies, with the step's safeguard when the support changes).
pub(crate) fn niht<T: Real, B: Backend<T>>(
    b: &B,
    p: &Problem,
    monitor: &mut Monitor,
) -> Result<Outcome<T>> {
    let (mut x, mut res, n, m, mut support, mut print) = match start(b, p, monitor)? {
        ControlFlow::Continue(start) => start,
        ControlFlow::Break(done) => return Ok(done),
    };
    let ([mut g, mut gs, mut v, mut next, mut d], [mut ag, mut ad]) = (n, m);
    loop {
        let mut mu = normalised_step(b, &g, &support, &mut gs, &mut ag)?;
        if !mu.is_finite() {
            return diverged(b, monitor, &x, &support);
        }
        let mut moved = false;
        let new_support = loop {
            // x, g and mu are finite: so is v.
            b.add_scaled(&x, mu, &g, &mut v)?;
            let taken = b.largest(&v, p.k)?;
            b.restrict(&v, &taken, &mut next)?;
            if b.same(&taken, &support)? {
                break taken;
            }
            b.difference(&next, &x, &mut d)?;
            // A d, from A g_S and the support's change where the operator can.
            if !b.change_product((mu, &ag), (&support, &taken), &v, &mut ad)? {
                b.apply(&d, &mut ad)?;
            }
            let (dd, add) = b.norms2(&d, &ad)?;
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
            res.update(b, 1.0, &ad)?;
        } else {
            // The support held: next = x + mu g_S.
            res.update(b, mu, &ag)?;
        }
        std::mem::swap(&mut x, &mut next);
        if moved {
            print = b.fingerprint(&new_support)?;
        }
        support = new_support;
        let norm = res.norm(b, p, &x)?;
        if let Some(done) = record(b, monitor, (norm, print), &x, &support)? {
            return Ok(done);
        }
        b.adjoint(&res.r, &mut g)?;
    }
}

/// CGIHT, restarted whenever the support changes (Blanchard, Tanner & Wei): the direction is
/// the gradient plus `beta` times the last direction, `beta` making the two conjugate on the
/// support (`<A d_S, A d'_S> = 0`), the step the minimiser along the direction on the support.
pub(crate) fn cgiht<T: Real, B: Backend<T>>(
    b: &B,
    p: &Problem,
    monitor: &mut Monitor,
) -> Result<Outcome<T>> {
    let (mut x, mut res, n, m, mut support, mut print) = match start(b, p, monitor)? {
        ControlFlow::Continue(start) => start,
        ControlFlow::Break(done) => return Ok(done),
    };
    let ([mut g, mut gs, mut dir, mut ds, mut v], [mut ag, mut ad]) = (n, m);
    // Whether the last direction (and A of it on the support) may be built on.
    let mut conjugate = false;
    loop {
        b.restrict(&g, &support, &mut gs)?;
        b.apply(&gs, &mut ag)?;
        let add = b.norm2(&ad)?;
        let beta = if conjugate && add > 0.0 {
            -b.dot(&ag, &ad)? / add
        } else {
            0.0
        };
        if beta == 0.0 {
            b.copy(&g, &mut dir)?;
            b.copy(&ag, &mut ad)?;
        } else {
            // dir = g + beta dir; A dir_S = A g_S + beta A dir_S (the support is the same).
            b.xpay(&g, beta, &mut dir)?;
            b.xpay(&ag, beta, &mut ad)?;
        }
        b.restrict(&dir, &support, &mut ds)?;
        let add = b.norm2(&ad)?;
        let alpha = if add > 0.0 {
            b.dot_on(&support, &g, &ds)? / add
        } else {
            1.0
        };
        if !alpha.is_finite() {
            return diverged(b, monitor, &x, &support);
        }
        b.add_scaled(&x, alpha, &dir, &mut v)?;
        let taken = b.largest(&v, p.k)?;
        b.restrict(&v, &taken, &mut x)?;
        if b.same(&taken, &support)? {
            // x' = x + alpha dir_S.
            res.update(b, alpha, &ad)?;
            conjugate = true;
        } else {
            res.recompute(b, &x)?;
            conjugate = false;
            print = b.fingerprint(&taken)?;
        }
        support = taken;
        let norm = res.norm(b, p, &x)?;
        if let Some(done) = record(b, monitor, (norm, print), &x, &support)? {
            return Ok(done);
        }
        b.adjoint(&res.r, &mut g)?;
    }
}

/// `|A|^2` (the largest eigenvalue of `A^T A`) by power iteration from a fixed start, raised
/// by 1% against the estimate's shortfall.
pub(crate) fn squared_norm<T: Real, B: Backend<T>>(b: &B) -> Result<f64> {
    let (m, n) = b.shape();
    let mut x = b.upload(&power_start(n))?;
    let (mut ax, mut back) = (b.zeros(m)?, b.zeros(n)?);
    let mut lambda = 0.0;
    for _ in 0..POWER_STEPS {
        b.apply(&x, &mut ax)?;
        b.adjoint(&ax, &mut back)?;
        lambda = b.norm2(&back)?.sqrt();
        if lambda == 0.0 || !lambda.is_finite() {
            break;
        }
        // x = back / lambda.
        b.add_scaled(&back, 1.0 / lambda - 1.0, &back, &mut x)?;
    }
    Ok(power_estimate(lambda))
}

/// The power iterations' first vector (of unit norm, `n` entries).
pub(crate) fn power_start<T: Real>(n: usize) -> Vec<T> {
    let start: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 / 7.0).collect();
    let norm = start.iter().map(|v| v * v).sum::<f64>().sqrt();
    start.iter().map(|v| T::of(v / norm)).collect()
}

/// `|A|^2` from the power iterations' last `|A^T A x|` (with a margin; 1 when it is zero or
/// not finite).
pub(crate) fn power_estimate(lambda: f64) -> f64 {
    if lambda > 0.0 && lambda.is_finite() {
        1.01 * lambda
    } else {
        1.0
    }
}

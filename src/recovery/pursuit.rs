//! The support-then-values methods: HTP, CoSaMP and subspace pursuit. Each chooses a support
//! by hard thresholding and takes the values on it by least squares ([`solve_on`]).

use crate::error::Result;
use crate::recovery::backend::{measured, zeros_each, Backend};
use crate::recovery::iterative;
use crate::recovery::least_squares::{solve_on, Scratch};
use crate::recovery::solver::{Outcome, Problem};
use crate::recovery::stopping::Monitor;
use crate::recovery::Real;

/// Records the residual `r` of `x` on `support`; `Some` outcome when the monitor says stop.
fn record<T: Real, B: Backend<T>>(
    b: &B,
    monitor: &mut Monitor,
    r: &B::Vector,
    x: &B::Vector,
    support: &B::Support,
) -> Result<Option<Outcome<T>>> {
    let residual = b.norm2(r)?.sqrt();
    iterative::record(b, monitor, (residual, b.fingerprint(support)?), x, support)
}

/// The start of the pursuits at `x = 0`: the least squares' scratch, `x`, `g` and `v` (`n`
/// zeros each) and the residual `r = y`.
#[allow(clippy::type_complexity)]
fn start<T: Real, B: Backend<T>>(b: &B) -> Result<(Scratch<B::Vector>, [B::Vector; 3], B::Vector)> {
    let w = Scratch::new(b)?;
    let xgv = zeros_each(b, b.shape().1)?;
    Ok((w, xgv, measured(b)?))
}

/// The step CoSaMP and subspace pursuit begin with: `T = supp H_width(g)` for `g = A^T r`,
/// joined to `support`; least squares on `T` from `x` (supported inside it) into `v`; `x` =
/// the `k` largest of `v`, whose support is returned. `r` is left as `v`'s residual.
fn join_and_prune<T: Real, B: Backend<T>>(
    b: &B,
    p: &Problem,
    (width, support): (usize, &B::Support),
    [x, g, v]: [&mut B::Vector; 3],
    (r, w): (&mut B::Vector, &mut Scratch<B::Vector>),
) -> Result<B::Support> {
    b.adjoint(r, g)?;
    let wide = b.union(&b.largest(g, width)?, support)?;
    b.copy(x, v)?;
    solve_on(b, &wide, p.tol, v, r, w)?;
    let kept = b.largest(v, p.k)?;
    b.restrict(v, &kept, x)?;
    Ok(kept)
}

/// HTP with NIHT's step: `S = supp H_k(x + mu A^T r)`, `mu = |g_T|^2 / |A g_T|^2` on the
/// current support `T`; then `x` = least squares on `S`, started from `(x + mu g)_S`.
pub(crate) fn htp<T: Real, B: Backend<T>>(
    b: &B,
    p: &Problem,
    monitor: &mut Monitor,
) -> Result<Outcome<T>> {
    let (mut w, [mut x, mut g, mut v], mut r) = start(b)?;
    b.adjoint(&r, &mut g)?;
    let mut support = b.largest(&g, p.k)?;
    let empty = b.empty()?;
    if let Some(done) = record(b, monitor, &r, &x, &empty)? {
        return Ok(done);
    }
    loop {
        let mu = iterative::normalised_step(b, &g, &support, &mut w.s, &mut w.q)?;
        b.add_scaled(&x, mu, &g, &mut v)?;
        support = b.largest(&v, p.k)?;
        b.restrict(&v, &support, &mut x)?;
        solve_on(b, &support, p.tol, &mut x, &mut r, &mut w)?;
        if let Some(done) = record(b, monitor, &r, &x, &support)? {
            return Ok(done);
        }
        b.adjoint(&r, &mut g)?;
    }
}

/// CoSaMP: `T = supp H_2k(A^T r)` joined to the support, least squares on `T`, its `k`
/// largest kept.
pub(crate) fn cosamp<T: Real, B: Backend<T>>(
    b: &B,
    p: &Problem,
    monitor: &mut Monitor,
) -> Result<Outcome<T>> {
    let (mut w, [mut x, mut g, mut v], mut r) = start(b)?;
    let mut ax = b.zeros(b.shape().0)?;
    let mut support = b.empty()?;
    if let Some(done) = record(b, monitor, &r, &x, &support)? {
        return Ok(done);
    }
    loop {
        let xgv = [&mut x, &mut g, &mut v];
        support = join_and_prune(b, p, (2 * p.k, &support), xgv, (&mut r, &mut w))?;
        b.apply(&x, &mut ax)?;
        b.difference(b.measurements(), &ax, &mut r)?;
        if let Some(done) = record(b, monitor, &r, &x, &support)? {
            return Ok(done);
        }
    }
}

/// Subspace pursuit: `T = supp H_k(A^T r)` joined to the support, least squares on `T`, its
/// `k` largest `S`, least squares on `S`.
pub(crate) fn subspace<T: Real, B: Backend<T>>(
    b: &B,
    p: &Problem,
    monitor: &mut Monitor,
) -> Result<Outcome<T>> {
    let (mut w, [mut x, mut g, mut v], mut r) = start(b)?;
    let mut support = b.empty()?;
    if let Some(done) = record(b, monitor, &r, &x, &support)? {
        return Ok(done);
    }
    loop {
        let xgv = [&mut x, &mut g, &mut v];
        support = join_and_prune(b, p, (p.k, &support), xgv, (&mut r, &mut w))?;
        solve_on(b, &support, p.tol, &mut x, &mut r, &mut w)?;
        if let Some(done) = record(b, monitor, &r, &x, &support)? {
            return Ok(done);
        }
    }
}

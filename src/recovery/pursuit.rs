//! The support-then-values methods: HTP, CoSaMP and subspace pursuit. Each chooses a support
//! by hard thresholding and takes the values on it by least squares ([`solve_on`]).

use crate::error::Result;
use crate::recovery::least_squares::solve_on;
use crate::recovery::solver::{Outcome, Problem};
use crate::recovery::stopping::Monitor;
use crate::recovery::threshold::largest;
use crate::recovery::vector::{add_scaled, dot_on, norm2, restrict, union};
use crate::recovery::Real;

/// Scratch vectors of one solve.
struct Scratch<T> {
    /// `n` long.
    g: Vec<T>,
    v: Vec<T>,
    s: Vec<T>,
    p: Vec<T>,
    /// `m` long.
    q: Vec<T>,
}

impl<T: Real> Scratch<T> {
    fn new(m: usize, n: usize) -> Scratch<T> {
        Scratch {
            g: vec![T::zero(); n],
            v: vec![T::zero(); n],
            s: vec![T::zero(); n],
            p: vec![T::zero(); n],
            q: vec![T::zero(); m],
        }
    }
}

/// HTP with NIHT's step: `S = supp H_k(x + mu A^T r)`, `mu = |g_T|^2 / |A g_T|^2` on the
/// current support `T`; then `x` = least squares on `S`, started from `(x + mu g)_S`.
pub(crate) fn htp<T: Real>(p: &Problem<'_, T>, monitor: &mut Monitor) -> Result<Outcome<T>> {
    let (m, n) = p.op.shape();
    let mut w = Scratch::new(m, n);
    let mut x = vec![T::zero(); n];
    let mut r = p.y.to_vec();
    p.op.adjoint(&r, &mut w.g);
    let mut support = largest(&p.selector, &w.g, p.k)?;
    if let Some(stop) = monitor.record(norm2(&r).sqrt(), &[]) {
        return Ok((x, Vec::new(), stop));
    }
    loop {
        restrict(&w.g, &support, &mut w.s);
        p.op.apply(&w.s, &mut w.q);
        let (gg, agg) = (dot_on(&support, &w.g, &w.g), norm2(&w.q));
        let mu = if agg > 0.0 { gg / agg } else { 1.0 };
        add_scaled(&x, mu, &w.g, &mut w.v);
        support = largest(&p.selector, &w.v, p.k)?;
        restrict(&w.v, &support, &mut x);
        solve_on(
            p.op,
            p.y,
            &support,
            p.tol,
            &mut x,
            &mut r,
            (&mut w.q, &mut w.s, &mut w.p),
        );
        if let Some(stop) = monitor.record(norm2(&r).sqrt(), &support) {
            return Ok((x, support, stop));
        }
        p.op.adjoint(&r, &mut w.g);
    }
}

/// CoSaMP: `T = supp H_2k(A^T r)` joined to the support, least squares on `T`, its `k`
/// largest kept.
pub(crate) fn cosamp<T: Real>(p: &Problem<'_, T>, monitor: &mut Monitor) -> Result<Outcome<T>> {
    let (m, n) = p.op.shape();
    let mut w = Scratch::new(m, n);
    let mut x = vec![T::zero(); n];
    let mut r = p.y.to_vec();
    let mut support = Vec::new();
    if let Some(stop) = monitor.record(norm2(&r).sqrt(), &support) {
        return Ok((x, support, stop));
    }
    loop {
        p.op.adjoint(&r, &mut w.g);
        let wide = union(&largest(&p.selector, &w.g, 2 * p.k)?, &support);
        // Least squares on the union, from x (supported inside it).
        w.v.copy_from_slice(&x);
        solve_on(
            p.op,
            p.y,
            &wide,
            p.tol,
            &mut w.v,
            &mut r,
            (&mut w.q, &mut w.s, &mut w.p),
        );
        support = largest(&p.selector, &w.v, p.k)?;
        restrict(&w.v, &support, &mut x);
        p.op.apply(&x, &mut w.q);
        crate::recovery::vector::difference(p.y, &w.q, &mut r);
        if let Some(stop) = monitor.record(norm2(&r).sqrt(), &support) {
            return Ok((x, support, stop));
        }
    }
}

/// Subspace pursuit: `T = supp H_k(A^T r)` joined to the support, least squares on `T`, its
/// `k` largest `S`, least squares on `S`.
pub(crate) fn subspace<T: Real>(p: &Problem<'_, T>, monitor: &mut Monitor) -> Result<Outcome<T>> {
    let (m, n) = p.op.shape();
    let mut w = Scratch::new(m, n);
    let mut x = vec![T::zero(); n];
    let mut r = p.y.to_vec();
    let mut support = Vec::new();
    if let Some(stop) = monitor.record(norm2(&r).sqrt(), &support) {
        return Ok((x, support, stop));
    }
    loop {
        p.op.adjoint(&r, &mut w.g);
        let wide = union(&largest(&p.selector, &w.g, p.k)?, &support);
        w.v.copy_from_slice(&x);
        solve_on(
            p.op,
            p.y,
            &wide,
            p.tol,
            &mut w.v,
            &mut r,
            (&mut w.q, &mut w.s, &mut w.p),
        );
        support = largest(&p.selector, &w.v, p.k)?;
        restrict(&w.v, &support, &mut x);
        solve_on(
            p.op,
            p.y,
            &support,
            p.tol,
            &mut x,
            &mut r,
            (&mut w.q, &mut w.s, &mut w.p),
        );
        if let Some(stop) = monitor.record(norm2(&r).sqrt(), &support) {
            return Ok((x, support, stop));
        }
    }
}

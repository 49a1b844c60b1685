//! Least squares on a support, by conjugate gradients on the normal equations (CGLS).

use crate::error::Result;
use crate::recovery::backend::Backend;
use crate::recovery::Real;

/// The most conjugate-gradient steps of one solve.
pub(crate) const MOST_STEPS: usize = 50;

/// Scratch of [`solve_on`]: one `m`-long and three `n`-long vectors.
pub(crate) struct Scratch<V> {
    pub q: V,
    pub s: V,
    pub p: V,
    pub t: V,
}

impl<V> Scratch<V> {
    /// Scratch for a problem of `b`'s shape.
    pub fn new<T: Real, B: Backend<T, Vector = V>>(b: &B) -> Result<Scratch<V>> {
        let (m, n) = b.shape();
        Ok(Scratch {
            q: b.zeros(m)?,
            s: b.zeros(n)?,
            p: b.zeros(n)?,
            t: b.zeros(n)?,
        })
    }
}

/// Minimises `|y - A z|` over the `z` supported on `support`, starting from `z` (supported
/// there): conjugate gradients on `A_S^T A_S z = A_S^T y`, one product with `A` and one with
/// `A^T` a step, until the gradient `A_S^T r` falls to `tol` times its size at the start, a
/// step fails to reduce the residual (it is then undone), or [`MOST_STEPS`] steps. Leaves the
/// residual `y - A z` in `r`.
pub(crate) fn solve_on<T: Real, B: Backend<T>>(
    b: &B,
    support: &B::Support,
    tol: f64,
    z: &mut B::Vector,
    r: &mut B::Vector,
    w: &mut Scratch<B::Vector>,
) -> Result<()> {
    b.apply(z, &mut w.q)?;
    b.difference(b.measurements(), &w.q, r)?;
    b.adjoint(r, &mut w.t)?;
    b.restrict(&w.t, support, &mut w.s)?;
    b.copy(&w.s, &mut w.p)?;
    let mut gamma = b.norm2(&w.s)?;
    let start = gamma.sqrt();
    let mut residual = b.norm2(r)?;
    for _ in 0..MOST_STEPS {
        if gamma == 0.0 || gamma.sqrt() <= tol * start {
            break;
        }
        b.apply(&w.p, &mut w.q)?;
        let qq = b.norm2(&w.q)?;
        if qq == 0.0 || !qq.is_finite() {
            break;
        }
        let alpha = gamma / qq;
        b.axpy(alpha, &w.p, z)?;
        b.axpy(-alpha, &w.q, r)?;
        // The residual falls at every step in exact arithmetic; where rounding (near the
        // type's precision, or on nearly dependent columns) makes it grow, the step is undone
        // and the solve ends.
        let rr = b.norm2(r)?;
        if rr > residual || rr.is_nan() {
            b.axpy(-alpha, &w.p, z)?;
            b.axpy(alpha, &w.q, r)?;
            break;
        }
        residual = rr;
        b.adjoint(r, &mut w.t)?;
        b.restrict(&w.t, support, &mut w.s)?;
        let next = b.norm2(&w.s)?;
        // p = s + beta p (both supported on S).
        b.xpay(&w.s, next / gamma, &mut w.p)?;
        gamma = next;
    }
    Ok(())
}

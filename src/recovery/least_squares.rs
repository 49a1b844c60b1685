//! Least squares on a support, by conjugate gradients on the normal equations (CGLS).

use crate::recovery::vector::{axpy, difference, dot_on, norm2};
use crate::recovery::{LinearOperator, Real};

/// The most conjugate-gradient steps of one solve.
pub(crate) const MOST_STEPS: usize = 50;

/// Minimises `|y - A z|` over the `z` supported on `support`, starting from `z` (supported
/// there): conjugate gradients on `A_S^T A_S z = A_S^T y`, one product with `A` and one with
/// `A^T` a step, until the gradient `A_S^T r` falls to `tol` times its size at the start, or
/// [`MOST_STEPS`] steps. Leaves the residual `y - A z` in `r`. `m`-long and `n`-long scratch:
/// `q` and `s`, `p`.
pub(crate) fn solve_on<T: Real>(
    op: &dyn LinearOperator<T>,
    y: &[T],
    support: &[usize],
    tol: f64,
    z: &mut [T],
    r: &mut [T],
    (q, s, p): (&mut [T], &mut [T], &mut [T]),
) {
    op.apply(z, q);
    difference(y, q, r);
    if support.is_empty() {
        return;
    }
    op.adjoint(r, s);
    let restrict = |v: &mut [T]| {
        // Zero outside the support (the support is ascending).
        let mut next = support.iter().peekable();
        for (i, v) in v.iter_mut().enumerate() {
            if next.peek() == Some(&&i) {
                next.next();
            } else {
                *v = T::zero();
            }
        }
    };
    restrict(s);
    p.copy_from_slice(s);
    let mut gamma = dot_on(support, s, s);
    let start = gamma.sqrt();
    for _ in 0..MOST_STEPS {
        if gamma == 0.0 || gamma.sqrt() <= tol * start {
            break;
        }
        op.apply(p, q);
        let qq = norm2(q);
        if qq == 0.0 || !qq.is_finite() {
            break;
        }
        let alpha = gamma / qq;
        axpy(alpha, p, z);
        axpy(-alpha, q, r);
        op.adjoint(r, s);
        restrict(s);
        let next = dot_on(support, s, s);
        let beta = next / gamma;
        for &i in support {
            p[i] = s[i] + T::of(beta) * p[i];
        }
        gamma = next;
    }
}

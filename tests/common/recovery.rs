//! Helpers of the sparse recovery tests: measuring a signal, and its error.

use kselect::recovery::{LinearOperator, Real, Recovery};
use kselect::{Error, RecoveryError};

/// The recovery error of `result`: a panic on success or on another error.
pub fn recovery_error<T: std::fmt::Debug>(result: kselect::Result<T>) -> RecoveryError {
    match result {
        Err(Error::Recovery(e)) => e,
        other => panic!("expected a recovery error, got {other:?}"),
    }
}

/// `A x`.
pub fn measure<T: Real>(op: &dyn LinearOperator<T>, x: &[T]) -> Vec<T> {
    let mut y = vec![T::zero(); op.shape().0];
    op.apply(x, &mut y);
    y
}

/// `|found - x|_inf / |x|_inf` (the absolute error where `x` is zero).
pub fn relative_error<T: Real>(found: &[T], x: &[T]) -> f64 {
    let largest = x.iter().map(|v| v.as_f64().abs()).fold(0.0, f64::max);
    let diff = found
        .iter()
        .zip(x)
        .map(|(a, b)| (a.as_f64() - b.as_f64()).abs())
        .fold(0.0, f64::max);
    if largest == 0.0 {
        diff
    } else {
        diff / largest
    }
}

/// `(A x, A^T y)`.
pub fn products<T: Real>(op: &dyn LinearOperator<T>, x: &[T], y: &[T]) -> (Vec<T>, Vec<T>) {
    let (m, n) = op.shape();
    let mut ax = vec![T::zero(); m];
    let mut aty = vec![T::zero(); n];
    op.apply(x, &mut ax);
    op.adjoint(y, &mut aty);
    (ax, aty)
}

/// Asserts that `got` is within `tol` of `want`, relative to `want`'s largest magnitude.
#[track_caller]
pub fn assert_close_to_scale<T: Real>(got: &[T], want: &[T], tol: f64, what: &str) {
    let scale = want.iter().map(|v| v.as_f64().abs()).fold(1e-30, f64::max);
    for (i, (p, q)) in got.iter().zip(want).enumerate() {
        let d = (p.as_f64() - q.as_f64()).abs();
        assert!(d <= tol * scale, "{what}[{i}]: {p} vs {q}");
    }
}

/// Asserts that `found`, solved among other problems (`among`: a batch, a stack), and `alone`,
/// the same problem solved alone, both succeeded with a relative error below `bound`, and that
/// their solutions agree within `tol` times the largest magnitude of the signal `x`.
#[track_caller]
pub fn assert_recovered_as_alone<T: Real>(
    (found, alone): (&Recovery<T>, &Recovery<T>),
    x: &[T],
    (bound, tol): (f64, f64),
    (what, among): (&str, &str),
) {
    for (r, how) in [(found, among), (alone, "alone")] {
        assert!(r.stop.is_success(), "{what} ({how}): {}", r.stop);
        let err = relative_error(&r.solution, x);
        assert!(err < bound, "{what} ({how}): relative error {err:e}");
    }
    let scale = x.iter().map(|v| v.as_f64().abs()).fold(1e-30, f64::max);
    for (a, b) in found.solution.iter().zip(&alone.solution) {
        assert!((a.as_f64() - b.as_f64()).abs() <= tol * scale, "{what}");
    }
}

//! The monotone transform of the data and the frame in which the objective is summed.
//!
//! Order statistics are invariant under increasing maps, so the check loss may be summed over
//! `t(x_i)` instead of `x_i`. With a few values near `1e300` the plain sums lose every other
//! value's contribution (or overflow); `t(v) = sign(v) · ln(1 + |v|)` is bounded by 710 on every
//! `f64` and keeps the bulk of the data visible. The transform only steers the search: counts
//! always compare the original values, and the answer is an element found among the copied
//! candidates, never an inverted transform.

/// The map applied to each value before summing the objective.
///
/// ```
/// use kselect::select::cutting_plane::Transform;
/// assert_eq!(Transform::for_range(0.0, 1.0), Transform::Identity);
/// assert_eq!(Transform::for_range(-1.0, 1e300), Transform::SignLog);
/// assert!(Transform::SignLog.apply(1e300) < 700.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transform {
    /// `t(v) = v`.
    Identity,
    /// `t(v) = sign(v) · ln(1 + |v|)`.
    SignLog,
}

/// Ranges reaching beyond this magnitude (2^64, beyond every integer type) are transformed.
const HUGE: f64 = 18_446_744_073_709_551_616.0;

impl Transform {
    /// The transform chosen for finite values in `[lo, hi]`: `SignLog` when a magnitude
    /// exceeds 2^64 (outliers like `1e300`, sums that could overflow), else `Identity`.
    ///
    /// ```
    /// use kselect::select::cutting_plane::Transform;
    /// assert_eq!(Transform::for_range(0.0, u64::MAX as f64), Transform::Identity);
    /// ```
    pub fn for_range(lo: f64, hi: f64) -> Transform {
        if lo.abs().max(hi.abs()) > HUGE {
            Transform::SignLog
        } else {
            Transform::Identity
        }
    }

    /// `t(v)`: increasing (non-decreasing after rounding) and odd.
    ///
    /// ```
    /// use kselect::select::cutting_plane::Transform;
    /// assert_eq!(Transform::Identity.apply(3.5), 3.5);
    /// assert!(Transform::SignLog.apply(-2.0) < Transform::SignLog.apply(1.0));
    /// ```
    #[inline(always)]
    pub fn apply(self, v: f64) -> f64 {
        match self {
            Transform::Identity => v,
            Transform::SignLog => v.abs().ln_1p().copysign(v),
        }
    }

    /// An approximate inverse of [`apply`](Self::apply), used only to place search points.
    ///
    /// ```
    /// use kselect::select::cutting_plane::Transform;
    /// let t = Transform::SignLog;
    /// assert!((t.invert(t.apply(-5.0)) + 5.0).abs() < 1e-12);
    /// ```
    pub fn invert(self, w: f64) -> f64 {
        match self {
            Transform::Identity => w,
            Transform::SignLog => w.abs().exp_m1().copysign(w),
        }
    }

    /// The code the kernels take (`0` identity, `1` sign-log).
    pub(crate) fn code(self) -> u32 {
        match self {
            Transform::Identity => 0,
            Transform::SignLog => 1,
        }
    }
}

/// The frame of the objective: `frame(v) = (t(v) − center) · scale`, with the centre and the
/// power-of-two scale chosen so that the finite values land in `[-1, 1]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// The transform.
    pub transform: Transform,
    /// The midpoint of the transformed range.
    pub center: f64,
    /// A power of two: `1 / 2^e` with `2^e` at least the transformed half-range (`e` clamped
    /// to `[-1000, 1022]`, so values land in `[-4, 4]` for the widest ranges).
    pub scale: f64,
}

impl Frame {
    /// The frame for finite values in `[lo, hi]` under `transform`.
    ///
    /// ```
    /// use kselect::select::cutting_plane::{Frame, Transform};
    /// let f = Frame::new(Transform::Identity, 10.0, 14.0);
    /// assert_eq!((f.value(10.0), f.value(14.0)), (-1.0, 1.0));
    /// ```
    pub fn new(transform: Transform, lo: f64, hi: f64) -> Frame {
        let (tl, th) = (transform.apply(lo), transform.apply(hi));
        // Halves first: no overflow for the widest ranges.
        let center = tl / 2.0 + th / 2.0;
        let half = th / 2.0 - tl / 2.0;
        let scale = if half > 0.0 {
            let e = half.log2().ceil().clamp(-1000.0, 1022.0) as i32;
            2f64.powi(-e)
        } else {
            1.0
        };
        Frame {
            transform,
            center,
            scale,
        }
    }

    /// A value in the frame.
    ///
    /// ```
    /// use kselect::select::cutting_plane::{Frame, Transform};
    /// assert_eq!(Frame::new(Transform::Identity, 0.0, 4.0).value(3.0), 0.5);
    /// ```
    #[inline(always)]
    pub fn value(&self, v: f64) -> f64 {
        (self.transform.apply(v) - self.center) * self.scale
    }

    /// The original value near a point of the frame (approximate; only steers the search).
    ///
    /// ```
    /// use kselect::select::cutting_plane::{Frame, Transform};
    /// assert_eq!(Frame::new(Transform::Identity, 0.0, 4.0).point(0.5), 3.0);
    /// ```
    pub fn point(&self, u: f64) -> f64 {
        self.transform.invert(u / self.scale + self.center)
    }
}

/// Unit tests of the transform and the frame.
#[cfg(test)]
mod tests {
    use super::*;

    /// The transform never decreases and stays bounded on the whole `f64` range.
    #[test]
    fn sign_log_is_monotone_and_bounded() {
        let xs = [
            -f64::MAX,
            -1e300,
            -1.0,
            -1e-300,
            -0.0,
            0.0,
            1e-300,
            1.0,
            2.0,
            1e300,
            f64::MAX,
        ];
        for w in xs.windows(2) {
            assert!(Transform::SignLog.apply(w[0]) <= Transform::SignLog.apply(w[1]));
        }
        assert!(Transform::SignLog.apply(f64::MAX) < 710.0);
    }

    /// The frame maps the widest range into `[-1, 1]` without overflow.
    #[test]
    fn frame_of_the_widest_range() {
        for t in [Transform::Identity, Transform::SignLog] {
            let f = Frame::new(t, -f64::MAX, f64::MAX);
            assert!(f.value(f64::MAX).is_finite() && f.value(f64::MAX) <= 4.0);
            assert!(f.value(-f64::MAX) >= -4.0);
        }
        let f = Frame::new(Transform::Identity, 5.0, 5.0);
        assert_eq!(f.value(5.0), 0.0);
    }
}

//! The median as `numpy.median` defines it: the middle value of an odd number of values, the
//! mean of the two middle values of an even number.
//!
//! The two middle order statistics, of ranks `(n - 1) / 2` and `n / 2` (the same rank when `n`
//! is odd), are found by selection on the selector's device, never by sorting; their mean is
//! computed as numpy computes it, so that
//!
//! ```text
//! Selector::median_mean(&data) == numpy.median(data)      (policy Last, or no NaN)
//! Selector::median_mean(&data) == numpy.nanmedian(data)   (policy Omit)
//! ```
//!
//! bit for bit wherever numpy's result is finite or NaN, and wherever it is infinite because
//! the data are. Concretely:
//!
//! * **`f32` data**: numpy's `mean` adds the two values in `float32` (the sum rounded to
//!   `f32`), then halves; kselect does the same, and returns that `f32` as an `f64` (exactly).
//!   Halving in `f64` instead would differ for sums that are odd multiples of the smallest
//!   subnormal `f32`, and adding in `f64` for many pairs (`[0.1f32, 0.2f32]`, for one).
//! * **`f64` data**: `(a + b) / 2` in `f64`.
//! * **Integer data**: numpy converts to `float64` first, then `(a + b) / 2`; so does kselect
//!   (rounding to nearest, like `astype(numpy.float64)`, for magnitudes above `2^53`).
//! * **An odd number of values**: the middle value itself (as `f64`: exact for floats and
//!   32-bit integers, rounded to nearest for 64-bit integers above `2^53`).
//! * **Infinities**: the mean follows IEEE arithmetic, as numpy's does: `[x, inf]` gives
//!   `inf` for any number `x`, `[inf, inf]` gives `inf`, and `[-inf, inf]` gives NaN (the mean
//!   of the two is undefined; numpy says NaN too).
//! * **Overflow** (the one deliberate difference): where the two middle values are finite but
//!   their sum overflows (two values near `f64::MAX`, or near `f32::MAX` for `f32` data),
//!   numpy returns `±inf` with a warning. kselect returns the finite mean `a / 2 + b / 2`
//!   instead — both halves are exact there, so it is the correctly rounded mean of the two.
//! * **Signed zeros**: the mean of two zeros is computed as IEEE arithmetic says (`-0.0` only
//!   when both are `-0.0`), and an odd count gives the middle zero itself. numpy's summation
//!   may drop the sign of `-0.0` (`numpy.median([-0.0])` is `0.0` in numpy 1.x); the values
//!   are equal.
//!
//! # NaN
//!
//! The selector's [`NanPolicy`](crate::NanPolicy) applies:
//!
//! * `Omit` is `numpy.nanmedian`: the median of the other values. Where there are no other
//!   values, numpy returns NaN with a warning; kselect returns [`Error::EmptyInput`], as its
//!   other functions do under `Omit`.
//! * `Last` is `numpy.median`: NaN whenever the data hold a NaN, wherever it is (numpy checks
//!   the largest value after partitioning, and NaN orders last).
//! * `Error` refuses data holding a NaN with [`Error::NanInInput`].
//!
//! Empty data are [`Error::EmptyInput`] under every policy (numpy: NaN with a warning).
//!
//! ```
//! use kselect::{NanPolicy, Selector};
//! // The middle value, or the mean of the two middle values.
//! assert_eq!(kselect::median_mean(&[4.0f32, f32::INFINITY, -10.0]).unwrap(), 4.0);
//! assert_eq!(kselect::median_mean(&[3, 1, 4, 2]).unwrap(), 2.5);
//! // numpy.nanmedian and numpy.median's NaN.
//! let data = [f64::INFINITY, f64::NAN, f64::NAN, f64::NAN];
//! let omit = Selector::new().nan_policy(NanPolicy::Omit);
//! assert_eq!(omit.median_mean(&data).unwrap(), f64::INFINITY);
//! let last = Selector::new().nan_policy(NanPolicy::Last);
//! assert!(last.median_mean(&[1.0, 2.0, f64::NAN]).unwrap().is_nan());
//! // No overflow where numpy's sum overflows.
//! assert_eq!(kselect::median_mean(&[f64::MAX, f64::MAX]).unwrap(), f64::MAX);
//! ```
//!
//! [`Error::EmptyInput`]: crate::Error::EmptyInput
//! [`Error::NanInInput`]: crate::Error::NanInInput

use crate::element::{DType, Element};

/// The 0-based ranks of the two middle values of `len >= 1` values: `(len - 1) / 2` and
/// `len / 2`, equal when `len` is odd.
pub(crate) fn middle_ranks(len: usize) -> [usize; 2] {
    [(len - 1) / 2, len / 2]
}

/// The mean of the two middle values `lower <= upper` as `numpy.median` computes it for their
/// type, except that a sum that overflows gives the finite mean (see the module's docs).
///
/// Equal arguments (the middle value of an odd count) give that value exactly.
pub(crate) fn middle_mean<T: Element>(lower: T, upper: T) -> f64 {
    match T::DTYPE {
        // Both values are f32, so these casts are exact.
        DType::F32 => f64::from(mean_f32(lower.to_f64() as f32, upper.to_f64() as f32)),
        _ => mean_f64(lower.to_f64(), upper.to_f64()),
    }
}

/// Defines `$name`: `(a + b) / 2` in `$t`, or `a / 2 + b / 2` where the finite `a + b`
/// overflows.
macro_rules! overflow_safe_mean {
    ($(#[$doc:meta])* $name:ident: $t:ty) => {
        $(#[$doc])*
        fn $name(a: $t, b: $t) -> $t {
            let sum = a + b;
            if sum.is_infinite() && a.is_finite() && b.is_finite() {
                a / 2.0 + b / 2.0
            } else {
                sum / 2.0
            }
        }
    };
}

overflow_safe_mean!(
    /// `(a + b) / 2` in `f64`, or `a / 2 + b / 2` where the finite `a + b` overflows.
    mean_f64: f64
);
overflow_safe_mean!(
    /// `(a + b) / 2` in `f32` (numpy's `float32` mean), or `a / 2 + b / 2` where the finite
    /// `a + b` overflows.
    mean_f32: f32
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_middle_ranks_of_odd_and_even_counts() {
        assert_eq!(middle_ranks(1), [0, 0]);
        assert_eq!(middle_ranks(2), [0, 1]);
        assert_eq!(middle_ranks(5), [2, 2]);
        assert_eq!(middle_ranks(6), [2, 3]);
        assert_eq!(middle_ranks(usize::MAX), [usize::MAX / 2; 2]);
    }

    #[test]
    fn median_of_one_middle_value_is_that_value_exactly() {
        for v in [
            0.1,
            -0.0,
            f64::MAX,
            -f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::INFINITY,
        ] {
            assert_eq!(middle_mean(v, v).to_bits(), v.to_bits(), "{v:e}");
        }
        for v in [0.1f32, -0.0, f32::MAX, f32::MIN, 1e-45, f32::NEG_INFINITY] {
            assert_eq!(middle_mean(v, v).to_bits(), f64::from(v).to_bits(), "{v:e}");
        }
        assert_eq!(middle_mean(i64::MAX, i64::MAX), i64::MAX as f64);
        assert_eq!(middle_mean(u64::MAX, u64::MAX), u64::MAX as f64);
        assert_eq!(middle_mean(i32::MIN, i32::MIN), -2147483648.0);
    }

    #[test]
    fn median_mean_is_rounded_like_numpys_float32_mean() {
        // numpy.median(numpy.array([0.1, 0.2], numpy.float32)) == 0.15 (float32)
        assert_eq!(middle_mean(0.1f32, 0.2f32), f64::from(0.15f32));
        assert_ne!(
            middle_mean(0.1f32, 0.2f32),
            (0.1f32 as f64 + 0.2f32 as f64) / 2.0
        );
        // numpy.median(numpy.array([0, 1e-45], numpy.float32)) == 0.0: half the smallest
        // subnormal rounds to even in float32.
        assert_eq!(middle_mean(0.0f32, 1e-45f32), 0.0);
        assert_eq!(middle_mean(0.1f64, 0.2f64), 0.15000000000000002);
    }

    #[test]
    fn median_of_infinite_middle_values_follows_ieee_like_numpy() {
        let inf = f64::INFINITY;
        assert_eq!(middle_mean(1.0, inf), inf);
        assert_eq!(middle_mean(-inf, -1.0), -inf);
        assert_eq!(middle_mean(inf, inf), inf);
        assert!(middle_mean(-inf, inf).is_nan());
        assert!(middle_mean(f32::NEG_INFINITY, f32::INFINITY).is_nan());
        assert_eq!(middle_mean(f32::MAX, f32::INFINITY), inf);
        assert!(middle_mean(1.0, f64::NAN).is_nan());
    }

    #[test]
    fn median_of_overflowing_middle_values_is_finite() {
        assert_eq!(middle_mean(f64::MAX, f64::MAX), f64::MAX);
        assert_eq!(middle_mean(-f64::MAX, -f64::MAX), -f64::MAX);
        assert_eq!(middle_mean(1.5e308, 1.75e308), 1.625e308);
        assert_eq!(middle_mean(f32::MAX, f32::MAX), f64::from(f32::MAX));
        assert_eq!(middle_mean(3e38f32, 3.2e38f32), f64::from(3.1e38f32));
        // Opposite signs never overflow.
        assert_eq!(middle_mean(-f64::MAX, f64::MAX), 0.0);
    }
}

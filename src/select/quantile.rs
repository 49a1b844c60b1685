//! Quantile definitions: numpy's thirteen `method`s, reproduced bit for bit.
//!
//! A quantile is read from one or two order statistics (exact ranks found by selection, never
//! by sorting) and, for the continuous methods, a linear interpolation between them. The
//! ranks, the interpolation weight and the arithmetic follow numpy 2.x's `_quantile`
//! operation by operation, so that
//!
//! ```text
//! kselect::quantiles(&data, &qs, method)
//!     == numpy.quantile(data, numpy.asarray(qs, dtype=numpy.float64), method=method.name())
//! ```
//!
//! bit for bit, for every method and every `q` in `[0, 1]`, with integer data converted first
//! (`data.astype(numpy.float64)`). Concretely:
//!
//! * the virtual index of each method is computed in `f64` with numpy's expression and
//!   operation order (for example `n * q + (alpha + q * (1 - alpha - beta)) - 1` for
//!   Hyndman–Fan types 4 to 9, but `(n - 1) * q` for `linear`);
//! * the neighbouring ranks are clipped as numpy's `_get_indexes` clips them (below 0: both
//!   ranks 0; at or above `n - 1`: both the last rank), and the weight is numpy's
//!   `virtual_index - previous_index` *with the clipped previous index* (numpy uses `-1` for
//!   "the last rank" there), then the method's `fix_gamma`;
//! * the interpolation is numpy's `_lerp`:
//!   `t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t`, so `b - a` can be `inf - inf = NaN`
//!   exactly where numpy's is (`numpy.quantile([1, inf], [0.5])` is NaN, and so is ours);
//! * the discrete methods (`inverted_cdf`, `closest_observation`, `lower`, `higher`,
//!   `nearest`) return the selected element itself, with no arithmetic, as numpy's `take`
//!   does: an infinity or a `-0.0` comes back unchanged.
//!
//! Floating-point details that follow from matching numpy:
//!
//! * **`f32` data**: numpy promotes the two neighbours to `f64` only after subtracting them,
//!   so `b - a` is rounded to `f32` (it can even overflow to infinity) and the rest of the
//!   interpolation runs in `f64`. kselect does the same (the result is an `f64`).
//! * **A scalar `q`**: `numpy.quantile(f32_array, 0.3)` with a Python float treats `q` as a
//!   weak scalar and interpolates entirely in `float32` (returning a `float32`); kselect
//!   matches the array form `numpy.quantile(f32_array, [0.3])`. Against the scalar form the
//!   interpolating methods may differ by `float32` rounding: within one `f32` ulp of the
//!   larger in magnitude of the two neighbouring elements (so possibly many ulps of a result
//!   near zero, where the neighbours cancel). The discrete methods agree exactly, and for
//!   `f64` and integer data the two forms agree.
//! * **Integer data**: kselect converts the two selected integers to `f64` (rounding to
//!   nearest, like `astype(numpy.float64)`) before interpolating. numpy applied directly to an
//!   integer array subtracts in the integer type first, which differs only for magnitudes
//!   above `2^53`.
//! * **Signed zeros**: kselect orders `-0.0` before `+0.0`; numpy's partition leaves equal
//!   zeros in an unspecified order, so when data holds both zeros the sign of a zero result
//!   may differ from numpy's (the values are equal).
//!
//! ```
//! use kselect::{quantiles, QuantileMethod};
//! let data = [40.0, 10.0, 30.0, 20.0];
//! let qs = [0.25, 0.4, 0.5];
//! assert_eq!(quantiles(&data, &qs, QuantileMethod::Linear).unwrap(), vec![17.5, 22.0, 25.0]);
//! assert_eq!(quantiles(&data, &qs, QuantileMethod::Hazen).unwrap(), vec![15.0, 21.0, 25.0]);
//! assert_eq!(quantiles(&data, &qs, QuantileMethod::Nearest).unwrap(), vec![20.0, 20.0, 30.0]);
//! ```

use std::fmt::{self, Display};

use crate::element::{DType, Element};
use crate::error::{Error, Result};

/// A quantile definition: numpy's `method` argument of `numpy.quantile`.
///
/// The first nine are the sample quantiles of Hyndman & Fan (1996), types 1 to 9, under
/// numpy's names; the last four are numpy's older `interpolation` modes. `n` is the number of
/// values and `q` the probability; ranks are 0-based.
///
/// ```
/// use kselect::QuantileMethod;
/// let m: QuantileMethod = "median_unbiased".parse().unwrap();
/// assert_eq!(m, QuantileMethod::MedianUnbiased);
/// assert_eq!(m.hyndman_fan_type(), Some(8));
/// assert_eq!(QuantileMethod::default(), QuantileMethod::Linear);
/// assert_eq!(m.to_string(), "median_unbiased");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum QuantileMethod {
    /// `inverted_cdf`, Hyndman–Fan type 1: the inverse of the empirical distribution function,
    /// the element of rank `ceil(n q) - 1` (rank 0 for `q = 0`).
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::InvertedCdf};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], InvertedCdf).unwrap();
    /// assert_eq!(v, vec![10.0, 20.0, 20.0]);
    /// ```
    InvertedCdf,
    /// `averaged_inverted_cdf`, Hyndman–Fan type 2: like `inverted_cdf`, but the mean of the
    /// two neighbouring elements where `n q` is an integer.
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::AveragedInvertedCdf};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], AveragedInvertedCdf);
    /// assert_eq!(v.unwrap(), vec![15.0, 20.0, 25.0]);
    /// ```
    AveragedInvertedCdf,
    /// `closest_observation`, Hyndman–Fan type 3: the element nearest to rank `n q - 1.5`,
    /// ties to the even 1-based order statistic.
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::ClosestObservation};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], ClosestObservation);
    /// assert_eq!(v.unwrap(), vec![10.0, 20.0, 20.0]);
    /// ```
    ClosestObservation,
    /// `interpolated_inverted_cdf`, Hyndman–Fan type 4: linear interpolation of the empirical
    /// distribution function, virtual rank `n q - 1` (`alpha = 0`, `beta = 1`).
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::InterpolatedInvertedCdf};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], InterpolatedInvertedCdf);
    /// assert_eq!(v.unwrap(), vec![10.0, 16.0, 20.0]);
    /// ```
    InterpolatedInvertedCdf,
    /// `hazen`, Hyndman–Fan type 5: virtual rank `n q - 0.5` (`alpha = beta = 1/2`).
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::Hazen};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], Hazen).unwrap();
    /// assert_eq!(v, vec![15.0, 21.0, 25.0]);
    /// ```
    Hazen,
    /// `weibull`, Hyndman–Fan type 6: virtual rank `(n + 1) q - 1` (`alpha = beta = 0`).
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::Weibull};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], Weibull).unwrap();
    /// assert_eq!(v, vec![12.5, 20.0, 25.0]);
    /// ```
    Weibull,
    /// `linear`, Hyndman–Fan type 7, numpy's (and R's) default: virtual rank `(n - 1) q`
    /// (`alpha = beta = 1`).
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::Linear};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], Linear).unwrap();
    /// assert_eq!(v, vec![17.5, 22.0, 25.0]);
    /// ```
    #[default]
    Linear,
    /// `median_unbiased`, Hyndman–Fan type 8: virtual rank `(n + 1/3) q - 2/3`
    /// (`alpha = beta = 1/3`), approximately median-unbiased whatever the distribution.
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::MedianUnbiased};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], MedianUnbiased).unwrap();
    /// assert_eq!(v, vec![14.166666666666668, 20.666666666666668, 25.0]);
    /// ```
    MedianUnbiased,
    /// `normal_unbiased`, Hyndman–Fan type 9: virtual rank `(n + 1/4) q - 5/8`
    /// (`alpha = beta = 3/8`), approximately unbiased for normally distributed data.
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::NormalUnbiased};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], NormalUnbiased).unwrap();
    /// assert_eq!(v, vec![14.375, 20.75, 25.0]);
    /// ```
    NormalUnbiased,
    /// `lower`: the element of rank `floor((n - 1) q)`.
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::Lower};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], Lower).unwrap();
    /// assert_eq!(v, vec![10.0, 20.0, 20.0]);
    /// ```
    Lower,
    /// `higher`: the element of rank `ceil((n - 1) q)`.
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::Higher};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], Higher).unwrap();
    /// assert_eq!(v, vec![20.0, 30.0, 30.0]);
    /// ```
    Higher,
    /// `midpoint`: the mean of the `lower` and `higher` elements (the element itself when
    /// `(n - 1) q` is an integer).
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::Midpoint};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], Midpoint).unwrap();
    /// assert_eq!(v, vec![15.0, 25.0, 25.0]);
    /// ```
    Midpoint,
    /// `nearest`: the element of rank `(n - 1) q` rounded half to even.
    ///
    /// ```
    /// use kselect::{quantiles, QuantileMethod::Nearest};
    /// let v = quantiles(&[10.0, 20.0, 30.0, 40.0], &[0.25, 0.4, 0.5], Nearest).unwrap();
    /// assert_eq!(v, vec![20.0, 20.0, 30.0]);
    /// ```
    Nearest,
}

impl QuantileMethod {
    /// Every method: Hyndman–Fan types 1 to 9 in order, then `lower`, `higher`, `midpoint`
    /// and `nearest`.
    ///
    /// ```
    /// use kselect::QuantileMethod;
    /// assert_eq!(QuantileMethod::ALL.len(), 13);
    /// assert_eq!(QuantileMethod::ALL[6], QuantileMethod::Linear);
    /// ```
    pub const ALL: [QuantileMethod; 13] = [
        QuantileMethod::InvertedCdf,
        QuantileMethod::AveragedInvertedCdf,
        QuantileMethod::ClosestObservation,
        QuantileMethod::InterpolatedInvertedCdf,
        QuantileMethod::Hazen,
        QuantileMethod::Weibull,
        QuantileMethod::Linear,
        QuantileMethod::MedianUnbiased,
        QuantileMethod::NormalUnbiased,
        QuantileMethod::Lower,
        QuantileMethod::Higher,
        QuantileMethod::Midpoint,
        QuantileMethod::Nearest,
    ];

    /// numpy's name of the method (its `method=` string).
    ///
    /// ```
    /// use kselect::QuantileMethod;
    /// assert_eq!(QuantileMethod::InterpolatedInvertedCdf.name(), "interpolated_inverted_cdf");
    /// assert_eq!(QuantileMethod::Nearest.name(), "nearest");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            QuantileMethod::InvertedCdf => "inverted_cdf",
            QuantileMethod::AveragedInvertedCdf => "averaged_inverted_cdf",
            QuantileMethod::ClosestObservation => "closest_observation",
            QuantileMethod::InterpolatedInvertedCdf => "interpolated_inverted_cdf",
            QuantileMethod::Hazen => "hazen",
            QuantileMethod::Weibull => "weibull",
            QuantileMethod::Linear => "linear",
            QuantileMethod::MedianUnbiased => "median_unbiased",
            QuantileMethod::NormalUnbiased => "normal_unbiased",
            QuantileMethod::Lower => "lower",
            QuantileMethod::Higher => "higher",
            QuantileMethod::Midpoint => "midpoint",
            QuantileMethod::Nearest => "nearest",
        }
    }

    /// The Hyndman & Fan (1996) sample-quantile type (1 to 9), or `None` for `lower`,
    /// `higher`, `midpoint` and `nearest`.
    ///
    /// ```
    /// use kselect::QuantileMethod;
    /// assert_eq!(QuantileMethod::InvertedCdf.hyndman_fan_type(), Some(1));
    /// assert_eq!(QuantileMethod::Linear.hyndman_fan_type(), Some(7));
    /// assert_eq!(QuantileMethod::Midpoint.hyndman_fan_type(), None);
    /// ```
    pub fn hyndman_fan_type(self) -> Option<u8> {
        match self {
            QuantileMethod::InvertedCdf => Some(1),
            QuantileMethod::AveragedInvertedCdf => Some(2),
            QuantileMethod::ClosestObservation => Some(3),
            QuantileMethod::InterpolatedInvertedCdf => Some(4),
            QuantileMethod::Hazen => Some(5),
            QuantileMethod::Weibull => Some(6),
            QuantileMethod::Linear => Some(7),
            QuantileMethod::MedianUnbiased => Some(8),
            QuantileMethod::NormalUnbiased => Some(9),
            QuantileMethod::Lower
            | QuantileMethod::Higher
            | QuantileMethod::Midpoint
            | QuantileMethod::Nearest => None,
        }
    }
}

/// Shows numpy's name.
///
/// ```
/// assert_eq!(format!("{}", kselect::QuantileMethod::Hazen), "hazen");
/// ```
impl Display for QuantileMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::names::parse_by_name!(
    /// Parses numpy's names, ignoring case and surrounding spaces, with `-` accepted for `_`.
    ///
    /// ```
    /// use kselect::QuantileMethod;
    /// assert_eq!("Normal-Unbiased".parse::<QuantileMethod>().unwrap(), QuantileMethod::NormalUnbiased);
    /// assert_eq!("linear".parse::<QuantileMethod>().unwrap(), QuantileMethod::Linear);
    /// assert!("type7".parse::<QuantileMethod>().is_err());
    /// ```
    QuantileMethod,
    "quantile method",
    QuantileMethod::ALL
);

/// How a [`Term`] combines the values of its two ranks.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Combine {
    /// numpy's `take`: the value of `lower` (equal to `upper`) itself.
    Take,
    /// numpy's `_lerp` with weight `gamma`.
    Lerp(f64),
}

/// One quantile: the ranks it reads and how it combines their values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Term {
    /// 0-based rank of the left neighbour (numpy's `previous`), `< n`.
    pub lower: usize,
    /// 0-based rank of the right neighbour (numpy's `next`), `< n`.
    pub upper: usize,
    combine: Combine,
}

impl Term {
    fn take(rank: usize) -> Term {
        Term {
            lower: rank,
            upper: rank,
            combine: Combine::Take,
        }
    }

    /// The quantile from the values of ranks `lower` and `upper`, in `f64` arithmetic (exact
    /// for `f64` and integer data).
    pub(crate) fn evaluate(&self, lower_value: f64, upper_value: f64) -> f64 {
        match self.combine {
            Combine::Take => lower_value,
            Combine::Lerp(t) => lerp(lower_value, upper_value, upper_value - lower_value, t),
        }
    }

    /// The quantile from the elements of ranks `lower` and `upper`, as numpy computes it for
    /// their type: for `f32` the difference `upper - lower` is rounded to `f32` (numpy
    /// subtracts before promoting to `f64`); for the other types this is [`Term::evaluate`].
    pub(crate) fn evaluate_as<T: Element>(&self, lower_value: T, upper_value: T) -> f64 {
        let (a, b) = (lower_value.to_f64(), upper_value.to_f64());
        match (self.combine, T::DTYPE) {
            (Combine::Lerp(t), DType::F32) => {
                // Both values are f32, so these casts are exact.
                let diff = (b as f32 - a as f32) as f64;
                lerp(a, b, diff, t)
            }
            _ => self.evaluate(a, b),
        }
    }
}

/// numpy's `_lerp(a, b, t)` with `diff_b_a` already computed (in the input's precision):
/// `where(t >= 0.5, b - diff_b_a * (1 - t), a + diff_b_a * t)`.
fn lerp(a: f64, b: f64, diff_b_a: f64, t: f64) -> f64 {
    if t >= 0.5 {
        b - diff_b_a * (1.0 - t)
    } else {
        a + diff_b_a * t
    }
}

/// The ranks and weights of the quantiles `qs` of `n >= 1` values by `method`.
///
/// Errors with [`Error::InvalidProbability`] for the first `q` outside `[0, 1]` or NaN.
pub(crate) fn plan(n: usize, qs: &[f64], method: QuantileMethod) -> Result<Vec<Term>> {
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    if let Some(&q) = qs.iter().find(|&&q| !(0.0..=1.0).contains(&q)) {
        return Err(Error::InvalidProbability { q });
    }
    Ok(qs.iter().map(|&q| plan_one(n, q, method)).collect())
}

/// numpy's `_quantile` for one `q` in `[0, 1]`.
fn plan_one(n: usize, q: f64, method: QuantileMethod) -> Term {
    use QuantileMethod as M;
    let nf = n as f64;
    let last = n - 1;
    // `(n - 1) * quantiles`, shared by linear, lower, higher, midpoint and nearest.
    let scaled = (n - 1) as f64 * q;
    match method {
        // --- numpy's "supports_integers" path: `take` of one integer index.
        M::InvertedCdf => {
            // _inverted_cdf: boundaries of `n * q - 1`, previous where gamma == 0.
            let index = nf * q - 1.0;
            Term::take(discrete_boundary(index, |gamma, _| gamma == 0.0, last))
        }
        M::ClosestObservation => {
            // _closest_observation: `n * q - 1 - 0.5`, previous where gamma == 0 and
            // floor(index) is odd (numpy's `%` takes the sign of the divisor).
            let index = nf * q - 1.0 - 0.5;
            Term::take(discrete_boundary(
                index,
                |gamma, previous| gamma == 0.0 && previous.rem_euclid(2.0) == 1.0,
                last,
            ))
        }
        M::Lower => Term::take(float_to_rank(scaled.floor(), last)),
        M::Higher => Term::take(float_to_rank(scaled.ceil(), last)),
        M::Nearest => Term::take(float_to_rank(scaled.round_ties_even(), last)),

        // --- Interpolating path: `_get_indexes`, `_get_gamma`, `_lerp`.
        M::AveragedInvertedCdf => {
            let virtual_index = nf * q - 1.0;
            // fix_gamma: the mean of the neighbours where gamma == 0, the next one otherwise.
            let fix_gamma = |gamma: f64, _| if gamma == 0.0 { 0.5 } else { 1.0 };
            interpolated(n, virtual_index, fix_gamma)
        }
        M::InterpolatedInvertedCdf => continuous(n, q, 0.0, 1.0),
        M::Hazen => continuous(n, q, 0.5, 0.5),
        M::Weibull => continuous(n, q, 0.0, 0.0),
        M::Linear => interpolated(n, scaled, |gamma, _| gamma),
        M::MedianUnbiased => continuous(n, q, 1.0 / 3.0, 1.0 / 3.0),
        M::NormalUnbiased => continuous(n, q, 3.0 / 8.0, 3.0 / 8.0),
        M::Midpoint => {
            let virtual_index = 0.5 * (scaled.floor() + scaled.ceil());
            // fix_gamma: 0 where the virtual index is an integer, 0.5 otherwise.
            let fix_gamma = |_, index: f64| if index % 1.0 == 0.0 { 0.0 } else { 0.5 };
            interpolated(n, virtual_index, fix_gamma)
        }
    }
}

/// numpy's `_discrete_interpolation_to_boundaries`: `floor(index)` where `condition(gamma,
/// floor(index))` holds, `floor(index) + 1` otherwise, negative results clipped to 0.
fn discrete_boundary(index: f64, condition: impl Fn(f64, f64) -> bool, last: usize) -> usize {
    let previous = index.floor();
    let gamma = index - previous;
    let chosen = if condition(gamma, previous) {
        previous
    } else {
        previous + 1.0
    };
    float_to_rank(chosen, last)
}

/// An integral `f64` as a rank, clipped to `[0, last]` (numpy never exceeds `last` here; the
/// upper clip only guards against misuse).
fn float_to_rank(index: f64, last: usize) -> usize {
    if index <= 0.0 {
        0
    } else {
        (index as usize).min(last)
    }
}

/// numpy's `_compute_virtual_index(n, q, alpha, beta)`, then the interpolating path with the
/// identity `fix_gamma`.
fn continuous(n: usize, q: f64, alpha: f64, beta: f64) -> Term {
    let virtual_index = n as f64 * q + (alpha + q * (1.0 - alpha - beta)) - 1.0;
    interpolated(n, virtual_index, |gamma, _| gamma)
}

/// numpy's `_get_indexes` and `_get_gamma` for one virtual index of `n` values; `fix_gamma`
/// gets the raw gamma and the virtual index.
fn interpolated(n: usize, virtual_index: f64, fix_gamma: impl Fn(f64, f64) -> f64) -> Term {
    let last = n - 1;
    // numpy marks "the last element" with index -1 and uses that -1 in gamma too.
    let (previous, lower, upper) = if virtual_index >= last as f64 {
        (-1.0, last, last)
    } else if virtual_index < 0.0 {
        (0.0, 0, 0)
    } else {
        let previous = virtual_index.floor();
        let rank = previous as usize;
        (previous, rank, rank + 1)
    };
    let gamma = fix_gamma(virtual_index - previous, virtual_index);
    Term {
        lower,
        upper,
        combine: Combine::Lerp(gamma),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(n: usize, q: f64, method: QuantileMethod, sorted: &[f64]) -> f64 {
        let t = plan(n, &[q], method).unwrap()[0];
        assert!(t.lower < n && t.upper < n, "{method} q={q}: {t:?}");
        t.evaluate(sorted[t.lower], sorted[t.upper])
    }

    #[test]
    fn quantile_rejects_out_of_range_and_nan_probabilities() {
        for method in QuantileMethod::ALL {
            for bad in [
                -0.1,
                1.0 + f64::EPSILON,
                f64::NAN,
                f64::INFINITY,
                -f64::INFINITY,
            ] {
                match plan(5, &[0.5, bad], method) {
                    Err(Error::InvalidProbability { q }) => {
                        assert!(q.to_bits() == bad.to_bits(), "{method}: {q} vs {bad}")
                    }
                    other => panic!("{method} q={bad}: {other:?}"),
                }
            }
            assert!(plan(5, &[0.0, -0.0, 1.0], method).is_ok());
            assert!(plan(5, &[], method).unwrap().is_empty());
        }
        assert!(matches!(
            plan(0, &[0.5], QuantileMethod::Linear),
            Err(Error::EmptyInput)
        ));
    }

    #[test]
    fn quantile_of_one_value_is_that_value() {
        for method in QuantileMethod::ALL {
            for q in [0.0, 1e-9, 0.25, 0.5, 1.0 / 3.0, 0.999, 1.0] {
                let t = plan(1, &[q], method).unwrap()[0];
                assert_eq!((t.lower, t.upper), (0, 0), "{method} q={q}");
                for v in [7.5, -3.0, f64::MAX, f64::MIN_POSITIVE] {
                    assert_eq!(t.evaluate(v, v), v, "{method} q={q} v={v}");
                }
            }
        }
    }

    #[test]
    fn quantile_method_names_round_trip() {
        for method in QuantileMethod::ALL {
            assert_eq!(method.name().parse::<QuantileMethod>().unwrap(), method);
            assert_eq!(
                method.to_string().parse::<QuantileMethod>().unwrap(),
                method
            );
            let loud = method.name().to_ascii_uppercase().replace('_', "-");
            assert_eq!(
                format!(" {loud} ").parse::<QuantileMethod>().unwrap(),
                method
            );
        }
        assert!("".parse::<QuantileMethod>().is_err());
        assert!("linear7".parse::<QuantileMethod>().is_err());
        let types: Vec<u8> = QuantileMethod::ALL
            .iter()
            .filter_map(|m| m.hyndman_fan_type())
            .collect();
        assert_eq!(types, (1..=9).collect::<Vec<u8>>());
    }

    #[test]
    fn quantile_matches_numpy_on_small_examples() {
        // numpy.quantile([10., 20., 30., 40.], [0.25, 0.4, 0.5], method=m)
        let sorted = [10.0, 20.0, 30.0, 40.0];
        let expected: [(QuantileMethod, [f64; 3]); 13] = [
            (QuantileMethod::InvertedCdf, [10.0, 20.0, 20.0]),
            (QuantileMethod::AveragedInvertedCdf, [15.0, 20.0, 25.0]),
            (QuantileMethod::ClosestObservation, [10.0, 20.0, 20.0]),
            (QuantileMethod::InterpolatedInvertedCdf, [10.0, 16.0, 20.0]),
            (QuantileMethod::Hazen, [15.0, 21.0, 25.0]),
            (QuantileMethod::Weibull, [12.5, 20.0, 25.0]),
            (QuantileMethod::Linear, [17.5, 22.0, 25.0]),
            (
                QuantileMethod::MedianUnbiased,
                [14.166666666666668, 20.666666666666668, 25.0],
            ),
            (QuantileMethod::NormalUnbiased, [14.375, 20.75, 25.0]),
            (QuantileMethod::Lower, [10.0, 20.0, 20.0]),
            (QuantileMethod::Higher, [20.0, 30.0, 30.0]),
            (QuantileMethod::Midpoint, [15.0, 25.0, 25.0]),
            (QuantileMethod::Nearest, [20.0, 20.0, 30.0]),
        ];
        for (method, values) in expected {
            for (q, want) in [0.25, 0.4, 0.5].into_iter().zip(values) {
                assert_eq!(eval(4, q, method, &sorted), want, "{method} q={q}");
            }
        }
    }

    #[test]
    fn quantile_follows_numpy_on_infinities_and_zeros() {
        use QuantileMethod as M;
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        // numpy.quantile(x, numpy.array([0., 0.5, 1.]), method=m) for x = [inf], [1, inf]
        // and [-0.]: numpy's _lerp computes inf - inf and inf * 0 where it interpolates,
        // while its discrete methods return the element.
        type Row = (M, [f64; 3], [f64; 3], [f64; 3]);
        let expected: [Row; 13] = [
            (M::InvertedCdf, [inf; 3], [1.0, 1.0, inf], [-0.0; 3]),
            (M::AveragedInvertedCdf, [nan; 3], [1.0, nan, nan], [-0.0; 3]),
            (M::ClosestObservation, [inf; 3], [1.0, 1.0, inf], [-0.0; 3]),
            (
                M::InterpolatedInvertedCdf,
                [nan; 3],
                [1.0, nan, nan],
                [-0.0; 3],
            ),
            (M::Hazen, [nan; 3], [1.0, nan, nan], [-0.0, -0.0, 0.0]),
            (M::Weibull, [nan; 3], [1.0, nan, nan], [-0.0, -0.0, 0.0]),
            (M::Linear, [nan; 3], [nan; 3], [-0.0; 3]),
            (
                M::MedianUnbiased,
                [nan; 3],
                [1.0, nan, nan],
                [-0.0, -0.0, 0.0],
            ),
            (
                M::NormalUnbiased,
                [nan; 3],
                [1.0, nan, nan],
                [-0.0, -0.0, 0.0],
            ),
            (M::Lower, [inf; 3], [1.0, 1.0, inf], [-0.0; 3]),
            (M::Higher, [inf; 3], [1.0, inf, inf], [-0.0; 3]),
            (M::Midpoint, [nan; 3], [nan; 3], [0.0; 3]),
            (M::Nearest, [inf; 3], [1.0, 1.0, inf], [-0.0; 3]),
        ];
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for (method, one_inf, two, neg_zero) in expected {
            for (i, q) in [0.0, 0.5, 1.0].into_iter().enumerate() {
                let got = eval(1, q, method, &[inf]);
                assert!(same(got, one_inf[i]), "{method} [inf] q={q}: {got}");
                let got = eval(2, q, method, &[1.0, inf]);
                assert!(same(got, two[i]), "{method} [1, inf] q={q}: {got}");
                let got = eval(1, q, method, &[-0.0]);
                assert!(same(got, neg_zero[i]), "{method} [-0] q={q}: {got:?}");
            }
        }
        // numpy.quantile([-inf, inf], [1.0]) is NaN too.
        assert!(eval(2, 1.0, M::Linear, &[-inf, inf]).is_nan());
    }

    #[test]
    fn quantile_f32_difference_is_rounded_to_f32() {
        // numpy.quantile(np.array([0.1, 1.7], np.float32), [0.3]) == 0.5800000086426735
        let t = plan(2, &[0.3], QuantileMethod::Linear).unwrap()[0];
        assert_eq!(t.evaluate_as(0.1f32, 1.7f32), 0.5800000086426735);
        assert_eq!(t.evaluate(0.1f32 as f64, 1.7f32 as f64), 0.580000015348196);
        assert_eq!(t.evaluate_as(0.1f64, 1.7f64), t.evaluate(0.1, 1.7));
        // The f32 difference overflows where the f64 one does not.
        assert_eq!(t.evaluate_as(-3e38f32, 3e38f32), f64::INFINITY);
        assert!(t.evaluate(-3e38f32 as f64, 3e38f32 as f64).is_finite());
    }
}

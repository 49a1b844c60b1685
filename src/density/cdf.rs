//! [`DensityEstimate`]: the piecewise-linear CDF through order statistics, and its inverse.

use crate::element::Element;
use crate::error::{Error, Result};

use super::DensityError;
use crate::select::{QuantileMethod, Selector};

use super::pdf::{components, Component};
use super::{fraction, interpolate};

/// A distribution estimated from `m >= 2` order statistics: values `x_1 <= ... <= x_m` at
/// probabilities `p_1 < ... < p_m`.
///
/// The CDF is linear between neighbouring points `(x_i, p_i)`, `0` below `x_1` and `1` from
/// `x_m` on (right-continuous). Equal values are point masses: where `x_i = x_{i+1}` the CDF
/// jumps by `p_{i+1} - p_i`, and the tails the order statistics leave out (`p_1` below `x_1`,
/// `1 - p_m` above `x_m`) are point masses at `x_1` and `x_m`. With `p_1 = 0` and `p_m = 1`
/// (the minimum and the maximum among the order statistics) there are no tails.
///
/// ```
/// use kselect::density::DensityEstimate;
///
/// // Quartiles 0, 1, 1, 3, 4: the tie at 1 is a point mass of 0.25.
/// let est = DensityEstimate::new(&[0.0, 0.25, 0.5, 0.75, 1.0], &[0.0, 1.0, 1.0, 3.0, 4.0])?;
/// assert_eq!(est.cdf(0.5), 0.125);
/// assert_eq!(est.cdf_left(1.0), 0.25);
/// assert_eq!(est.cdf(1.0), 0.5);
/// assert_eq!(est.cdf(2.0), 0.625);
/// assert_eq!(est.pdf(2.0), 0.125);
/// assert_eq!(est.point_masses(), vec![(1.0, 0.25)]);
/// assert_eq!(est.quantile(0.4)?, 1.0);
/// assert_eq!(est.quantile(0.625)?, 2.0);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DensityEstimate {
    probs: Vec<f64>,
    values: Vec<f64>,
    components: Vec<Component>,
}

impl DensityEstimate {
    /// The estimate through the points `(values[i], probs[i])`.
    ///
    /// Errors (`Error::Density` unless said otherwise) when there are fewer than two
    /// points, the two slices differ in length, a probability is not in `[0, 1]`
    /// (`Error::InvalidProbability`), the probabilities are not strictly increasing, a value
    /// is NaN or infinite, or the values decrease.
    ///
    /// ```
    /// use kselect::density::DensityEstimate;
    /// assert!(DensityEstimate::new(&[0.0, 1.0], &[2.0, 5.0]).is_ok());
    /// assert!(DensityEstimate::new(&[0.5], &[2.0]).is_err());            // m < 2
    /// assert!(DensityEstimate::new(&[0.5, 0.1], &[1.0, 2.0]).is_err());  // not increasing
    /// assert!(DensityEstimate::new(&[0.1, 0.5], &[3.0, 2.0]).is_err());  // values decrease
    /// assert!(DensityEstimate::new(&[0.1, 0.5], &[1.0, f64::NAN]).is_err());
    /// ```
    pub fn new(probs: &[f64], values: &[f64]) -> Result<Self> {
        validate(probs, values)?;
        Ok(DensityEstimate {
            probs: probs.to_vec(),
            values: values.to_vec(),
            components: components(probs, values),
        })
    }

    /// The estimate from the order statistics of `data` at `probs`, found by
    /// [`Selector::quantiles`] with `method` (on the selector's device, under its NaN policy).
    ///
    /// Errors as [`Selector::quantiles`] does, and as [`DensityEstimate::new`] does on the
    /// quantiles (for example when a quantile is NaN under `NanPolicy::Last`).
    ///
    /// ```
    /// use kselect::density::DensityEstimate;
    /// use kselect::{QuantileMethod, Selector};
    ///
    /// let data = [4.0, 1.0, 3.0, 2.0, 5.0];
    /// let est = DensityEstimate::from_data(&Selector::new(), &data, &[0.0, 0.5, 1.0], QuantileMethod::Linear)?;
    /// assert_eq!(est.values(), &[1.0, 3.0, 5.0]);
    /// assert_eq!(est.cdf(2.0), 0.25);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn from_data<T: Element>(
        selector: &Selector,
        data: &[T],
        probs: &[f64],
        method: QuantileMethod,
    ) -> Result<Self> {
        validate_probs(probs)?;
        let values = selector.quantiles(data, probs, method)?;
        DensityEstimate::new(probs, &values)
    }

    /// The probabilities `p_1 < ... < p_m`.
    ///
    /// ```
    /// let est = kselect::density::DensityEstimate::new(&[0.1, 0.9], &[1.0, 2.0]).unwrap();
    /// assert_eq!(est.probs(), &[0.1, 0.9]);
    /// ```
    pub fn probs(&self) -> &[f64] {
        &self.probs
    }

    /// The order statistics `x_1 <= ... <= x_m`.
    ///
    /// ```
    /// let est = kselect::density::DensityEstimate::new(&[0.1, 0.9], &[1.0, 2.0]).unwrap();
    /// assert_eq!(est.values(), &[1.0, 2.0]);
    /// ```
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The number `m` of order statistics.
    ///
    /// ```
    /// let est = kselect::density::DensityEstimate::new(&[0.1, 0.5, 0.9], &[1.0, 2.0, 4.0]).unwrap();
    /// assert_eq!(est.order_statistics(), 3);
    /// ```
    pub fn order_statistics(&self) -> usize {
        self.values.len()
    }

    /// The smallest and the largest order statistic: all the probability lies in between.
    ///
    /// ```
    /// let est = kselect::density::DensityEstimate::new(&[0.1, 0.9], &[-1.0, 2.0]).unwrap();
    /// assert_eq!(est.support(), (-1.0, 2.0));
    /// ```
    pub fn support(&self) -> (f64, f64) {
        (self.values[0], self.values[self.values.len() - 1])
    }

    /// The pieces of the distribution in ascending order: uniform probability on each interval
    /// between distinct order statistics, point masses at ties and for the tails.
    ///
    /// ```
    /// use kselect::density::{Component, DensityEstimate};
    /// let est = DensityEstimate::new(&[0.2, 1.0], &[0.0, 4.0]).unwrap();
    /// assert_eq!(
    ///     est.components(),
    ///     &[Component::Point { at: 0.0, mass: 0.2 }, Component::Uniform { lo: 0.0, hi: 4.0, mass: 0.8 }]
    /// );
    /// ```
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// The estimated CDF `P(X <= x)`: linear between order statistics, right-continuous at
    /// point masses, exactly `p_i` at `x_i` (the last `p_i` of equal `x_i`). NaN for NaN.
    ///
    /// ```
    /// let est = kselect::density::DensityEstimate::new(&[0.0, 0.5, 1.0], &[0.0, 1.0, 3.0]).unwrap();
    /// assert_eq!(est.cdf(-1.0), 0.0);
    /// assert_eq!(est.cdf(1.0), 0.5);
    /// assert_eq!(est.cdf(2.0), 0.75);
    /// assert_eq!(est.cdf(f64::INFINITY), 1.0);
    /// ```
    pub fn cdf(&self, x: f64) -> f64 {
        let (lo, hi) = self.support();
        if x.is_nan() {
            return f64::NAN;
        }
        if x < lo {
            return 0.0;
        }
        if x >= hi {
            return 1.0;
        }
        // The last order statistic <= x; the next one is > x, since x < x_m.
        let i = self.values.partition_point(|&v| v <= x) - 1;
        self.between(i, x)
    }

    /// The estimated `P(X < x)`, the left limit of the CDF: it differs from [`cdf`] only at
    /// point masses, by their mass. NaN for NaN.
    ///
    /// ```
    /// let est = kselect::density::DensityEstimate::new(&[0.0, 0.5, 1.0], &[0.0, 0.0, 2.0]).unwrap();
    /// assert_eq!(est.cdf_left(0.0), 0.0);
    /// assert_eq!(est.cdf(0.0), 0.5);
    /// assert_eq!(est.cdf_left(2.0), 1.0);
    /// ```
    ///
    /// [`cdf`]: DensityEstimate::cdf
    pub fn cdf_left(&self, x: f64) -> f64 {
        let (lo, hi) = self.support();
        if x.is_nan() {
            return f64::NAN;
        }
        if x <= lo {
            return 0.0;
        }
        if x > hi {
            return 1.0;
        }
        // The last order statistic < x; the next one is >= x, since x <= x_m.
        let i = self.values.partition_point(|&v| v < x) - 1;
        self.between(i, x)
    }

    /// The CDF at `x` on the interval from `x_i` to `x_{i+1}` (`x_i < x_{i+1}`).
    fn between(&self, i: usize, x: f64) -> f64 {
        let t = fraction(x, self.values[i], self.values[i + 1]);
        let (p0, p1) = (self.probs[i], self.probs[i + 1]);
        (p0 + (p1 - p0) * t).clamp(p0, p1)
    }

    /// The estimated quantile function, the inverse of the CDF: the smallest `x` of the
    /// support with `cdf(x) >= p`. It is `x_i` at `p_i`, linear in between, `x_1` for
    /// `p <= p_1` and `x_m` for `p > p_m`.
    ///
    /// Errors with `Error::InvalidProbability` when `p` is not in `[0, 1]`.
    ///
    /// ```
    /// let est = kselect::density::DensityEstimate::new(&[0.0, 0.5, 1.0], &[1.0, 2.0, 6.0]).unwrap();
    /// assert_eq!(est.quantile(0.5).unwrap(), 2.0);
    /// assert_eq!(est.quantile(0.75).unwrap(), 4.0);
    /// assert_eq!(est.quantile(0.0).unwrap(), 1.0);
    /// assert_eq!(est.quantile(1.0).unwrap(), 6.0);
    /// assert!(est.quantile(1.5).is_err());
    /// ```
    pub fn quantile(&self, p: f64) -> Result<f64> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::InvalidProbability { q: p });
        }
        let m = self.probs.len();
        // The first p_j >= p.
        let j = self.probs.partition_point(|&q| q < p);
        if j == 0 {
            return Ok(self.values[0]);
        }
        if j == m {
            return Ok(self.values[m - 1]);
        }
        if self.probs[j] == p {
            return Ok(self.values[j]);
        }
        // p_{j-1} < p < p_j.
        let (p0, p1) = (self.probs[j - 1], self.probs[j]);
        let t = ((p - p0) / (p1 - p0)).clamp(0.0, 1.0);
        Ok(interpolate(self.values[j - 1], self.values[j], t))
    }
}

/// The checks of [`DensityEstimate::new`] on the probabilities alone.
fn validate_probs(probs: &[f64]) -> Result<()> {
    if probs.len() < 2 {
        return Err(DensityError::TooFewPoints { count: probs.len() }.into());
    }
    if let Some(&q) = probs.iter().find(|q| !(0.0..=1.0).contains(*q)) {
        return Err(Error::InvalidProbability { q });
    }
    if let Some(i) = (1..probs.len()).find(|&i| probs[i] <= probs[i - 1]) {
        return Err(DensityError::ProbabilitiesNotIncreasing {
            previous: probs[i - 1],
            next: probs[i],
        }
        .into());
    }
    Ok(())
}

/// The checks of [`DensityEstimate::new`].
fn validate(probs: &[f64], values: &[f64]) -> Result<()> {
    validate_probs(probs)?;
    if probs.len() != values.len() {
        return Err(DensityError::LengthMismatch {
            probs: probs.len(),
            values: values.len(),
        }
        .into());
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(DensityError::NonFiniteValue {
            p: probs[i],
            value: values[i],
        }
        .into());
    }
    if let Some(i) = (1..values.len()).find(|&i| values[i] < values[i - 1]) {
        return Err(DensityError::ValuesDecrease {
            previous: values[i - 1],
            previous_p: probs[i - 1],
            value: values[i],
            p: probs[i],
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(probs: &[f64], values: &[f64]) -> DensityEstimate {
        DensityEstimate::new(probs, values).expect("a valid estimate")
    }

    #[test]
    fn cdf_is_exact_at_the_knots_and_quantile_inverts_it() {
        let probs = [0.0, 0.1, 0.3, 0.3000001, 0.7, 0.95, 1.0];
        let values = [-3.0, -1.0, 0.5, 0.5, 2.0, 2.0, 10.0];
        let e = est(&probs, &values);
        for (i, (&p, &x)) in probs.iter().zip(&values).enumerate() {
            assert_eq!(e.quantile(p).unwrap(), x, "knot {i}");
        }
        // At a tie the CDF takes the last probability, its left limit the first.
        assert_eq!(e.cdf(0.5), 0.3000001);
        assert_eq!(e.cdf_left(0.5), 0.3);
        assert_eq!(e.cdf(2.0), 0.95);
        assert_eq!(e.cdf_left(2.0), 0.7);
        assert_eq!(e.cdf(-3.0), 0.0);
        assert_eq!(e.cdf(10.0), 1.0);
        assert_eq!(e.cdf_left(10.0), 1.0); // p_m = 1: no point mass at the maximum
        assert_eq!(e.cdf(-1.0), 0.1);
        assert!(e.cdf(f64::NAN).is_nan());
        assert!(e.cdf_left(f64::NAN).is_nan());
        // Inside an interval: linear, and quantile(cdf(x)) == x.
        for x in [-2.5, -1.0, 0.0, 1.0, 1.9, 5.0, 9.99] {
            let p = e.cdf(x);
            assert!((e.quantile(p).unwrap() - x).abs() < 1e-12, "{x}");
        }
        // Between the two probabilities of a point mass, the quantile is its value.
        assert_eq!(e.quantile(0.8).unwrap(), 2.0);
        assert_eq!(e.quantile(0.30000005).unwrap(), 0.5);
    }

    #[test]
    fn tails_are_point_masses_at_the_extremes() {
        let e = est(&[0.25, 0.75], &[1.0, 3.0]);
        assert_eq!(e.cdf_left(1.0), 0.0);
        assert_eq!(e.cdf(1.0), 0.25);
        assert_eq!(e.cdf(2.0), 0.5);
        assert_eq!(e.cdf_left(3.0), 0.75);
        assert_eq!(e.cdf(3.0), 1.0);
        assert_eq!(e.quantile(0.1).unwrap(), 1.0);
        assert_eq!(e.quantile(0.9).unwrap(), 3.0);
        assert_eq!(e.point_masses(), vec![(1.0, 0.25), (3.0, 0.25)]);
    }

    #[test]
    fn cdf_is_monotone_on_a_fine_grid() {
        let e = est(
            &[0.0, 0.013, 0.2, 0.5, 0.51, 0.99, 1.0],
            &[-1e-300, 0.0, 1e-3, 7.0, 7.0, 1e6, 1e300],
        );
        let mut last = 0.0;
        for i in 0..=20_000 {
            let x = -1.0 + i as f64 * 1e-4;
            let (l, f) = (e.cdf_left(x), e.cdf(x));
            assert!(l <= f && last <= l, "at {x}: {last} {l} {f}");
            last = f;
        }
    }

    #[test]
    fn huge_and_constant_ranges() {
        let e = est(&[0.0, 1.0], &[-f64::MAX, f64::MAX]);
        assert_eq!(e.cdf(0.0), 0.5);
        assert_eq!(e.quantile(0.5).unwrap(), 0.0);
        assert!(e.pdf(0.0) >= 0.0);
        let e = est(&[0.0, 0.5, 1.0], &[4.0, 4.0, 4.0]);
        assert_eq!(e.cdf_left(4.0), 0.0);
        assert_eq!(e.cdf(4.0), 1.0);
        assert_eq!(e.quantile(0.3).unwrap(), 4.0);
        assert_eq!(e.pdf(4.0), 0.0);
        assert_eq!(e.point_masses(), vec![(4.0, 1.0)]);
    }

    #[test]
    fn bad_input_is_an_error() {
        let bad: [(&[f64], &[f64], &str); 8] = [
            (&[], &[], "at least 2"),
            (&[0.5], &[1.0], "at least 2"),
            (&[0.1, 0.2], &[1.0], "2 probabilities but 1"),
            (&[0.2, 0.2], &[1.0, 2.0], "strictly increasing"),
            (&[0.1, 0.2], &[1.0, f64::INFINITY], "is inf"),
            (&[0.1, 0.2], &[f64::NAN, 1.0], "is NaN"),
            (&[0.1, 0.2], &[1.0, 0.5], "must not decrease"),
            (&[0.1, 0.2, 0.3], &[1.0, 2.0, 1.5], "1.5 at p = 0.3"),
        ];
        for (probs, values, want) in bad {
            let err = DensityEstimate::new(probs, values).unwrap_err().to_string();
            assert!(err.contains(want), "{probs:?} {values:?}: {err}");
        }
        for q in [-0.1, 1.5, f64::NAN] {
            assert!(matches!(
                DensityEstimate::new(&[0.0, q], &[1.0, 2.0]),
                Err(Error::InvalidProbability { .. })
            ));
        }
        let e = est(&[0.0, 1.0], &[0.0, 1.0]);
        for p in [-0.5, 1.01, f64::NAN] {
            assert!(matches!(
                e.quantile(p),
                Err(Error::InvalidProbability { .. })
            ));
        }
    }

    #[test]
    fn from_data_uses_the_selection_and_refuses_nan_order_statistics() {
        use crate::NanPolicy;
        let data = [5.0, f64::NAN, 1.0, 3.0];
        let sel = Selector::new().nan_policy(NanPolicy::Omit);
        let e = DensityEstimate::from_data(&sel, &data, &[0.0, 0.5, 1.0], QuantileMethod::Linear)
            .unwrap();
        assert_eq!(e.values(), &[1.0, 3.0, 5.0]);
        let sel = Selector::new().nan_policy(NanPolicy::Last);
        let err = DensityEstimate::from_data(&sel, &data, &[0.0, 1.0], QuantileMethod::Linear)
            .unwrap_err()
            .to_string();
        assert!(err.contains("p = 1 is NaN"), "{err}");
        let err = DensityEstimate::from_data(
            &Selector::new(),
            &data,
            &[0.0, 1.0],
            QuantileMethod::Linear,
        )
        .unwrap_err();
        assert!(matches!(err, Error::NanInInput { count: 1, .. }), "{err}");
        // Probabilities are checked before any selection.
        let err =
            DensityEstimate::from_data(&Selector::new(), &[1.0], &[0.5], QuantileMethod::Linear)
                .unwrap_err();
        assert!(err.to_string().contains("at least 2"), "{err}");
    }
}

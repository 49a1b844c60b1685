//! Approximate quantiles with guaranteed bounds: [`ApproximateQuantile`], from one counting
//! pass over the data ([`Selector::quantiles_approximate`](crate::Selector::quantiles_approximate)).

/// An approximate quantile: an estimate, and bounds that hold for certain.
///
/// Let `i <= j` be the 0-based ranks that numpy's `method` reads for `q` (the neighbours of
/// its virtual index, `i == j` when it falls on a rank or the method is discrete), over the
/// values that ranks refer to under the NaN policy, ordered by key (NaN last, `-0.0` just
/// below `+0.0`). Then, for certain:
///
/// 1. the order statistics `x_i` and `x_j` lie between `lower` and `upper`
///    (`lower <= x_i <= x_j <= upper` by key);
/// 2. exactly `rank_lo` values are below `lower` and exactly `rank_hi` are at most `upper`:
///    ranks `rank_lo..rank_hi` hold exactly the values from `lower` to `upper`, and
///    `rank_lo <= i <= j < rank_hi`;
/// 3. `value` is the method's rule (numpy's arithmetic, as
///    [`quantiles`](crate::Selector::quantiles) computes it) applied to estimates of `x_i`
///    and `x_j` that lie between `lower` and `upper`.
///
/// So the estimates are at most [`rank_error_bound`](ApproximateQuantile::rank_error_bound)
/// ranks away from `i` and `j`: a value `v` from `lower` to `upper` has at least `rank_lo`
/// values below it and at most `rank_hi` at or below it. The bound itself is not fixed in
/// advance: it is the population of one bucket of the pass (two when `i` and `j` fall into
/// neighbouring buckets), typically about `n / 4096` values, more for data the pass's sample
/// misrepresents (heavy repeats, far outliers) and never more than `n`. Inputs shorter than
/// 16384 values are answered exactly (`lower` and `upper` are `x_i` and `x_j`, and `value` is
/// the exact quantile).
///
/// ```
/// use kselect::{QuantileMethod, Selector};
/// let data: Vec<f64> = (0..1_000_000u64).map(|i| (i * 7919 % 1_000_000) as f64).collect();
/// let a = Selector::new()
///     .quantiles_approximate(&data, &[0.5], QuantileMethod::Linear)
///     .unwrap()[0];
/// // Value v has rank v here; the exact median is 499999.5, read from 499999 and 500000.
/// // (`lower` and `upper` bound a bucket of the pass: they need not be values of the data.)
/// assert!(a.lower <= 499_999.0 && 500_000.0 <= a.upper);
/// assert_eq!(a.rank_lo, a.lower.ceil() as usize);
/// assert_eq!(a.rank_hi, a.upper.floor() as usize + 1);
/// assert!((a.value - 499_999.5).abs() <= a.rank_error_bound() as f64);
/// assert!(a.rank_error_bound() < 1_000_000 / 1000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ApproximateQuantile<T> {
    /// The probability.
    pub q: f64,
    /// The estimate of the quantile (an `f64`, as exact quantiles are).
    pub value: f64,
    /// A value of the data's type at or below both order statistics the quantile is read from
    /// (not necessarily a value of the data).
    pub lower: T,
    /// A value at or above both.
    pub upper: T,
    /// The number of values below `lower`.
    pub rank_lo: usize,
    /// The number of values at or below `upper`.
    pub rank_hi: usize,
}

impl<T> ApproximateQuantile<T> {
    /// The number of ranks from `lower` to `upper`: how far, in ranks, the estimates can be
    /// from the order statistics the exact quantile is read from.
    ///
    /// ```
    /// let a = kselect::ApproximateQuantile {
    ///     q: 0.5, value: 2.5, lower: 2.0, upper: 3.0, rank_lo: 40, rank_hi: 52,
    /// };
    /// assert_eq!(a.rank_error_bound(), 12);
    /// ```
    pub fn rank_error_bound(&self) -> usize {
        self.rank_hi - self.rank_lo
    }
}

//! Selection primitives: select, k-th largest, medians ([`mod@median`]), multiselect and
//! quantiles; batched selection, top-k and hard thresholding ([`batch`]).
//!
//! Rank `k` is 0-based in ascending order: `select(x, k) == sorted(x)[k]`, where values are
//! ordered by their [`Element`] key (NaN last, `-0.0` just below `+0.0`). Every
//! algorithm and backend returns the same bits. Inputs are never modified.
//!
//! The free functions here run on the CPU with the default settings; [`Selector`] chooses the
//! device, the algorithm and the NaN policy.

#[macro_use]
pub mod algorithm;
pub mod approximate;
pub mod approximate_quantile;
pub mod batch;
pub mod median;
pub mod nan;
pub mod quantile;
pub(crate) mod selector;

pub(crate) mod cpu;
pub(crate) mod cuda;

pub(crate) mod auto;
pub(crate) mod bucket;
pub(crate) mod bucket_multi;
pub(crate) mod census;
pub mod cutting_plane;
pub(crate) mod floyd_rivest;
pub(crate) mod host;
pub(crate) mod input;
pub(crate) mod introselect;
pub(crate) mod matrix;
pub(crate) mod prediction;
pub(crate) mod quick;
pub(crate) mod quick_multiselect;
pub(crate) mod radix;
pub(crate) mod randomized;
pub(crate) mod sample;
pub(crate) mod sort_choose;

pub use algorithm::Algorithm;
pub use approximate::Approximate;
pub use approximate_quantile::ApproximateQuantile;
pub use batch::{
    BatchError, BatchRank, DeviceThreshold, DeviceTopK, Segments, Threshold, TopK, TopKOptions,
    TopKOrder,
};
pub use input::Values;
pub use matrix::Matrix;
pub use nan::NanPolicy;
pub use quantile::QuantileMethod;
pub use selector::Selector;
pub use sort_choose::cuda::{sort_device, sort_pairs_device};

use crate::element::Element;
use crate::error::Result;

/// Inputs at least this long are processed by several threads (when the selector allows it).
pub(crate) const PARALLEL_THRESHOLD: usize = 1 << 17;

/// The element of 0-based rank `k` in ascending order, on the CPU.
///
/// ```
/// assert_eq!(kselect::select(&[5, 1, 4, 2, 3], 1).unwrap(), 2);
/// ```
pub fn select<T: Element>(data: &[T], k: usize) -> Result<T> {
    Selector::new().select(data, k)
}

/// The `k`-th largest element (0-based: `k = 0` is the maximum), on the CPU.
///
/// ```
/// assert_eq!(kselect::select_largest(&[5, 1, 4, 2, 3], 0).unwrap(), 5);
/// ```
pub fn select_largest<T: Element>(data: &[T], k: usize) -> Result<T> {
    Selector::new().select_largest(data, k)
}

/// The lower median, the element of rank `(n - 1) / 2` (a value of the data), on the CPU.
///
/// For `numpy.median` (the mean of the two middle values when `n` is even) use
/// [`median_mean`]. (`quantile(data, 0.5)` is not numpy's median: it interpolates, which
/// differs at infinities and in `f32` rounding.)
///
/// ```
/// assert_eq!(kselect::median(&[4.0, 1.0, 3.0, 2.0]).unwrap(), 2.0);
/// ```
pub fn median<T: Element>(data: &[T]) -> Result<T> {
    Selector::new().median(data)
}

/// The median as `numpy.median` defines it, on the CPU: the middle value when `n` is odd, the
/// mean of the two middle values when it is even, equal to numpy's bit for bit (see
/// [`Selector::median_mean`] for the NaN policies and the one difference, at overflow, and
/// [`mod@median`] for the arithmetic).
///
/// ```
/// assert_eq!(kselect::median_mean(&[4.0, 1.0, 3.0, 2.0]).unwrap(), 2.5);
/// assert_eq!(kselect::median_mean(&[f32::INFINITY, -10.0, 4.0]).unwrap(), 4.0);
/// assert_eq!(kselect::median_mean(&[7u64, 2, 9]).unwrap(), 7.0);
/// ```
pub fn median_mean<T: Element>(data: &[T]) -> Result<f64> {
    Selector::new().median_mean(data)
}

/// The elements of many ranks in one call, in the order the ranks are given (any order,
/// repeats allowed), on the CPU.
///
/// ```
/// let v = kselect::multiselect(&[50, 10, 40, 20, 30], &[4, 0, 4]).unwrap();
/// assert_eq!(v, vec![50, 10, 50]);
/// ```
pub fn multiselect<T: Element>(data: &[T], ranks: &[usize]) -> Result<Vec<T>> {
    Selector::new().multiselect(data, ranks)
}

/// The quantile `q` by numpy's default definition (`linear`, Hyndman–Fan type 7), on the CPU.
///
/// ```
/// assert_eq!(kselect::quantile(&[1.0, 2.0, 3.0, 4.0], 0.5).unwrap(), 2.5);
/// ```
pub fn quantile<T: Element>(data: &[T], q: f64) -> Result<f64> {
    Selector::new().quantile(data, q, QuantileMethod::Linear)
}

/// Several quantiles by one definition, on the CPU, equal to `numpy.quantile(data, qs,
/// method=...)`.
///
/// ```
/// use kselect::QuantileMethod;
/// let q = kselect::quantiles(&[1, 2, 3, 4, 5], &[0.0, 0.25, 1.0], QuantileMethod::Linear).unwrap();
/// assert_eq!(q, vec![1.0, 2.0, 5.0]);
/// ```
pub fn quantiles<T: Element>(data: &[T], qs: &[f64], method: QuantileMethod) -> Result<Vec<f64>> {
    Selector::new().quantiles(data, qs, method)
}

//! Exact k-nearest neighbours on the CPU and CUDA GPUs.
//!
//! [`Neighbors`] searches a reference set for the `k` nearest points of each query, or of each
//! of its own points ([`Neighbors::search_self`], the kNN graph), under one of five
//! [`Metric`]s, for `f32` and `f64` points. The search is exact for every `k` from 1 to the
//! number of reference points:
//!
//! - every distance is the metric's canonical value ([`Metric::measure`]): computed in `f64`
//!   from the coordinates in their order, every operation rounded on its own, so each device
//!   returns the same bits (for `f32` points the distances are those values rounded to `f32`);
//! - each list is sorted by distance (for the inner product, from the largest), and **equal
//!   distances are ordered by the lower reference index**, as a stable sort of the distances
//!   would order them.
//!
//! ```
//! use kselect::knn::{Neighbors, Points};
//!
//! let reference = Points::new(&[0.0f32, 0.0, 3.0, 4.0, 1.0, 1.0], 2)?;
//! let lists = Neighbors::new(reference)?.search(Points::new(&[0.0, 1.0], 2)?, 2)?;
//! assert_eq!(lists.row(0), (&[1.0, 1.0][..], &[0, 2][..]));
//! # Ok::<(), kselect::Error>(())
//! ```
//!
//! On the search stand the estimators of scikit-learn's `KNeighborsRegressor` and
//! `KNeighborsClassifier`: [`KnnRegressor`] (the weighted mean of the neighbours' responses)
//! and [`KnnClassifier`] (weighted votes, ties to the smallest label), with uniform or
//! distance [`Weights`], and leave-one-out cross-validation of several `k` from one kNN graph
//! ([`KnnRegressor::leave_one_out_scores`], [`LooScore`]).
//!
//! ```
//! use kselect::knn::{KnnClassifier, KnnRegressor, Points};
//!
//! let x = Points::new(&[0.0f64, 1.0, 2.0, 10.0, 11.0, 12.0], 1)?;
//! let regressor = KnnRegressor::new(2).fit(x.clone(), &[0.0, 1.0, 2.0, 10.0, 11.0, 12.0])?;
//! assert_eq!(regressor.predict(Points::new(&[11.4], 1)?)?, vec![11.5]);
//! let classifier = KnnClassifier::new(3).fit(x.clone(), &[0, 0, 0, 1, 1, 1])?;
//! assert_eq!(classifier.predict(Points::new(&[9.0], 1)?)?, vec![1]);
//! let scores = KnnClassifier::new(1).leave_one_out_scores(x, &[0, 0, 0, 1, 1, 1], &[1, 3])?;
//! assert_eq!((scores[0].error, scores[1].error), (0.0, 0.0));
//! # Ok::<(), kselect::Error>(())
//! ```

mod candidates;
mod classifier;
mod cpu;
mod error;
mod estimator;
mod gpu;
mod lists;
mod metric;
mod neighbors;
mod points;
mod regressor;
mod validation;
mod weights;

pub use classifier::{FittedKnnClassifier, KnnClassifier};
pub use error::{Among, KnnError, PointSet};
pub use lists::{DeviceNeighborLists, NeighborLists};
pub use metric::{Metric, METRICS};
pub use neighbors::Neighbors;
pub use points::Points;
pub use regressor::{FittedKnnRegressor, KnnRegressor};
pub use validation::LooScore;
pub use weights::Weights;

use crate::element::Element;

/// The element types points may have: `f32` and `f64`.
///
/// ```
/// use kselect::knn::KnnFloat;
/// assert_eq!(f32::from_f64(0.1), 0.1f32);
/// ```
pub trait KnnFloat: Element {
    /// The nearest value of this type (round to nearest, ties to even).
    fn from_f64(value: f64) -> Self;
}

impl KnnFloat for f32 {
    fn from_f64(value: f64) -> f32 {
        value as f32
    }
}

impl KnnFloat for f64 {
    fn from_f64(value: f64) -> f64 {
        value
    }
}

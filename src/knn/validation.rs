//! Leave-one-out cross-validation of the kNN estimators: [`LooScore`] and its checks.
//!
//! Each training point is predicted from the other `n - 1` points, from one kNN graph
//! ([`Neighbors::search_self`](crate::knn::Neighbors::search_self)): a point's list leaves the
//! point itself out, so it is the list a model fitted without that point would find. Scores
//! for several `k` come from **one** graph of the largest `k`: its lists are sorted, equal
//! distances ordered by the lower index, so the first `k` entries of a longer list are
//! exactly the list of `k`.

use crate::error::Result;
use crate::knn::KnnError;

/// The leave-one-out error of a kNN estimator with `k` neighbours: for
/// [`KnnRegressor`](crate::knn::KnnRegressor) the mean squared error of the leave-one-out
/// predictions, for [`KnnClassifier`](crate::knn::KnnClassifier) the fraction of training
/// points predicted wrongly.
///
/// ```
/// use kselect::knn::{KnnRegressor, LooScore, Points};
/// let x = Points::new(&[0.0f64, 1.0, 2.0, 3.0], 1)?;
/// let scores = KnnRegressor::new(1).leave_one_out_scores(x, &[0.0, 1.0, 2.0, 3.0], &[1, 2])?;
/// // k = 1: each point takes its nearest other point's value (0 from 1, 1 from 0, ...).
/// assert_eq!(scores[0], LooScore { k: 1, error: 1.0 });
/// assert_eq!(scores[1].k, 2);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LooScore {
    /// The number of neighbours.
    pub k: usize,
    /// The mean squared error (regression) or the misclassification rate (classification).
    pub error: f64,
}

/// The largest of `ks`; an error when there is none or one is 0.
pub(crate) fn largest_k(ks: &[usize]) -> Result<usize> {
    if ks.is_empty() {
        return Err(KnnError::NoKs.into());
    }
    if ks.contains(&0) {
        return Err(KnnError::ZeroInKs.into());
    }
    Ok(ks.iter().copied().max().unwrap_or(1))
}

/// An error unless leave-one-out with `k` neighbours fits `n` training points (`k < n`).
pub(crate) fn check_leave_one_out(k: usize, n: usize) -> Result<()> {
    if k >= n {
        return Err(KnnError::LeaveOneOut { k, n }.into());
    }
    Ok(())
}

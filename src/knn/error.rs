//! [`KnnError`]: why a kNN search or estimator cannot run on what it was given — the points,
//! the `k` asked of them, the responses, the settings.

use std::fmt;

use crate::knn::Metric;

/// A set of points a kNN check names.
///
/// ```
/// use kselect::knn::PointSet;
/// assert_eq!(PointSet::Query.to_string(), "query set");
/// assert_eq!(PointSet::Reference.point(), "reference point");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PointSet {
    /// The reference points searched.
    Reference,
    /// The queries.
    Query,
    /// An estimator's training points.
    Training,
}

impl PointSet {
    /// What one of its points is called: `"reference point"`, `"query"`, `"training point"`.
    pub fn point(self) -> &'static str {
        match self {
            PointSet::Reference => "reference point",
            PointSet::Query => "query",
            PointSet::Training => "training point",
        }
    }
}

impl fmt::Display for PointSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PointSet::Reference => "reference set",
            PointSet::Query => "query set",
            PointSet::Training => "training set",
        })
    }
}

/// The points a neighbour count `k` is taken among.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Among {
    /// The reference points, for a search of queries.
    Reference,
    /// The other reference points, for the kNN graph of the reference set.
    OtherReference,
    /// An estimator's training points (its `n_neighbors`).
    Training,
}

/// Why a kNN search or estimator cannot run on what it was given (`kselect::Error::Knn`). The
/// messages name the numbers involved.
///
/// ```
/// use kselect::knn::{Among, KnnError, Neighbors, Points};
/// use kselect::Error;
/// let n = Neighbors::new(Points::new(&[0.0f32, 2.0, 4.0], 1)?)?;
/// let err = n.search(Points::new(&[1.0], 1)?, 4).unwrap_err();
/// assert!(matches!(
///     err,
///     Error::Knn(KnnError::KOutOfRange { k: 4, available: 3, among: Among::Reference })
/// ));
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum KnnError {
    /// Points of no coordinate: `dim = 0` given to [`Points`](crate::knn::Points), or a set
    /// (from an array of no column) whose points have none.
    #[error("{}", match .set {
        None => "points need at least one coordinate (dim = 0)".to_string(),
        Some(set) => format!("the {set}'s points have no coordinate"),
    })]
    NoCoordinate {
        /// The set, where one was searched.
        set: Option<PointSet>,
    },
    /// A length that is not a multiple of the coordinates of a point.
    #[error("{len} values do not make points of {dim} coordinates ({} left over)", .len % .dim)]
    Ragged {
        /// The values given.
        len: usize,
        /// The coordinates of a point.
        dim: usize,
    },
    /// A set with no point.
    #[error("the {set} is empty")]
    EmptySet {
        /// The set.
        set: PointSet,
    },
    /// A coordinate that is NaN or infinite.
    #[error(
        "{} {row} has a non-finite coordinate ({value} in column {column}); neighbours need \
         finite coordinates",
        .set.point()
    )]
    NonFiniteCoordinate {
        /// The set of the point.
        set: PointSet,
        /// The point (0-based).
        row: usize,
        /// The coordinate (0-based).
        column: usize,
        /// Its value.
        value: f64,
    },
    /// Queries with another number of coordinates than the reference points.
    #[error("queries have {queries} coordinates but the reference points have {reference}")]
    DimMismatch {
        /// The coordinates of a query.
        queries: usize,
        /// The coordinates of a reference point.
        reference: usize,
    },
    /// A neighbour count `k` outside `1..=available`.
    #[error("{}", k_out_of_range(*.k, *.available, *.among))]
    KOutOfRange {
        /// The `k` asked for.
        k: usize,
        /// The points `k` may reach.
        available: usize,
        /// Which points those are.
        among: Among,
    },
    /// Leave-one-out with `k` neighbours and no more than `k` training points.
    #[error(
        "leave-one-out with k = {k} neighbours needs more than {k} training points, but there \
         are {n}: each point is predicted from the other {} (k runs from 1 to n - 1)",
        .n.saturating_sub(1)
    )]
    LeaveOneOut {
        /// The `k` asked for.
        k: usize,
        /// The training points.
        n: usize,
    },
    /// No neighbour count to score.
    #[error("no neighbour counts (ks) to score: give at least one k")]
    NoKs,
    /// `k = 0` among the neighbour counts to score.
    #[error("the neighbour counts (ks) hold k = 0: every k must be at least 1")]
    ZeroInKs,
    /// Responses or labels in another number than the training points.
    #[error("{what} has {targets} values but the training set has {rows} points")]
    TargetCount {
        /// `"y"` or `"labels"`.
        what: &'static str,
        /// The responses or labels given.
        targets: usize,
        /// The training points.
        rows: usize,
    },
    /// A response that is NaN or infinite.
    #[error("y[{index}] = {value} is not finite; responses must be finite")]
    NonFiniteResponse {
        /// Its index.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// Distance weights with a similarity metric.
    #[error(
        "weights = distance needs a distance, but the {metric} metric is a similarity; use \
         uniform weights or a distance metric"
    )]
    DistanceWeightsOfSimilarity {
        /// The metric.
        metric: Metric,
    },
    /// Lists to be left on a device, from a search that runs on the CPU.
    #[error("lists left on a device need a search on a CUDA device (Neighbors::device)")]
    DeviceListsOnCpu,
    /// A GPU memory budget too small for the lists of one query and a tile of points.
    #[error(
        "a GPU memory budget of {budget} bytes is too small for the lists of one query with \
         k = {k} and a tile of reference points"
    )]
    BudgetTooSmall {
        /// The budget in bytes.
        budget: usize,
        /// The `k` asked for.
        k: usize,
    },
}

/// The message of [`KnnError::KOutOfRange`].
fn k_out_of_range(k: usize, available: usize, among: Among) -> String {
    let other = match among {
        Among::Training if k == 0 => {
            return "n_neighbors = 0: at least one neighbour is needed".into()
        }
        Among::Training => {
            return format!(
                "n_neighbors = {k} but the training set has only {available} points \
                 (n_neighbors runs from 1 to {available})"
            )
        }
        Among::Reference => "",
        Among::OtherReference => " other",
    };
    if available == 0 {
        format!("k = {k} neighbours asked for, but there is no{other} reference point to be one")
    } else {
        format!(
            "k = {k} neighbours asked for, but there are {available}{other} reference points \
             (k runs from 1 to {available})"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knn::{KnnClassifier, KnnRegressor, Points, Weights};
    use crate::Error;

    fn knn<T: fmt::Debug>(result: crate::Result<T>) -> KnnError {
        match result {
            Err(Error::Knn(e)) => e,
            other => panic!("not a kNN argument error: {other:?}"),
        }
    }

    #[test]
    fn estimators_name_the_failed_check_with_its_numbers() {
        let x = || Points::new(&[0.0f64, 1.0, 2.0, 3.0], 1).unwrap();
        let y = [1.0, 2.0, 3.0, 4.0];
        let training = |k, available| KnnError::KOutOfRange {
            k,
            available,
            among: Among::Training,
        };
        assert_eq!(knn(KnnRegressor::new(0).fit(x(), &y)), training(0, 4));
        assert_eq!(
            knn(KnnClassifier::new(5).fit(x(), &[1, 1, 2, 2])),
            training(5, 4)
        );
        assert_eq!(
            knn(KnnRegressor::new(4).fit(x(), &y).unwrap().leave_one_out()),
            KnnError::LeaveOneOut { k: 4, n: 4 }
        );
        assert_eq!(
            knn(KnnRegressor::new(1).leave_one_out_scores(x(), &y, &[])),
            KnnError::NoKs
        );
        assert_eq!(
            knn(KnnRegressor::new(1).leave_one_out_scores(x(), &y, &[2, 0])),
            KnnError::ZeroInKs
        );
        assert_eq!(
            knn(KnnClassifier::new(1).fit(x(), &[1, 2, 3, 4, 5])),
            KnnError::TargetCount {
                what: "labels",
                targets: 5,
                rows: 4
            }
        );
        assert_eq!(
            knn(KnnRegressor::new(1).fit(x(), &[1.0, 2.0, f64::INFINITY, 4.0])),
            KnnError::NonFiniteResponse {
                index: 2,
                value: f64::INFINITY
            }
        );
        assert_eq!(
            knn(KnnRegressor::new(1).fit(Points::<f64>::new(&[], 2).unwrap(), &[])),
            KnnError::EmptySet {
                set: PointSet::Training
            }
        );
        assert_eq!(
            knn(KnnRegressor::new(1)
                .weights(Weights::Distance)
                .metric(Metric::InnerProduct)
                .fit(x(), &y)),
            KnnError::DistanceWeightsOfSimilarity {
                metric: Metric::InnerProduct
            }
        );
    }

    #[test]
    fn messages_keep_the_invalid_argument_prefix_and_the_numbers() {
        let cases = [
            (
                KnnError::KOutOfRange {
                    k: 0,
                    available: 4,
                    among: Among::Training,
                },
                "invalid argument: n_neighbors = 0: at least one neighbour is needed",
            ),
            (
                KnnError::KOutOfRange {
                    k: 3,
                    available: 2,
                    among: Among::Reference,
                },
                "invalid argument: k = 3 neighbours asked for, but there are 2 reference points \
                 (k runs from 1 to 2)",
            ),
            (
                KnnError::NoCoordinate {
                    set: Some(PointSet::Query),
                },
                "invalid argument: the query set's points have no coordinate",
            ),
            (
                KnnError::LeaveOneOut { k: 1, n: 1 },
                "invalid argument: leave-one-out with k = 1 neighbours needs more than 1 \
                 training points, but there are 1: each point is predicted from the other 0 \
                 (k runs from 1 to n - 1)",
            ),
            (
                KnnError::BudgetTooSmall { budget: 64, k: 2 },
                "invalid argument: a GPU memory budget of 64 bytes is too small for the lists \
                 of one query with k = 2 and a tile of reference points",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(Error::from(e).to_string(), want);
        }
    }
}

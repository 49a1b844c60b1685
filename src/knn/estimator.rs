//! What the kNN estimators share: their settings and the checks of a training set.

use crate::device::Device;
use crate::error::Result;
use crate::knn::validation::check_leave_one_out;
use crate::knn::{Among, KnnError, KnnFloat, Metric, Neighbors, PointSet, Points, Weights};

/// The builder setters of the [`Settings`] fields named, each with its doc, in the `impl` of
/// the estimator `$ty` (whose settings are its field `settings`).
macro_rules! settings_setters {
    ($ty:ident; $($(#[$doc:meta])* $name:ident: $t:ty;)+) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $name: $t) -> $ty {
                self.settings.$name = $name;
                self
            }
        )+
    };
}
pub(crate) use settings_setters;

/// The settings of a kNN estimator.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) n_neighbors: usize,
    pub(crate) weights: Weights,
    pub(crate) metric: Metric,
    pub(crate) device: Device,
}

impl Settings {
    /// `n_neighbors` neighbours, uniform weights, the Euclidean metric, on the CPU.
    pub(crate) fn new(n_neighbors: usize) -> Settings {
        Settings {
            n_neighbors,
            weights: Weights::default(),
            metric: Metric::default(),
            device: Device::Cpu,
        }
    }

    /// The same settings with `k` neighbours.
    pub(crate) fn with_k(&self, k: usize) -> Settings {
        Settings {
            n_neighbors: k,
            ..self.clone()
        }
    }

    /// Checks the settings against a training set `x` of `targets` responses (named `what`:
    /// `y` or `labels`) and returns the search over an owned copy of `x`. With
    /// `leave_one_out`, the `n_neighbors` must leave a point out (`n_neighbors < rows`).
    pub(crate) fn train<T: KnnFloat>(
        &self,
        x: Points<'_, T>,
        targets: usize,
        what: &'static str,
        leave_one_out: bool,
    ) -> Result<Neighbors<'static, T>> {
        let (k, rows) = (self.n_neighbors, x.rows());
        let k_out_of_range = KnnError::KOutOfRange {
            k,
            available: rows,
            among: Among::Training,
        };
        if k == 0 {
            return Err(k_out_of_range.into());
        }
        if self.weights == Weights::Distance && self.metric.is_similarity() {
            return Err(KnnError::DistanceWeightsOfSimilarity {
                metric: self.metric,
            }
            .into());
        }
        if rows == 0 {
            return Err(KnnError::EmptySet {
                set: PointSet::Training,
            }
            .into());
        }
        if targets != rows {
            return Err(KnnError::TargetCount {
                what,
                targets,
                rows,
            }
            .into());
        }
        if leave_one_out {
            check_leave_one_out(k, rows)?;
        } else if k > rows {
            return Err(k_out_of_range.into());
        }
        Ok(Neighbors::new(x.into_owned())?
            .metric(self.metric)
            .device(self.device.clone()))
    }
}

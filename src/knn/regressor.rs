//! [`KnnRegressor`]: k-nearest-neighbour regression, as scikit-learn's `KNeighborsRegressor`.

use crate::device::Device;
use crate::error::Result;
use crate::knn::estimator::{settings_setters, Settings};
use crate::knn::validation::{check_leave_one_out, largest_k};
use crate::knn::{KnnError, KnnFloat, LooScore, Metric, NeighborLists, Neighbors, Points, Weights};
use crate::select::Matrix;

/// k-nearest-neighbour regression: the prediction at a query is the mean of the responses of
/// its `n_neighbors` nearest training points, weighted by [`Weights`] (scikit-learn's
/// `KNeighborsRegressor` with `algorithm="brute"`).
///
/// A builder: set the weights, [`Metric`] and [`Device`], then [`fit`](KnnRegressor::fit)
/// a training set, or score several `k` by leave-one-out cross-validation
/// ([`leave_one_out_scores`](KnnRegressor::leave_one_out_scores)). The neighbours are exact
/// ([`Neighbors`]), equal distances ordered by the lower training index, so the predictions
/// are the same on every device.
///
/// ```
/// use kselect::knn::{KnnRegressor, Metric, Points, Weights};
///
/// let x = Points::new(&[0.0f64, 1.0, 2.0, 10.0], 1)?;
/// let y = [0.0, 1.0, 2.0, 10.0];
/// let model = KnnRegressor::new(2).fit(x.clone(), &y)?;
/// assert_eq!(model.predict(Points::new(&[0.4, 9.0], 1)?)?, vec![0.5, 6.0]);
///
/// let weighted = KnnRegressor::new(2)
///     .weights(Weights::Distance)
///     .metric(Metric::Manhattan)
///     .fit(x, &y)?;
/// // Distances 1 and 7: weights 1 and 1/7.
/// let expected = (10.0 + 2.0 / 7.0) / (1.0 + 1.0 / 7.0);
/// assert_eq!(weighted.predict(Points::new(&[9.0], 1)?)?, vec![expected]);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct KnnRegressor {
    settings: Settings,
}

impl KnnRegressor {
    /// A regressor on `n_neighbors` neighbours, with uniform weights, the Euclidean metric, on
    /// the CPU. `n_neighbors` is checked when a training set is given (0 is an error there).
    ///
    /// ```
    /// use kselect::knn::{KnnRegressor, Points};
    /// let model = KnnRegressor::new(3).fit(Points::new(&[1.0f32, 2.0, 3.0], 1)?, &[1.0, 2.0, 6.0])?;
    /// assert_eq!(model.predict(Points::new(&[0.0], 1)?)?, vec![3.0]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn new(n_neighbors: usize) -> KnnRegressor {
        KnnRegressor {
            settings: Settings::new(n_neighbors),
        }
    }

    settings_setters! {
        KnnRegressor;
        /// How neighbours are weighted (uniform by default). [`Weights::Distance`] with
        /// [`Metric::InnerProduct`] is an error when fitting.
        ///
        /// ```
        /// use kselect::knn::{KnnRegressor, Points, Weights};
        /// let x = Points::new(&[0.0f64, 3.0], 1)?;
        /// let model = KnnRegressor::new(2).weights(Weights::Distance).fit(x, &[0.0, 4.0])?;
        /// // Distances 1 and 2: weights 1 and 1/2.
        /// assert_eq!(model.predict(Points::new(&[1.0], 1)?)?, vec![2.0 / 1.5]);
        /// # Ok::<(), kselect::Error>(())
        /// ```
        weights: Weights;
        /// The metric neighbours are found by (Euclidean by default).
        ///
        /// ```
        /// use kselect::knn::{KnnRegressor, Metric, Points};
        /// let x = Points::new(&[1.0f64, 0.0, 0.0, 5.0], 2)?;
        /// let model = KnnRegressor::new(1).metric(Metric::Cosine).fit(x, &[1.0, 2.0])?;
        /// assert_eq!(model.predict(Points::new(&[0.0, 0.1], 2)?)?, vec![2.0]);
        /// # Ok::<(), kselect::Error>(())
        /// ```
        metric: Metric;
        /// The device neighbours are searched on (the CPU by default); the predictions are the
        /// same on every device.
        ///
        /// ```
        /// use kselect::{knn::{KnnRegressor, Points}, Device};
        /// let x = Points::new(&[0.0f64, 1.0], 1)?;
        /// let model = KnnRegressor::new(1).device(Device::auto()).fit(x, &[5.0, 6.0])?;
        /// assert_eq!(model.predict(Points::new(&[0.9], 1)?)?, vec![6.0]);
        /// # Ok::<(), kselect::Error>(())
        /// ```
        device: Device;
    }

    /// The model of the training points `x` (any [`Matrix`](crate::Matrix), one point a row: a [`Points`], a slice with its shape or a 2-D ndarray) with
    /// responses `y` (one per point), which keeps a copy of both.
    ///
    /// An error when `n_neighbors` is 0 or more than the number of points, the set is empty,
    /// `y` has another length or a value that is not finite, a coordinate is not finite, or
    /// distance weights go with the inner product.
    ///
    /// ```
    /// use kselect::knn::{KnnRegressor, Points};
    /// let x = Points::new(&[0.0f64, 1.0], 1)?;
    /// assert!(KnnRegressor::new(1).fit(x.clone(), &[1.0, 2.0]).is_ok());
    /// assert!(KnnRegressor::new(3).fit(x.clone(), &[1.0, 2.0]).is_err());
    /// let e = KnnRegressor::new(1).fit(x, &[1.0]).unwrap_err();
    /// assert!(e.to_string().contains("y has 1 values"));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn fit<'a, T: KnnFloat>(
        &self,
        x: impl Into<Matrix<'a, T>>,
        y: &[f64],
    ) -> Result<FittedKnnRegressor<T>> {
        FittedKnnRegressor::train(&self.settings, Points::try_from(x.into())?, y, false)
    }

    /// The leave-one-out error of each `k` of `ks` (in their order): the mean squared error of
    /// the predictions of each training point from the other `n - 1`, with `k` neighbours
    /// (`n_neighbors` is not used; the weights, metric and device are).
    ///
    /// One kNN graph of the largest `k` is searched ([`Neighbors::search_self`]) and every
    /// other `k` takes the first `k` neighbours of each list: exact, since lists are sorted
    /// with equal distances ordered by the lower index, so the same as
    /// [`FittedKnnRegressor::leave_one_out`] for each `k` on its own.
    ///
    /// An error when `ks` is empty or holds 0, a `k` is not below the number of points, or
    /// for the reasons of [`fit`](KnnRegressor::fit).
    ///
    /// ```
    /// use kselect::knn::{KnnRegressor, Points};
    /// let x = Points::new(&[0.0f64, 1.0, 2.0, 3.0, 4.0], 1)?;
    /// let y = [0.0, 1.0, 2.0, 3.0, 4.0];
    /// let scores = KnnRegressor::new(1).leave_one_out_scores(x.clone(), &y, &[2, 4])?;
    /// assert_eq!(scores.len(), 2);
    /// // k = 2: the two neighbours on either side average to the point itself, except at the
    /// // ends (0 from 1 and 2: 1.5; 4 from 3 and 2: 2.5).
    /// assert_eq!(scores[0].error, (1.5f64.powi(2) + 1.5f64.powi(2)) / 5.0);
    /// assert!(KnnRegressor::new(1).leave_one_out_scores(x, &y, &[5]).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn leave_one_out_scores<'a, T: KnnFloat>(
        &self,
        x: impl Into<Matrix<'a, T>>,
        y: &[f64],
        ks: &[usize],
    ) -> Result<Vec<LooScore>> {
        let largest = largest_k(ks)?;
        let model = FittedKnnRegressor::train(
            &self.settings.with_k(largest),
            Points::try_from(x.into())?,
            y,
            true,
        )?;
        let graph = model.index.search_self(largest)?;
        Ok(ks
            .iter()
            .map(|&k| LooScore {
                k,
                error: model.squared_error(&model.predict_lists(&graph, k)),
            })
            .collect())
    }
}

/// A fitted [`KnnRegressor`]: its own copy of the training points and responses.
///
/// ```
/// use kselect::knn::{KnnRegressor, Points};
/// let data = vec![0.0f32, 1.0, 2.0];
/// let model = KnnRegressor::new(2).fit(Points::new(&data, 1)?, &[0.0, 1.0, 4.0])?;
/// drop(data);
/// assert_eq!(model.predict(Points::new(&[1.8], 1)?)?, vec![2.5]);
/// assert_eq!(model.leave_one_out()?, vec![2.5, 2.0, 0.5]);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FittedKnnRegressor<T: KnnFloat> {
    index: Neighbors<'static, T>,
    y: Vec<f64>,
    k: usize,
    weights: Weights,
}

impl<T: KnnFloat> FittedKnnRegressor<T> {
    /// The model of `x` and `y` under `settings` (see [`KnnRegressor::fit`]).
    fn train(
        settings: &Settings,
        x: Points<'_, T>,
        y: &[f64],
        leave_one_out: bool,
    ) -> Result<FittedKnnRegressor<T>> {
        let index = settings.train(x, y.len(), "y", leave_one_out)?;
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(KnnError::NonFiniteResponse {
                index: i,
                value: y[i],
            }
            .into());
        }
        Ok(FittedKnnRegressor {
            index,
            y: y.to_vec(),
            k: settings.n_neighbors,
            weights: settings.weights,
        })
    }

    /// The prediction at each query: the weighted mean of the responses of its
    /// [`n_neighbors`](FittedKnnRegressor::n_neighbors) nearest training points. An error
    /// when the queries are empty, have another number of coordinates than the training
    /// points, or a coordinate that is not finite.
    ///
    /// ```
    /// use kselect::knn::{KnnRegressor, Points};
    /// let model = KnnRegressor::new(1).fit(Points::new(&[0.0f64, 0.0, 1.0, 1.0], 2)?, &[3.0, 4.0])?;
    /// assert_eq!(model.predict(Points::new(&[0.2, 0.1, 0.9, 0.8], 2)?)?, vec![3.0, 4.0]);
    /// assert!(model.predict(Points::new(&[0.2], 1)?).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn predict<'q>(&self, x: impl Into<Matrix<'q, T>>) -> Result<Vec<f64>> {
        let lists = self.index.search(x, self.k)?;
        Ok(self.predict_lists(&lists, self.k))
    }

    /// The leave-one-out prediction of each training point: its prediction by the model of
    /// the other `n - 1` points (the point left out of its own neighbours). An error when
    /// `n_neighbors` is not below the number of training points.
    ///
    /// ```
    /// use kselect::knn::{KnnRegressor, Points};
    /// let x = Points::new(&[0.0f64, 1.0, 3.0], 1)?;
    /// let model = KnnRegressor::new(1).fit(x.clone(), &[10.0, 20.0, 30.0])?;
    /// assert_eq!(model.leave_one_out()?, vec![20.0, 10.0, 20.0]);
    /// assert!(KnnRegressor::new(3).fit(x, &[10.0, 20.0, 30.0])?.leave_one_out().is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn leave_one_out(&self) -> Result<Vec<f64>> {
        check_leave_one_out(self.k, self.y.len())?;
        let graph = self.index.search_self(self.k)?;
        Ok(self.predict_lists(&graph, self.k))
    }

    /// The number of neighbours of each prediction.
    ///
    /// ```
    /// use kselect::knn::{KnnRegressor, Points};
    /// let model = KnnRegressor::new(2).fit(Points::new(&[0.0f64, 1.0], 1)?, &[1.0, 2.0])?;
    /// assert_eq!(model.n_neighbors(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn n_neighbors(&self) -> usize {
        self.k
    }

    /// The prediction of each list from its first `k` neighbours.
    fn predict_lists(&self, lists: &NeighborLists<T>, k: usize) -> Vec<f64> {
        let mut w = Vec::with_capacity(k);
        lists
            .iter()
            .map(|(distances, indices)| {
                self.weights.of(&distances[..k], &mut w);
                let (mut sum, mut total) = (0.0, 0.0);
                for (&wi, &j) in w.iter().zip(&indices[..k]) {
                    sum += wi * self.y[j];
                    total += wi;
                }
                sum / total
            })
            .collect()
    }

    /// The mean squared error of predictions of the training points.
    fn squared_error(&self, predictions: &[f64]) -> f64 {
        let sum: f64 = predictions
            .iter()
            .zip(&self.y)
            .map(|(p, y)| (p - y) * (p - y))
            .sum();
        sum / self.y.len() as f64
    }
}

//! [`KnnClassifier`]: k-nearest-neighbour classification, as scikit-learn's
//! `KNeighborsClassifier`.

use ndarray::Array2;

use crate::device::Device;
use crate::error::Result;
use crate::knn::estimator::{settings_setters, Settings};
use crate::knn::validation::{check_leave_one_out, largest_k};
use crate::knn::{KnnFloat, LooScore, Metric, NeighborLists, Neighbors, Points, Weights};
use crate::select::Matrix;

/// k-nearest-neighbour classification: each of a query's `n_neighbors` nearest training
/// points votes for its label with its [`Weights`] weight; the probability of a class is its
/// share of the weight, and the prediction is the class of the largest weight, **ties to the
/// smallest label** (scikit-learn's `KNeighborsClassifier` with `algorithm="brute"`).
///
/// Labels are any `Clone + Ord` type; the classes are the distinct training labels in
/// ascending order ([`FittedKnnClassifier::classes`]). The neighbours are exact
/// ([`Neighbors`]), equal distances ordered by the lower training index, so the predictions
/// are the same on every device.
///
/// ```
/// use kselect::knn::{KnnClassifier, Points, Weights};
///
/// let x = Points::new(&[0.0f64, 1.0, 2.0, 10.0, 11.0], 1)?;
/// let labels = ["a", "a", "b", "b", "b"];
/// let model = KnnClassifier::new(3).fit(x.clone(), &labels)?;
/// assert_eq!(model.classes(), &["a", "b"]);
/// assert_eq!(model.predict(Points::new(&[0.5, 9.0], 1)?)?, vec!["a", "b"]);
/// let proba = model.predict_proba(Points::new(&[0.5], 1)?)?;
/// assert_eq!(proba.row(0).to_vec(), vec![2.0 / 3.0, 1.0 / 3.0]);
///
/// // The two nearest of 1.6 are 2 ("b") and 1 ("a"): a tie, the smaller label wins.
/// let two = KnnClassifier::new(2).fit(x.clone(), &labels)?;
/// assert_eq!(two.predict(Points::new(&[1.6], 1)?)?, vec!["a"]);
/// // Weighted by distance, the nearer "b" wins.
/// let weighted = KnnClassifier::new(2).weights(Weights::Distance).fit(x, &labels)?;
/// assert_eq!(weighted.predict(Points::new(&[1.6], 1)?)?, vec!["b"]);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct KnnClassifier {
    settings: Settings,
}

impl KnnClassifier {
    /// A classifier on `n_neighbors` neighbours, with uniform weights, the Euclidean metric,
    /// on the CPU. `n_neighbors` is checked when a training set is given (0 is an error
    /// there).
    ///
    /// ```
    /// use kselect::knn::{KnnClassifier, Points};
    /// let model = KnnClassifier::new(1).fit(Points::new(&[1.0f32, 2.0], 1)?, &[7, 8])?;
    /// assert_eq!(model.predict(Points::new(&[1.9], 1)?)?, vec![8]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn new(n_neighbors: usize) -> KnnClassifier {
        KnnClassifier {
            settings: Settings::new(n_neighbors),
        }
    }

    settings_setters! {
        KnnClassifier;
        /// How votes are weighted (uniform by default). [`Weights::Distance`] with
        /// [`Metric::InnerProduct`] is an error when fitting.
        ///
        /// ```
        /// use kselect::knn::{KnnClassifier, Points, Weights};
        /// let x = Points::new(&[0.0f64, 3.0, 4.0], 1)?;
        /// let model = KnnClassifier::new(3).weights(Weights::Distance).fit(x, &[0, 1, 1])?;
        /// // Distances 1, 2 and 3: weights 1, 1/2 and 1/3.
        /// assert_eq!(model.predict(Points::new(&[1.0], 1)?)?, vec![0]);
        /// # Ok::<(), kselect::Error>(())
        /// ```
        weights: Weights;
        /// The metric neighbours are found by (Euclidean by default).
        ///
        /// ```
        /// use kselect::knn::{KnnClassifier, Metric, Points};
        /// let x = Points::new(&[1.0f64, 0.0, 0.0, 5.0], 2)?;
        /// let model = KnnClassifier::new(1).metric(Metric::Cosine).fit(x, &['x', 'y'])?;
        /// assert_eq!(model.predict(Points::new(&[0.0, 0.1], 2)?)?, vec!['y']);
        /// # Ok::<(), kselect::Error>(())
        /// ```
        metric: Metric;
        /// The device neighbours are searched on (the CPU by default); the predictions are the
        /// same on every device.
        ///
        /// ```
        /// use kselect::{knn::{KnnClassifier, Points}, Device};
        /// let x = Points::new(&[0.0f64, 1.0], 1)?;
        /// let model = KnnClassifier::new(1).device(Device::auto()).fit(x, &[false, true])?;
        /// assert_eq!(model.predict(Points::new(&[0.9], 1)?)?, vec![true]);
        /// # Ok::<(), kselect::Error>(())
        /// ```
        device: Device;
    }

    /// The model of the training points `x` (any [`Matrix`](crate::Matrix), one point a row: a [`Points`], a slice with its shape or a 2-D ndarray) with
    /// `labels` (one per point), which keeps a copy of both. A single class is fine.
    ///
    /// An error when `n_neighbors` is 0 or more than the number of points, the set is empty,
    /// `labels` has another length, a coordinate is not finite, or distance weights go with
    /// the inner product.
    ///
    /// ```
    /// use kselect::knn::{KnnClassifier, Points};
    /// let x = Points::new(&[0.0f64, 1.0], 1)?;
    /// let model = KnnClassifier::new(2).fit(x.clone(), &[3, 3])?;
    /// assert_eq!(model.classes(), &[3]);
    /// let e = KnnClassifier::new(1).fit(x, &[1, 2, 3]).unwrap_err();
    /// assert!(e.to_string().contains("labels has 3 values"));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn fit<'a, T: KnnFloat, L: Clone + Ord>(
        &self,
        x: impl Into<Matrix<'a, T>>,
        labels: &[L],
    ) -> Result<FittedKnnClassifier<T, L>> {
        FittedKnnClassifier::train(&self.settings, Points::try_from(x.into())?, labels, false)
    }

    /// The leave-one-out error of each `k` of `ks` (in their order): the fraction of training
    /// points whose prediction from the other `n - 1`, with `k` neighbours, is not their label
    /// (`n_neighbors` is not used; the weights, metric and device are).
    ///
    /// One kNN graph of the largest `k` is searched ([`Neighbors::search_self`]) and every
    /// other `k` takes the first `k` neighbours of each list: exact, since lists are sorted
    /// with equal distances ordered by the lower index, so the same as
    /// [`FittedKnnClassifier::leave_one_out`] for each `k` on its own.
    ///
    /// An error when `ks` is empty or holds 0, a `k` is not below the number of points, or
    /// for the reasons of [`fit`](KnnClassifier::fit).
    ///
    /// ```
    /// use kselect::knn::{KnnClassifier, Points};
    /// let x = Points::new(&[0.0f64, 1.0, 2.0, 10.0, 11.0, 12.0], 1)?;
    /// let labels = [0, 0, 0, 1, 1, 1];
    /// let scores = KnnClassifier::new(1).leave_one_out_scores(x, &labels, &[1, 5])?;
    /// assert_eq!(scores[0].error, 0.0);
    /// // k = 5: the other class holds 3 of the 5 neighbours of every point.
    /// assert_eq!(scores[1].error, 1.0);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn leave_one_out_scores<'a, T: KnnFloat, L: Clone + Ord>(
        &self,
        x: impl Into<Matrix<'a, T>>,
        labels: &[L],
        ks: &[usize],
    ) -> Result<Vec<LooScore>> {
        let largest = largest_k(ks)?;
        let model = FittedKnnClassifier::train(
            &self.settings.with_k(largest),
            Points::try_from(x.into())?,
            labels,
            true,
        )?;
        let graph = model.index.search_self(largest)?;
        Ok(ks
            .iter()
            .map(|&k| {
                let votes = model.votes(&graph, k);
                let wrong = model
                    .winners(&votes)
                    .zip(&model.codes)
                    .filter(|(winner, code)| winner != *code)
                    .count();
                LooScore {
                    k,
                    error: wrong as f64 / model.codes.len() as f64,
                }
            })
            .collect())
    }
}

/// A fitted [`KnnClassifier`]: its own copy of the training points and labels.
///
/// ```
/// use kselect::knn::{KnnClassifier, Points};
/// let model = KnnClassifier::new(1).fit(Points::new(&[0.0f64, 1.0, 5.0], 1)?, &["x", "y", "x"])?;
/// assert_eq!(model.classes(), &["x", "y"]);
/// assert_eq!(model.leave_one_out()?, vec!["y", "x", "y"]);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FittedKnnClassifier<T: KnnFloat, L> {
    index: Neighbors<'static, T>,
    /// The distinct labels, ascending.
    classes: Vec<L>,
    /// The class of each training point, as a position in `classes`.
    codes: Vec<usize>,
    k: usize,
    weights: Weights,
}

impl<T: KnnFloat, L: Clone + Ord> FittedKnnClassifier<T, L> {
    /// The model of `x` and `labels` under `settings` (see [`KnnClassifier::fit`]).
    fn train(
        settings: &Settings,
        x: Points<'_, T>,
        labels: &[L],
        leave_one_out: bool,
    ) -> Result<FittedKnnClassifier<T, L>> {
        let index = settings.train(x, labels.len(), "labels", leave_one_out)?;
        let mut classes = labels.to_vec();
        classes.sort();
        classes.dedup();
        let codes = labels
            .iter()
            .map(|l| classes.binary_search(l).unwrap_or_default())
            .collect();
        Ok(FittedKnnClassifier {
            index,
            classes,
            codes,
            k: settings.n_neighbors,
            weights: settings.weights,
        })
    }

    /// The classes: the distinct training labels in ascending order, the columns of
    /// [`predict_proba`](FittedKnnClassifier::predict_proba).
    ///
    /// ```
    /// use kselect::knn::{KnnClassifier, Points};
    /// let model = KnnClassifier::new(1).fit(Points::new(&[0.0f32, 1.0, 2.0], 1)?, &[9, 2, 9])?;
    /// assert_eq!(model.classes(), &[2, 9]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn classes(&self) -> &[L] {
        &self.classes
    }

    /// The class of each query: the class of the largest weight among its
    /// [`n_neighbors`](FittedKnnClassifier::n_neighbors) nearest training points, ties to the
    /// smallest label. An error when the queries are empty, have another number of
    /// coordinates than the training points, or a coordinate that is not finite.
    ///
    /// ```
    /// use kselect::knn::{KnnClassifier, Points};
    /// let x = Points::new(&[0.0f64, 1.0, 2.0, 3.0], 1)?;
    /// let model = KnnClassifier::new(2).fit(x, &[5, 5, 4, 4])?;
    /// // 1.5 is nearest to 1 (label 5) and 2 (label 4): a tie, so 4.
    /// assert_eq!(model.predict(Points::new(&[0.0, 1.5, 3.0], 1)?)?, vec![5, 4, 4]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn predict<'q>(&self, x: impl Into<Matrix<'q, T>>) -> Result<Vec<L>> {
        let lists = self.index.search(x, self.k)?;
        Ok(self.labels_of(&self.votes(&lists, self.k)))
    }

    /// The probability of each class at each query: the class's share of the weight of the
    /// query's neighbours. Rows are the queries, columns the [`classes`](Self::classes) in
    /// their order; each row sums to 1. The errors of [`predict`](Self::predict).
    ///
    /// ```
    /// use kselect::knn::{KnnClassifier, Points};
    /// let x = Points::new(&[0.0f64, 1.0, 2.0, 3.0], 1)?;
    /// let model = KnnClassifier::new(4).fit(x, &['b', 'a', 'b', 'c'])?;
    /// let proba = model.predict_proba(Points::new(&[0.0], 1)?)?;
    /// assert_eq!(proba.shape(), &[1, 3]);
    /// assert_eq!(proba.row(0).to_vec(), vec![0.25, 0.5, 0.25]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn predict_proba<'q>(&self, x: impl Into<Matrix<'q, T>>) -> Result<Array2<f64>> {
        let lists = self.index.search(x, self.k)?;
        let mut votes = self.votes(&lists, self.k);
        for row in votes.chunks_mut(self.classes.len()) {
            let total: f64 = row.iter().sum();
            row.iter_mut().for_each(|v| *v /= total);
        }
        Ok(
            Array2::from_shape_vec((lists.queries(), self.classes.len()), votes)
                .expect("queries x classes probabilities"),
        )
    }

    /// The leave-one-out prediction of each training point: its class by the model of the
    /// other `n - 1` points (the point left out of its own neighbours). An error when
    /// `n_neighbors` is not below the number of training points.
    ///
    /// ```
    /// use kselect::knn::{KnnClassifier, Points};
    /// let x = Points::new(&[0.0f64, 1.0, 2.0], 1)?;
    /// let model = KnnClassifier::new(2).fit(x.clone(), &[1, 1, 2])?;
    /// assert_eq!(model.leave_one_out()?, vec![1, 1, 1]);
    /// assert!(KnnClassifier::new(3).fit(x, &[1, 1, 2])?.leave_one_out().is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn leave_one_out(&self) -> Result<Vec<L>> {
        check_leave_one_out(self.k, self.codes.len())?;
        let graph = self.index.search_self(self.k)?;
        Ok(self.labels_of(&self.votes(&graph, self.k)))
    }

    /// The number of neighbours of each prediction.
    ///
    /// ```
    /// use kselect::knn::{KnnClassifier, Points};
    /// let model = KnnClassifier::new(2).fit(Points::new(&[0.0f64, 1.0], 1)?, &[1, 2])?;
    /// assert_eq!(model.n_neighbors(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn n_neighbors(&self) -> usize {
        self.k
    }

    /// The weight of each class among the first `k` neighbours of each list, row-major
    /// (lists x classes).
    fn votes(&self, lists: &NeighborLists<T>, k: usize) -> Vec<f64> {
        let classes = self.classes.len();
        let mut votes = vec![0.0; lists.queries() * classes];
        let mut w = Vec::with_capacity(k);
        for ((distances, indices), row) in lists.iter().zip(votes.chunks_mut(classes)) {
            self.weights.of(&distances[..k], &mut w);
            for (&wi, &j) in w.iter().zip(&indices[..k]) {
                row[self.codes[j]] += wi;
            }
        }
        votes
    }

    /// The class (position in `classes`) of the largest weight of each row of votes, the
    /// first on ties.
    fn winners<'v>(&self, votes: &'v [f64]) -> impl Iterator<Item = usize> + 'v {
        votes.chunks(self.classes.len()).map(|row| {
            let mut best = 0;
            for (c, &v) in row.iter().enumerate() {
                if v > row[best] {
                    best = c;
                }
            }
            best
        })
    }

    /// The labels of the winners of each row of votes.
    fn labels_of(&self, votes: &[f64]) -> Vec<L> {
        self.winners(votes)
            .map(|c| self.classes[c].clone())
            .collect()
    }
}

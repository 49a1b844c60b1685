//! [`NeighborLists`]: the neighbours found for each query.

use ndarray::Array2;

/// The `k` neighbours of each query, nearest first, with their distances (for
/// [`Metric::InnerProduct`](crate::knn::Metric::InnerProduct), their inner products, largest
/// first). Equal distances are ordered by the lower reference index.
///
/// Stored row-major: query `i`'s neighbours at positions `i * k .. (i + 1) * k`.
///
/// ```
/// use kselect::knn::{Neighbors, Points};
/// let reference = Points::new(&[0.0f64, 1.0, 3.0, 6.0], 1)?;
/// let lists = Neighbors::new(reference)?.search(Points::new(&[2.0, 5.0], 1)?, 2)?;
/// assert_eq!((lists.queries(), lists.k()), (2, 2));
/// assert_eq!(lists.row(0), (&[1.0, 1.0][..], &[1, 2][..]));
/// assert_eq!(lists.row(1), (&[1.0, 2.0][..], &[3, 2][..]));
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct NeighborLists<T> {
    distances: Vec<T>,
    indices: Vec<usize>,
    queries: usize,
    k: usize,
}

impl<T: Copy> NeighborLists<T> {
    /// The lists of `queries` queries of `k` neighbours each (the lengths match).
    pub(crate) fn new(
        distances: Vec<T>,
        indices: Vec<usize>,
        queries: usize,
        k: usize,
    ) -> NeighborLists<T> {
        debug_assert_eq!(distances.len(), queries * k);
        debug_assert_eq!(indices.len(), queries * k);
        NeighborLists {
            distances,
            indices,
            queries,
            k,
        }
    }

    /// The number of queries.
    ///
    /// ```
    /// # use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?;
    /// assert_eq!(n.search(Points::new(&[0.5f32, 2.0, 3.0], 1)?, 1)?.queries(), 3);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn queries(&self) -> usize {
        self.queries
    }

    /// The number of neighbours of each query.
    ///
    /// ```
    /// # use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?;
    /// assert_eq!(n.search(Points::new(&[0.5f32], 1)?, 2)?.k(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn k(&self) -> usize {
        self.k
    }

    /// The distances and reference indices of query `i`'s neighbours, nearest first.
    ///
    /// # Panics
    ///
    /// When `i >= self.queries()`.
    ///
    /// ```
    /// # use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?;
    /// let lists = n.search(Points::new(&[0.9f32], 1)?, 1)?;
    /// assert_eq!(lists.row(0).1, &[1]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn row(&self, i: usize) -> (&[T], &[usize]) {
        assert!(i < self.queries, "query {i} of {}", self.queries);
        let range = i * self.k..(i + 1) * self.k;
        (&self.distances[range.clone()], &self.indices[range])
    }

    /// The lists in query order.
    ///
    /// ```
    /// # use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?;
    /// let lists = n.search(Points::new(&[0.1f32, 0.9], 1)?, 1)?;
    /// let nearest: Vec<usize> = lists.iter().map(|(_, idx)| idx[0]).collect();
    /// assert_eq!(nearest, vec![0, 1]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[T], &[usize])> + '_ {
        (0..self.queries).map(move |i| self.row(i))
    }

    /// Every distance, row-major.
    ///
    /// ```
    /// # use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[0.0f64, 1.0], 1)?)?;
    /// assert_eq!(n.search(Points::new(&[0.25], 1)?, 2)?.distances(), &[0.25, 0.75]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn distances(&self) -> &[T] {
        &self.distances
    }

    /// Every reference index, row-major.
    ///
    /// ```
    /// # use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[0.0f64, 1.0], 1)?)?;
    /// assert_eq!(n.search(Points::new(&[0.75], 1)?, 2)?.indices(), &[1, 0]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// The distances and indices as `queries x k` matrices.
    ///
    /// ```
    /// # use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[0.0f64, 1.0, 4.0], 1)?)?;
    /// let (d, i) = n.search(Points::new(&[0.0, 3.0], 1)?, 2)?.into_arrays();
    /// assert_eq!(d.shape(), &[2, 2]);
    /// assert_eq!(i[[1, 0]], 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn into_arrays(self) -> (Array2<T>, Array2<usize>) {
        let shape = (self.queries, self.k);
        (
            Array2::from_shape_vec(shape, self.distances).expect("queries x k distances"),
            Array2::from_shape_vec(shape, self.indices).expect("queries x k indices"),
        )
    }
}

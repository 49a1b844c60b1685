//! [`NeighborLists`]: the neighbours found for each query; [`DeviceNeighborLists`]: the same
//! left on a CUDA device.

use ndarray::Array2;

use crate::device::cuda::download::download_into;
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;

/// The constructor and the shape of a type of lists (`distances`, `indices`, `queries` and `k`
/// its fields), with the examples of `queries()` and `k()` given.
macro_rules! shape_of_lists {
    (
        impl<$t:ident: $bound:path> $lists:ident { $distances:ty, $indices:ty }
        queries: $(#[$queries_doc:meta])*
        k: $(#[$k_doc:meta])*
    ) => {
        impl<$t: $bound> $lists<$t> {
            /// The lists of `queries` queries of `k` neighbours each (the lengths match).
            pub(crate) fn new(
                distances: $distances,
                indices: $indices,
                queries: usize,
                k: usize,
            ) -> $lists<$t> {
                debug_assert_eq!(distances.len(), queries * k);
                debug_assert_eq!(indices.len(), queries * k);
                $lists {
                    distances,
                    indices,
                    queries,
                    k,
                }
            }

            /// The number of queries.
            ///
            $(#[$queries_doc])*
            pub fn queries(&self) -> usize {
                self.queries
            }

            /// The number of neighbours of each query.
            ///
            $(#[$k_doc])*
            pub fn k(&self) -> usize {
                self.k
            }
        }
    };
}

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

shape_of_lists! {
    impl<T: Copy> NeighborLists { Vec<T>, Vec<usize> }
    queries:
    /// ```
    /// # use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?;
    /// assert_eq!(n.search(Points::new(&[0.5f32, 2.0, 3.0], 1)?, 1)?.queries(), 3);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    k:
    /// ```
    /// # use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?;
    /// assert_eq!(n.search(Points::new(&[0.5f32], 1)?, 2)?.k(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
}

impl<T: Copy> NeighborLists<T> {
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

/// The lists of [`Neighbors::search_device`](crate::knn::Neighbors::search_device), left on
/// the CUDA device: `k` distances (in the points' type) and `u64` reference indices a query,
/// row-major, in the order of [`NeighborLists`].
///
/// ```no_run
/// use kselect::{knn::{Neighbors, Points}, Device};
/// let n = Neighbors::new(Points::new(&[0.0f64, 2.0, 5.0], 1)?)?.device(Device::cuda(0)?);
/// let lists = n.search_device(Points::new(&[1.5, 4.0], 1)?, 2)?;
/// assert_eq!((lists.queries(), lists.k()), (2, 2));
/// assert_eq!(lists.distances().to_host()?, vec![0.5, 1.5, 1.0, 2.0]);
/// assert_eq!(lists.indices().to_host()?, vec![1, 0, 2, 1]);
/// # Ok::<(), kselect::Error>(())
/// ```
pub struct DeviceNeighborLists<T: Element> {
    distances: DeviceBuffer<T>,
    indices: DeviceBuffer<u64>,
    queries: usize,
    k: usize,
}

impl<T: Element> std::fmt::Debug for DeviceNeighborLists<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceNeighborLists")
            .field("queries", &self.queries)
            .field("k", &self.k)
            .field("device", &self.distances.device().ordinal())
            .finish_non_exhaustive()
    }
}

shape_of_lists! {
    impl<T: Element> DeviceNeighborLists { DeviceBuffer<T>, DeviceBuffer<u64> }
    queries:
    /// ```no_run
    /// # use kselect::{knn::{Neighbors, Points}, Device};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?.device(Device::cuda(0)?);
    /// assert_eq!(n.search_device(Points::new(&[0.5f32, 2.0, 3.0], 1)?, 1)?.queries(), 3);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    k:
    /// ```no_run
    /// # use kselect::{knn::{Neighbors, Points}, Device};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?.device(Device::cuda(0)?);
    /// assert_eq!(n.search_device(Points::new(&[0.5f32], 1)?, 2)?.k(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
}

impl<T: Element> DeviceNeighborLists<T> {
    /// All distances, row-major (`queries * k`).
    ///
    /// ```no_run
    /// # use kselect::{knn::{Neighbors, Points}, Device};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?.device(Device::cuda(0)?);
    /// let lists = n.search_device(Points::new(&[0.25f32], 1)?, 2)?;
    /// assert_eq!(lists.distances().to_host()?, vec![0.25, 0.75]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn distances(&self) -> &DeviceBuffer<T> {
        &self.distances
    }

    /// All reference indices, row-major (`queries * k`).
    ///
    /// ```no_run
    /// # use kselect::{knn::{Neighbors, Points}, Device};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?.device(Device::cuda(0)?);
    /// let lists = n.search_device(Points::new(&[0.75f32], 1)?, 2)?;
    /// assert_eq!(lists.indices().to_host()?, vec![1, 0]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn indices(&self) -> &DeviceBuffer<u64> {
        &self.indices
    }

    /// The lists copied to the host.
    ///
    /// ```no_run
    /// # use kselect::{knn::{Neighbors, Points}, Device};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 1.0], 1)?)?.device(Device::cuda(0)?);
    /// let lists = n.search_device(Points::new(&[0.75f32], 1)?, 1)?.to_host()?;
    /// assert_eq!(lists.row(0), (&[0.25][..], &[1][..]));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn to_host(&self) -> Result<NeighborLists<T>> {
        let dev = self.distances.device();
        let count = self.queries * self.k;
        let mut distances = vec![T::default(); count];
        let mut indices = vec![0usize; count];
        let what = "the lists";
        download_into(
            dev,
            &self.distances.as_slice().as_view(),
            &mut distances,
            |v| v,
            what,
        )?;
        download_into(
            dev,
            &self.indices.as_slice().as_view(),
            &mut indices,
            |i| i as usize,
            what,
        )?;
        Ok(NeighborLists::new(distances, indices, self.queries, self.k))
    }
}

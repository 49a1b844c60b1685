//! [`Neighbors`]: exact k-nearest-neighbour search over a reference set.

use crate::device::{CudaDevice, Device, DeviceBuffer};
use crate::error::Result;
use crate::knn::gpu::{Lists, Place};
use crate::knn::metric::Metric;
use crate::knn::{
    cpu, gpu, Among, DeviceNeighborLists, KnnError, KnnFloat, NeighborLists, PointSet, Points,
};
use crate::select::Matrix;

/// Exact nearest-neighbour search over a set of reference points, on the CPU or a CUDA GPU.
///
/// Every pair is measured by the metric's canonical arithmetic ([`Metric::measure`]), so the
/// lists are exact and identical on every device: sorted by distance (for
/// [`Metric::InnerProduct`], by inner product from the largest), **equal distances ordered by
/// the lower reference index**. `k` runs from 1 to the number of reference points, with no
/// other limit. Coordinates must be finite (NaN or infinity is an error naming the point).
///
/// ```
/// use kselect::knn::{Metric, Neighbors, Points};
///
/// let reference = Points::new(&[0.0f64, 0.0, 1.0, 0.0, 0.0, 2.0, 3.0, 3.0], 2)?;
/// let index = Neighbors::new(reference)?;
/// let lists = index.search(Points::new(&[0.9, 0.1], 2)?, 2)?;
/// assert_eq!(lists.row(0).1, &[1, 0]);
///
/// // The kNN graph: each point's nearest other point.
/// let graph = index.search_self(1)?;
/// assert_eq!(graph.indices(), &[1, 0, 0, 2]);
///
/// let manhattan = index.clone().metric(Metric::Manhattan);
/// assert_eq!(manhattan.search(Points::new(&[3.0, 0.0], 2)?, 1)?.row(0), (&[2.0][..], &[1][..]));
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone)]
pub struct Neighbors<'a, T: KnnFloat> {
    reference: Points<'a, T>,
    metric: Metric,
    device: Device,
    memory_budget: Option<usize>,
    /// The reference set kept on the GPU between searches (shared by clones).
    resident: gpu::Cache<T>,
}

impl<T: KnnFloat> std::fmt::Debug for Neighbors<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Neighbors")
            .field("points", &self.reference.rows())
            .field("dim", &self.reference.dim())
            .field("metric", &self.metric)
            .field("device", &self.device)
            .field("memory_budget", &self.memory_budget)
            .finish_non_exhaustive()
    }
}

impl<'a, T: KnnFloat> Neighbors<'a, T> {
    /// A search over `reference` (any [`Matrix`](crate::Matrix), one point a row: a [`Points`], a slice with its shape or a 2-D ndarray), on the CPU,
    /// with the Euclidean metric. An error when the set is empty, its points have no
    /// coordinate, or a coordinate is not finite.
    ///
    /// ```
    /// use kselect::knn::{Neighbors, Points};
    /// let empty: &[f32] = &[];
    /// assert!(Neighbors::new(Points::new(empty, 2)?).is_err());
    /// let bad = [1.0f32, f32::NAN];
    /// let e = Neighbors::new(Points::new(&bad, 1)?).unwrap_err();
    /// assert!(e.to_string().contains("reference point 1"));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn new(reference: impl Into<Matrix<'a, T>>) -> Result<Neighbors<'a, T>> {
        let reference = Points::try_from(reference.into())?;
        check_set(&reference, PointSet::Reference)?;
        Ok(Neighbors {
            reference,
            metric: Metric::default(),
            device: Device::Cpu,
            memory_budget: None,
            resident: gpu::Cache::default(),
        })
    }

    /// The metric (Euclidean by default).
    ///
    /// ```
    /// use kselect::knn::{Metric, Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[1.0f64, 2.0], 1)?)?.metric(Metric::SquaredEuclidean);
    /// assert_eq!(n.search(Points::new(&[4.0], 1)?, 1)?.distances(), &[4.0]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn metric(mut self, metric: Metric) -> Neighbors<'a, T> {
        self.metric = metric;
        self
    }

    /// The device the search runs on (the CPU by default). Every device returns the same
    /// lists, bit for bit. On a GPU the reference set is copied to the device at the first
    /// search and kept there for the next ones (by this value and its clones), when it takes
    /// at most half the memory budget.
    ///
    /// ```
    /// use kselect::{knn::{Neighbors, Points}, Device};
    /// let n = Neighbors::new(Points::new(&[1.0f64, 2.0], 1)?)?.device(Device::auto());
    /// assert_eq!(n.search(Points::new(&[1.9], 1)?, 1)?.indices(), &[1]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn device(mut self, device: Device) -> Neighbors<'a, T> {
        self.device = device;
        self
    }

    /// The most GPU memory, in bytes, a search may use for its tiles of points and distances
    /// (by default half the memory free when the search starts). Reference sets and query
    /// sets larger than the budget are streamed through it in tiles; a budget too small for a
    /// single tile is an error. No effect on the CPU.
    ///
    /// ```
    /// use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[1.0f32, 2.0], 1)?)?.memory_budget(1 << 30);
    /// assert_eq!(n.search(Points::new(&[0.0], 1)?, 2)?.indices(), &[0, 1]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn memory_budget(mut self, bytes: usize) -> Neighbors<'a, T> {
        self.memory_budget = Some(bytes);
        self
    }

    /// The reference points.
    ///
    /// ```
    /// use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[1.0f32, 2.0], 1)?)?;
    /// assert_eq!(n.reference().rows(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn reference(&self) -> &Points<'a, T> {
        &self.reference
    }

    /// The chosen metric.
    ///
    /// ```
    /// use kselect::knn::{Metric, Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[1.0f32], 1)?)?;
    /// assert_eq!(n.metric_choice(), Metric::Euclidean);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn metric_choice(&self) -> Metric {
        self.metric
    }

    /// The `k` nearest reference points of each query (`1 <= k <=` the reference count),
    /// nearest first, equal distances by the lower index.
    ///
    /// ```
    /// use kselect::knn::{Neighbors, Points};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 2.0, 4.0], 1)?)?;
    /// let lists = n.search(Points::new(&[1.0], 1)?, 3)?;
    /// assert_eq!(lists.row(0), (&[1.0, 1.0, 3.0][..], &[0, 1, 2][..]));
    /// assert!(n.search(Points::new(&[1.0], 1)?, 4).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn search<'q>(
        &self,
        queries: impl Into<Matrix<'q, T>>,
        k: usize,
    ) -> Result<NeighborLists<T>> {
        let queries = Points::try_from(queries.into())?;
        self.check_queries(&queries, k)?;
        let (values, indices) = self.run(&queries, k)?;
        Ok(lists(values, indices, queries.rows(), k))
    }

    /// [`search`](Neighbors::search) on a CUDA device with the lists left there, for work that
    /// goes on on the device: distances in `T` and `u64` reference indices, row-major, `k` a
    /// query. The same lists as `search`, bit for bit; an error when the search runs on the
    /// CPU.
    ///
    /// ```no_run
    /// use kselect::{knn::{Neighbors, Points}, Device};
    /// let n = Neighbors::new(Points::new(&[0.0f32, 2.0, 4.0], 1)?)?.device(Device::cuda(0)?);
    /// let lists = n.search_device(Points::new(&[1.0], 1)?, 2)?;
    /// assert_eq!(lists.indices().to_host()?, vec![0, 1]);
    /// assert_eq!(lists.to_host()?.row(0), (&[1.0, 1.0][..], &[0, 1][..]));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn search_device<'q>(
        &self,
        queries: impl Into<Matrix<'q, T>>,
        k: usize,
    ) -> Result<DeviceNeighborLists<T>> {
        let queries = Points::try_from(queries.into())?;
        let Device::Cuda(dev) = &self.device else {
            return Err(KnnError::DeviceListsOnCpu.into());
        };
        self.check_queries(&queries, k)?;
        match self.run_gpu(dev, &queries, k, Place::Device)? {
            Lists::Device { values, indices } => Ok(DeviceNeighborLists::new(
                DeviceBuffer::from_slice(dev, values),
                DeviceBuffer::from_slice(dev, indices),
                queries.rows(),
                k,
            )),
            Lists::Host { .. } => unreachable!("a search placed on the device"),
        }
    }

    /// An error unless `queries` match the reference points and `1 <= k <=` their count.
    fn check_queries(&self, queries: &Points<'_, T>, k: usize) -> Result<()> {
        if queries.dim() != self.reference.dim() {
            return Err(KnnError::DimMismatch {
                queries: queries.dim(),
                reference: self.reference.dim(),
            }
            .into());
        }
        check_set(queries, PointSet::Query)?;
        check_k(k, self.reference.rows(), Among::Reference)
    }

    /// The kNN graph: the `k` nearest other points of every reference point (each point left
    /// out of its own list; `1 <= k <` the reference count), nearest first, equal distances
    /// by the lower index.
    ///
    /// ```
    /// use kselect::knn::{Neighbors, Points};
    /// // Two copies of the same point: each is the other's nearest.
    /// let n = Neighbors::new(Points::new(&[5.0f64, 1.0, 5.0], 1)?)?;
    /// let graph = n.search_self(2)?;
    /// assert_eq!(graph.row(0), (&[0.0, 4.0][..], &[2, 1][..]));
    /// assert_eq!(graph.row(2), (&[0.0, 4.0][..], &[0, 1][..]));
    /// assert!(n.search_self(3).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn search_self(&self, k: usize) -> Result<NeighborLists<T>> {
        let n = self.reference.rows();
        check_k(k, n.saturating_sub(1), Among::OtherReference)?;
        // The k + 1 best of each point, then the point itself taken out (or the last
        // dropped where the point is not among them, as for cosine's zero vector).
        let (values, indices) = self.run(&self.reference, k + 1)?;
        let mut kept_values = Vec::with_capacity(n * k);
        let mut kept_indices = Vec::with_capacity(n * k);
        for (i, (v, idx)) in values.chunks(k + 1).zip(indices.chunks(k + 1)).enumerate() {
            let skip = idx.iter().position(|&j| j == i).unwrap_or(k);
            for (pos, (&value, &j)) in v.iter().zip(idx).enumerate() {
                if pos != skip {
                    kept_values.push(value);
                    kept_indices.push(j);
                }
            }
        }
        Ok(lists(kept_values, kept_indices, n, k))
    }

    /// Distances (canonical values in `T`) and indices of the `k` best of each query, on the
    /// chosen device.
    fn run(&self, queries: &Points<'_, T>, k: usize) -> Result<(Vec<T>, Vec<usize>)> {
        match &self.device {
            Device::Cpu => {
                let prepared = cpu::Prepared::new(&self.reference, self.metric);
                let (values, indices) = cpu::search(&prepared, queries, k, self.metric);
                Ok((values.into_iter().map(to_element).collect(), indices))
            }
            Device::Cuda(dev) => match self.run_gpu(dev, queries, k, Place::Host)? {
                Lists::Host { values, indices } => Ok((values, indices)),
                Lists::Device { .. } => unreachable!("a search placed on the host"),
            },
        }
    }

    /// The lists of `queries` on `dev`, in `place`.
    fn run_gpu(
        &self,
        dev: &CudaDevice,
        queries: &Points<'_, T>,
        k: usize,
        place: Place,
    ) -> Result<Lists<T>> {
        gpu::search(
            dev,
            &self.reference,
            queries,
            k,
            self.metric,
            self.memory_budget,
            &self.resident,
            place,
        )
    }
}

/// A canonical value in the element type, every NaN (an inner product whose terms overflowed to
/// both infinities) the quiet NaN, as on the GPU.
fn to_element<T: KnnFloat>(value: f64) -> T {
    T::from_f64(if value.is_nan() { f64::NAN } else { value })
}

/// The lists of `queries` queries of `k` neighbours each.
fn lists<T: KnnFloat>(
    distances: Vec<T>,
    indices: Vec<usize>,
    queries: usize,
    k: usize,
) -> NeighborLists<T> {
    NeighborLists::new(distances, indices, queries, k)
}

/// An error for an empty set, points of no coordinate, or a coordinate that is not finite.
fn check_set<T: KnnFloat>(points: &Points<'_, T>, set: PointSet) -> Result<()> {
    if points.dim() == 0 {
        return Err(KnnError::NoCoordinate { set: Some(set) }.into());
    }
    if points.is_empty() {
        return Err(KnnError::EmptySet { set }.into());
    }
    points.check_finite(set)
}

/// An error unless `1 <= k <= available`.
fn check_k(k: usize, available: usize, among: Among) -> Result<()> {
    if k == 0 || k > available {
        return Err(KnnError::KOutOfRange {
            k,
            available,
            among,
        }
        .into());
    }
    Ok(())
}

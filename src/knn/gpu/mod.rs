//! Exact neighbour search on a CUDA GPU.

use crate::device::CudaDevice;
use crate::error::{Error, Result};
use crate::knn::{KnnFloat, Metric, Points};

/// Canonical values and indices of the `k` best reference points of every query.
pub(crate) fn search<T: KnnFloat>(
    _dev: &CudaDevice,
    _reference: &Points<'_, T>,
    _queries: &Points<'_, T>,
    _k: usize,
    _metric: Metric,
    _budget: Option<usize>,
) -> Result<(Vec<f64>, Vec<usize>)> {
    Err(Error::InvalidArgument("not yet".into()))
}

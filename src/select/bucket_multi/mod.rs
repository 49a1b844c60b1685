//! Bucket multiselection on CUDA: bucketMultiSelect (Blanchard, Chen & Kim 2016, `bms`) and its
//! iterative form (the second phase of Blanchard et al.'s DIBMS, 2024, on one GPU,
//! `iterative`), on the kernels of `kernels/bucket_multiselect.cu`.
//!
//! Both share the first level (`run`): a sample gives kernel density intervals, the buckets are
//! spread over them with one linear projection of the order-preserving keys per interval
//! (`plan`), one pass counts the buckets per block, and a one-block kernel finds the buckets
//! that hold a wanted rank by prefix sums (`engine`). bucketMultiSelect writes those buckets'
//! elements out and sorts them; the iterative form splits them again until every rank is known.

pub(crate) mod bms;
pub(crate) mod cpu;
pub(crate) mod engine;
pub(crate) mod fused;
pub(crate) mod iterative;
mod plan;
mod run;
pub(crate) mod workspace;

#[cfg(test)]
mod tests;

use crate::device::cuda::MemoryNeed;
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::algorithm::{Algorithm, Backends, Found, Query, Selection};

/// bucketMultiSelect.
pub(crate) struct BucketMultiselect;

impl Selection for BucketMultiselect {
    const BACKENDS: Backends = Backends::CpuAndCuda;

    fn cpu<T: Element>(_: Algorithm, data: &[T], ranks: &[usize], parallel: bool) -> Found<T> {
        let (values, nans) = cpu::multiselect_counting_nans(data, ranks, parallel);
        Ok((values, Some(nans)))
    }

    fn cuda<T: Element>(_: Algorithm, buf: &DeviceBuffer<T>, ranks: &[usize]) -> Found<T> {
        bms::multiselect(buf, ranks)
    }

    fn cuda_workspace<T: Element>(_: Algorithm, q: &Query<'_>) -> Result<MemoryNeed> {
        workspace::bms::<T>(q.dev, q.n, q.ranks.len())
    }
}

/// Iterative bucket multiselection.
pub(crate) struct IterativeBucketMultiselect;

impl Selection for IterativeBucketMultiselect {
    const BACKENDS: Backends = Backends::CudaOnly;

    fn cuda<T: Element>(_: Algorithm, buf: &DeviceBuffer<T>, ranks: &[usize]) -> Found<T> {
        iterative::multiselect(buf, ranks)
    }

    fn cuda_workspace<T: Element>(_: Algorithm, q: &Query<'_>) -> Result<MemoryNeed> {
        workspace::iterative::<T>(q.dev, q.n, q.ranks.len())
    }
}

/// Fused bucket multiselection.
pub(crate) struct FusedMultiselect;

impl Selection for FusedMultiselect {
    const BACKENDS: Backends = Backends::CudaOnly;

    fn cuda<T: Element>(_: Algorithm, buf: &DeviceBuffer<T>, ranks: &[usize]) -> Found<T> {
        fused::multiselect(buf, ranks)
    }

    fn cuda_workspace<T: Element>(_: Algorithm, q: &Query<'_>) -> Result<MemoryNeed> {
        fused::workspace::<T>(q.dev, q.n, q.ranks.len())
    }
}

//! SampleSelect (Ribizel & Anzt 2020), on the CPU and on CUDA, and its approximate variant.
//!
//! A level draws a sample, sorts it and takes evenly spaced splitters; every candidate is put
//! into the bucket between two splitters or into a splitter's *equality bucket*, the buckets
//! are counted, and the bucket holding the rank becomes the next level (a rank in an equality
//! bucket is that splitter). Approximate selection stops after the first level and returns the
//! splitter whose rank range is closest to the rank (see [`crate::select::Approximate`]).

pub(crate) mod cpu;
pub(crate) mod cuda;

use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::algorithm::{each_rank, Algorithm, Backends, Selection};

/// SampleSelect.
pub(crate) struct Sample;

impl Selection for Sample {
    const BACKENDS: Backends = Backends::CpuAndCuda;

    fn cpu<T: Element>(
        _: Algorithm,
        data: &[T],
        ranks: &[usize],
        parallel: bool,
    ) -> Result<(Vec<T>, Option<usize>)> {
        Ok(each_rank(cpu::select, data, ranks, parallel))
    }

    fn cuda<T: Element>(
        _: Algorithm,
        buf: &DeviceBuffer<T>,
        ranks: &[usize],
    ) -> Result<(Vec<T>, Option<usize>)> {
        let (values, nans) = cuda::multiselect(buf, ranks)?;
        Ok((values, Some(nans)))
    }
}

//! MSD radix select on order-preserving keys (Alabi et al.), on the CPU and on CUDA.

pub(crate) mod cpu;
pub(crate) mod cuda;

use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::algorithm::{each_rank, Algorithm, Backends, Selection};

/// MSD radix select, copying the candidates once they fit.
pub(crate) struct Radix;

impl Selection for Radix {
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

/// MSD radix select in place: no candidate copied.
pub(crate) struct RadixInPlace;

impl Selection for RadixInPlace {
    const BACKENDS: Backends = Backends::CudaOnly;

    fn cuda<T: Element>(
        _: Algorithm,
        buf: &DeviceBuffer<T>,
        ranks: &[usize],
    ) -> Result<(Vec<T>, Option<usize>)> {
        let (values, nans) = cuda::multiselect_in_place(buf, ranks)?;
        Ok((values, Some(nans)))
    }
}

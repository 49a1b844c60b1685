//! randomizedSelect (Monroe et al.): two splitters from a random sample bracket the rank, one
//! pass counts and copies, the rank is selected among the few copies. CPU and CUDA.

pub(crate) mod cpu;
pub(crate) mod cuda;

use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::algorithm::{each_rank, Algorithm, Backends, Selection};

/// randomizedSelect.
pub(crate) struct Randomized;

impl Selection for Randomized {
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

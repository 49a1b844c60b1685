//! sort&choose: sort a copy of the keys, then index it. The reference every other algorithm is
//! checked against, on the CPU (a parallel sort) and on CUDA (our LSD radix sort).

pub(crate) mod cpu;
pub(crate) mod cuda;

use crate::device::cuda::MemoryNeed;
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::algorithm::{each_rank, Algorithm, Backends, Found, Query, Selection};

/// sort&choose.
pub(crate) struct SortChoose;

impl Selection for SortChoose {
    const BACKENDS: Backends = Backends::CpuAndCuda;

    fn cpu<T: Element>(_: Algorithm, data: &[T], ranks: &[usize], parallel: bool) -> Found<T> {
        if ranks.len() == 1 {
            return Ok(each_rank(cpu::select, data, ranks, parallel));
        }
        Ok((cpu::multiselect(data, ranks, parallel), None))
    }

    fn cuda<T: Element>(_: Algorithm, buf: &DeviceBuffer<T>, ranks: &[usize]) -> Found<T> {
        Ok((cuda::multiselect(buf, ranks)?, None))
    }

    fn cuda_workspace<T: Element>(_: Algorithm, q: &Query<'_>) -> Result<MemoryNeed> {
        Ok(cuda::workspace::<T>(q.dev, q.n, q.ranks.len()))
    }
}

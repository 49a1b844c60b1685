//! QuickSelect (Hoare): a sampled pivot and a partition per level, the side holding the rank
//! kept. On CUDA, one fused bipartition pass per level (Ribizel & Anzt's reference).

pub(crate) mod cpu;
pub(crate) mod cuda;

use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::algorithm::{each_rank, Algorithm, Backends, Selection};

/// QuickSelect.
pub(crate) struct Quick;

impl Selection for Quick {
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

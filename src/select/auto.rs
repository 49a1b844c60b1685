//! `Auto`: each backend's fastest exact algorithm for the input's length and the ranks asked
//! for (the choices are made in `select/cpu.rs` and `select/cuda.rs`).

use crate::device::cuda::MemoryNeed;
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::algorithm::{
    cuda_workspace, run_cuda, Algorithm, Backends, Found, Query, Selection,
};
use crate::select::cuda::RankSpread;
use crate::select::{cpu, cuda};

/// The backend's choice.
pub(crate) struct Auto;

impl Selection for Auto {
    const BACKENDS: Backends = Backends::CpuAndCuda;

    fn cpu<T: Element>(_: Algorithm, data: &[T], ranks: &[usize], parallel: bool) -> Found<T> {
        Ok(cpu::auto_multiselect_counting_nans(data, ranks, parallel))
    }

    fn cuda<T: Element>(_: Algorithm, buf: &DeviceBuffer<T>, ranks: &[usize]) -> Found<T> {
        let chosen = cuda::auto_algorithm(buf.len(), RankSpread::of(buf.len(), ranks));
        run_cuda(chosen, buf, ranks)
    }

    fn cuda_workspace<T: Element>(_: Algorithm, q: &Query<'_>) -> Result<MemoryNeed> {
        let chosen = cuda::auto_algorithm(q.n, RankSpread::of(q.n, q.ranks));
        cuda_workspace::<T>(chosen, q)
    }
}

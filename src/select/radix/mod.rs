//! MSD radix select on order-preserving keys (Alabi et al.), on the CPU and on CUDA.

pub(crate) mod cpu;
pub(crate) mod cuda;

selection! {
    /// MSD radix select, copying the candidates once they fit.
    Radix: CpuAndCuda,
    cpu: each_rank(cpu::select),
    cuda: counting_nans(cuda::multiselect), workspace(cuda::workspace)
}

selection! {
    /// MSD radix select in place: no candidate copied.
    RadixInPlace: CudaOnly,
    cuda: counting_nans(cuda::multiselect_in_place), workspace(cuda::workspace_in_place)
}

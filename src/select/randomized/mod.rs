//! randomizedSelect (Monroe et al.): two splitters from a random sample bracket the rank, one
//! pass counts and copies, the rank is selected among the few copies. CPU and CUDA.

pub(crate) mod cpu;
pub(crate) mod cuda;

selection! {
    /// randomizedSelect.
    Randomized: CpuAndCuda,
    cpu: each_rank(cpu::select),
    cuda: counting_nans(cuda::multiselect), workspace(cuda::workspace)
}

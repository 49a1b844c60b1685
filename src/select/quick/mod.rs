//! QuickSelect (Hoare): a sampled pivot and a partition per level, the side holding the rank
//! kept. On CUDA, one fused bipartition pass per level (Ribizel & Anzt's reference).

pub(crate) mod cpu;
pub(crate) mod cuda;

selection! {
    /// QuickSelect.
    Quick: CpuAndCuda,
    cpu: each_rank(cpu::select),
    cuda: counting_nans(cuda::multiselect), workspace(cuda::workspace)
}

//! QuickSelect (Hoare) on CUDA: a sampled pivot and one fused bipartition pass per level.

pub(crate) mod cuda;

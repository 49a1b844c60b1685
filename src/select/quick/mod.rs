//! QuickSelect (Hoare): a sampled pivot and a partition per level, the side holding the rank
//! kept. On CUDA, one fused bipartition pass per level (Ribizel & Anzt's reference).

pub(crate) mod cpu;
pub(crate) mod cuda;

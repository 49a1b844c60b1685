//! MSD radix select on order-preserving keys (Alabi et al.), on the CPU and on CUDA.

pub(crate) mod cpu;
pub(crate) mod cuda;

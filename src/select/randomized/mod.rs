//! randomizedSelect (Monroe et al.) on CUDA: two splitters from a random sample bracket the
//! rank, one pass counts and copies, the rank is selected among the few copies.

pub(crate) mod cuda;

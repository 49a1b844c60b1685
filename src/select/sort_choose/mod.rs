//! sort&choose: sort a copy of the keys, then index it. The reference every other algorithm is
//! checked against, on the CPU (a parallel sort) and on CUDA (our LSD radix sort).

pub(crate) mod cpu;
pub(crate) mod cuda;

//! SampleSelect (Ribizel & Anzt 2020), on the CPU and on CUDA, and its approximate variant.
//!
//! A level draws a sample, sorts it and takes evenly spaced splitters; every candidate is put
//! into the bucket between two splitters or into a splitter's *equality bucket*, the buckets
//! are counted, and the bucket holding the rank becomes the next level (a rank in an equality
//! bucket is that splitter). Approximate selection stops after the first level and returns the
//! splitter whose rank range is closest to the rank (see [`crate::select::Approximate`]).

pub(crate) mod cpu;
pub(crate) mod cuda;

selection! {
    /// SampleSelect.
    Sample: CpuAndCuda,
    cpu: each_rank(cpu::select),
    cuda: counting_nans(cuda::multiselect), workspace(cuda::workspace)
}

//! Bucket multiselection on CUDA: bucketMultiSelect (Blanchard, Chen & Kim 2016, `bms`) and its
//! iterative form (the second phase of Blanchard et al.'s DIBMS, 2024, on one GPU,
//! `iterative`), on the kernels of `kernels/bucket_multiselect.cu`.
//!
//! Both share the first level (`run`): a sample gives kernel density intervals, the buckets are
//! spread over them with one linear projection of the order-preserving keys per interval
//! (`plan`), one pass counts the buckets per block, and a one-block kernel finds the buckets
//! that hold a wanted rank by prefix sums (`engine`). bucketMultiSelect writes those buckets'
//! elements out and sorts them; the iterative form splits them again until every rank is known.

pub(crate) mod bms;
pub(crate) mod engine;
pub(crate) mod fused;
pub(crate) mod iterative;
mod plan;
mod run;

#[cfg(test)]
mod tests;

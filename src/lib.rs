//! # kselect
//!
//! Exact order statistics on GPUs and CPUs: the element of any rank, many ranks at once,
//! quantiles by all nine Hyndman–Fan definitions (under numpy's names), for `f32`, `f64`, `i32`,
//! `i64`, `u32` and `u64`, from host slices or CUDA device buffers.
//!
//! ```
//! use kselect::{Algorithm, Selector};
//!
//! let data: Vec<f32> = (0..1000).map(|i| ((i * 7919) % 1000) as f32).collect();
//! assert_eq!(kselect::select(&data, 10).unwrap(), 10.0);
//! assert_eq!(kselect::median(&data).unwrap(), 499.0); // the lower median
//! assert_eq!(kselect::median_mean(&data).unwrap(), 499.5); // numpy.median
//! assert_eq!(kselect::quantile(&data, 0.5).unwrap(), 499.5);
//!
//! // Choose the device (CUDA device 0 when present) and the algorithm.
//! let sel = Selector::auto().algorithm(Algorithm::Radix);
//! assert_eq!(sel.multiselect(&data, &[0, 999]).unwrap(), vec![0.0, 999.0]);
//! ```
//!
//! Batches too: the element of a rank in every row of a matrix or every segment of an array,
//! the top-k values of each with their indices, and hard thresholding (keep the `k` entries of
//! largest magnitude):
//!
//! ```
//! use kselect::{Matrix, Selector, TopKOptions};
//!
//! let x = [0.5f64, -4.0, 2.0, 3.0, 1.0, -1.0];
//! let sel = Selector::new();
//! assert_eq!(sel.select_rows(Matrix::new(&x, 2, 3), 0).unwrap(), vec![-4.0, -1.0]);
//! let top = sel.top_k(&x, 2, TopKOptions::largest().sorted(true)).unwrap();
//! assert_eq!((top.values(), top.indices()), (&[3.0, 2.0][..], &[3, 2][..]));
//! assert_eq!(sel.threshold(&x, 2).unwrap().support, vec![1, 3]);
//! ```
//!
//! Ranks are 0-based in ascending order; values are ordered by an order-preserving key (NaN
//! last, `-0.0` just below `+0.0`); every algorithm and backend returns the same bits as the
//! sort-based reference. See [`Selector`] for the options and [`NanPolicy`] for NaN.
//!
//! Built on selection: distributions from order statistics ([`density`]) and robust regression
//! ([`regression`]: least trimmed squares and least median of squares, with robustbase's and
//! MASS's conventions). Data spread over several processes or GPUs: [`distributed`] (exact
//! multiselection and quantiles over MPI, the `mpi` feature).
//!
//! The default build is the library alone. Features add the rest: `io` reads and writes data
//! files (`kselect::io`: `.npy`, CSV, gzip), `plot` draws densities and phase diagrams
//! (`kselect::plot`: PNG, SVG), `cli` builds the `kselect` command (with both), `mpi`
//! distributes over MPI.

#![warn(missing_docs)]

pub mod density;
pub mod device;
pub mod distributed;
pub mod element;
pub mod error;
#[cfg(feature = "io")]
pub mod io;
pub mod knn;
mod names;
#[cfg(feature = "plot")]
pub mod plot;
mod random;
pub mod recovery;
pub mod regression;
pub mod select;

pub use device::{CudaDevice, Device, DeviceBuffer, GpuTimer, PoolUsage};
pub use element::{key_cmp, DType, Element, RadixKey};
pub use error::{Error, Result};
pub use recovery::RecoveryError;
pub use regression::RegressionError;
pub use regression::{Lms, Lts, RegressionFit};
pub use select::cutting_plane::CuttingPlaneError;
pub use select::{
    median, median_mean, multiselect, quantile, quantiles, select, select_largest, Algorithm,
    Approximate, ApproximateQuantile, BatchError, BatchRank, DeviceThreshold, DeviceTopK, Matrix,
    NanPolicy, QuantileMethod, Segments, Selector, Threshold, TopK, TopKOptions, TopKOrder, Values,
};

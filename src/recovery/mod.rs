//! Compressed sensing: recovery of a `k`-sparse signal `x` from `m < n` linear measurements
//! `y = A x` by iterative hard thresholding and its relatives, each iteration's hard threshold
//! `H_k` (the `k` entries of largest magnitude kept, equal magnitudes by the lower index) taken
//! by the crate's exact selection.
//!
//! - [`LinearOperator`]: the measurement operator `A` (`m x n`): applied, and its adjoint
//!   applied.
//! - [`DenseMatrix`]: an explicit matrix, row-major.
//! - [`SubsampledDct`]: rows of the orthonormal DCT, in `O(n log n)` by FFT.
//! - [`SparseBinary`]: `d` equal nonzeros in each column (an expander-style matrix).
//! - [`Ensemble`]: random operators (Gaussian, signs, DCT rows, sparse) drawn from a seed.
//! - [`Operator`]: the operator of any of these kinds.
//! - [`SignalKind`]: the distribution of a test signal's nonzeros, for [`sparse_signal`]
//!   (`k` nonzeros at random positions, drawn from a seed).
//!
//! ```
//! use kselect::recovery::{LinearOperator, Real};
//! assert_eq!(<f32 as Real>::of(0.5), 0.5f32);
//! ```

mod operator;

pub use operator::LinearOperator;

mod dct;
mod dense;
mod ensemble;
mod random;
mod signal;
mod sparse;

pub use dct::SubsampledDct;
pub use dense::DenseMatrix;
pub use ensemble::{Ensemble, Operator};
pub use signal::{sparse_signal, SignalKind};
pub use sparse::SparseBinary;

use crate::element::Element;

/// The element types of signals and operators: `f32` and `f64`.
///
/// ```
/// use kselect::recovery::Real;
/// assert_eq!(f64::of(2.0).sqrt(), std::f64::consts::SQRT_2);
/// ```
pub trait Real:
    Element
    + num_traits::Float
    + rustfft::FftNum
    + std::iter::Sum
    + std::ops::AddAssign
    + std::ops::SubAssign
    + std::ops::MulAssign
{
    /// The nearest value of this type (round to nearest, ties to even).
    fn of(value: f64) -> Self;
}

impl Real for f32 {
    fn of(value: f64) -> f32 {
        value as f32
    }
}

impl Real for f64 {
    fn of(value: f64) -> f64 {
        value
    }
}

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
//! - [`Solver`]: IHT, NIHT, HTP, CoSaMP, subspace pursuit and CGIHT ([`Algorithm`]), with a
//!   tolerance and an iteration limit; [`Recovery`]: the solution, its support, the residual
//!   history and the [`StopReason`] (the stopping rules are those of GAGA: tolerance,
//!   divergence, cycling, no progress, slow convergence, iteration limit).
//! - [`PhaseTransition`]: the success rate over a grid of `delta = m / n` and `rho = k / m`,
//!   and the 50% curve ([`PhaseDiagram`]; drawn by [`plot_phase_diagram`]).
//!
//! [`plot_phase_diagram`]: crate::plot::plot_phase_diagram
//!
//! ```
//! use kselect::recovery::{LinearOperator, Real};
//! assert_eq!(<f32 as Real>::of(0.5), 0.5f32);
//! ```

mod operator;

pub use operator::LinearOperator;

mod backend;
mod cuda;
mod iterative;
mod least_squares;
mod pursuit;
mod solver;
mod stopping;
mod threshold;
mod vector;

pub use cuda::DeviceOperator;
pub use solver::{Algorithm, Recovery, Solver, ALGORITHMS};
pub use stopping::StopReason;

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

mod phase;

pub use phase::{AlgorithmDiagram, Cell, CurvePoint, PhaseDiagram, PhaseTransition};

use crate::element::Element;

mod blas {
    //! The cuBLAS matrix-vector product of each element type, for the CUDA backend.
    use cudarc::cublas::{CudaBlas, Gemv as _, GemvConfig};
    use cudarc::driver::CudaSlice;

    /// `y = alpha op(A) x + beta y` by cuBLAS in this type.
    pub trait Gemv: Sized {
        /// # Safety
        /// `a`, `x` and `y` hold what `cfg` describes.
        unsafe fn gemv(
            blas: &CudaBlas,
            cfg: GemvConfig<Self>,
            a: &CudaSlice<Self>,
            x: &CudaSlice<Self>,
            y: &mut CudaSlice<Self>,
        ) -> Result<(), cudarc::cublas::result::CublasError>;
    }

    impl Gemv for f32 {
        unsafe fn gemv(
            blas: &CudaBlas,
            cfg: GemvConfig<f32>,
            a: &CudaSlice<f32>,
            x: &CudaSlice<f32>,
            y: &mut CudaSlice<f32>,
        ) -> Result<(), cudarc::cublas::result::CublasError> {
            // SAFETY: the caller's promise.
            unsafe { blas.gemv(cfg, a, x, y) }
        }
    }

    impl Gemv for f64 {
        unsafe fn gemv(
            blas: &CudaBlas,
            cfg: GemvConfig<f64>,
            a: &CudaSlice<f64>,
            x: &CudaSlice<f64>,
            y: &mut CudaSlice<f64>,
        ) -> Result<(), cudarc::cublas::result::CublasError> {
            // SAFETY: the caller's promise.
            unsafe { blas.gemv(cfg, a, x, y) }
        }
    }
}

/// The element types of signals and operators: `f32` and `f64`.
///
/// ```
/// use kselect::recovery::Real;
/// assert_eq!(f64::of(2.0).sqrt(), std::f64::consts::SQRT_2);
/// ```
pub trait Real:
    Element
    + blas::Gemv
    + num_traits::Float
    + rustfft::FftNum
    + std::iter::Sum
    + std::ops::AddAssign
    + std::ops::SubAssign
    + std::ops::MulAssign
{
    /// The nearest value of this type (round to nearest, ties to even).
    fn of(value: f64) -> Self;

    /// The value as `f64` (exact).
    ///
    /// ```
    /// use kselect::recovery::Real;
    /// assert_eq!(0.5f32.as_f64(), 0.5);
    /// ```
    fn as_f64(self) -> f64 {
        Element::to_f64(self)
    }
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

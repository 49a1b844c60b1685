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
//!   and the 50% curve ([`PhaseDiagram`]; drawn by `plot::plot_phase_diagram`, the `plot` feature).
//! - [`RecoveryError`]: why a problem cannot be set up or solved (`Error::Recovery`), with its
//!   numbers.
//!
//! ```
//! use kselect::recovery::{LinearOperator, Real};
//! assert_eq!(<f32 as Real>::of(0.5), 0.5f32);
//! ```

mod operator;

pub use operator::LinearOperator;

mod backend;
mod batch;
mod columns;
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
mod error;
mod random;
mod signal;
mod sparse;

pub use dct::SubsampledDct;
pub use dense::DenseMatrix;
pub use ensemble::{Ensemble, Operator};
pub use error::{OperatorKind, RecoveryError};
pub use signal::{sparse_signal, SignalKind};
pub use sparse::SparseBinary;

mod phase;

pub use phase::{AlgorithmDiagram, Cell, CurvePoint, PhaseDiagram, PhaseTransition};

use crate::element::Element;

mod blas {
    //! The cuBLAS products (matrix-vector and matrix-matrix) and cuFFT transforms of each element
    //! type, for the CUDA backend.
    use cudarc::cublas::{
        CudaBlas, Gemm as _, GemmConfig, Gemv as _, GemvConfig, StridedBatchedConfig,
    };
    use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

    /// `y = alpha op(A) x + beta y` and `C = alpha op(A) op(B) + beta C` by cuBLAS in this
    /// type.
    pub trait Blas: Sized {
        /// # Safety
        /// `a`, `x` and `y` hold what `cfg` describes.
        unsafe fn gemv<A: DevicePtr<Self>, X: DevicePtr<Self>, Y: DevicePtrMut<Self>>(
            blas: &CudaBlas,
            cfg: GemvConfig<Self>,
            a: &A,
            x: &X,
            y: &mut Y,
        ) -> Result<(), cudarc::cublas::result::CublasError>;

        /// # Safety
        /// `a`, `b` and `c` hold what `cfg` describes.
        unsafe fn gemm<A: DevicePtr<Self>, B: DevicePtr<Self>, C: DevicePtrMut<Self>>(
            blas: &CudaBlas,
            cfg: GemmConfig<Self>,
            a: &A,
            b: &B,
            c: &mut C,
        ) -> Result<(), cudarc::cublas::result::CublasError>;

        /// # Safety
        /// `a`, `b` and `c` hold what `cfg` describes.
        unsafe fn gemm_strided_batched<
            A: DevicePtr<Self>,
            B: DevicePtr<Self>,
            C: DevicePtrMut<Self>,
        >(
            blas: &CudaBlas,
            cfg: StridedBatchedConfig<Self>,
            a: &A,
            b: &B,
            c: &mut C,
        ) -> Result<(), cudarc::cublas::result::CublasError>;
    }

    /// The real-to-complex FFT of this type (`R2C` / `D2Z`) and its inverse (`C2R` / `Z2D`):
    /// a real signal of length `n` and the first `n / 2 + 1` of its coefficients, as
    /// interleaved `(re, im)` pairs (the others are their conjugates).
    pub trait Fft: Sized {
        /// cuFFT's forward (real-to-complex) transform type for this element type.
        const FORWARD: cudarc::cufft::sys::cufftType;
        /// cuFFT's inverse (complex-to-real) transform type for this element type.
        const INVERSE: cudarc::cufft::sys::cufftType;

        /// `coefficients = FFT(signals)` (unnormalised) for the plan's batch: `reals` values of
        /// `signals` in, `pairs` complex coefficients out, each transform's after the other's.
        fn forward_fft(
            plan: &cudarc::cufft::CudaFft,
            signals: &CudaSlice<Self>,
            coefficients: &mut CudaSlice<Self>,
            lengths: (usize, usize),
        ) -> Result<(), cudarc::cufft::result::CufftError>;

        /// `signals = FFT^-1(coefficients)` (unnormalised; the coefficients are overwritten)
        /// for the plan's batch: `pairs` complex coefficients in, `reals` values out.
        fn inverse_fft(
            plan: &cudarc::cufft::CudaFft,
            coefficients: &mut CudaSlice<Self>,
            signals: &mut CudaSlice<Self>,
            lengths: (usize, usize),
        ) -> Result<(), cudarc::cufft::result::CufftError>;
    }

    macro_rules! real_ffts {
        ($t:ty, $pair:ident, $forward:ident, $inverse:ident, $r2c:ident, $c2r:ident) => {
            impl Fft for $t {
                const FORWARD: cudarc::cufft::sys::cufftType =
                    cudarc::cufft::sys::cufftType::$forward;
                const INVERSE: cudarc::cufft::sys::cufftType =
                    cudarc::cufft::sys::cufftType::$inverse;

                fn forward_fft(
                    plan: &cudarc::cufft::CudaFft,
                    signals: &CudaSlice<$t>,
                    coefficients: &mut CudaSlice<$t>,
                    (reals, pairs): (usize, usize),
                ) -> Result<(), cudarc::cufft::result::CufftError> {
                    use cudarc::cufft::sys::$pair;
                    let signals = signals.slice(..reals);
                    // SAFETY: 2 pairs values are pairs (re, im) couples, the pair type's
                    // layout.
                    let mut out = unsafe { coefficients.transmute_mut::<$pair>(pairs) }
                        .expect("2 pairs values");
                    plan.$r2c(&signals, &mut out)
                }

                fn inverse_fft(
                    plan: &cudarc::cufft::CudaFft,
                    coefficients: &mut CudaSlice<$t>,
                    signals: &mut CudaSlice<$t>,
                    (reals, pairs): (usize, usize),
                ) -> Result<(), cudarc::cufft::result::CufftError> {
                    use cudarc::cufft::sys::$pair;
                    // SAFETY: as above.
                    let mut input = unsafe { coefficients.transmute_mut::<$pair>(pairs) }
                        .expect("2 pairs values");
                    let mut out = signals.slice_mut(..reals);
                    plan.$c2r(&mut input, &mut out)
                }
            }
        };
    }
    real_ffts!(f32, float2, CUFFT_R2C, CUFFT_C2R, exec_r2c, exec_c2r);
    real_ffts!(f64, double2, CUFFT_D2Z, CUFFT_Z2D, exec_d2z, exec_z2d);

    macro_rules! blas_products {
        ($t:ty) => {
            impl Blas for $t {
                unsafe fn gemv<A: DevicePtr<$t>, X: DevicePtr<$t>, Y: DevicePtrMut<$t>>(
                    blas: &CudaBlas,
                    cfg: GemvConfig<$t>,
                    a: &A,
                    x: &X,
                    y: &mut Y,
                ) -> Result<(), cudarc::cublas::result::CublasError> {
                    // SAFETY: the caller's promise.
                    unsafe { blas.gemv(cfg, a, x, y) }
                }

                unsafe fn gemm<A: DevicePtr<$t>, B: DevicePtr<$t>, C: DevicePtrMut<$t>>(
                    blas: &CudaBlas,
                    cfg: GemmConfig<$t>,
                    a: &A,
                    b: &B,
                    c: &mut C,
                ) -> Result<(), cudarc::cublas::result::CublasError> {
                    // SAFETY: the caller's promise.
                    unsafe { blas.gemm(cfg, a, b, c) }
                }

                unsafe fn gemm_strided_batched<
                    A: DevicePtr<$t>,
                    B: DevicePtr<$t>,
                    C: DevicePtrMut<$t>,
                >(
                    blas: &CudaBlas,
                    cfg: StridedBatchedConfig<$t>,
                    a: &A,
                    b: &B,
                    c: &mut C,
                ) -> Result<(), cudarc::cublas::result::CublasError> {
                    // SAFETY: the caller's promise.
                    unsafe { blas.gemm_strided_batched(cfg, a, b, c) }
                }
            }
        };
    }
    blas_products!(f32);
    blas_products!(f64);
}

/// The element types of signals and operators: `f32` and `f64`.
///
/// ```
/// use kselect::recovery::Real;
/// assert_eq!(f64::of(2.0).sqrt(), std::f64::consts::SQRT_2);
/// ```
pub trait Real:
    Element
    + blas::Blas
    + blas::Fft
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

//! The residuals of many candidate fits at once: the cuBLAS product `X B` of the `n x p` design
//! and the `p x c` coefficients, one handle per device.

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{Gemm, GemmConfig};
use cudarc::driver::CudaSlice;

use crate::device::cuda::blas::{blas_handle, BlasHandle};
use crate::device::cuda::driver_error;
use crate::device::CudaDevice;
use crate::error::{Error, Result};

/// A cuBLAS handle on the device's stream, shared by the fits on that device.
pub(super) type Handle = BlasHandle;

/// The cuBLAS handle of `dev`, or [`Error::CudaUnavailable`](crate::Error::CudaUnavailable)
/// when the cuBLAS library is not installed.
pub(super) fn handle(dev: &CudaDevice) -> Result<Handle> {
    blas_handle(dev, "GPU regression")
}

/// `out[j n + i] = x_i b_j` for the `c` candidates: `x` holds `n` rows of `p` values (row-major,
/// that is the column-major `p x n` matrix `X'`), `coef` the candidates' `p` coefficients one
/// after the other (the column-major `p x c` matrix `B`), `out` at least `n c` values (the
/// column-major `n x c` product `X B`: each candidate's values contiguous).
///
/// The caller keeps `n`, `p` and `c` within `i32` ([`GpuEngine::supports`](super::GpuEngine)).
#[allow(clippy::too_many_arguments)]
pub(super) fn product(
    handle: &Handle,
    dev: &CudaDevice,
    x: &CudaSlice<f64>,
    coef: &CudaSlice<f64>,
    out: &mut CudaSlice<f64>,
    n: usize,
    p: usize,
    c: usize,
) -> Result<()> {
    debug_assert!(x.len() >= n * p && coef.len() >= p * c && out.len() >= n * c);
    let cfg = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_T,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: n as i32,
        n: c as i32,
        k: p as i32,
        alpha: 1.0,
        lda: p as i32,
        ldb: p as i32,
        beta: 0.0,
        ldc: n as i32,
    };
    dev.stream()
        .context()
        .bind_to_thread()
        .map_err(|e| driver_error("binding the context for cuBLAS", e))?;
    let blas = handle.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: column-major op(A) = A' is n x p with A the p x n matrix of `x` (lda = p, p n
    // values), B is p x c (ldb = p, p c values), C is n x c (ldc = n, n c values); `out` does
    // not alias the inputs. The handle runs on the device's stream, as every buffer here.
    unsafe { blas.gemm(cfg, x, coef, out) }.map_err(|e| Error::Cuda {
        context: format!("the product of the design and {c} candidate fits (cuBLAS dgemm)"),
        message: format!("{e:?}"),
    })
}

//! cuBLAS handles, one per device, on the device's stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::cublas::CudaBlas;

use crate::device::cuda::{driver_error, CudaDevice};
use crate::error::{Error, Result};

/// A cuBLAS handle on a device's stream, shared by everything that runs on that device.
pub(crate) type BlasHandle = Arc<Mutex<CudaBlas>>;

/// The cuBLAS handle of `dev` (created on first use), or [`Error::CudaUnavailable`] naming
/// `purpose` when the cuBLAS library is not installed. The device's context is bound to the
/// calling thread, as cuBLAS calls need.
pub(crate) fn blas_handle(dev: &CudaDevice, purpose: &str) -> Result<BlasHandle> {
    static HANDLES: OnceLock<Mutex<HashMap<usize, BlasHandle>>> = OnceLock::new();
    // SAFETY: only tries to load the shared library.
    if !unsafe { cudarc::cublas::sys::is_culib_present() } {
        return Err(Error::CudaUnavailable(format!(
            "the cuBLAS library (libcublas.so) is not installed; {purpose} needs it"
        )));
    }
    dev.stream()
        .context()
        .bind_to_thread()
        .map_err(|e| driver_error("binding the context for cuBLAS", e))?;
    let mut handles = HANDLES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(handle) = handles.get(&dev.ordinal()) {
        return Ok(handle.clone());
    }
    let blas = CudaBlas::new(dev.stream().clone()).map_err(|e| Error::Cuda {
        context: "creating a cuBLAS handle".into(),
        message: format!("{e:?}"),
    })?;
    let handle = Arc::new(Mutex::new(blas));
    handles.insert(dev.ordinal(), handle.clone());
    Ok(handle)
}

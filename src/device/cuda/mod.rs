//! CUDA devices through the driver API, loaded at run time (cudarc's dynamic loading).
//!
//! A [`CudaDevice`] owns a context, a stream, and a cache of the crate's kernels compiled by
//! NVRTC for the device's own architecture (in memory per device, and on disk keyed by source
//! hash, architecture and NVRTC version). The first call on a machine without the driver
//! library returns [`Error::CudaUnavailable`] instead of panicking.

pub(crate) mod blas;
mod buffer;
mod compile;
pub(crate) mod download;
pub(crate) mod kernels;
pub(crate) mod launch;
mod pool;
pub(crate) mod results;
pub(crate) mod staging;
mod timer;
pub(crate) mod upload;

#[cfg(test)]
pub(crate) mod tests;

pub use buffer::DeviceBuffer;
pub(crate) use pool::MemoryNeed;
pub use pool::PoolUsage;
pub use timer::GpuTimer;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, DriverError,
    ValidAsZeroBits,
};

use crate::error::{Error, Result};
use kernels::KernelSource;

/// A CUDA GPU with its context, stream and kernel cache. Cloning shares them.
///
/// ```no_run
/// let gpu = kselect::CudaDevice::new(0)?;
/// println!("{} {} with {} SMs", gpu.name(), gpu.arch(), gpu.multiprocessors());
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone)]
pub struct CudaDevice {
    inner: Arc<Inner>,
}

struct Inner {
    ordinal: usize,
    name: String,
    compute_capability: (i32, i32),
    multiprocessors: usize,
    l2_bytes: usize,
    stream: Arc<CudaStream>,
    /// The device's default memory pool, when allocations are stream-ordered from it.
    pool: Option<MemoryPool>,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
    functions: Mutex<HashMap<String, CudaFunction>>,
    /// Mailboxes kept for later results ([`results`]).
    mailboxes: Mutex<Vec<results::Mailbox>>,
}

impl fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaDevice")
            .field("ordinal", &self.inner.ordinal)
            .field("name", &self.inner.name)
            .field("arch", &self.arch())
            .finish()
    }
}

/// Devices opened so far, so that every handle to one GPU shares its kernel cache.
fn opened() -> &'static Mutex<HashMap<usize, Arc<Inner>>> {
    static OPENED: OnceLock<Mutex<HashMap<usize, Arc<Inner>>>> = OnceLock::new();
    OPENED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Whether the CUDA driver library can be loaded.
fn driver_present() -> bool {
    // SAFETY: only tries to load the shared library; it does not call into it.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

impl CudaDevice {
    /// Opens CUDA device `ordinal` (once per process; later calls share it).
    ///
    /// ```no_run
    /// let gpu = kselect::CudaDevice::new(0)?;
    /// assert_eq!(gpu.ordinal(), 0);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn new(ordinal: usize) -> Result<CudaDevice> {
        let count = CudaDevice::count()?;
        if ordinal >= count {
            return Err(Error::CudaUnavailable(format!(
                "CUDA device {ordinal} was asked for, but {count} device(s) are present"
            )));
        }
        let mut opened = opened().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(inner) = opened.get(&ordinal) {
            return Ok(CudaDevice {
                inner: inner.clone(),
            });
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| driver_error("opening the device", e))?;
        // SAFETY: all the crate's work on the device is queued on the one stream below, in
        // order, so the events cudarc would make for every buffer, to order work across streams,
        // are never needed (making and destroying them took about 1.5 µs a buffer).
        unsafe { ctx.disable_event_tracking() };
        let name = ctx
            .name()
            .map_err(|e| driver_error("reading the device name", e))?;
        let compute_capability = ctx
            .compute_capability()
            .map_err(|e| driver_error("reading the compute capability", e))?;
        let multiprocessors =
            ctx.attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .map_err(|e| driver_error("reading the multiprocessor count", e))? as usize;
        let l2_bytes = ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
            .map_err(|e| driver_error("reading the L2 cache size", e))?
            .max(0) as usize;
        let pool = retaining_pool(&ctx);
        let inner = Arc::new(Inner {
            ordinal,
            pool,
            name,
            compute_capability,
            multiprocessors,
            l2_bytes,
            stream: ctx.default_stream(),
            modules: Mutex::new(HashMap::new()),
            functions: Mutex::new(HashMap::new()),
            mailboxes: Mutex::new(Vec::new()),
        });
        opened.insert(ordinal, inner.clone());
        Ok(CudaDevice { inner })
    }

    /// The number of CUDA devices (an error when the driver library is missing).
    ///
    /// ```
    /// match kselect::CudaDevice::count() {
    ///     Ok(n) => println!("{n} GPU(s)"),
    ///     Err(e) => println!("{e}"),
    /// }
    /// ```
    pub fn count() -> Result<usize> {
        if !driver_present() {
            return Err(Error::CudaUnavailable(
                "the CUDA driver library (libcuda.so) is not installed".into(),
            ));
        }
        let n = CudaContext::device_count().map_err(|e| driver_error("counting devices", e))?;
        Ok(n.max(0) as usize)
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.inner.ordinal
    }

    /// The device name, as the driver reports it.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.inner.compute_capability
    }

    /// The architecture kernels are compiled for, e.g. `"sm_90"`.
    pub fn arch(&self) -> String {
        let (major, minor) = self.inner.compute_capability;
        format!("sm_{major}{minor}")
    }

    /// The number of streaming multiprocessors.
    pub fn multiprocessors(&self) -> usize {
        self.inner.multiprocessors
    }

    /// The size of the L2 cache in bytes.
    ///
    /// ```no_run
    /// let gpu = kselect::CudaDevice::new(0)?;
    /// println!("{} MiB of L2", gpu.l2_bytes() >> 20);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn l2_bytes(&self) -> usize {
        self.inner.l2_bytes
    }

    /// Free and total device memory in bytes.
    ///
    /// ```no_run
    /// let (free, total) = kselect::CudaDevice::new(0)?.memory_info()?;
    /// assert!(free <= total);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.inner
            .stream
            .context()
            .mem_get_info()
            .map_err(|e| driver_error("reading memory info", e))
    }

    /// Waits for all work queued on the device's stream.
    pub fn synchronize(&self) -> Result<()> {
        self.inner
            .stream
            .synchronize()
            .map_err(|e| driver_error("synchronizing", e))
    }

    /// The stream work is queued on.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.stream
    }

    /// The mailboxes kept for later results.
    fn mailboxes(&self) -> std::sync::MutexGuard<'_, Vec<results::Mailbox>> {
        self.inner
            .mailboxes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Kernel `name` from `source`, compiled on first use.
    pub(crate) fn function(
        &self,
        source: &'static KernelSource,
        name: &str,
    ) -> Result<CudaFunction> {
        let mut functions = self
            .inner
            .functions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        let module = self.module(source)?;
        let f = module.load_function(name).map_err(|e| {
            driver_error(&format!("loading kernel `{name}` from {}", source.name), e)
        })?;
        functions.insert(name.to_string(), f.clone());
        Ok(f)
    }

    fn module(&self, source: &'static KernelSource) -> Result<Arc<CudaModule>> {
        let mut modules = self.inner.modules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = modules.get(source.name) {
            return Ok(m.clone());
        }
        let cubin = compile::cubin(source, &self.arch())?;
        let module = self
            .inner
            .stream
            .context()
            .load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
            .map_err(|e| driver_error(&format!("loading module {}", source.name), e))?;
        modules.insert(source.name, module.clone());
        Ok(module)
    }

    /// Allocates `len` uninitialised elements; `what` names the buffer in errors.
    pub(crate) fn alloc<T: DeviceRepr>(&self, len: usize, what: &str) -> Result<CudaSlice<T>> {
        if len == 0 {
            return self
                .inner
                .stream
                .null()
                .map_err(|e| driver_error("allocating an empty buffer", e));
        }
        // SAFETY: the memory is uninitialised; every caller writes it before reading it.
        let result = unsafe { self.inner.stream.alloc::<T>(len) };
        let result = match result {
            Err(e) if is_out_of_memory(&e) && self.trim_pool() => {
                // SAFETY: as above.
                unsafe { self.inner.stream.alloc::<T>(len) }
            }
            other => other,
        };
        result.map_err(|e| self.alloc_error(e, len * std::mem::size_of::<T>(), what))
    }

    /// Gives the memory the pool retains back to the driver; whether there was a pool.
    fn trim_pool(&self) -> bool {
        match &self.inner.pool {
            Some(pool) => {
                let _ = self.inner.stream.synchronize();
                // SAFETY: the pool is the device's default pool, valid while its context lives.
                unsafe { cudarc::driver::result::mem_pool::trim_to(pool.0, 0) }.is_ok()
            }
            None => false,
        }
    }

    /// Copies a device buffer to the host (waiting for the work queued before); `what` names it
    /// in errors.
    pub(crate) fn read<V: DeviceRepr + Default + Clone>(
        &self,
        buf: &CudaSlice<V>,
        what: &str,
    ) -> Result<Vec<V>> {
        self.inner
            .stream
            .clone_dtoh(buf)
            .map_err(|e| driver_error(&format!("reading {what}"), e))
    }

    /// Allocates `len` zeroed elements.
    pub(crate) fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        len: usize,
        what: &str,
    ) -> Result<CudaSlice<T>> {
        let result = match self.inner.stream.alloc_zeros::<T>(len.max(1)) {
            Err(e) if is_out_of_memory(&e) && self.trim_pool() => {
                self.inner.stream.alloc_zeros::<T>(len.max(1))
            }
            other => other,
        };
        result.map_err(|e| self.alloc_error(e, len * std::mem::size_of::<T>(), what))
    }

    fn alloc_error(&self, e: DriverError, bytes: usize, what: &str) -> Error {
        if is_out_of_memory(&e) {
            let (free, total) = self.memory_info().unwrap_or((0, 0));
            Error::OutOfDeviceMemory {
                bytes,
                what: what.to_string(),
                free,
                total,
            }
        } else {
            driver_error(&format!("allocating {bytes} bytes for {what}"), e)
        }
    }
}

/// The default memory pool of a device, whose freed blocks stay mapped for later allocations.
struct MemoryPool(cudarc::driver::sys::CUmemoryPool);

// SAFETY: a pool handle is a driver object usable from any thread of the process.
unsafe impl Send for MemoryPool {}
// SAFETY: as above; the driver synchronises access to the pool.
unsafe impl Sync for MemoryPool {}

/// Makes the device's default pool keep freed memory instead of releasing it at every
/// synchronisation, so that a selection's workspace costs no new mapping when the same sizes
/// come again. Allocations that find the device full give the retained memory back first
/// (`CudaDevice::trim_pool`). `None` when the context does not allocate from a pool.
fn retaining_pool(ctx: &Arc<CudaContext>) -> Option<MemoryPool> {
    if !ctx.has_async_alloc() {
        return None;
    }
    // SAFETY: the device handle comes from the live context.
    let pool =
        unsafe { cudarc::driver::result::device::get_default_mem_pool(ctx.cu_device()) }.ok()?;
    let mut threshold = u64::MAX;
    // SAFETY: the release threshold attribute is a u64, and `threshold` outlives the call.
    unsafe {
        cudarc::driver::result::mem_pool::set_attribute(
            pool,
            cudarc::driver::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    }
    .ok()?;
    Some(MemoryPool(pool))
}

/// Whether a driver error says the device memory is exhausted.
fn is_out_of_memory(e: &DriverError) -> bool {
    e.0 == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY
}

/// A driver error, with what kselect was doing.
pub(crate) fn driver_error(context: &str, e: DriverError) -> Error {
    let message = match e.error_string() {
        Ok(s) => format!("{:?}: {}", e.0, s.to_string_lossy()),
        Err(_) => format!("{:?}", e.0),
    };
    Error::Cuda {
        context: context.to_string(),
        message,
    }
}

//! Devices: the CPU, and CUDA GPUs through the driver API loaded at run time.
//!
//! Nothing here panics when CUDA is absent: [`Device::auto`] falls back to the CPU and
//! [`Device::cuda`] returns [`Error::CudaUnavailable`](crate::Error::CudaUnavailable).

pub mod cuda;

pub use cuda::{CudaDevice, DeviceBuffer, GpuTimer, PoolUsage};

use crate::error::Result;

/// Where selections run.
///
/// ```
/// use kselect::Device;
/// let dev = Device::auto(); // CUDA device 0 if the driver and a GPU are present
/// println!("running on {}", dev.description());
/// assert!(matches!(Device::Cpu.backend_name(), "cpu"));
/// ```
#[derive(Clone, Debug, Default)]
pub enum Device {
    /// The host CPU (all of its threads, through rayon).
    #[default]
    Cpu,
    /// A CUDA GPU.
    Cuda(CudaDevice),
}

impl Device {
    /// CUDA device 0 when the driver library and a device are present, the CPU otherwise.
    ///
    /// ```
    /// let dev = kselect::Device::auto();
    /// assert!(dev.backend_name() == "cpu" || dev.backend_name() == "cuda");
    /// ```
    pub fn auto() -> Device {
        match CudaDevice::new(0) {
            Ok(dev) => Device::Cuda(dev),
            Err(_) => Device::Cpu,
        }
    }

    /// CUDA device `ordinal`, or a clear error when there is none.
    ///
    /// ```
    /// match kselect::Device::cuda(0) {
    ///     Ok(dev) => println!("{}", dev.description()),
    ///     Err(e) => println!("no GPU: {e}"),
    /// }
    /// ```
    pub fn cuda(ordinal: usize) -> Result<Device> {
        Ok(Device::Cuda(CudaDevice::new(ordinal)?))
    }

    /// `"cpu"` or `"cuda"`.
    ///
    /// ```
    /// assert_eq!(kselect::Device::Cpu.backend_name(), "cpu");
    /// ```
    pub fn backend_name(&self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Cuda(_) => "cuda",
        }
    }

    /// Whether this is a CUDA device.
    ///
    /// ```
    /// assert!(!kselect::Device::Cpu.is_cuda());
    /// ```
    pub fn is_cuda(&self) -> bool {
        matches!(self, Device::Cuda(_))
    }

    /// A human-readable name: the GPU's name and architecture, or the CPU and its threads.
    ///
    /// ```
    /// assert!(kselect::Device::Cpu.description().starts_with("cpu"));
    /// ```
    pub fn description(&self) -> String {
        match self {
            Device::Cpu => format!("cpu ({} threads)", rayon::current_num_threads()),
            Device::Cuda(dev) => format!("{} ({}, cuda:{})", dev.name(), dev.arch(), dev.ordinal()),
        }
    }
}

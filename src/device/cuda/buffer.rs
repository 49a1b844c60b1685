//! Typed device buffers: upload, download, and device-resident inputs.

use cudarc::driver::CudaSlice;

use super::download::download_vec;
use super::upload::upload_into;
use super::CudaDevice;
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};

/// Elements of type `T` in GPU memory. Selections on a `DeviceBuffer` read it in place.
///
/// ```no_run
/// use kselect::{Device, DeviceBuffer};
/// let device = Device::cuda(0)?;
/// let buf = DeviceBuffer::from_host(&device, &[1i32, 2, 3])?;
/// assert_eq!(buf.len(), 3);
/// assert_eq!(buf.to_host()?, vec![1, 2, 3]);
/// # Ok::<(), kselect::Error>(())
/// ```
pub struct DeviceBuffer<T: Element> {
    device: CudaDevice,
    slice: CudaSlice<T>,
}

impl<T: Element> DeviceBuffer<T> {
    /// Copies `data` to `device`, which must be a CUDA device.
    pub fn from_host(device: &Device, data: &[T]) -> Result<Self> {
        match device {
            Device::Cuda(dev) => DeviceBuffer::from_host_on(dev, data),
            Device::Cpu => Err(Error::NotOnCpu {
                what: "a DeviceBuffer",
            }),
        }
    }

    /// Copies `data` to the GPU `device`.
    pub fn from_host_on(device: &CudaDevice, data: &[T]) -> Result<Self> {
        let mut slice = device.alloc::<T>(data.len(), "the input")?;
        if !data.is_empty() {
            upload_into(device, data, &mut slice.as_view_mut(), "the input")?;
        }
        Ok(DeviceBuffer {
            device: device.clone(),
            slice,
        })
    }

    /// Wraps memory already on the device (for example, filled by a kernel of your own).
    pub fn from_slice(device: &CudaDevice, slice: CudaSlice<T>) -> Self {
        DeviceBuffer {
            device: device.clone(),
            slice,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.slice.len() == 0
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &CudaDevice {
        &self.device
    }

    /// The underlying cudarc slice.
    pub fn as_slice(&self) -> &CudaSlice<T> {
        &self.slice
    }

    /// The device memory, for kernels that write it in place.
    pub(crate) fn as_slice_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }

    /// The device memory, unwrapped.
    pub(crate) fn into_slice(self) -> CudaSlice<T> {
        self.slice
    }

    /// Copies the buffer back to the host.
    pub fn to_host(&self) -> Result<Vec<T>> {
        if self.is_empty() {
            return Ok(Vec::new());
        }
        download_vec(&self.device, &self.slice.as_view(), "a buffer")
    }
}

impl<T: Element> DeviceBuffer<T> {
    /// The sum of the elements in `f64`, reading each once with 16-byte loads on the device.
    ///
    /// Its time is the one-read floor that selection times are compared with.
    ///
    /// ```no_run
    /// use kselect::{Device, DeviceBuffer};
    /// let buf = DeviceBuffer::from_host(&Device::cuda(0)?, &[1.5f32, 2.5, 3.0])?;
    /// assert_eq!(buf.sum()?, 7.0);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn sum(&self) -> Result<f64> {
        use crate::device::cuda::kernels::reduce::sum;
        use crate::device::cuda::launch::{config, stride_blocks};
        let dev = &self.device;
        let mut out = dev.alloc_zeros::<f64>(1, "the sum")?;
        let n = self.len();
        if n > 0 {
            let vec = 16 / std::mem::size_of::<T>();
            let blocks = stride_blocks(n.div_ceil(vec), 256, dev.multiprocessors(), 8);
            sum(dev, config(blocks, 256), &self.slice, n as u64, &mut out)?;
        }
        Ok(dev.read(&out, "the sum")?[0])
    }
}

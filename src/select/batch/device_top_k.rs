//! [`DeviceTopK`]: top-k results left on the CUDA device.

use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::batch::TopK;

/// The results of a top-k of device-resident data, left on the device: `k` values a row (or
/// segment), row-major, with their indices inside their rows as `u64`, in the order the
/// [`TopKOptions`](crate::TopKOptions) asked for. [`DeviceTopK::to_host`] copies them back.
///
/// ```no_run
/// use kselect::{Device, DeviceBuffer, Matrix, Selector, TopKOptions};
/// let device = Device::cuda(0)?;
/// let buf = DeviceBuffer::from_host(&device, &[1.0f32, 5.0, 3.0, 9.0, 0.0, 4.0])?;
/// let top = Selector::on(device).top_k_rows_device(Matrix::new(&buf, 2, 3), 2, TopKOptions::largest())?;
/// assert_eq!((top.rows(), top.k()), (2, 2));
/// assert_eq!(top.indices().to_host()?, vec![1, 2, 0, 2]);
/// assert_eq!(top.to_host()?.values(), &[5.0, 3.0, 9.0, 4.0]);
/// # Ok::<(), kselect::Error>(())
/// ```
pub struct DeviceTopK<T: Element> {
    values: DeviceBuffer<T>,
    indices: DeviceBuffer<u64>,
    rows: usize,
    k: usize,
}

impl<T: Element> std::fmt::Debug for DeviceTopK<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceTopK")
            .field("rows", &self.rows)
            .field("k", &self.k)
            .field("device", &self.values.device().ordinal())
            .finish_non_exhaustive()
    }
}

impl<T: Element> DeviceTopK<T> {
    /// Wraps the results of `rows` rows of `k` values each.
    pub(crate) fn new(
        values: DeviceBuffer<T>,
        indices: DeviceBuffer<u64>,
        rows: usize,
        k: usize,
    ) -> DeviceTopK<T> {
        debug_assert_eq!(values.len(), rows * k);
        debug_assert_eq!(indices.len(), rows * k);
        DeviceTopK {
            values,
            indices,
            rows,
            k,
        }
    }

    /// The number of rows or segments.
    ///
    /// ```no_run
    /// # use kselect::{Device, DeviceBuffer, Selector, TopKOrder};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[3u32, 1, 2])?;
    /// assert_eq!(Selector::on(device).top_k_device(&buf, 1, TopKOrder::Largest)?.rows(), 1);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of values taken from each row or segment.
    ///
    /// ```no_run
    /// # use kselect::{Device, DeviceBuffer, Selector, TopKOrder};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[3u32, 1, 2])?;
    /// assert_eq!(Selector::on(device).top_k_device(&buf, 2, TopKOrder::Largest)?.k(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn k(&self) -> usize {
        self.k
    }

    /// Every value, row-major, on the device.
    ///
    /// ```no_run
    /// # use kselect::{Device, DeviceBuffer, Selector, TopKOrder};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[3i64, 1, 2])?;
    /// let top = Selector::on(device).top_k_device(&buf, 1, TopKOrder::Smallest)?;
    /// assert_eq!(top.values().to_host()?, vec![1]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn values(&self) -> &DeviceBuffer<T> {
        &self.values
    }

    /// Every index (inside its row or segment), row-major, on the device.
    ///
    /// ```no_run
    /// # use kselect::{Device, DeviceBuffer, Selector, TopKOrder};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[3i64, 1, 2])?;
    /// let top = Selector::on(device).top_k_device(&buf, 1, TopKOrder::Smallest)?;
    /// assert_eq!(top.indices().to_host()?, vec![1]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn indices(&self) -> &DeviceBuffer<u64> {
        &self.indices
    }

    /// The values and indices copied to the host.
    ///
    /// ```no_run
    /// # use kselect::{Device, DeviceBuffer, Selector, TopKOrder};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[3i64, 1, 2])?;
    /// let top = Selector::on(device).top_k_device(&buf, 2, TopKOrder::Largest)?.to_host()?;
    /// assert_eq!(top.row(0), (&[3, 2][..], &[0, 2][..]));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn to_host(&self) -> Result<TopK<T>> {
        let indices = self
            .indices
            .to_host()?
            .into_iter()
            .map(|i| i as usize)
            .collect();
        Ok(TopK::new(
            self.values.to_host()?,
            indices,
            self.rows,
            self.k,
        ))
    }
}

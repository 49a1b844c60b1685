//! [`DeviceThreshold`]: the result of hard thresholding device-resident data, its support left
//! on the CUDA device.

use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::Result;
use crate::select::batch::{cuda, Threshold};

/// What hard thresholding of a [`DeviceBuffer`] keeps: the indices of the `k` entries of
/// largest magnitude (ascending, as `u64`) on the device, and the threshold entry (the kept
/// entry of smallest magnitude taken last, as in [`Threshold`]) on the host.
/// [`DeviceThreshold::to_host`] copies the support back.
///
/// ```no_run
/// use kselect::{Device, DeviceBuffer, Selector};
/// let device = Device::cuda(0)?;
/// let buf = DeviceBuffer::from_host(&device, &[1i32, -7, 3, 7, -3, 0])?;
/// let t = Selector::on(device).threshold_device(&buf, 3)?;
/// assert_eq!((t.k(), t.index(), t.value()), (3, 2, 3));
/// assert_eq!(t.support().to_host()?, vec![1, 2, 3]);
/// assert_eq!(t.to_host()?.support, vec![1, 2, 3]);
/// # Ok::<(), kselect::Error>(())
/// ```
pub struct DeviceThreshold<T: Element> {
    support: DeviceBuffer<u64>,
    index: usize,
    value: T,
}

impl<T: Element> std::fmt::Debug for DeviceThreshold<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceThreshold")
            .field("k", &self.support.len())
            .field("index", &self.index)
            .field("device", &self.support.device().ordinal())
            .finish_non_exhaustive()
    }
}

impl<T: Element> DeviceThreshold<T> {
    /// Wraps a support (ascending) and its threshold entry.
    pub(crate) fn new(support: DeviceBuffer<u64>, index: usize, value: T) -> DeviceThreshold<T> {
        DeviceThreshold {
            support,
            index,
            value,
        }
    }

    /// The indices of the entries kept, ascending, on the device.
    ///
    /// ```no_run
    /// # use kselect::{Device, DeviceBuffer, Selector};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[0.5f32, -4.0, 2.0])?;
    /// let t = Selector::on(device).threshold_device(&buf, 2)?;
    /// assert_eq!(t.support().to_host()?, vec![1, 2]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn support(&self) -> &DeviceBuffer<u64> {
        &self.support
    }

    /// The number of entries kept.
    ///
    /// ```no_run
    /// # use kselect::{Device, DeviceBuffer, Selector};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[0.5f32, -4.0, 2.0])?;
    /// assert_eq!(Selector::on(device).threshold_device(&buf, 2)?.k(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn k(&self) -> usize {
        self.support.len()
    }

    /// The index of the threshold entry.
    ///
    /// ```no_run
    /// # use kselect::{Device, DeviceBuffer, Selector};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[0.5f32, -4.0, 2.0])?;
    /// assert_eq!(Selector::on(device).threshold_device(&buf, 2)?.index(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn index(&self) -> usize {
        self.index
    }

    /// The value of the threshold entry (as stored: its sign included).
    ///
    /// ```no_run
    /// # use kselect::{Device, DeviceBuffer, Selector};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[0.5f32, -4.0, -2.0])?;
    /// assert_eq!(Selector::on(device).threshold_device(&buf, 2)?.value(), -2.0);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn value(&self) -> T {
        self.value
    }

    /// The support copied to the host, with the threshold: a [`Threshold`].
    ///
    /// ```no_run
    /// # use kselect::{Device, DeviceBuffer, Selector};
    /// let device = Device::cuda(0)?;
    /// let mut buf = DeviceBuffer::from_host(&device, &[0.5f64, -3.0, 2.0, -0.25])?;
    /// let t = Selector::on(device).hard_threshold_device(&mut buf, 2)?.to_host()?;
    /// assert_eq!((t.support, t.index, t.value), (vec![1, 2], 2, 2.0));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn to_host(&self) -> Result<Threshold<T>> {
        Ok(Threshold {
            support: cuda::support_to_host(&self.support)?,
            index: self.index,
            value: self.value,
        })
    }
}

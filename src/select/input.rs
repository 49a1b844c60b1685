//! The values a selection reads: host memory or a CUDA device buffer.

use std::borrow::Cow;

use ndarray::{ArrayBase, ArrayView1, Data, Ix1};

use crate::device::DeviceBuffer;
use crate::element::Element;

/// The values a [`Selector`](crate::Selector) method reads: a slice, a vector, an array or a
/// 1-D ndarray in host memory, or a CUDA [`DeviceBuffer`], read where it is (no copy to the
/// host when the selector is on its device).
///
/// Every method that reads values takes `impl Into<Values>`, so each of these is passed as it
/// is. A 1-D ndarray that is not contiguous in its logical order (a strided or reversed view)
/// is copied once, in that order.
///
/// ```
/// use kselect::{Selector, Values};
/// use ndarray::{array, s};
///
/// let sel = Selector::new();
/// let v = vec![3.0f32, 1.0, 2.0];
/// assert_eq!(sel.select(&v, 0)?, 1.0);
/// assert_eq!(sel.select(&v[1..], 1)?, 2.0);
/// assert_eq!(sel.select(&[7u32, 5, 6], 2)?, 7);
/// let a = array![40i64, 10, 30, 20];
/// assert_eq!(sel.median(&a)?, 20);
/// assert_eq!(sel.multiselect(a.slice(s![..;2]), &[0, 1])?, vec![30, 40]);
/// assert_eq!(Values::from(&v).len(), 3);
/// # Ok::<(), kselect::Error>(())
/// ```
///
/// On a GPU, a buffer already on the device:
///
/// ```no_run
/// use kselect::{Device, DeviceBuffer, Selector};
/// let device = Device::cuda(0)?;
/// let buf = DeviceBuffer::from_host(&device, &[3.0f32, 1.0, 2.0])?;
/// assert_eq!(Selector::on(device).select(&buf, 1)?, 2.0);
/// # Ok::<(), kselect::Error>(())
/// ```
pub struct Values<'a, T: Element> {
    source: Source<'a, T>,
}

enum Source<'a, T: Element> {
    Host(Cow<'a, [T]>),
    Device(&'a DeviceBuffer<T>),
}

impl<'a, T: Element> Values<'a, T> {
    /// The number of values.
    pub fn len(&self) -> usize {
        self.input().len()
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as the selection layers read them.
    pub(crate) fn input(&self) -> Input<'_, T> {
        match &self.source {
            Source::Host(data) => Input::Host(data),
            Source::Device(buf) => Input::Device(buf),
        }
    }

    /// The values in host memory: borrowed when they are there, read back from their device
    /// otherwise.
    pub(crate) fn into_host(self) -> crate::error::Result<Cow<'a, [T]>> {
        Ok(match self.source {
            Source::Host(data) => data,
            Source::Device(buf) => Cow::Owned(buf.to_host()?),
        })
    }

    /// Values owned by the caller's matrix or array copy.
    pub(crate) fn from_vec(data: Vec<T>) -> Values<'a, T> {
        Values::from_cow(Cow::Owned(data))
    }

    /// Host values, borrowed or owned.
    pub(crate) fn from_cow(data: Cow<'a, [T]>) -> Values<'a, T> {
        Values {
            source: Source::Host(data),
        }
    }

    /// The device buffer, when the values are on a device.
    pub(crate) fn device_buffer(&self) -> Option<&'a DeviceBuffer<T>> {
        match self.source {
            Source::Host(_) => None,
            Source::Device(buf) => Some(buf),
        }
    }
}

impl<'a, T: Element> From<&'a [T]> for Values<'a, T> {
    fn from(data: &'a [T]) -> Self {
        Values {
            source: Source::Host(Cow::Borrowed(data)),
        }
    }
}

impl<'a, T: Element> From<&'a mut [T]> for Values<'a, T> {
    fn from(data: &'a mut [T]) -> Self {
        Values::from(&*data)
    }
}

impl<'a, T: Element> From<&'a Vec<T>> for Values<'a, T> {
    fn from(data: &'a Vec<T>) -> Self {
        Values::from(data.as_slice())
    }
}

impl<'a, T: Element, const N: usize> From<&'a [T; N]> for Values<'a, T> {
    fn from(data: &'a [T; N]) -> Self {
        Values::from(data.as_slice())
    }
}

impl<'a, T: Element> From<ArrayView1<'a, T>> for Values<'a, T> {
    fn from(view: ArrayView1<'a, T>) -> Self {
        match view.to_slice() {
            Some(data) => Values::from(data),
            None => Values::from_vec(view.iter().copied().collect()),
        }
    }
}

impl<'a, T: Element, S: Data<Elem = T>> From<&'a ArrayBase<S, Ix1>> for Values<'a, T> {
    fn from(array: &'a ArrayBase<S, Ix1>) -> Self {
        Values::from(array.view())
    }
}

impl<'a, T: Element> From<&'a DeviceBuffer<T>> for Values<'a, T> {
    fn from(buf: &'a DeviceBuffer<T>) -> Self {
        Values {
            source: Source::Device(buf),
        }
    }
}

/// The values a selection reads, borrowed: host memory or a CUDA device buffer.
#[derive(Clone, Copy)]
pub(crate) enum Input<'a, T: Element> {
    /// Values in host memory.
    Host(&'a [T]),
    /// Values already on a CUDA device.
    Device(&'a DeviceBuffer<T>),
}

impl<T: Element> Input<'_, T> {
    /// The number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Input::Host(data) => data.len(),
            Input::Device(buf) => buf.len(),
        }
    }
}
